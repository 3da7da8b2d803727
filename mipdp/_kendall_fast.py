"""Kendall's ``P = n_c − n_d`` of many columns against one anchor, from dense ranks.

The columns are ranked once (:class:`DenseRanks`: dense 1-based ranks and the tied pairs of
every column); each anchor then costs a gather of the columns in the anchor's order and
one Fenwick-tree count of the discordant pairs per column, by SciPy's compiled
``scipy.stats._stats._kendall_dis`` (the kernel of ``scipy.stats.kendalltau``, ``O(n log n)``)
when it is importable, else by the package's vectorised merge count
(:func:`_count_inversions`, below).  Exact integers either way:

    P = C(n, 2) − t_a − t_c + t_ac − 2 n_d,

``t_a``, ``t_c`` the pairs tied in the anchor / the column, ``t_ac`` the pairs tied in both,
``n_d`` the strictly discordant pairs.
"""

from __future__ import annotations

import numpy as np

from ._parallel import parallel_map

__all__ = ["DenseRanks", "discordant_rows", "discordant_sorted"]

try:  # pragma: no branch - the compiled kernel of scipy.stats.kendalltau
    from scipy.stats._stats import _kendall_dis as _scipy_dis
except ImportError:  # pragma: no cover - scipy moved it: the numpy merge count is used
    _scipy_dis = None

#: entries of a block of columns gathered at once
_BLOCK = 1 << 21
#: most columns of one piece of :meth:`DenseRanks.P` (the pieces run on the call's
#: workers; their boundaries do not depend on ``n_jobs``)
_PIECE = 128


def _dense_1based(sorted_vals: np.ndarray) -> np.ndarray:
    """Dense 1-based ranks of each row of a row-sorted array (ties share a rank)."""
    new = np.ones(sorted_vals.shape, dtype=bool)
    new[..., 1:] = sorted_vals[..., 1:] != sorted_vals[..., :-1]
    return np.cumsum(new, axis=-1, dtype=np.intp)


