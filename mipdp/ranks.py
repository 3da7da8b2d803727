"""Bounds-free release on ranks: ``bounds="ranks"``.

Without public ranges for the columns (and the target), :func:`mipdp.private_bss` can
replace every column of ``X`` (and ``y`` for least squares) by its **uniform ranks**

    u_ij = (R_ij − (n + 1)/2) / n,     R_ij the average rank of x_ij in column j (ties:
                                       the mean of the tied positions),

which lie in ``(−½, ½)`` whatever the data, and run the selection on them with the
public bounds ``(½, ½)``.  Nothing is estimated and no ``ε`` is spent on ranges; the
price is a larger sensitivity, because changing one row moves every other row's rank.

Sensitivity (docs/privacy.md, "Rank-based scores (bounds="ranks")")
-------------------------------------------------------------------
With ``F(S) = min_{||β||₂ <= r} Σ_i ℓ(u_iᵀβ, v_i) + (λ/2)||β||²`` the sum-form score on the
ranks and ``ρ = r √s`` (so ``||β||₁ <= ρ``):

* least squares, replace-one (``n`` public)::

      Δ(n) = (1 + ρ)² (n − 1)(n + 3) / (8 n²) + (1 + ρ) √(n² − 1) / (4 √3 n)
           -> (1 + ρ)²/8 + (1 + ρ)/(4√3)   as n grows (0.789 at ρ = 1, against 0.5 on
                                            clipped data; 0.87 at n = 10)

* least squares, add/remove (``n`` private; a bound uniform in ``n >= 2``, and the pair
  ``n = 1`` <-> ``2`` differs by at most ``1/16``: every rank is 0 at ``n = 1``)::

      Δ = max( (1 + ρ)²/6 + (1 + ρ)/(4√3),
               5/32 + (3/2)^{3/2} (1 + ρ)/(4√3) + (1 + ρ)²/16 )     (0.955 at ρ = 1)

* hinge loss (labels ``±1`` are not transformed), both notions: ``Δ = 1 + 3ρ/2``.

The score on ranks is not monotone under add/remove, so the samplers use the full ``Δ``
(not the halved scale of :data:`mipdp.selection.ADD_REMOVE_SCALE`).

Memory and input types
----------------------
The ranks are computed a block of columns at a time (about 8 MiB of ``X`` read at once,
ranked 256 KiB at a time: a memmap or a dask array is never loaded whole; a sparse block is
densified one at a time, since its zeros get a tied, non-zero rank).  The output is a
dense float64 ``(n, p)`` array, ``8 n p`` bytes: the rank design is dense whatever the
input.  With a Kendall pre-screen only the kept columns are ranked (:func:`mipdp.private_bss`
screens the raw columns: DPKendall depends on the ranks only).
"""

from __future__ import annotations

import logging
import math
from typing import cast

import numpy as np

from ._param_validation import InvalidParameterError

logger = logging.getLogger(__name__)

__all__ = ["RANKS", "RANK_BOUNDS", "RANK_LOSSES", "is_ranks", "check_ranks_options",
           "uniform_ranks", "rank_design", "rank_sensitivity"]

#: the ``bounds=`` value of the rank release
RANKS = "ranks"
#: the public bounds of the rank-transformed data
RANK_BOUNDS = (0.5, 0.5)
#: losses with a proven rank sensitivity
RANK_LOSSES = ("least_squares", "hinge")
_SQRT3 = math.sqrt(3.0)


def is_ranks(bounds) -> bool:
    """Whether ``bounds`` asks for the rank release."""
    return isinstance(bounds, str) and bounds == RANKS


