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


def _popcount_rows(bits: np.ndarray) -> np.ndarray:
    """Number of set bits in each row of a ``(k, W)`` uint64 array."""
    if hasattr(np, "bitwise_count"):                       # numpy >= 2.0
        return np.bitwise_count(bits).sum(axis=1, dtype=np.intp)
    table = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)
    by = np.ascontiguousarray(bits).view(np.uint8).reshape(bits.shape[0], -1)
    return table[by].sum(axis=1, dtype=np.intp)


def _bits(positions: np.ndarray, W: int) -> np.ndarray:
    """A ``(W,)`` uint64 bit set of ``positions`` (ints in ``[0, 64 W)``)."""
    out = np.zeros(W, dtype=np.uint64)
    positions = np.asarray(positions, dtype=np.intp)
    np.bitwise_or.at(out, positions // 64, np.left_shift(np.uint64(1),
                                                         (positions % 64).astype(np.uint64)))
    return out


def _prefix_bits(order: np.ndarray, W: int) -> np.ndarray:
    """``(m + 1, W)``: row ``r`` is the bit set of ``order[:r]`` (candidate positions)."""
    m = order.size
    single = np.zeros((m + 1, W), dtype=np.uint64)
    single[np.arange(1, m + 1), order // 64] = np.left_shift(
        np.uint64(1), (order % 64).astype(np.uint64))
    return np.bitwise_or.accumulate(single, axis=0)