def _tied_pairs_sorted(sorted_vals: np.ndarray) -> np.ndarray:
    """Pairs of equal values in each row of a row-sorted array (``Σ C(t, 2)``)."""
    m, n = sorted_vals.shape
    out = np.zeros(m, dtype=np.int64)
    same = sorted_vals[:, 1:] == sorted_vals[:, :-1]
    rows = np.flatnonzero(same.any(axis=1))
    for r in rows:
        d = _dense_1based(sorted_vals[r])
        c = np.bincount(d)
        out[r] = int((c * (c - 1) // 2).sum())
    return out


def discordant_rows(x_sorted: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Strictly discordant pairs of each row of ``Y`` (dense 1-based ranks, rows in the
    order of ``x_sorted``, a non-decreasing integer vector: pairs tied in ``x`` count 0)."""
    m, n = Y.shape
    out = np.empty(m, dtype=np.int64)
    if _scipy_dis is not None:
        x = np.ascontiguousarray(x_sorted, dtype=np.intp)
        Y = np.ascontiguousarray(Y, dtype=np.intp)
        for r in range(m):
            out[r] = _scipy_dis(x, Y[r])
        return out
    # lexicographic (x, y) order: within a tie of x, y ascending adds no inversion
    order = np.lexsort((Y, np.broadcast_to(x_sorted, Y.shape)), axis=1)
    return _count_inversions(np.take_along_axis(Y, order, axis=1) - 1)


def discordant_sorted(xs: np.ndarray, ys: np.ndarray, same_x: np.ndarray) -> np.ndarray | None:
    """Strictly discordant pairs of each row, rows in lexicographic ``(x, y)`` order.

    ``xs`` (m, n) the sorted x values, ``ys`` (m, n) the 0-based dense y ranks in that
    order, ``same_x`` (m, n − 1) where neighbours of ``xs`` are equal.  The compiled
    kernel's count (``None`` when it is not importable: the caller merge-counts).
    """
    if _scipy_dis is None:  # pragma: no cover - scipy moved it
        return None
    m, n = ys.shape
    Y = np.ascontiguousarray(ys, dtype=np.intp) + 1
    distinct = np.arange(1, n + 1, dtype=np.intp)
    tied = np.asarray(same_x.any(axis=1), dtype=bool)
    out = np.empty(m, dtype=np.int64)
    for r in range(m):
        x = _dense_1based(xs[r]) if tied[r] else distinct
        out[r] = _scipy_dis(x, Y[r])
    return out


class DenseRanks:
    """Dense ranks of every column of ``X`` (computed once), for Kendall counts.

    Parameters
    ----------
    X : ndarray, shape (n, p)
        Float64 (any finite values).
    """

    def __init__(self, X: np.ndarray) -> None:
        X = np.asarray(X, dtype=np.float64)
        self.n, self.p = n, p = X.shape
        # (p, n) dense ranks (intp: the compiled kernel's type); tied pairs per column
        self.R = np.empty((p, n), dtype=np.intp)
        self.ties = np.zeros(p, dtype=np.int64)
        step = max(1, _BLOCK // max(n, 1))
        for lo in range(0, p, step):
            hi = min(p, lo + step)
            B = np.ascontiguousarray(X[:, lo:hi].T)
            order = np.argsort(B, axis=1)
            srt = np.take_along_axis(B, order, axis=1)
            d = _dense_1based(srt)
            np.put_along_axis(self.R[lo:hi], order, d, axis=1)
            self.ties[lo:hi] = _tied_pairs_sorted(srt)

    @staticmethod
    def of_vector(v: np.ndarray) -> tuple[np.ndarray, int]:
        """``(dense 1-based ranks, tied pairs)`` of a vector."""
        v = np.asarray(v, dtype=np.float64).ravel()
        order = np.argsort(v, kind="stable")
        d = _dense_1based(v[order])
        r = np.empty(v.size, dtype=np.intp)
        r[order] = d
        return r, int(_tied_pairs_sorted(v[order][None, :])[0])

    def P(self, anchor: tuple[np.ndarray, int], cols: np.ndarray) -> np.ndarray:
        """``n_c − n_d`` of the columns ``cols`` against ``anchor`` (from :meth:`of_vector`
        or :meth:`column`)."""
        ra, ta = anchor
        n = self.n
        cols = np.asarray(cols, dtype=np.intp)
        order = np.argsort(ra, kind="stable")
        xa = np.ascontiguousarray(ra[order], dtype=np.intp)
        n0 = n * (n - 1) // 2
        step = max(1, min(_BLOCK // max(n, 1), _PIECE))

        def piece(lo: int) -> np.ndarray:
            c = cols[lo:lo + step]
            Y = self.R[c][:, order]                      # (b, n) in the anchor's order
            nd = discordant_rows(xa, Y)
            tc = self.ties[c]
            tac = np.zeros(c.size, dtype=np.int64)
            if ta > 0:
                both = np.flatnonzero(tc > 0)
                if both.size:
                    key = xa.astype(np.int64)[None, :] * (n + 1) + Y[both]
                    key.sort(axis=1)
                    tac[both] = _tied_pairs_sorted(key)
            return n0 - ta - tc + tac - 2 * nd

        # pieces of at most _PIECE columns on the call's workers (mipdp._parallel; the
        # compiled count releases the GIL): exact integers, the same for every n_jobs
        parts = parallel_map(piece, range(0, cols.size, step), blas=False)
        return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)

    def column(self, j: int) -> tuple[np.ndarray, int]:
        """Column ``j`` as an anchor."""
        return self.R[j], int(self.ties[j])


def _count_inversions(a: np.ndarray) -> np.ndarray:
    """Per row, ``#{i < j : a_i > a_j}`` by bottom-up merge sort, vectorised over rows.

    ``a`` has shape (m, n) with integer entries in ``[0, n)``. At level ``w`` the
    sorted runs ``[2gw, 2gw + w)`` (left, ``L_g`` elements) and
    ``[2gw + w, 2gw + 2w)`` (right, ``R_g`` elements) are merged by sorting the keys
    ``(pair, value, side)`` of each row (left before right on equal values). A right
    element at merged position ``q`` (counted from the pair's start ``b_g``) that is
    the ``r``-th right element has ``q - r`` left elements ``<=`` it, hence
    ``L_g - q + r`` strictly larger ones. Summed over a row this is
    ``sum_g (L_g R_g + R_g (R_g - 1)/2 + R_g b_g) - sum_{right} position``, where
    the first sum depends only on ``n`` and ``w``. ``O(log n)`` levels of one row-wise
    sort each.
    """
    m, n = a.shape
    inv = np.zeros(m, dtype=np.int64)
    if n < 2:
        return inv
    vals = a.astype(np.int64, copy=True)
    pos = np.arange(n, dtype=np.int64)
    w = 1
    side_bits = np.empty_like(vals)
    while w < n:
        offset = (pos // (2 * w)) * (2 * n)
        key = vals                                  # reuse the buffer: key = 2 v + side + offset
        key <<= 1
        key += (offset + (pos // w) % 2)[None, :]
        key.sort(axis=1, kind="stable")
        starts = np.arange(0, n, 2 * w, dtype=np.int64)
        left = np.minimum(w, n - starts)
        right = np.clip(n - starts - w, 0, w)
        const = int(np.sum(left * right + right * (right - 1) // 2 + right * starts))
        np.bitwise_and(key, 1, out=side_bits)
        inv += const - side_bits @ pos
        key -= offset[None, :]
        key >>= 1
        vals = key
        w *= 2
    return inv