def check_ranks_options(loss_name: str, prescreen, method: str = "exponential",
                        neighbours: str = "replace_one") -> None:
    """Refuse, before the data is read, what the rank release does not support."""
    if method == "mistakes" and neighbours == "add_remove":
        raise InvalidParameterError(
            "method: method='mistakes' with bounds='ranks' (what bounds=None runs here) is not "
            "available under add/remove neighbours (its stability condition is stated for "
            "the monotone score of clipped data, and the score on ranks is not monotone); "
            "use another method or neighbours='replace_one'")
    if loss_name not in RANK_LOSSES:
        raise InvalidParameterError(
            f"bounds: bounds='ranks' (what bounds=None runs here) is proven for loss in "
            f"{list(RANK_LOSSES)} only, got loss={loss_name!r}; pass public "
            "bounds=(b_x, b_y), or bounds='private' (ranges released with part of eps)")
    if prescreen is not None:
        name = prescreen[0] if isinstance(prescreen, (tuple, list)) and prescreen else None
        if name != "kendall":
            raise InvalidParameterError(
                f"prescreen: with bounds='ranks' (what bounds=None runs here) only the 'kendall' "
                f"pre-screen is available "
                f"(it depends on ranks only); the others assume rows that change alone under "
                f"a neighbour, which ranks do not; got prescreen={prescreen!r}: pass public "
                "bounds=(b_x, b_y) for it")


def uniform_ranks(v: np.ndarray) -> np.ndarray:
    """``(R − (n + 1)/2) / n`` with ``R`` the average ranks of ``v`` (1-D), in ``(−½, ½)``."""
    v = np.asarray(v, dtype=np.float64).ravel()
    n = v.size
    if n and not np.isnan(v).any():   # the sort of rank_design: no scipy.stats import (0.35 s)
        out = np.empty((n, 1))
        _rank_block_into((v + 0.0)[None, :], out, 0, _SortKeys(n, 1))   # -0.0 + 0.0 = +0.0
        return out[:, 0]
    from scipy.stats import rankdata  # lazy: scipy.stats takes ~0.5 s to import
    return (rankdata(v, method="average") - 0.5 * (n + 1)) / n


#: bytes of one block of columns read from ``X`` at once (float64): few reads of a memmap,
#: a sparse or a dask array
_READ_BYTES = 8 * 2 ** 20
#: bytes of one block of columns ranked at once (float64), within a block read; small
#: enough for the cache (the sort keys and the scatter stay in L2): 0.29 s against 0.39 s
#: with 8 MiB at n = 3000, p = 10⁴
_BLOCK_BYTES = 256 * 2 ** 10
#: columns whose values are read, and whose ranks are written, through transposed buffers
#: (rows of ``n``): a tile of ``X`` is copied into one a tile of rows at a time (reading
#: rows of ``X`` this many columns wide: 28 ms against 55 ms for the 10-column blocks ranked
#: at once, at n = 3000, p = 10⁴), the scatter of each column's positions stays within the
#: other, and the result is written in rows of this many columns (scattering straight
#: into the result touched one page per row and column)
_WRITE_COLUMNS = 64
#: rows of one tile of those copies
_WRITE_ROWS = 256
#: most low bits of a sort key that hold an entry's flat position in a write group
#: (:class:`_SortKeys`): 64 columns of up to 4096 rows; the value keeps 46 bits, so that
#: distinct values share their high bits (and go the exact way) about once in 10⁴
#: columns of 3000 normal values
_FLAT_BITS = 18
#: the lower 63 bits of an int64 (flipped for negative floats: order-preserving keys)
_LOW63 = np.int64(0x7FFFFFFFFFFFFFFF)


def _columns(X, lo: int, hi: int) -> np.ndarray:
    from .data import is_sparse
    if is_sparse(X):
        return X[:, lo:hi].toarray().astype(np.float64, copy=False)
    return np.asarray(X[:, lo:hi], dtype=np.float64)


