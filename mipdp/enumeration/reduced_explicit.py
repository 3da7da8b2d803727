"""The master problem of a large region, solved by listing: an exact branch and bound on
the cuts over the members that use no screened and no dominated column.

A mistake class at ``p = 10⁴`` has ``C(5, 2) C(p - 5, 2) ≈ 5·10⁸`` members (class 2):
too many to list.  Its MIP master is small once the columns fixed by dominance
(:mod:`.dominance`) are taken out — about 130 free columns — but HiGHS still spent
0.1–0.4 s per solve there (HiGHS 1.16), most of it propagating the dense cut rows.  This
module solves the same master without a MIP solver.  The master's minimum over a set of
members is ``η* = min_T max_t a_t + Σ_{i∈T} G_{t,i}`` (the cuts, certified lower bounds
of ``L`` at every support).  Over the *reduced* region (the members using only columns
that screening and dominance leave free) it is found by a branch and bound over the added
features (:func:`_alive`): partial members are bounded cut by cut with the smallest
completion (:func:`_suffix_lows`), and every member whose bound is below a limit is
listed — a few hundred at most here, where the region has ``10⁵``–``10⁷`` members.

The search is the master's own loop (:meth:`~mipdp.enumeration.SupportEnumerator.region_bound`):
with the cutoff ``c = min(level, best - abs_tol)`` (``best`` the best member evaluated),
solve; a member at or below ``c`` is evaluated and cut there, and the search goes on;
none below ``c`` proves the bound ``c``.  After ``max_solves`` evaluations, the last
``η*`` is the bound (the master's dual bound).

Certificate
-----------
* **Screened columns** (:func:`~mipdp.enumeration.fixing.screened_columns` at the first
  cutoff, the highest): no member holding one has ``L <= c``.
* **Dominated columns** (recomputed on the cuts of each solve): in each group (the
  region's free centre features, its free outside features), column ``j`` *dominates*
  ``j'`` when ``G_{t,j} <= G_{t,j'}`` in every cut (ties broken by index); a column with
  at least ``s`` dominators that are not screened is left out
  (:class:`~mipdp.enumeration.dominance.DominanceCache`).

Claim: every member ``T`` of the whole region with ``L(T) <= c`` has a member ``T*`` of the
reduced region with cut bound at most ``L(T)``.  ``T`` holds no screened column.  If it
holds a left-out ``j'``: of its at least ``s`` dominators at most ``s - 1`` are in ``T``, so
``T - j' + j`` is a member of the region (``j`` is in ``j'``'s group, allowed) whose cut
bound is no higher, and each swap lowers ``(Σ_{i∈T} Σ_t G_{t,i}, Σ_{i∈T} i)``
lexicographically: repeated, it ends in the reduced region.  (This is the dominance of
:mod:`.dominance` without no-goods, ``K = 0``: nothing is excluded here but by the cuts.)
So the minimum of the cut bound over the reduced region bounds ``L`` over the whole
region from below: a solve that lists no reduced member at or below ``c`` (plus the
cutoff margin) proves ``L > c`` everywhere, and ``η*`` is a lower bound of ``L``.  The
bounds are computed in floating point: a member is left out only when its computed bound
passes the limit by the cut store's rounding bound (:meth:`CutStore.slack`), and ``η*``
is lowered by it.

A solve lists the members below a rising limit (:func:`_solve`): a limit with no member
below it is a certified bound, and the first with members gives ``η*`` exactly.  A listing
that would hold more than ``max_entries`` partial bounds keeps the partial members of least
bound (a beam) and sets the others aside: the member it returns is then not always a
minimum, and the least bound set aside is the solve's dual bound, as for a master solved
to a gap.  Every decision
depends only on the enumeration's state, never on time.
"""

from __future__ import annotations

import logging
import math

import numpy as np

from ..mechanisms.regions import Region
from .dominance import DominanceCache, SharedDominance
from .explicit import _cut_region_minima
from .fixing import screened_columns

logger = logging.getLogger(__name__)

__all__ = ["ReducedBound", "reduced_explicit_bound"]

