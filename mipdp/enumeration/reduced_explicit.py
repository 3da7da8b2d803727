"""Explicit search of a large region over the columns that dominance leaves free.

A mistake class at ``p = 10⁴`` has ``C(5, 2) C(p - 5, 2) ≈ 5·10⁸`` members (class 2):
too many to list.  Its MIP master is small once the columns fixed by dominance
(:mod:`.dominance`) are taken out — about 130 free columns — but HiGHS still spends
0.1–0.4 s per solve there, mostly propagating the dense cut rows.  The region restricted
to those free columns (the *reduced* region) has ``C(5, 3) C(126, 2) ≈ 8·10⁴`` members
(class 3: ``3·10⁶``), few enough to bound every member by every cut at once, as
:mod:`.explicit` does.  This module searches the reduced region that way, with the
master's own loop — take the member of lowest cut bound, evaluate it and cut there,
again until every member is excluded — and certifies the bound for the *whole* region.

Certificate
-----------
Let the cut store hold cuts ``L(T) >= a_t + Σ_{i∈T} G_{t,i}`` (certified lower bounds of
``L`` at every support) and let ``c`` be the search's cutoff, ``min(level, best - abs_tol)``
with ``best`` the best member evaluated.

* **Screened columns** (:func:`~mipdp.enumeration.fixing.screened_columns` at ``c``): no
  member holding one has ``L <= c``.
* **Dominated columns**: in each group (the region's free centre features, its free
  outside features), column ``j`` *dominates* ``j'`` when ``G_{t,j} <= G_{t,j'}`` in every
  cut (ties broken by index); ``D`` = the columns with at least ``need`` dominators that
  are not screened (:class:`~mipdp.enumeration.dominance.DominanceCache`).

The search ends with a threshold ``θ <= c`` and every member of the reduced region either
*excluded* (its bound by the final cuts is above ``θ`` plus the rounding margin of
:mod:`.explicit`) or *taken* (evaluated; the taken members that the final cuts do not
exclude form the set ``X``).  Let ``c_X`` be the largest number of members of ``X`` that
share ``s - 1`` features (``0`` when ``X`` is empty; at most ``|X|``).  Claim: if
``need >= s + c_X`` for the dominance of the *final* cut store, and every column of ``D``
used for the reduced region is still in it, then every member ``T`` of the whole region
not in ``X`` has ``L(T) > θ``.

Proof.  Suppose ``L(T) <= θ`` and ``T ∉ X``.  ``T`` holds no screened column (``θ <= c``).
If it holds a dominated column ``j'``, that column has ``need`` dominators, at most
``s - 1`` of them in ``T``, so the swaps ``T - j' + j`` give at least ``c_X + 1``
distinct members of the region (``j`` is in ``j'``'s group), all sharing the ``s - 1``
features ``T - j'``: one of them is not in ``X``.  No cut is higher there, so its cut
bound is at most ``L(T) <= θ``.  Every swap lowers ``(Σ_{i∈T} Σ_t G_{t,i}, Σ_{i∈T} i)``
lexicographically, so repeating it ends at a member ``T*`` of the reduced region, not in
``X``, whose final cut bound is at most ``θ``: neither excluded nor in ``X`` — a
contradiction.

Hence ``min_region L >= min(θ, min_X L)``, and the bound returned is
``min(max(θ, floor), best)`` (``best`` <= every taken member's value), as for a region
searched explicitly in full.  When the check fails (a new cut broke a dominance pair the
reduced region relied on, or ``c_X`` grew), ``need`` is raised and the reduced region
searched again (the members already cut are excluded at once).  When the reduced region
would have more than ``max_members`` members, or more than ``max_taken`` members must be
evaluated, nothing is certified here and the caller uses its master solves (``None``).
Every decision depends only on the enumeration's state, never on time.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from itertools import combinations as _subsets
from typing import Any

import numpy as np

from ..mechanisms.regions import Region
from .dominance import DominanceCache
from .fixing import screened_columns

logger = logging.getLogger(__name__)

__all__ = ["ReducedBound", "reduced_explicit_bound"]

#: most rounds (each with a larger ``need``) before the caller's master solves take over
_MAX_ROUNDS = 4
#: most members evaluated by one search before the caller's master solves take over
MAX_TAKEN = 64
#: ``need`` of the first round is ``s`` plus this (a member left in ``X``, e.g. the best
#: one of an exact search, costs no second round)
_NEED_PAD = 1


class ReducedBound:
    """A certified bound of a whole region from a search of its reduced region."""

    __slots__ = ("lower", "best", "best_support", "n_members", "n_taken", "c_x", "need",
                 "rounds")

    def __init__(self, lower: float, best: float, best_support, n_members: int,
                 n_taken: int, c_x: int, need: int, rounds: int) -> None:
        self.lower = lower
        self.best = best
        self.best_support = best_support
        #: members of the last reduced region searched
        self.n_members = n_members
        #: members taken (evaluated) by the search, and ``c_X`` of the certificate
        self.n_taken = n_taken
        self.c_x = c_x
        #: dominators required of a fixed column
        self.need = need
        self.rounds = rounds


def _best_inside(enum, region: Region) -> tuple[float, Any]:
    """Best value and support among the evaluated supports inside ``region``."""
    if not enum.found:
        return math.inf, None
    keys, arr = enum.found_array()
    best, arg = math.inf, None
    for i in np.flatnonzero(region.contains(arr)).tolist():
        v = enum.found[keys[i]]
        if v < best:
            best, arg = v, keys[i]
    return best, (None if arg is None else np.array(arg, dtype=np.intp))


def _shared_max(rows: list[np.ndarray], s: int) -> int:
    """``c_X``: the most rows sharing one set of ``s - 1`` features (0 for no rows)."""
    if not rows:
        return 0
    count: Counter = Counter()
    for r in rows:
        count.update(_subsets(sorted(int(i) for i in r), s - 1))
    return max(count.values()) if s > 1 else len(rows)


def _suffix_lows(Go: np.ndarray, q: int) -> np.ndarray:
    """``low[r, t, i]``: the sum of the ``r`` smallest of ``Go[t, i:]`` (``r = 0 .. q``;
    ``inf`` where fewer than ``r`` entries are left).  The smallest ``r``-subset of a suffix
    starts at some ``j >= i`` and continues with the smallest ``(r - 1)``-subset after it,
    so ``low[r, :, i] = min_{j >= i} Go[:, j] + low[r - 1, :, j + 1]``: one reversed
    cumulative minimum per ``r``."""
    T, n = Go.shape
    low = np.full((q + 1, T, n + 1), np.inf)
    low[0] = 0.0
    for r in range(1, q + 1):
        step = Go + low[r - 1][:, 1:]
        low[r, :, :n] = np.minimum.accumulate(step[:, ::-1], axis=1)[:, ::-1]
    return low


def _alive(region: Region, a: np.ndarray, G: np.ndarray, limit: float, *,
           max_entries: int = 1 << 23) -> tuple[np.ndarray, np.ndarray] | None:
    """``(rows, lb)``: every member of ``region`` whose bound by every cut (computed) is at
    most ``limit``, as sorted supports, with those bounds; ``None`` when the search would
    hold more than ``max_entries`` partial bounds at once.

    Branch and bound over the added features, without listing the members: a member is a
    kept set ``K`` of the free centre features (all ``C(|F_C|, n_keep)`` are listed: the
    centre has ``s`` features) and an added set ``A`` of ``n_add`` free outside features,
    chosen in a fixed order of the columns.  A partial member (``K`` and the first ``ℓ``
    features of ``A``, the last at position ``i``) is bounded, cut by cut, by its sum plus
    the ``n_add - ℓ`` smallest coefficients after ``i`` (:func:`_suffix_lows`) — the least
    any completion adds — and dropped when the largest of those bounds passes ``limit``:
    no completion can be below it.  The columns are ordered by decreasing mean
    coefficient, so the suffixes hold the low ones and the bounds are tight early.
    """
    from .explicit import combinations as _combos
    T = a.size
    s = region.s
    keep = region.free_center[_combos(region.free_center.size, region.n_keep)]
    U = (a + G[:, region.fixed_in].sum(axis=1))[:, None] + G[:, keep].sum(axis=2)   # (T, nK)
    q = region.n_add
    cols = region.free_outside
    n = cols.size
    if q < 0 or q > n or keep.shape[0] == 0:
        return np.zeros((0, s), dtype=np.intp), np.zeros(0)
    if q > 0 and T * n * (q + 1) > max_entries:
        return None
    Go = G[:, cols]
    order = np.argsort(-Go.mean(axis=0), kind="stable")
    cols, Go = cols[order], Go[:, order]
    low = _suffix_lows(Go, q)
    node_k = np.arange(keep.shape[0])
    node_last = np.full(node_k.size, -1)
    path = np.zeros((node_k.size, 0), dtype=np.intp)
    P = U
    ok = P.max(axis=0) <= limit if q == 0 else np.ones(node_k.size, dtype=bool)
    node_k, node_last, path, P = node_k[ok], node_last[ok], path[ok], P[:, ok]
    for level in range(q):
        rem = q - level - 1
        counts = np.maximum(0, (n - rem) - (node_last + 1))
        keep_k, keep_last, keep_path, keep_P = [], [], [], []
        held = 0
        lo = 0
        while lo < node_k.size:   # parents in chunks: about max_entries / 4 bounds at a time
            hi, tot = lo, 0
            while hi < node_k.size and (hi == lo or (tot + counts[hi]) * T <= max_entries // 4):
                tot += counts[hi]
                hi += 1
            c = counts[lo:hi]
            rep = np.repeat(np.arange(lo, hi), c)
            first = np.repeat(node_last[lo:hi] + 1, c)
            J = first + (np.arange(rep.size) - np.repeat(np.cumsum(c) - c, c))
            P2 = P[:, rep] + Go[:, J]
            bound = P2 + low[rem][:, J + 1]
            sel = bound.max(axis=0) <= limit
            held += int(sel.sum())
            if held * T > max_entries:
                return None
            keep_k.append(node_k[rep[sel]])
            keep_last.append(J[sel])
            keep_path.append(np.column_stack([path[rep[sel]], J[sel]]))
            keep_P.append(P2[:, sel])
            lo = hi
        if not keep_k:
            return np.zeros((0, s), dtype=np.intp), np.zeros(0)
        node_k, node_last = np.concatenate(keep_k), np.concatenate(keep_last)
        path, P = np.vstack(keep_path), np.hstack(keep_P)
        if node_k.size == 0:
            break
    rows = np.concatenate([keep[node_k], cols[path],
                           np.broadcast_to(region.fixed_in, (node_k.size, region.fixed_in.size))],
                          axis=1)
    return np.sort(rows, axis=1).astype(np.intp), P.max(axis=0) if P.shape[1] else np.zeros(0)


def reduced_explicit_bound(enum, region: Region, *, level: float, abs_tol: float,
                           max_taken: int = MAX_TAKEN, max_entries: int = 1 << 23,
                           name: str | None = None) -> ReducedBound | None:
    """A certified lower bound of ``L`` over ``region`` from a search of its members that
    use no screened and no dominated column (see the module notes).

    Parameters
    ----------
    enum : SupportEnumerator
        Supplies the cut store, the evaluated supports and the cut oracle
        (``_evaluate_cut``; each cut's row also goes to its master).
    region : Region
        Its holes are ignored (the bound is over a superset: still valid).
    level, abs_tol : float
        As for :meth:`~mipdp.enumeration.SupportEnumerator.region_bound`: the search stops
        once every member is proven above ``level``, and wants the minimum to
        ``abs_tol``.
    max_members : int
        Largest reduced region searched.
    max_taken : int
        Most members evaluated.
    name : str, optional
        Phase name (default ``class_<k>``).

    Returns
    -------
    ReducedBound or None
        ``None`` when dominance is off (``enum.dominance``), or no reduced region of at
        most ``max_members`` members could be certified with at most ``max_taken``
        evaluations.
    """
    if not getattr(enum, "dominance", True) or len(enum.cuts) == 0:
        return None
    name = name or f"class_{region.k}"
    s, p = region.s, region.p
    base = Region(region.center, region.k, p, fixed_in=region.fixed_in,
                  fixed_out=region.fixed_out)
    if base.size == 0:
        return None
    store = enum.cuts
    ph = enum._phase(name)
    best, best_support = _best_inside(enum, base)

    def theta() -> float:
        return min(level, best - abs_tol)

    def margin() -> float:   # as the explicit search's: the cutoff margin and rounding
        return enum.cutoff_margin * enum.scale + store.slack()

    groups = [(base.free_center, base.n_keep), (base.free_outside, base.n_add)]
    dom_groups = [g for g, _ in groups]
    a, G = store.arrays
    screened = np.zeros(p, dtype=bool)
    c0 = theta()
    if getattr(enum, "screening", True) and np.isfinite(c0):
        # no member holding a screened column has L <= c0 (>= every later threshold)
        screened = screened_columns(a, G, base.fixed_in, groups,
                                    c0 + enum.cutoff_margin * enum.scale, store.slack())
    live = np.zeros(p, dtype=bool)
    for g in dom_groups:
        live[g] = True
    live &= ~screened
    need = s + _NEED_PAD
    cache, built = DominanceCache(), need
    cut_keys = set(store.supports)
    taken: dict[tuple, np.ndarray] = {}
    for rounds in range(1, _MAX_ROUNDS + 1):
        a, G = store.arrays
        if need > built:   # the cache's candidates (4 need + 64 per group) for this count
            cache, built = DominanceCache(), need
        dom = cache.mask(G, dom_groups, need, live)
        reduced = Region(region.center, region.k, p, fixed_in=region.fixed_in,
                         fixed_out=np.union1d(region.fixed_out,
                                              np.flatnonzero(screened | dom)))
        found = _alive(reduced, a, G, theta() + margin(), max_entries=max_entries)
        if found is None:
            logger.debug("%s: reduced region (need %d): too many partial members", name, need)
            return None
        rows, lb = found
        while True:
            enum.remaining_time(name)
            keep = lb <= theta() + margin()
            rows, lb = rows[keep], lb[keep]
            x = None
            for i in np.argsort(lb, kind="stable").tolist():
                if tuple(rows[i].tolist()) not in taken:
                    x = rows[i]
                    break
            if x is None:   # every member excluded or taken
                break
            if len(taken) >= max_taken:
                logger.debug("%s: more than %d members to evaluate", name, max_taken)
                return None
            key = tuple(int(i) for i in x)
            n0 = len(store)
            if key in cut_keys:   # cut before, and its cut does not exclude it: taken
                v = enum.found[key]
            else:
                v = enum._evaluate_cut(x, add_to_master=True)[0]
                cut_keys.add(key)
                ph.evaluations += 1
            taken[key] = x.copy()
            if v < best:
                best, best_support = float(v), x.copy()
            if len(store) > n0:
                np.maximum(lb, store.bounds(rows, start=n0), out=lb)
        # -- the certificate (module notes) ----------------------------------------------
        a, G = store.arrays
        thr = theta()
        rows = list(taken.values())
        X = []
        if rows:
            b = store.bounds(np.array(rows))
            X = [r for r, bi in zip(rows, b, strict=True) if not bi > thr + margin()]
        c_x = _shared_max(X, s)
        dom_after = cache.mask(G, dom_groups, need, live)
        if s + c_x <= need and not np.any(dom & ~dom_after):
            lower = min(max(thr, _floor(enum)), best)
            return ReducedBound(lower=float(lower), best=float(best), best_support=best_support,
                                n_members=reduced.size, n_taken=len(taken), c_x=c_x, need=need,
                                rounds=rounds)
        logger.debug("%s: round %d: c_X = %d against need %d, %d pair(s) broken by new cuts; "
                     "again", name, rounds, c_x, need, int(np.sum(dom & ~dom_after)))
        need = max(need, s + c_x)
    return None


def _floor(enum) -> float:
    master = getattr(enum, "master", None)
    return master.floor if master is not None else -math.inf