def rank_design(X) -> np.ndarray:
    """The uniform ranks of every column of ``X``, a block of columns at a time (dense float64).

    ``X``: a numpy array or memmap (any numeric dtype), a scipy sparse matrix (CSC is the
    fast format; a block of columns is densified at a time) or a dask array; about
    ``_READ_BYTES`` of it are read at once, and ranked ``_BLOCK_BYTES`` at a time (average
    ranks, as ``scipy.stats.rankdata`` gives).  The result equals :func:`uniform_ranks` of
    every column, bit for bit (:func:`_rank_block_into`), on data without NaN (a NaN
    ranks last here and makes :func:`uniform_ranks` all NaN; the public entry points refuse
    NaN before either runs).
    """
    from .data import _large_empty, is_sparse
    if is_sparse(X):
        X = X.tocsc()
    n, p = X.shape
    # C order, as the rest of the pipeline reads dense designs in blocks of rows (an
    # F-ordered design made the warm start ten times slower at p = 10⁴); in small pages
    # when large, as the clipped copy (mipdp.data._large_empty: no huge-page compaction)
    out = _large_empty((n, p))
    if n == 0 or p == 0:
        return out
    keys = _SortKeys(n, min(p, _WRITE_COLUMNS))
    step = max(1, _BLOCK_BYTES // (8 * n))
    read = max(step, _READ_BYTES // (8 * n))
    vals = np.empty((min(p, _WRITE_COLUMNS), n))  # values of columns w0.. in its rows
    buf = np.empty((min(p, _WRITE_COLUMNS), n))   # ranks of columns w0.. in its rows
    for lo in range(0, p, read):
        hi = min(p, lo + read)
        B = _columns(X, lo, hi)
        if isinstance(X, np.memmap):      # read the block once, not once per ranked block
            B = np.array(B)
        for w0 in range(lo, hi, _WRITE_COLUMNS):
            w1 = min(hi, w0 + _WRITE_COLUMNS)
            for r0 in range(0, n, _WRITE_ROWS):   # the transpose; -0.0 + 0.0 = +0.0
                np.add(B[r0:r0 + _WRITE_ROWS, w0 - lo:w1 - lo].T, 0.0,
                       out=vals[:w1 - w0, r0:r0 + _WRITE_ROWS])
            for a in range(w0, w1, step):
                _rank_block_into(vals[a - w0:min(a + step, w1) - w0], buf.T, a - w0, keys)
            for r0 in range(0, n, _WRITE_ROWS):
                out[r0:r0 + _WRITE_ROWS, w0:w1] = buf[:w1 - w0, r0:r0 + _WRITE_ROWS].T
    return out


class _SortKeys:
    """What the packed sort keys of columns of length ``n`` share (:func:`_rank_block_into`),
    for an output of ``width`` columns (F-ordered: entry ``(row, col)`` at ``col n + row``)."""

    def __init__(self, n: int, width: int = 1) -> None:
        self.n = n
        width = max(1, width)
        # the low bits hold the entry's flat position in the output, col n + row, when it
        # takes at most _FLAT_BITS bits: the sort then gives the scatter's positions as
        # they are (no pass adding col n); else (long columns: the value bits left would
        # make distinct values share their high bits, and go the slow exact way, too
        # often) the row alone, and the scatter adds col n
        self.flat = (width * n - 1).bit_length() <= _FLAT_BITS
        self.bits = max(1, ((width if self.flat else 1) * n - 1).bit_length())
        self.mask = np.int64((1 << self.bits) - 1)
        self.index = np.arange((width if self.flat else 1) * n, dtype=np.int64).reshape(-1, n)
        # the centred ranks of a column without ties, in the order of its sorted values:
        # the same two float64 operations as on the ranks (R − (n + 1)/2) / n
        self.values = (np.arange(1.0, n + 1.0) - 0.5 * (n + 1)) / n
        inf = np.array([-np.inf, np.inf]).view(np.int64)
        inf ^= (inf >> 63) & _LOW63
        self.top_inf = inf >> self.bits      # keys at or beyond ±inf (and NaN) go the exact way
        self._tiled = self.values[None, :]

    def tiled(self, b: int) -> np.ndarray:
        """``values`` repeated in ``b`` rows (a scatter with a full array of values is
        three times as fast as ``np.put`` repeating one row)."""
        if self._tiled.shape[0] < b:
            self._tiled = np.tile(self.values, (b, 1))
        return self._tiled[:b]


def _rank_block_into(Bt: np.ndarray, out: np.ndarray, lo: int, keys: _SortKeys) -> None:
    """Write the centred ranks of the rows of ``Bt`` (``(b, n)`` C-ordered float64: the
    columns of ``X`` transposed, ``-0.0`` made ``+0.0``) into ``out[:, lo:lo + b]``
    (``out``: F-contiguous, a transposed buffer or one column).

    Each column is sorted once, as int64 keys packed with its row indices: the float's
    bits made order-preserving (``-0.0`` is ``+0.0`` already: the two compare equal), the
    low ``bits`` bits replaced by the row index.  One sort of these keys (numpy's
    vectorised sort: twice as fast as an argsort) gives the order of the values and the
    positions; the centred positions are then scattered straight into ``out`` (an indexed
    assignment of a full array of values: three times as fast as ``np.put``).

    The order is exact between keys whose high bits differ.  A column where two adjacent
    sorted keys share their high bits is checked on its values: if each such pair holds
    equal values (ties), the tied blocks get their mean position, as before; otherwise
    (distinct values within ``2⁻⁵²⁺ᵇⁱᵗˢ`` relative, an infinity or a NaN) the column is
    ranked by the exact argsort path (:func:`_average_ranks_rows`).  Every path gives the
    average ranks bit for bit; which one runs depends on the data and changes only the time.
    The low bits hold the entry's flat position in ``out`` (``col n + row``: ``keys.bits``
    of them, 18 for 64 columns of 3000 rows), so that the sorted keys' low bits are the
    scatter's positions as they are, when that takes at most :data:`_FLAT_BITS` bits; else
    (longer columns) the row, and ``col n`` is added after the sort.
    """
    b, n = Bt.shape
    Kv = Bt.view(np.int64)
    K = Kv >> 63
    K &= _LOW63
    K ^= Kv                                            # order-preserving as int64
    K &= ~keys.mask
    K |= keys.index[lo:lo + b] if keys.flat else keys.index
    K.sort(axis=1)
    pos = K & keys.mask                                # out's flat position of each value
    cols = np.arange(lo, lo + b, dtype=np.int64)
    if not keys.flat:                                  # the rows: add col n
        pos += (cols * n)[:, None]
    K >>= keys.bits                                    # the high bits alone
    same = K[:, 1:] == K[:, :-1]
    tied = np.flatnonzero(same.any(axis=1))
    exact = (K[:, 0] <= keys.top_inf[0]) | (K[:, -1] >= keys.top_inf[1])
    values = keys.tiled(b)          # the ranks of a column without ties, in sorted order
    if tied.size:
        rows_t = pos[tied] - (cols[tied] * n)[:, None]       # rows of the sorted values
        srt = np.take_along_axis(Bt[tied], rows_t, axis=1)
        ok = ((srt[:, 1:] == srt[:, :-1]) == same[tied]).all(axis=1) & ~exact[tied]
        exact[tied[~ok]] = True
        if ok.any():
            values = values.copy()
            ranks = _tied_positions(srt[ok])
            ranks -= 0.5 * (n + 1)
            ranks /= n
            values[tied[ok]] = ranks
    assert out.flags.f_contiguous and (not keys.flat or lo + b <= keys.index.shape[0])
    flat = out.T.reshape(-1)   # a view: (row, col) is at col * n + row
    if not exact.any():
        flat[pos] = values
    elif not exact.all():
        rows = np.flatnonzero(~exact)
        flat[pos[rows]] = values[rows]
    if exact.any():                                     # rare: the exact argsort path
        rows = np.flatnonzero(exact)
        ranks = _average_ranks_rows(Bt[rows])
        ranks -= 0.5 * (n + 1)
        ranks /= n
        out[:, lo + rows] = ranks.T


def _average_ranks_rows(Bt: np.ndarray) -> np.ndarray:
    """Average ranks (1-based) along every row of the C-ordered ``Bt`` (shape ``(b, n)``).

    One sort per row.  A row without ties gets the inverse of its sorting permutation
    (positions ``1..n`` scattered back); only the rows with a tie (found on the sorted
    values) get the tied blocks' mean position ``(first + last)/2 + 1``.
    """
    b, n = Bt.shape
    order = np.argsort(Bt, axis=1)          # tied values share a rank: any order will do
    srt = np.take_along_axis(Bt, order, axis=1)
    tied_rows = np.flatnonzero((srt[:, 1:] == srt[:, :-1]).any(axis=1))
    values = np.broadcast_to(np.arange(1.0, n + 1.0), (b, n))
    if tied_rows.size:
        values = np.array(values)
        values[tied_rows] = _tied_positions(srt[tied_rows])
    ranks = np.empty((b, n))
    np.put_along_axis(ranks, order, values, axis=1)
    return ranks


def _tied_positions(srt: np.ndarray) -> np.ndarray:
    """For each row of sorted values, the mean 1-based position of each value's tied block."""
    n = srt.shape[1]
    idx = np.arange(n)
    new = np.ones(srt.shape, dtype=bool)                # a tied block starts here
    new[:, 1:] = srt[:, 1:] != srt[:, :-1]
    first = np.maximum.accumulate(np.where(new, idx, 0), axis=1)
    last_mark = np.ones(srt.shape, dtype=bool)          # a tied block ends here
    last_mark[:, :-1] = new[:, 1:]
    last = np.minimum.accumulate(np.where(last_mark, idx, n)[:, ::-1], axis=1)[:, ::-1]
    return 0.5 * (first + last) + 1.0


def _rho(s: int, radius: float) -> float:
    return float(radius) * math.sqrt(s)


def rank_sensitivity(loss_name: str, n: int | None, s: int, radius: float,
                     neighbours: str = "replace_one") -> float:
    """Sensitivity ``Δ`` of the sum-form score ``F(S)`` on uniform ranks.

    Parameters
    ----------
    loss_name : {"least_squares", "hinge"}
    n : int or None
        Number of rows; used only under replace-one (it is public then).  Under add/remove
        the bound is uniform in ``n >= 1`` (proven for ``n >= 2``; ``n = 1`` <-> ``2`` moves
        ``F`` by at most ``1/16``) and ``n`` is ignored.
    s : int
    radius : float
        ``r`` of the coefficient ball (``||β||₁ <= r √s``).
    neighbours : {"replace_one", "add_remove"}

    Returns
    -------
    float
        ``Δ`` with ``|F_D(S) − F_D'(S)| <= Δ`` for every support ``S`` and neighbours
        ``D, D'`` (docs/privacy.md, "Rank-based scores (bounds="ranks")").
    """
    rho = _rho(s, radius)
    if loss_name == "hinge":
        return 1.0 + 1.5 * rho
    if loss_name != "least_squares":
        raise InvalidParameterError(f"loss: no rank sensitivity for {loss_name!r}")
    if neighbours == "add_remove":
        t1 = (1 + rho) ** 2 / 6.0 + (1 + rho) / (4 * _SQRT3)
        t2 = 5.0 / 32.0 + 1.5 ** 1.5 * (1 + rho) / (4 * _SQRT3) + (1 + rho) ** 2 / 16.0
        return max(t1, t2)
    n = int(cast(int, n))  # given under replace-one
    return ((1 + rho) ** 2 * (n - 1) * (n + 3) / (8.0 * n * n)
            + (1 + rho) * math.sqrt(n * n - 1.0) / (4 * _SQRT3 * n))
