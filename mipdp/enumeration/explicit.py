"""Explicit search of a region: a cut bound for every member, exact values only where needed.

When a :class:`~mipdp.mechanisms.regions.Region` has few enough members (a few million),
listing them is cheaper than asking the MIP backend about them one point at a time: the
bound ``b(S) = max_t a_t + Σ_{i∈S} G_{t,i}`` of every cut found so far
(:class:`~mipdp.enumeration.cuts.CutStore`) is computed for all members at once, every
member whose bound passes the current threshold is *excluded with a proof* (each cut is a
global lower bound of ``L``), and the others are evaluated exactly, lowest bound first, in
batches.  Between batches a new cut is taken at the member with the lowest bound (when
cuts pay for themselves: each one costs one evaluation with its dual, and must exclude
more members than that time would evaluate), which raises the bounds of the members
around it.  Those costs are *modelled* from the sizes (:mod:`mipdp.enumeration.costs`),
never measured: which members are evaluated and where cuts are taken depend only on the
data, the region and the state of the enumeration, not on the clock, the machine's load
or the other workers.  The search ends when every member is evaluated or excluded, so:

* every member with ``L < threshold`` (the threshold at the end) has been evaluated, and
* the minimum over the region is exact whenever it is below the threshold.

The threshold may fall during the search (the ``R``-th best value of top-R, the best member
so far less a tolerance for a minimum); excluding a member at an earlier, higher threshold
is still a proof at the final one.  Members are indexed without being listed: a member is
the fixed features, a set ``K`` of kept centre features and a set ``A`` of added outside
features, so the bound of a cut is ``c + u[K] + v[A]`` with one sum per ``K`` and per
``A``, and member ``i`` is ``(K[i // |A|], A[i % |A|])``.  Excluding uses a margin above the
threshold (the master's cutoff margin plus a bound on the rounding error of the sums), so
an exclusion is a proof; nothing is guessed.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..mechanisms.regions import Region
from .costs import search_costs

logger = logging.getLogger(__name__)

__all__ = ["combinations", "unrank_combinations", "subset_sums", "RegionTable",
           "ExplicitResult", "explicit_search"]


def combinations(n: int, q: int) -> np.ndarray:
    """All ``q``-subsets of ``range(n)`` in lexicographic order, shape ``(C(n, q), q)``, int32.

    Built level by level: the ``q``-subsets with first element ``f`` are ``f`` followed by
    the last ``C(n - f - 1, q - 1)`` of the ``(q - 1)``-subsets (those of ``f+1 .. n-1``).
    Level ``ℓ`` is only built over the last ``n - q + ℓ`` elements (the only ones a
    ``q``-subset can hold in its last ``ℓ`` places), so no level is larger than the
    answer (``C(n - q + ℓ, ℓ) <= C(n, q)``), also when ``q > n/2``.
    """
    n, q = int(n), int(q)
    if q < 0 or q > n:
        return np.zeros((0, max(q, 0)), dtype=np.int32)
    prev = np.zeros((1, 0), dtype=np.int32)
    for level in range(1, q + 1):
        u = n - q + level  # universe of this level: the elements n - u .. n - 1
        base = n - u
        out = np.empty((math.comb(u, level), level), dtype=np.int32)
        pos = 0
        for f in range(u - level + 1):
            m = math.comb(u - f - 1, level - 1)
            out[pos:pos + m, 0] = base + f
            out[pos:pos + m, 1:] = prev[prev.shape[0] - m:]
            pos += m
        prev = out
    return prev


#: cap of the binomial tables of :func:`unrank_combinations` (entries above every rank)
_BIG = 2 ** 62


def unrank_combinations(n: int, q: int, idx: np.ndarray) -> np.ndarray:
    """Rows ``idx`` of :func:`combinations` ``(n, q)`` without listing the others.

    With ``start`` the smallest element still allowed and ``q'`` elements to choose, the
    subsets whose first element is ``e`` start at offset ``C(n - start, q') - C(n - e, q')``
    (hockey-stick identity), so ``e = n - m`` with ``m`` the smallest integer such that
    ``C(m, q') >= C(n - start, q') - rank``: one ``searchsorted`` per position.  Every
    table entry that is used is at most ``C(n, q)``; the others are capped (the tables stay
    non-decreasing, and int64 cannot overflow when ``q'`` is near ``n/2``).
    """
    n, q = int(n), int(q)
    if math.comb(n, q) >= _BIG:
        raise ValueError(f"unrank_combinations: C({n}, {q}) is too large to index")
    idx = np.asarray(idx, dtype=np.int64).copy()
    out = np.empty((idx.size, q), dtype=np.int64)
    start = np.zeros(idx.size, dtype=np.int64)
    for t in range(q):
        qq = q - t
        table = np.array([min(math.comb(m, qq), _BIG) for m in range(n + 1)], dtype=np.int64)
        r = table[n - start] - idx
        m = np.searchsorted(table, r, side="left")
        e = n - m
        out[:, t] = e
        idx -= table[n - start] - table[n - e]
        start = e + 1
    return out


def subset_sums(g: np.ndarray, q: int) -> np.ndarray:
    """``Σ_{i∈A} g_i`` for every ``q``-subset ``A`` of ``range(len(g))``, in the order of
    :func:`combinations` — without listing the subsets.

    The ``q``-subsets whose first element is ``f`` are ``f`` followed by the
    ``(q - 1)``-subsets of ``g[f + 1:]``, which are the *last* ``C(n - f - 1, q - 1)``
    ``(q - 1)``-subsets in lexicographic order; so each level is contiguous slices of the
    previous one plus a constant.  As in :func:`combinations`, level ``ℓ`` only covers the
    last ``n - q + ℓ`` elements.  At most ``C(n, q)`` additions per level, no gathers.
    """
    g = np.asarray(g, dtype=float)
    n = g.size
    if q < 0 or q > n:
        return np.zeros(0)
    if q == 0:
        return np.zeros(1)
    T = g[q - 1:].copy()  # level 1 over the last n - q + 1 elements
    for level in range(2, q + 1):
        u = n - q + level
        base = n - u
        prev = T.size
        out = np.empty(math.comb(u, level))
        pos = 0
        for f in range(u - level + 1):
            m = math.comb(u - f - 1, level - 1)
            np.add(T[prev - m:], g[base + f], out=out[pos:pos + m])
            pos += m
        T = out
    return T


def _cut_region_minima(a: np.ndarray, G: np.ndarray, region: Region) -> np.ndarray:
    """``min_{S ∈ region} a_t + Σ_{i∈S} G_{t,i}`` for every cut ``t`` (holes ignored: a
    lower value, still a bound)."""
    out = a + G[:, region.fixed_in].sum(axis=1)
    step = max(1, (1 << 22) // max(1, G.shape[1]))   # cuts per block: ~32 MB temporaries
    for pool, q in ((region.free_center, region.n_keep), (region.free_outside, region.n_add)):
        if q <= 0:
            continue
        for lo in range(0, a.size, step):
            Gp = G[lo:lo + step, pool]
            out[lo:lo + step] += (np.partition(Gp, q - 1, axis=1)[:, :q].sum(axis=1)
                                  if q < pool.size else Gp.sum(axis=1))
    return out


class RegionTable:
    """The members of a region, indexed by a pair ``(iK, iA)`` without being listed.

    A member is the region's fixed features, the ``iK``-th set of kept centre features
    and the ``iA``-th set of added outside features (both in lexicographic order).

    Parameters
    ----------
    region : Region
    """

    def __init__(self, region: Region) -> None:
        self.region = region
        self.keep = region.free_center[combinations(region.free_center.size, region.n_keep)]
        self.fixed = region.fixed_in
        self.nK = self.keep.shape[0]
        self.nA = math.comb(region.free_outside.size, region.n_add) if region.n_add >= 0 else 0
        self.size = self.nK * self.nA

    def rows(self, iK: np.ndarray, iA: np.ndarray) -> np.ndarray:
        """Sorted supports of the members ``(iK, iA)``, shape ``(m, s)``."""
        m = iK.size
        R = self.region
        add = R.free_outside[unrank_combinations(R.free_outside.size, R.n_add, iA)]
        out = np.concatenate([self.keep[iK], add.reshape(m, -1),
                              np.broadcast_to(self.fixed, (m, self.fixed.size))], axis=1)
        return np.sort(out, axis=1).astype(np.intp)

    def parts(self, a: float, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(u, v)`` with ``a + Σ_{i∈S} g_i = u[iK] + v[iA]``."""
        c = a + float(g[self.fixed].sum())
        u = c + g[self.keep].sum(axis=1)
        v = subset_sums(g[self.region.free_outside], self.region.n_add)
        return u, v

    def cut_bound(self, a: float, g: np.ndarray, iK: np.ndarray | None = None,
                  iA: np.ndarray | None = None) -> np.ndarray:
        """``a + Σ_{i∈S} g_i`` for the members ``(iK, iA)`` (every member, shape
        ``(nK, nA)``, when ``iK`` is ``None``)."""
        u, v = self.parts(a, g)
        if iK is None:
            return u[:, None] + v[None, :]
        return u[iK] + v[iA]

    def added(self, iA: np.ndarray) -> np.ndarray:
        """Positions in ``free_outside`` of the added features of members ``iA``,
        shape ``(m, n_add)`` (for :meth:`member_bound` on few members)."""
        R = self.region
        return unrank_combinations(R.free_outside.size, R.n_add, iA).reshape(iA.size, -1)

    def member_bound(self, a: float, g: np.ndarray, iK: np.ndarray,
                     added: np.ndarray) -> np.ndarray:
        """:meth:`cut_bound` of the members ``(iK, ·)`` whose added features are ``added``
        (:meth:`added`): ``O(m · s)`` work, where :meth:`cut_bound` sums over every
        ``C(|F_O|, n_add)`` added set whatever the number of members asked for."""
        c = a + float(g[self.fixed].sum())
        u = c + g[self.keep].sum(axis=1)
        return u[iK] + g[self.region.free_outside][added].sum(axis=1)


@dataclass
class ExplicitResult:
    """What an explicit search found: the best member (exact), the final threshold (every
    member not evaluated has ``L >`` it), and the work done."""

    best: float
    best_support: np.ndarray | None
    threshold: float
    n_members: int
    n_evaluated: int
    n_cuts: int
    n_excluded_by_cuts: int
    #: False when the search stopped at ``max_evaluations``: then ``threshold`` proves
    #: nothing (it is ``-inf``) and only ``best`` (a member's exact value) holds
    complete: bool = True


def explicit_search(enum, region: Region, *, threshold=None, level: float = math.inf,
                    abs_tol: float = 0.0, name: str = "explicit",
                    max_evaluations: int | None = None) -> ExplicitResult:
    """Evaluate every member of ``region`` whose ``L`` may lie below the threshold.

    Parameters
    ----------
    enum : SupportEnumerator
        Supplies the objective, the cut store, the evaluated supports (``found``), the cut
        oracle and the progress reporter.
    region : Region
    threshold : callable, optional
        ``threshold()`` in objective units, non-increasing over the search (top-R: the
        ``R``-th smallest value found).  Default: ``min(level, best - abs_tol)`` with
        ``best`` the best member found (a minimum, exact to ``abs_tol``).
    level : float
        Members above it are not wanted (the threshold never exceeds it).
    abs_tol : float
        Accuracy wanted for the minimum (objective units).
    name : str
        Phase name (statistics and progress).
    max_evaluations : int, optional
        Stop once this many members have been evaluated with others still to decide; the
        result is then incomplete (``complete=False``, ``threshold=-inf``: no member not
        evaluated is bounded).  ``None``: no limit.

    Returns
    -------
    ExplicitResult
    """
    obj = enum.objective
    store = enum.cuts
    found = enum.found
    ph = enum._phase(name)
    t_start = time.perf_counter()
    table = RegionTable(region)
    if table.size == 0:
        return ExplicitResult(best=math.inf, best_support=None, threshold=float(level),
                              n_members=0, n_evaluated=0, n_cuts=0, n_excluded_by_cuts=0)
    best: list[Any] = [math.inf, None]
    cheap = bool(getattr(obj, "cheap_values", False))
    if found and table.size:  # members evaluated before (other phases, other searches)
        if hasattr(enum, "found_array"):
            keys, arr = enum.found_array()
        else:
            keys = list(found)
            arr = np.array(keys, dtype=np.intp).reshape(-1, region.s)
        inside = region.contains(arr)
        for i in np.flatnonzero(inside).tolist():
            if found[keys[i]] < best[0]:
                best[0], best[1] = found[keys[i]], np.array(keys[i], dtype=np.intp)

    def thr() -> float:
        if threshold is None:
            return min(level, best[0] - abs_tol)
        return min(level, float(threshold()))

    def margin() -> float:
        return enum.cutoff_margin * enum.scale + store.slack()

    # -- bounds of every member from the cuts found so far, excluding as we go -----------
    a, G = store.arrays
    # Each cut's exact minimum over the region (its fixed features, the n_keep smallest
    # terms of the free centre features and the n_add smallest of the free outside ones):
    # one that passes the threshold excludes every member at once, and the cuts are
    # applied in decreasing order of it (the most excluding first).
    order = np.arange(a.size)
    if a.size:
        rmin = _cut_region_minima(a, G, region)
        if rmin.max() > thr() + margin():
            ph.time += time.perf_counter() - t_start
            return ExplicitResult(best=float(best[0]), best_support=best[1],
                                  threshold=float(thr()), n_members=table.size, n_evaluated=0,
                                  n_cuts=0, n_excluded_by_cuts=table.size)
        order = np.argsort(rmin, kind="stable")   # applied from the end: largest first
    # members still alive and their bounds (None: all, not computed)
    iK: np.ndarray | None = None
    iA: np.ndarray | None = None
    lb: np.ndarray | None = None
    added = None  # the alive members' added features, once they are few (member_bound)
    few = max(1, table.nA // (4 * max(1, region.n_add)))

    def bound_of(t):
        if added is not None:
            return table.member_bound(a[t], G[t], iK, added)
        return table.cut_bound(a[t], G[t], iK, iA)

    for t in order[::-1]:
        b = bound_of(t)
        if iK is None:
            lb = b if lb is None else np.maximum(lb, b, out=lb)
            keep = lb <= thr() + margin()
            if keep.mean() < 0.5 or t == order[0]:  # sparse from here on
                iK, iA = (x.astype(np.int32) for x in np.nonzero(keep))
                lb = lb[keep]
        else:
            assert iA is not None and lb is not None  # set with iK
            np.maximum(lb, b, out=lb)
            keep = lb <= thr() + margin()
            iK, iA, lb = iK[keep], iA[keep], lb[keep]
            if added is not None:
                added = added[keep]
        if iK is not None and iK.size == 0:
            break
        if added is None and iK is not None and iK.size <= few:
            assert iA is not None  # set with iK
            added = table.added(iA)
    if iK is None:
        iK, iA = (x.astype(np.int32).ravel() for x in np.indices((table.nK, table.nA)))
        lb = np.full(table.size, -math.inf)
    assert iA is not None and lb is not None  # set with iK
    excluded = table.size - iK.size
    n_eval = n_cuts = 0
    if max_evaluations is not None and iK.size > max_evaluations:
        # more candidates than the budget: give up before evaluating any
        ph.time += time.perf_counter() - t_start
        return ExplicitResult(best=float(best[0]), best_support=best[1], threshold=-math.inf,
                              n_members=table.size, n_evaluated=0, n_cuts=0,
                              n_excluded_by_cuts=int(excluded), complete=False)
    # -- evaluate, lowest bound first; cut where it pays -------------------------------------
    # The choices below (cut or not, batch sizes) use the modelled cost of a cut in values
    # (mipdp.enumeration.costs), a function of the sizes only, never measured times: the
    # same members are evaluated and cut in every run and on every worker.
    costs = search_costs(enum, region)
    spent_val = spent_cut = 0.0   # measured seconds, for the log only
    gain = math.inf  # members the last cut excluded
    batch = 16
    max_batch = 65_536 if cheap else 4096
    last_report = time.perf_counter()
    complete = True
    while iK.size:
        if max_evaluations is not None and n_eval >= max_evaluations:
            complete = False
            break
        enum.remaining_time(name)
        if iK.size <= batch:
            take = np.argsort(lb, kind="stable")
        else:
            take = np.argpartition(lb, batch - 1)[:batch]
            take = take[np.argsort(lb[take], kind="stable")]
        rows = table.rows(iK[take], iA[take])
        mask = np.ones(iK.size, dtype=bool)
        mask[take] = False
        iK, iA, lb = iK[mask], iA[mask], lb[mask]
        if added is not None:
            added = added[mask]
        vals = np.empty(rows.shape[0])
        todo = []
        for i, key in enumerate(map(tuple, rows.tolist())):
            v = found.get(key)
            if v is None:
                todo.append(i)
            else:
                vals[i] = v
        new_cut = False
        if todo and gain > costs.ratio(batch):
            i0 = todo.pop(0)  # the lowest bound: the point a MIP master would return
            n_store = store.arrays[0].size     # the cuts it adds (main and extra) follow
            t0 = time.perf_counter()
            vals[i0] = enum._evaluate_cut(rows[i0], add_to_master=True)[0]
            spent_cut += time.perf_counter() - t0
            n_cuts += 1
            n_eval += 1
            new_cut = True
        if todo:
            t0 = time.perf_counter()
            v = np.asarray(obj.values(rows[todo]), dtype=float)
            spent_val += time.perf_counter() - t0
            vals[todo] = v
            n_eval += len(todo)
            cut_now = thr()
            for i in todo:
                if not cheap or vals[i] < cut_now:
                    found.setdefault(tuple(rows[i].tolist()), float(vals[i]))
        i = int(np.argmin(vals))
        if vals[i] < best[0]:
            best[0], best[1] = float(vals[i]), rows[i].copy()
            # the best member is always recorded (callers may recentre on it)
            found.setdefault(tuple(rows[i].tolist()), best[0])
        n_before = iK.size
        if new_cut and iK.size:
            a, G = store.arrays
            if added is None and iK.size <= few:
                added = table.added(iA)
            for t in range(n_store, a.size):   # the new cut and the objective's extra cuts
                np.maximum(lb, bound_of(t), out=lb)
        keep = lb <= thr() + margin()
        iK, iA, lb = iK[keep], iA[keep], lb[keep]
        if added is not None:
            added = added[keep]
        excluded += n_before - iK.size
        if new_cut:
            gain = n_before - iK.size
            # balance the (modelled) cost of a cut against that of the batch after it
            batch = int(min(256 if not cheap else 4096, max(4, round(costs.ratio(batch)))))
        else:  # no cut (or cuts stopped paying): evaluate in larger batches
            batch = min(max_batch, 2 * batch)
        now = time.perf_counter()
        if now - last_report >= enum.progress.callback_interval:
            last_report = now
            enum.progress.update(name, members=table.size, candidates=int(iK.size),
                                 evaluations=n_eval, cuts=n_cuts, best=best[0],
                                 threshold=thr())
    ph.evaluations += n_eval
    ph.time += time.perf_counter() - t_start
    final = thr() if complete else -math.inf
    logger.debug("%s: class-%d region of %d members: %d evaluated (%.3g s), %d excluded by "
                 "cuts, %d new cuts (%.3g s; modelled: %.3g s per value, %.3g s per cut), best "
                 "%.10g, threshold %.10g (not private)", name, region.k, table.size, n_eval,
                 spent_val, excluded, n_cuts, spent_cut, costs.value, costs.cut, best[0], final)
    return ExplicitResult(best=float(best[0]), best_support=best[1], threshold=float(final),
                          n_members=table.size, n_evaluated=n_eval, n_cuts=n_cuts,
                          n_excluded_by_cuts=int(excluded), complete=complete)