#: most evaluations of one search without ``max_solves`` (then the last ``η*`` is its bound)
MAX_TAKEN = 64
#: the limits a solve tries, as fractions of the way from the root bound to the cutoff
_STEPS = (1 / 16, 1 / 4, 1.0)
#: keep searching with a beam when a listing is too large (else: the master takes over)
_BEAM = True
#: partial members a beam keeps per level (once a listing is too large)
_BEAM_WIDTH = 2048


class ReducedBound:
    """A certified bound of a whole region from a search of its reduced region."""

    __slots__ = ("lower", "best", "best_support", "solves", "proven", "status")

    def __init__(self, lower: float, best: float, best_support, solves: int, proven: bool,
                 status: str) -> None:
        self.lower = lower
        self.best = best
        self.best_support = best_support
        #: members evaluated (one per solve that found a member at or below the cutoff)
        self.solves = solves
        #: whether the bound is the cutoff (no member below it: as an infeasible master)
        self.proven = proven
        #: how the last solve ended: "none" (nothing at or below the cutoff), "stopped"
        #: (``max_solves`` reached, or its best member already cut), "partial" (members set
        #: aside by the beam, none found)
        self.status = status


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
           max_entries: int = 1 << 21, max_held: int | None = None, least: bool = False
           ) -> tuple[np.ndarray, np.ndarray, float] | None:
    """``(rows, lb, dropped)``: members of ``region`` whose bound by every cut (computed)
    is at most ``limit``, as sorted supports, with those bounds, and ``dropped``, the least
    partial bound of the partial members set aside to hold at most ``max_entries`` partial
    bounds at once (``inf``: none was, and ``rows`` are *every* member at or below
    ``limit``).  Every member not in ``rows`` has a computed bound above ``limit`` or at
    least ``dropped`` (up to the rounding of the sums).  ``None`` when the table of
    smallest completions alone would pass ``max_entries``.

    Branch and bound over the added features, without listing the members: a member is a
    kept set ``K`` of the free centre features (all ``C(|F_C|, n_keep)`` are listed: the
    centre has ``s`` features) and an added set ``A`` of ``n_add`` free outside features,
    chosen in a fixed order of the columns.  A partial member (``K`` and the first ``ℓ``
    features of ``A``, the last at position ``i``) is bounded, cut by cut, by its sum plus
    the ``n_add - ℓ`` smallest coefficients after ``i`` (:func:`_suffix_lows`) — the least
    any completion adds — and dropped when the largest of those bounds passes ``limit``:
    no completion can be below it.  When more than ``max_entries / T`` partial members
    pass at one level, only the :data:`_BEAM_WIDTH` with the least bounds go on (a beam:
    from then on at every level), and the least bound set aside is ``dropped``.  The
    columns are ordered by decreasing mean coefficient, so the suffixes hold the low ones
    and the bounds are tight early.  ``max_held`` (tests): a beam once more than that many
    partial members pass, instead of ``max_entries / T`` (a beam on small instances).

    The listing is the plain one — every child of every partial member bounded by all
    ``T`` cuts, the beam keeping the least bounds (ties: the first child in the order of
    the parents and columns) — computed with less work, all of it exact (same sums, same
    rounding, same members, bounds and ``dropped``): see :func:`_children`.

    ``least`` (what :func:`_solve` uses): of the last level only the member of least
    ``(bound, position)`` is kept — the one :func:`_solve` takes from the whole listing —
    as a beam one wide there whose children set aside do not count in ``dropped`` (each
    has a bound at least the kept one's, so ``min(bound, dropped)`` is unchanged): the
    same member, bound and ``dropped`` for :func:`_solve`, and far fewer children bounded
    by every cut at the last level.
    """
    from .explicit import combinations as _combos
    T = a.size
    s = region.s
    keep = region.free_center[_combos(region.free_center.size, region.n_keep)]
    U = (a + G[:, region.fixed_in].sum(axis=1))[:, None] + G[:, keep].sum(axis=2)   # (T, nK)
    q = region.n_add
    cols = region.free_outside
    n = cols.size
    empty = (np.zeros((0, s), dtype=np.intp), np.zeros(0), math.inf)
    if q < 0 or q > n or keep.shape[0] == 0:
        return empty
    if q > 0 and T * n * (q + 1) > max_entries:
        return None
    cap = max(1, max_entries // max(T, 1) if max_held is None else int(max_held))
    chunk = min(_CHUNK, max(1, cap // 2))    # children bounded by every cut at a time
    Go = G[:, cols]
    order = np.argsort(-Go.mean(axis=0), kind="stable")
    cols, Go = cols[order], Go[:, order]
    low = _suffix_lows(Go, q)
    node_k = np.arange(keep.shape[0])
    node_last = np.full(node_k.size, -1)
    path = np.zeros((node_k.size, 0), dtype=np.intp)
    P = np.ascontiguousarray(U.T)   # (members, T): one partial member's sums in a row
    nb = P.max(axis=1)
    if q == 0:
        ok = nb <= limit
        node_k, path, nb = node_k[ok], path[ok], nb[ok]
    dropped = math.inf
    if q > 0:
        GoT = np.ascontiguousarray(Go.T)                       # (n, T)
        lowT = np.ascontiguousarray(low.transpose(0, 2, 1))    # (q + 1, n + 1, T)
    for level in range(q):
        rem = q - level - 1
        if least and rem == 0:   # the least member only (a beam one wide, nothing dropped)
            rep, J, b, _, _ = _children(P, node_last, GoT, lowT, rem, n, limit, 1, math.inf,
                                        chunk)
        else:
            rep, J, b, cap, dropped = _children(P, node_last, GoT, lowT, rem, n, limit, cap,
                                                dropped, chunk)
        node_k, node_last = node_k[rep], J
        path = np.column_stack([path[rep], J])
        P, nb = np.take(P, rep, axis=0) + np.take(GoT, J, axis=0), b
        if node_k.size == 0:
            break
    rows = np.concatenate([keep[node_k], cols[path],
                           np.broadcast_to(region.fixed_in, (node_k.size, region.fixed_in.size))],
                          axis=1)
    return np.sort(rows, axis=1).astype(np.intp), (nb if node_k.size else np.zeros(0)), dropped


#: children bounded at a time by :func:`_children` (at most, and at most half the partial
#: members held before a beam: 8 % faster than a quarter on the listings of a rank release
#: at p = 10⁴; before a beam's threshold is known, about four times as many as the beam
#: still takes, at least ``_MIN_CHUNK``).  Only the work depends on it, not the listing.
_CHUNK = 1 << 15
_MIN_CHUNK = 1 << 10
#: cuts a child is bounded by before all of them: its parent's largest
_FIRST_CUTS = 3


def _children(P: np.ndarray, last: np.ndarray, GoT: np.ndarray, lowT: np.ndarray, rem: int,
              n: int, limit: float, cap: int, dropped: float, chunk: int
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, float]:
    """One level of :func:`_alive`: ``(rep, J, b, cap, dropped)``, the children kept (parent
    row ``rep``, added column ``J``, bound ``b``, in the order of ``(rep, J)``), the beam's
    width and the least bound set aside so far.

    The plain level bounds every child ``(p, j)``, ``j > last[p]``, by all ``T`` cuts,
    ``b = max_t (P[p, t] + Go[t, j]) + low[t, j + 1]``, keeps those at most ``limit`` (the
    set ``K``), and, when ``K`` has more than ``cap`` children, only the
    ``min(cap, _BEAM_WIDTH)`` of least ``(b, p, j)``, the least other bound going to
    ``dropped``.  This computes the same children with the same sums, and skips only
    children that provably change nothing.  Let ``θ`` be ``limit``, or, once the beam has
    set children aside at this level, the least bound it set aside (``τ``): a child of
    bound above ``θ`` is either above the limit or behind ``cap`` kept children and a
    set-aside one, so it is neither kept nor the least set aside.

    * The parents go in increasing order of their own bound
      ``max_t P[p, t] + low[rem + 1][t, last[p] + 1]`` (so ``τ`` falls early), and a
      parent whose bound passes ``θ + margin`` is skipped with all its children: every
      child's computed bound is at least its parent's up to the rounding of three sums.
      (For a cut ``t``, ``low[rem + 1][t, i] = min_{j >= i} fl(Go[t, j] + low[rem][t, j + 1])``,
      so ``fl(P + low[rem + 1]) <= fl(P + fl(Go[t, j] + low[rem][t, j + 1]))`` for every
      child ``j``, and that sum and the child's ``fl(fl(P + Go) + low)`` are two roundings
      of one exact sum, each within ``2.01 u A`` of it, ``u`` the unit roundoff and ``A``
      the sum of the largest ``|P|``, ``|Go|`` and finite ``|low|``: ``margin`` is
      ``16 u A``.)  The parents are sorted, so the rest are skipped too.
    * A child is first bounded by :data:`_FIRST_CUTS` cuts, its parent's largest (each the
      same sum as the plain bound's term for that cut, so their largest, ``b₁``, is at most
      its bound), and only those with ``b₁ <= θ`` are bounded by every cut.  When a beam
      may fall among them, they are bounded in increasing order of ``b₁`` and those above
      the new ``θ`` are skipped.
    * The beam is known to fall before any child is bounded when the parents whose every
      child is surely in ``K`` hold more than ``cap`` children (:func:`_surely_kept`): the
      level then keeps ``min(cap, _BEAM_WIDTH)`` children however many ``K`` holds, and the
      beam is that wide from the start (its threshold falls after a few thousand children
      instead of ``cap``).
    """
    m = last.size
    T = P.shape[1]
    first = last + 1
    counts = np.maximum(0, (n - rem) - first)
    PB = P + lowT[rem + 1][first]
    pb = PB.max(axis=1)
    top = _largest(PB, _FIRST_CUTS)
    topT = np.ascontiguousarray(top.T)                                 # (k, m)
    PtopT = np.ascontiguousarray(np.take_along_axis(P, top, axis=1).T)  # P[p, top[p, r]]
    porder = np.argsort(pb, kind="stable")
    cum = np.concatenate([[0], np.cumsum(counts[porder])])   # children before each parent
    low = lowT[rem]
    GoF, lowF = GoT.reshape(-1), low.reshape(-1)             # views: (j, t) at j T + t
    finite = np.isfinite(low)
    A = (float(np.abs(P).max(initial=0.0)) + float(np.abs(GoT).max(initial=0.0))
         + float(np.abs(low, where=finite, out=np.zeros_like(low)).max(initial=0.0)))
    margin = 16 * (np.finfo(float).eps / 2) * A
    if (cap > _BEAM_WIDTH and cum[-1] > cap
            and _surely_kept(P, first, counts, GoT, low, n - rem, limit, margin) > cap):
        cap = _BEAM_WIDTH
    keep_rep: list[np.ndarray] = []
    keep_J: list[np.ndarray] = []
    keep_b: list[np.ndarray] = []
    held = 0
    tau = math.inf
    i = 0
    while i < m:
        theta = min(limit, tau)
        if not pb[porder[i]] <= theta + margin:
            break
        want = chunk if tau < math.inf else min(chunk, max(_MIN_CHUNK, 4 * (cap + 1 - held)))
        hi = max(i + 1, int(np.searchsorted(cum, cum[i] + want, side="right")) - 1)
        idx = porder[i:hi]
        idx = idx[pb[idx] <= theta + margin]
        i = hi
        c = counts[idx]
        rep = np.repeat(idx, c)
        J = np.repeat(first[idx] - (np.cumsum(c) - c), c)
        J += np.arange(rep.size)
        b1 = np.full(rep.size, -np.inf)
        for r in range(topT.shape[0]):   # a few cuts first, each the plain bound's term
            flat = J * T
            flat += np.take(topT[r], rep)
            v = np.take(PtopT[r], rep)
            v += np.take(GoF, flat)
            flat += T
            v += np.take(lowF, flat)
            ok = v <= theta
            rep, J, b1 = rep[ok], J[ok], np.maximum(b1[ok], v[ok])
        ordered = held + rep.size > cap   # a beam may fall among them: the least b₁ first
        if ordered:
            o = np.argsort(b1, kind="stable")
            rep, J, b1 = rep[o], J[o], b1[o]
        done = 0
        while done < rep.size:
            theta = min(limit, tau)
            end = rep.size
            if ordered:   # the children left with b₁ <= θ, as many as the beam may need
                end = int(np.searchsorted(b1, theta, side="right"))
                if held + (end - done) > cap:
                    end = min(end, done + max(_MIN_FULL, cap + 1 - held))
            if end <= done:
                break
            r_, j_ = rep[done:end], J[done:end]
            done = end
            b = _full_bounds(P, GoT, low, r_, j_)
            ok = b <= theta
            if not ok.any():
                continue
            keep_rep.append(r_[ok])
            keep_J.append(j_[ok])
            keep_b.append(b[ok])
            held += int(ok.sum())
            if held > cap:    # a beam from here: the least bounds go on, the others aside
                cap = min(cap, _BEAM_WIDTH)
                rr, jj, bb = (np.concatenate(keep_rep), np.concatenate(keep_J),
                              np.concatenate(keep_b))
                o, least_aside = _least(bb, rr, jj, cap)
                tau = min(tau, least_aside)
                dropped = min(dropped, tau)
                keep_rep, keep_J, keep_b, held = [rr[o]], [jj[o]], [bb[o]], cap
    if not keep_rep:
        e = np.zeros(0, dtype=np.intp)
        return e, e, np.zeros(0), cap, dropped
    rep, J, b = np.concatenate(keep_rep), np.concatenate(keep_J), np.concatenate(keep_b)
    o = np.lexsort((J, rep))
    return rep[o], J[o], b[o], cap, dropped


#: children bounded by every cut at a time once a beam may fall (at least)
_MIN_FULL = 256
#: rows of the bounds by every cut computed at a time (``T`` columns each: in cache)
_FULL_ROWS = 1024


def _full_bounds(P: np.ndarray, GoT: np.ndarray, low: np.ndarray, rep: np.ndarray,
                 J: np.ndarray) -> np.ndarray:
    """``max_t fl(fl(P[rep, t] + GoT[J, t]) + low[J + 1, t])``, :data:`_FULL_ROWS` at a time."""
    N, T = rep.size, P.shape[1]
    b = np.empty(N)
    B = np.empty((min(N, _FULL_ROWS), T))
    C = np.empty_like(B)
    for s0 in range(0, N, _FULL_ROWS):
        s1 = min(N, s0 + _FULL_ROWS)
        Bv, Cv = B[:s1 - s0], C[:s1 - s0]
        np.take(P, rep[s0:s1], axis=0, out=Bv)
        np.take(GoT, J[s0:s1], axis=0, out=Cv)
        Bv += Cv
        np.take(low, J[s0:s1] + 1, axis=0, out=Cv)
        Bv += Cv
        Bv.max(axis=1, out=b[s0:s1])
    return b


def _surely_kept(P: np.ndarray, first: np.ndarray, counts: np.ndarray, GoT: np.ndarray,
                 low: np.ndarray, end: int, limit: float, margin: float) -> int:
    """How many children have a computed bound surely at most ``limit``: those of the
    parents with ``fl(max_t fl(P[p, t] + U[t, first[p]]) + margin) <= limit``, where
    ``U[t, i] = max_{i <= j < end} fl(Go[t, j] + low[t, j + 1])``.  A child's computed term
    ``fl(fl(P + Go) + low)`` and ``fl(P + U)`` are within ``2.01 u A`` of the exact sum
    ``P + Go + low`` and of a larger one, so the term is at most ``fl(P + U) + 4.02 u A``;
    ``margin`` (``16 u A``, :func:`_children`) covers that and the rounding of the test."""
    U = np.full((GoT.shape[0] + 1, GoT.shape[1]), -np.inf)   # -inf: no child
    if end > 0:
        W = GoT[:end] + low[1:end + 1]
        U[:end] = np.maximum.accumulate(W[::-1], axis=0)[::-1]   # max over i <= j < end
    ub = (P + U[first]).max(axis=1)
    return int(counts[ub + margin <= limit].sum())


def _largest(PB: np.ndarray, k: int) -> np.ndarray:
    """The columns of the ``min(k, T)`` largest entries of each row of ``PB`` (any order
    among ties)."""
    PB = PB.copy()
    rows = np.arange(PB.shape[0])
    top = np.empty((PB.shape[0], min(k, PB.shape[1])), dtype=np.intp)
    for r in range(top.shape[1]):
        top[:, r] = PB.argmax(axis=1)
        PB[rows, top[:, r]] = -np.inf
    return top


def _least(b: np.ndarray, rep: np.ndarray, J: np.ndarray, cap: int) -> tuple[np.ndarray, float]:
    """``(kept, least_aside)``: the positions of the ``cap`` least ``(b, rep, J)``
    (lexicographic; ``cap < b.size``), unordered, and the least ``b`` of the others."""
    idx = np.argpartition(b, cap)
    least_aside = float(b[idx[cap]])
    edge = b[idx[:cap]].max()                # the cap-th least bound
    below = np.flatnonzero(b < edge)
    ties = np.flatnonzero(b == edge)         # the first of them in (rep, J) go on
    ties = ties[np.lexsort((J[ties], rep[ties]))[:cap - below.size]]
    return np.concatenate([below, ties]), least_aside


def _solve(region: Region, a: np.ndarray, G: np.ndarray, limit: float,
           max_entries: int) -> tuple[str, float, np.ndarray | None]:
    """The master over ``region`` (computed bounds): ``("none", limit, None)`` when no
    member's bound is at most ``limit``; ``("found", v, T)`` with ``T`` a member at or below
    ``limit`` and ``v`` a lower bound of every member's bound (``T``'s own when the listing
    was complete: ``T`` is then a minimum, as a master solved to optimality; else the
    least bound set aside, as a master's dual bound); ``("partial", v, None)``: ``v`` bounds
    every member but none was found (only when the listing set members aside).  ``None``
    when the region is too wide to search (:func:`_alive`).

    The limits tried rise from the cuts' root bound (:data:`_STEPS` of the way to
    ``limit``): a limit with no member at or below it is proven and the next one is tried;
    the first with members ends the solve, which keeps the listings small.
    """
    lo = float(_cut_region_minima(a, G, region).max()) if a.size else -math.inf
    if lo > limit:
        return "none", limit, None
    for f in _STEPS:
        ell = limit if f >= 1.0 or not np.isfinite(lo) else lo + f * (limit - lo)
        res = _alive(region, a, G, ell, max_entries=max_entries, least=True)
        if res is None:
            return "wide", lo, None
        rows, lb, dropped = res
        if np.isfinite(dropped) and not _BEAM:
            return "wide", lo, None
        if rows.shape[0]:
            i = int(np.lexsort((np.arange(lb.size), lb))[0])
            return "found", float(min(lb[i], dropped)), rows[i]
        if dropped <= ell:    # members set aside at or below ell, none found among the rest
            return "partial", float(dropped), None
        lo = ell              # nothing at or below ell: proven
        if ell >= limit:
            break
    return "none", limit, None


def reduced_explicit_bound(enum, region: Region, *, level: float, abs_tol: float,
                           max_solves: int | None = None, max_entries: int = 1 << 21,
                           name: str | None = None) -> ReducedBound | None:
    """A certified lower bound of ``L`` over ``region``: the master's loop, each solve an
    exact branch and bound over the members that use no screened and no dominated column
    (see the module notes).

    Parameters
    ----------
    enum : SupportEnumerator
        Supplies the cut store, the evaluated supports and the cut oracle
        (``_evaluate_cut``); the rows of the cuts it makes go to its master, deferred
        (:meth:`~mipdp.enumeration.master.MasterProblem.defer_rows`: added when the master
        is next used, if ever).
    region : Region
        Its holes are ignored (the bound is over a superset: still valid).
    level, abs_tol : float
        As for :meth:`~mipdp.enumeration.SupportEnumerator.region_bound`: the search stops
        once every member is proven above ``level``, and wants the minimum to
        ``abs_tol``.
    max_solves : int, optional
        Most members evaluated (default :data:`MAX_TAKEN`); then the last solve's ``η*``
        is the bound.
    max_entries : int
        Most partial bounds a solve holds at once (:func:`_alive`).
    name : str, optional
        Phase name (default ``class_<k>``).

    Returns
    -------
    ReducedBound or None
        ``None`` when dominance is off (``enum.dominance``), the store has no cut, or the
        reduced region is too wide to search (its table of smallest completions alone
        would pass ``max_entries``); the caller's master solves then take over.
    """
    return _reduced_search(enum, region, level=level, abs_tol=abs_tol,
                           max_solves=MAX_TAKEN if max_solves is None else int(max_solves),
                           max_entries=max_entries, name=name or f"class_{region.k}")


def _reduced_search(enum, region: Region, *, level: float, abs_tol: float, max_solves: int,
                    max_entries: int, name: str) -> ReducedBound | None:
    """:func:`reduced_explicit_bound`."""
    if not getattr(enum, "dominance", True) or len(enum.cuts) == 0:
        return None
    s, p = region.s, region.p
    base = Region(region.center, region.k, p, fixed_in=region.fixed_in,
                  fixed_out=region.fixed_out)
    if base.size == 0:
        return None
    store = enum.cuts
    ph = enum._phase(name)
    best, best_support = enum.best_found_inside(region)   # its holes excluded, as the master's

    def cutoff() -> float:
        return min(level, best - abs_tol)

    groups = [(base.free_center, base.n_keep), (base.free_outside, base.n_add)]
    dom_groups = [g for g, _ in groups]
    a, G = store.arrays
    margin = enum.cutoff_margin * enum.scale
    screened = np.zeros(p, dtype=bool)
    if getattr(enum, "screening", True) and np.isfinite(cutoff()):
        # no member holding a screened column has L <= this cutoff (>= every later one)
        screened = screened_columns(a, G, base.fixed_in, groups, cutoff() + margin,
                                    store.slack())
    live = np.zeros(p, dtype=bool)
    for g in dom_groups:
        live[g] = True
    live &= ~screened
    cache = _dominance_cache(enum, groups=dom_groups, need=s)
    cut_keys = set(store.supports)
    solves = 0
    while True:
        enum.remaining_time(name)
        a, G = store.arrays
        out = screened | cache.mask(G, dom_groups, s, live)
        out[region.fixed_out] = True
        reduced = Region(region.center, region.k, p, fixed_in=region.fixed_in,
                         fixed_out=np.flatnonzero(out))
        c = cutoff()
        slack = store.slack()
        status, value, x = _solve(reduced, a, G, c + margin + slack, max_entries)
        if status == "none":
            bound = c
            break
        if status == "wide":
            logger.debug("%s: the reduced region is too wide to search (not private)", name)
            return None
        if status == "partial":
            if solves == 0:   # the beam found nothing to evaluate: the master instead
                logger.debug("%s: the beam found no member below the cutoff (not private)",
                             name)
                return None
            bound = value - slack
            break
        assert x is not None
        key = tuple(int(i) for i in x)
        if key in cut_keys or solves >= max_solves:
            status, bound = "stopped", value - slack
            break
        v = enum._evaluate_cut(x, add_to_master=True)[0]   # its rows deferred to the master
        cut_keys.add(key)
        ph.evaluations += 1
        solves += 1
        if v < best:
            best, best_support = float(v), x.copy()
    floor = enum.master.floor if getattr(enum, "master", None) is not None else -math.inf
    lower = min(max(bound, floor), best)
    logger.debug("%s: reduced master: %s after %d evaluation(s), bound %.10g (best %.10g; "
                 "not private)",
                 name, status, solves, lower, best)
    return ReducedBound(lower=float(lower), best=float(best), best_support=best_support,
                        solves=solves, proven=status == "none", status=status)


def _dominance_cache(enum, *, groups: list[np.ndarray], need: int) -> DominanceCache:
    """A dominance cache for a search of ``enum``: a copy of the state shared by the forks
    of one enumeration (:class:`~mipdp.enumeration.dominance.SharedDominance`, on the cuts
    the enumerator held when it was forked), or a new one."""
    shared = getattr(enum, "_shared_dominance", None)
    if not isinstance(shared, SharedDominance) or len(enum.cuts) == 0:
        return DominanceCache()
    journal = getattr(enum, "_journal_cuts", None)   # a fork's own cuts, after the shared ones
    T0 = len(enum.cuts) - (sum(len(c) for _, c in journal) if journal else 0)
    G = enum.cuts.arrays[1]
    return shared.cache(G[:T0], groups, need)
