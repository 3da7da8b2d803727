"""Exact column fixing by dominance, for the region searches.

In a search every row but the cuts treats the columns of one group (inside the centre,
or outside it) alike: the cardinality row, the region row and the cutoff on ``η``.
Column ``j`` *dominates* ``j'`` of the same group when ``G_{tj} <= G_{tj'}`` in every cut
``t`` (cuts read ``η >= c_t + G_t z``), with ties broken by index so the relation is
strict.  Swapping ``j'`` for ``j`` in a support then increases no cut.

Claim: if ``j'`` has at least ``s + K`` dominators (``K`` = no-good rows in the model),
fixing ``z_{j'} = 0`` keeps the search exact.  A feasible support ``z`` containing
``j'`` holds at most ``s - 1`` of its dominators, so at least ``K + 1`` swaps
``z - j' + j`` give distinct supports, at most ``K`` of which a no-good excludes; the
remaining one satisfies every row ``z`` satisfies.  Each swap strictly lowers
``(Σ_{i∈z} Σ_t G_ti, Σ_{i∈z} i)`` lexicographically, so repeating it ends at a
feasible support using no fixed column.  Hence the reduced master is infeasible iff the
full one is, and every point it returns is feasible for the full one.
"""

from __future__ import annotations

import numpy as np

__all__ = ["dominated_columns", "DominanceCache"]


def dominated_columns(G: np.ndarray, groups: list[np.ndarray], need: int, *,
                      n_candidates: int | None = None, chunk: int = 512) -> np.ndarray:
    """Mask of the columns with at least ``need`` dominators in their group.

    Parameters
    ----------
    G : ndarray, shape (T, p)
        Cut coefficients of ``z``.
    groups : list of int arrays
        Columns that the other rows treat alike (a partition of range(p)).
    need : int
        Number of dominators required to fix a column.
    n_candidates : int, optional
        Dominators are looked for among the ``n_candidates`` columns of each group with
        the smallest coefficient sum (a dominator always has a smaller-or-equal sum);
        counting fewer only fixes fewer columns.  Default ``4 * need + 64``.

    Returns
    -------
    ndarray of bool, shape (p,)
    """
    T, p = G.shape
    out = np.zeros(p, dtype=bool)
    m = 4 * need + 64 if n_candidates is None else n_candidates
    total = G.sum(axis=0)
    for idx in groups:
        idx = np.asarray(idx, dtype=np.intp)
        if idx.size <= need:
            continue
        order = idx[np.lexsort((idx, total[idx]))]
        cand = order[:m]
        Gc = G[:, cand].T[None, :, :]  # (1, m, T)
        for lo in range(0, idx.size, chunk):
            cols = idx[lo:lo + chunk]
            Gj = G[:, cols].T[:, None, :]  # (c, 1, T)
            le = np.all(Gc <= Gj, axis=2)  # cand <= col in every cut
            strict = np.any(Gc < Gj, axis=2) | (cand[None, :] < cols[:, None])
            dom = le & strict & (cand[None, :] != cols[:, None])
            out[cols] = dom.sum(axis=1) >= need
    return out


class DominanceCache:
    """Dominance counts kept across the solves of a search and across searches.

    Along a search cuts are only ever added, and a new cut can only remove a pair
    ``(j dominates j')``: the pair matrix of the columns of each group against a fixed
    candidate set is updated with the new cuts alone (``O(|group| m ΔT)``) instead of
    recomputed (``O(|group| m T)``).  Any candidate set gives a valid count (fewer
    candidates only fix fewer columns), so the candidates of the first computation are
    kept; the matrices are rebuilt when the groups change (another region pattern).

    :meth:`mask` counts only dominators in ``live`` (columns not fixed by other means), so
    every dominator counted can take the dominated column's place (the claim above).
    """

    def __init__(self) -> None:
        self._key: list[np.ndarray] | None = None
        self._state: list[tuple] = []
        self._T = 0

    def mask(self, G: np.ndarray, groups: list[np.ndarray], need: int, live: np.ndarray,
             chunk: int = 4096) -> np.ndarray:
        """Mask of the columns with at least ``need`` live dominators in their group."""
        T, p = G.shape
        groups = [np.asarray(g, dtype=np.intp) for g in groups]
        same = (self._key is not None and len(self._key) == len(groups)
                and all(a.shape == b.shape and np.array_equal(a, b)
                        for a, b in zip(self._key, groups))
                and T >= self._T)
        if not same:
            self._key = [g.copy() for g in groups]
            self._state = []
            total = G.sum(axis=0)
            for idx in groups:
                m = min(idx.size, 4 * need + 64)
                cand = idx[np.lexsort((idx, total[idx]))][:m]
                le = np.ones((idx.size, cand.size), dtype=bool)
                strict = cand[None, :] < idx[:, None]
                self._state.append((idx, cand, le, strict))
            self._T = 0
        for idx, cand, le, strict in self._state:
            if T > self._T and idx.size and cand.size:
                Gc = G[self._T:, cand].T[None, :, :]  # (1, m, ΔT)
                for lo in range(0, idx.size, chunk):
                    Gj = G[self._T:, idx[lo:lo + chunk]].T[:, None, :]  # (c, 1, ΔT)
                    le[lo:lo + chunk] &= np.all(Gc <= Gj, axis=2)
                    strict[lo:lo + chunk] |= np.any(Gc < Gj, axis=2)
        self._T = T
        out = np.zeros(p, dtype=bool)
        for idx, cand, le, strict in self._state:
            if idx.size <= need or not cand.size:
                continue
            ok = live[cand][None, :] & (cand[None, :] != idx[:, None])
            out[idx] = (le & strict & ok).sum(axis=1) >= need
        return out