class _GroupState:
    """Dominance state of one group against its candidates, as bit sets over candidates.

    Row ``i`` of ``le`` holds the candidates ``c`` with ``G[t, c] <= G[t, idx[i]]`` in every
    cut seen so far; row ``i`` of ``strict`` those with ``G[t, c] < G[t, idx[i]]`` in some
    cut or ``c < idx[i]`` (the index tie-break).  For one cut, ``{c : G[t, c] <= v}`` is a
    prefix of the candidates sorted by ``G[t, ·]``, so a cut costs two ``searchsorted`` of
    the group's values and two gathers of ``W = ⌈m / 64⌉`` words per column.
    """

    def __init__(self, idx: np.ndarray, cand: np.ndarray) -> None:
        self.idx, self.cand = idx, cand
        m = cand.size
        self.W = W = max(1, -(-m // 64))
        if m == 0 or idx.size == 0:
            self.le = self.strict = self.own = np.zeros((idx.size, W), dtype=np.uint64)
            return
        self.le = np.empty((idx.size, W), dtype=np.uint64)
        self.le[:] = _prefix_bits(np.arange(m), W)[m]
        by_index = np.argsort(cand, kind="stable")
        below = np.searchsorted(cand[by_index], idx, side="left")    # candidates c < j
        self.strict = _prefix_bits(by_index, W)[below]
        # the column's own bit, where it is a candidate (a column never dominates itself)
        pos = np.searchsorted(cand[by_index], idx)
        pos = np.minimum(pos, m - 1)
        is_cand = cand[by_index][pos] == idx
        self.own = np.zeros((idx.size, W), dtype=np.uint64)
        if np.any(is_cand):
            c = by_index[pos[is_cand]]
            self.own[np.flatnonzero(is_cand), c // 64] = np.left_shift(
                np.uint64(1), (c % 64).astype(np.uint64))

    def copy(self) -> _GroupState:
        """An independent state (the bit sets copied; columns and candidates shared)."""
        new = object.__new__(_GroupState)
        new.idx, new.cand, new.W, new.own = self.idx, self.cand, self.W, self.own
        new.le, new.strict = self.le.copy(), self.strict.copy()
        return new

    def add_cuts(self, G_new: np.ndarray) -> None:
        for g in G_new:
            gc = g[self.cand]
            order = np.argsort(gc, kind="stable")
            sv = gc[order]
            pre = _prefix_bits(order, self.W)
            gj = g[self.idx]
            self.le &= pre[np.searchsorted(sv, gj, side="right")]
            self.strict |= pre[np.searchsorted(sv, gj, side="left")]

    def counts(self, live: np.ndarray) -> np.ndarray:
        """Live strict dominators of each column of the group."""
        ok = _bits(np.flatnonzero(live[self.cand]), self.W)
        return _popcount_rows(self.le & self.strict & ok[None, :] & ~self.own)


class DominanceCache:
    """Dominance counts kept across the solves of a search and across searches.

    Along a search cuts are only ever added, and a new cut can only remove a pair
    ``(j dominates j')``: the pairs of the columns of each group against a fixed
    candidate set are updated with the new cuts alone instead of recomputed.  Any
    candidate set gives a valid count (fewer candidates only fix fewer columns), so the
    candidates of the first computation are kept; the state is rebuilt when the groups
    change (another region pattern).  The pairs are bit sets over the candidates
    (:class:`_GroupState`): a cut costs ``O(|group| (log m + m/64))``, and the state
    ``3 · 8⌈m/64⌉`` bytes per column.

    :meth:`mask` counts only dominators in ``live`` (columns not fixed by other means), so
    every dominator counted can take the dominated column's place (the claim above).
    """

    def __init__(self) -> None:
        self._key: list[np.ndarray] | None = None
        self._state: list[_GroupState] = []
        self._T = 0

    def copy(self) -> DominanceCache:
        """An independent cache in the same state."""
        new = DominanceCache()
        new._key = self._key
        new._state = [st.copy() for st in self._state]
        new._T = self._T
        return new

    def mask(self, G: np.ndarray, groups: list[np.ndarray], need: int, live: np.ndarray,
             chunk: int = 4096) -> np.ndarray:
        """Mask of the columns with at least ``need`` live dominators in their group."""
        T, p = G.shape
        groups = [np.asarray(g, dtype=np.intp) for g in groups]
        same = (self._key is not None and len(self._key) == len(groups)
                and all(a.shape == b.shape and np.array_equal(a, b)
                        for a, b in zip(self._key, groups, strict=True))
                and T >= self._T)
        if not same:
            self._key = [g.copy() for g in groups]
            self._state = []
            total = G.sum(axis=0)
            for idx in groups:
                m = min(idx.size, 4 * need + 64)
                cand = idx[np.lexsort((idx, total[idx]))][:m]
                self._state.append(_GroupState(idx, cand))
            self._T = 0
        if T > self._T:
            for st in self._state:
                if st.idx.size and st.cand.size:
                    st.add_cuts(G[self._T:])
        self._T = T
        out = np.zeros(p, dtype=bool)
        for st in self._state:
            if st.idx.size <= need or not st.cand.size:
                continue
            out[st.idx] = st.counts(live) >= need
        return out


class SharedDominance:
    """Dominance states built once on the first ``T0`` cuts of a store and handed out as
    copies, for searches that start from the same cuts (the forks of one enumeration,
    :mod:`.fork`): each copy is then brought up to its own store by
    :meth:`DominanceCache.mask` (the cuts after ``T0`` only).

    A state is a function of the first ``T0`` cuts, the groups and ``need`` (its
    candidates: ``4 need + 64`` per group by the coefficient sums of those cuts), whoever
    builds it: the same for every schedule.  Safe in threads; the last few states are kept.
    """

    def __init__(self, keep: int = 4) -> None:
        import threading
        self._lock = threading.Lock()
        self._states: dict[tuple, DominanceCache] = {}
        self._keep = keep

    def cache(self, G0: np.ndarray, groups: list[np.ndarray], need: int) -> DominanceCache:
        """A copy of the state on the cuts ``G0`` (the store's first rows) for ``groups``
        and ``need``, built on first request."""
        groups = [np.asarray(g, dtype=np.intp) for g in groups]
        key = (int(need), G0.shape, tuple(g.tobytes() for g in groups))
        with self._lock:
            state = self._states.get(key)
            if state is None:
                state = DominanceCache()
                state.mask(G0, groups, need, np.zeros(G0.shape[1], dtype=bool))
                if len(self._states) >= self._keep:
                    self._states.pop(next(iter(self._states)))
                self._states[key] = state
            return state.copy()
