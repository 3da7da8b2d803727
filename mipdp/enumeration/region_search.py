"""Certified bounds on regions and mistake classes: the part of
:class:`~mipdp.enumeration.enumerator.SupportEnumerator` that bounds ``L`` over sets of
supports (a region's members, the mistake classes around the centre) and scores the
classes for the mistakes sampler.

A mixin of ``SupportEnumerator``, kept apart by job; it runs on the enumerator's state
(the master problem, the cuts, the evaluated supports, the statistics), declared below for
the type checker.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ..exceptions import CertificationError
from ..losses.base import SupportObjective
from ..mechanisms.regions import Region
from .explicit import explicit_search
from .master import MasterProblem
from .progress import Progress
from .records import ClassBound, EnumerationStats, MistakeScores, RegionBound, TopSupports, _Phase  # noqa: F401

#: Gram entries (``m s²``) per batch of the exhaustive evaluation of all supports
_EXHAUSTIVE_BATCH_ENTRIES = 1 << 14

logger = logging.getLogger("mipdp.enumeration.enumerator")


class RegionSearch:
    """Region and mistake-class bounds of ``SupportEnumerator`` (a mixin)."""

    # the enumerator's state and steps this part uses (set by SupportEnumerator)
    objective: SupportObjective
    p: int
    s: int
    scale: float
    n_supports: int
    search_gap: float
    cutoff_margin: float
    explicit_max: int
    reduced_search: bool
    tol: float
    bound_margin: float
    bb_max_solves: int
    progress: Progress
    stats: EnumerationStats
    found: dict[tuple, float]
    master: MasterProblem | None
    center: np.ndarray | None
    _center_swaps: np.ndarray | None
    _table: tuple[np.ndarray, np.ndarray] | None
    _solve: Callable[..., Any]
    _sync_stats: Callable[..., Any]
    _remaining: Callable[..., Any]
    _recenter: Callable[..., Any]
    _phase: Callable[..., Any]
    _master_rows: Callable[..., Any]
    _fix_dominated: Callable[..., Any]
    _evaluate_cut: Callable[..., Any]
    _record_cut: Callable[..., Any]
    found_array: Callable[..., Any]
    warm_center: Callable[..., Any]
    optimum: Callable[..., Any]

    # -- regions and mistake classes --------------------------------------------------------------
    def region_bound(self, region: Region, *, level: float = np.inf, abs_tol: float = 0.0,
                     max_solves: int | None = None, gap: float | None = None,
                     explicit: bool = True) -> RegionBound:
        """A certified lower bound on ``L`` over ``region``, and its best member found.

        An improving outer-approximation search inside the region: the master (one row on
        ``Σ_{i∈C} z_i``, the region's fixings) minimises ``η`` below the cutoff
        ``c = min(level, best - abs_tol)``, ``best`` the best member evaluated so far.
        Every point it returns is evaluated and cut; a better member lowers ``c``.  When
        the master is infeasible, every member not evaluated has ``L > c`` (the cutoff
        row's margin is above ``c``, so this is on the safe side): the bound is ``c``.
        After ``max_solves`` solves (emulated lazy rows) the search stops and the last
        master's dual bound, less ``bound_margin``, is the bound: each cut is a global
        lower bound of ``L``.

        Parameters
        ----------
        region : Region
        level : float
            The search stops as soon as every member is proven above this value.
        abs_tol : float
            The minimum is wanted to this absolute accuracy (objective units).
        max_solves : int, optional
            Most master solves (``None``: until the master is infeasible).
        gap : float, optional
            Relative MIP gap of each master solve (default ``search_gap``).
        explicit : bool
            Search a region of at most ``explicit_max`` members explicitly (no budget)
            rather than by master solves, and a larger one first by the reduced master
            (:mod:`~mipdp.enumeration.reduced_explicit`, when ``reduced_search``; its
            solves count against ``max_solves``).  ``False``: master solves only.

        Returns
        -------
        RegionBound
        """
        self.warm_center()
        if explicit and 0 < region.size <= self.explicit_max:
            name = f"class_{region.k}"
            self.progress.start(name, members=region.size)
            res = explicit_search(self, region, level=level, abs_tol=abs_tol, name=name)
            self.progress.done(name, best=res.best, bound=min(res.threshold, res.best),
                               evaluations=res.n_evaluated)
            floor = self.master.floor if self.master is not None else -np.inf
            return RegionBound(lower=float(min(max(res.threshold, floor), res.best)),
                               best=res.best,
                               best_support=res.best_support, solves=0, proven=True)
        master = self.master
        assert master is not None
        ph = self._phase(f"class_{region.k}")
        t0 = time.perf_counter()
        # the evaluated members (incl. those under no-goods)
        best: list[Any] = list(self.best_found_inside(region))
        if region.size == 0:
            return RegionBound(lower=np.inf, best=np.inf, best_support=None, solves=0)

        def cutoff():
            return min(level, best[0] - abs_tol)

        floor = master.floor
        if master.below_floor(cutoff()):
            # Every support has L >= floor >= the cutoff: the floor is a certified bound
            # that already meets the level or the accuracy asked for; no solve is needed.
            # (With Δ large against L, e.g. n ≪ p, ``best - abs_tol`` or a small region's
            # level falls below zero.)
            self.progress.start(f"class_{region.k}", members=region.size)
            self.progress.done(f"class_{region.k}", best=best[0], bound=floor, solves=0)
            return RegionBound(lower=float(min(floor, best[0])), best=float(best[0]),
                               best_support=None if best[1] is None else np.array(best[1]),
                               solves=0, proven=True)

        if explicit and self.reduced_search:
            red = self._reduced_bound(region, level, abs_tol, max_solves)
            if red is not None:
                return red
        self._remaining(f"class_{region.k}")
        master.set_region(region.center, region.s - region.k, region.s - region.k)
        master.set_region_fixings(region.fixed_in, region.fixed_out)
        current = [cutoff()]
        master.set_cutoff(current[0], self.cutoff_margin)
        self._fix_dominated(ph)
        emulated = not master.backend.native_lazy
        solves = [0]
        stopped = [False]
        pending: list = []

        def oracle(x):
            solves[0] += 1
            S = master.support_of(x)
            key, v, rows = self._cut_or_recall(S, ph)
            if v < best[0]:
                best[0], best[1] = v, key
            c = cutoff()
            if c < current[0]:
                current[0] = c
                if emulated:
                    master.set_cutoff(c, self.cutoff_margin)
            # A lower cutoff cannot be handed to a native lazy callback: the backend keeps
            # every lazy row after the solve, and a cutoff row would then hide members from
            # every later search (bounds of +inf).  There every point gets a no-good instead
            # (evaluated points are in ``found``, so no later search loses them).
            if not emulated or not rows or v <= c + self.cutoff_margin * self.scale:
                # neither its cut nor the cutoff excludes it (within the margin): a no-good
                new = key not in self.nogoods
                self.nogoods.add(key)
                rows.append(master.nogood_row(S, new=new))
            if emulated and master.below_floor(c):
                stopped[0] = True  # the floor now meets the cutoff: bound = floor, stop
                pending.extend(rows)
                return []
            if emulated and max_solves is not None and solves[0] >= max_solves:
                pending.extend(rows)  # keep the rows for later searches; stop this one
                return []
            if emulated:
                self._fix_dominated(ph)
            return rows

        self.progress.start(f"class_{region.k}", members=region.size)
        res, _ = self._solve(ph, oracle, self.search_gap if gap is None else gap,
                             name=f"class_{region.k}",
                             fields=lambda: {"best": best[0], "threshold": current[0]})
        if pending:
            master.backend.add_rows(pending)
        if res.status == "infeasible":
            lower = current[0]
        elif stopped[0]:
            lower = floor
        else:
            lower = master.to_value(res.bound - self.bound_margin)
        # L >= floor for every support: a valid bound whatever the search reached
        lower = max(lower, floor)
        master.set_fixed_zero(np.zeros(self.p, dtype=bool))
        master.set_region_fixings()
        master.set_cutoff(None)
        master.clear_region()
        ph.time += time.perf_counter() - t0
        self._sync_stats()
        self.progress.done(f"class_{region.k}", best=best[0], bound=float(min(lower, best[0])),
                           solves=res.n_solves)
        return RegionBound(lower=float(min(lower, best[0])), best=float(best[0]),
                           best_support=None if best[1] is None else np.array(best[1]),
                           solves=res.n_solves, proven=res.status == "infeasible")

    def best_found_inside(self, region: Region) -> tuple[float, np.ndarray | None]:
        """Best value and support among the evaluated supports inside ``region`` (its
        holes excluded); ``(inf, None)`` when there is none."""
        if not self.found or region.size == 0:
            return np.inf, None
        keys, arr = self.found_array()
        best, arg = np.inf, None
        for i in np.flatnonzero(region.contains(arr)).tolist():
            v = self.found[keys[i]]
            if v < best:
                best, arg = v, keys[i]
        return best, (None if arg is None else np.array(arg, dtype=np.intp))

    def optimum_tol(self, value: float) -> float:
        """The optimum phase's tolerance at ``value``: supports within it of the centre's
        value count as ties (``max(tol·|value|, 1e-12·scale)``)."""
        return max(self.tol * abs(value), 1e-12 * self.scale)

    def _reduced_bound(self, region: Region, level: float, abs_tol: float,
                       max_solves: int | None) -> RegionBound | None:
        """:func:`~mipdp.enumeration.reduced_explicit.reduced_explicit_bound` as a
        :class:`RegionBound` (``None``: its reduced region is too large; use the master)."""
        from .reduced_explicit import reduced_explicit_bound
        name = f"class_{region.k}"
        ph = self._phase(name)
        t0, before = time.perf_counter(), ph.time
        self.progress.start(name, members=region.size)
        res = reduced_explicit_bound(self, region, level=level, abs_tol=abs_tol,
                                     max_solves=max_solves, name=name)
        ph.time = before + (time.perf_counter() - t0)
        if res is None:
            return None
        self.progress.done(name, best=res.best, bound=res.lower, evaluations=res.solves)
        self._sync_stats()
        return RegionBound(lower=res.lower, best=res.best, best_support=res.best_support,
                           solves=res.solves, proven=res.proven)

    def warm_class_cuts(self, max_per_class: int = 8) -> int:
        """Cuts at one representative member per drop set of each mistake class.

        For ``k >= 2`` and (up to ``max_per_class``) drop sets ``D ⊂ S*`` with ``|D| = k``,
        the support ``(S* \\ D) ∪ A_D`` with ``A_D`` the ``k`` outside features of the best
        one-swaps is evaluated and cut.  Those cuts bound every member sharing its kept
        features, so the class searches start from a master that already separates the
        drop sets.  Returns the number of cuts added.
        """
        per_class = self.warm_class_supports(max_per_class)
        return self.add_warm_cuts([S for k in sorted(per_class) for S in per_class[k]])

    def warm_class_supports(self, max_per_class: int = 8, classes=None) -> dict:
        """The supports of :meth:`warm_class_cuts` by class, ``{k: [S, ...]}`` (``classes``:
        only those), not yet cut; the objective prepares their products at once (least
        squares: the Gram columns of their features in one pass over ``X``)."""
        self.warm_center()
        if self.master is None:
            return {}
        center = self.center
        K = min(self.s, self.p - self.s)
        swaps = self._center_swaps
        assert center is not None and swaps is not None
        G0 = self.master.cut_gradients()[0] if self.master.n_cuts else None
        out: dict[int, list[np.ndarray]] = {}
        for k in range(2, K + 1):
            if classes is not None and k not in classes:
                continue
            drops = list(itertools.combinations(range(self.s), k))
            if len(drops) > max_per_class and G0 is not None:
                # least costly drops first by the cut at the centre (-g_i: the increase it bounds)
                cost = [-G0[center[list(d)]].sum() for d in drops]
                drops = [drops[i] for i in np.argsort(cost)[:max_per_class]]
            todo: list[np.ndarray] = []
            for d in drops:
                best_add = np.min(swaps[list(d)], axis=0)  # best one-swap using each outside j
                A = np.argsort(best_add)[:k]
                S = np.sort(np.r_[np.delete(center, list(d)), A])
                if not self.master.has_cut(S) and not any(np.array_equal(S, T) for T in todo):
                    todo.append(S)
            out[k] = todo
        prepare = getattr(self.objective, "prepare_supports", None)
        every = [S for todo in out.values() for S in todo]
        if every and prepare is not None:
            prepare(np.array(every))
        return out

    def add_warm_cuts(self, supports) -> int:
        """Evaluate and cut ``supports`` (those without a cut yet), with their master rows.

        The evaluations are independent: they run on the call's workers
        (:mod:`mipdp._parallel`), each on its own view of the objective
        (:meth:`~mipdp.losses.base.SupportObjective.fork`), and are recorded in the
        supports' order: the same cuts for every ``n_jobs``.
        """
        from .._parallel import parallel_map
        from .cuts import cut_of
        if self.master is None:
            return 0
        todo: list[np.ndarray] = []
        seen: set = set()
        for S in supports:
            key = tuple(int(i) for i in S)
            if not self.master.has_cut(S) and key not in seen:
                seen.add(key)
                todo.append(np.asarray(S, dtype=np.intp))

        def cut(S):
            self._remaining("envelope (warm cuts)")
            obj = self.objective.fork()
            return cut_of(obj, S), obj

        rows: list = []
        for S, (out, obj) in zip(todo, parallel_map(cut, todo), strict=True):
            self.objective.merge_fork(obj)
            v, lower, g = self._record_cut(S, *out)
            rows.extend(self._master_rows(S, lower, g))
        if rows:   # added to the backend when the master is next used (a solve, a fork's copy)
            self.master.defer_rows(rows)
        self._sync_stats()
        return len(rows)

    def class_bounds(self, levels=None, abs_tol: float = 0.0,
                     max_solves: int | None = None) -> list[ClassBound]:
        """Certified lower bounds of every mistake class ``k >= 2`` around the optimum.

        Parameters
        ----------
        levels : callable or array, optional
            ``levels[k]`` (or ``levels(k, L0)``): the search of class ``k`` may stop once
            its bound passes this value (default ``inf``).
        abs_tol : float
            Absolute accuracy (objective units) wanted for each class minimum.
        max_solves : int, optional
            Most master solves per class (the bound is valid whenever it stops).

        Returns
        -------
        list of ClassBound
            For ``k = 2 .. min(s, p - s)``; ``lower <= min`` over the class, certified.
        """
        self.optimum()
        assert self.center is not None
        K = min(self.s, self.p - self.s)
        L0 = self.found[tuple(self.center.tolist())]
        out = []
        if self._table is not None:
            sup, vals = self._table
            k_of = self.s - np.isin(sup, self.center).sum(axis=1)
            for k in range(2, K + 1):
                idx = np.flatnonzero(k_of == k)
                b = int(idx[np.argmin(vals[idx])])
                out.append(ClassBound(k=k, lower=float(vals[b]), best=float(vals[b]),
                                      best_support=sup[b].copy(), size=idx.size))
            return out
        self.warm_class_cuts()
        for k in range(2, K + 1):
            region = Region(self.center, k, self.p)
            level = _level(levels, k, L0)
            rb = self.region_bound(region, level=level, abs_tol=abs_tol, max_solves=max_solves)
            logger.info("class %d (%d supports): certified lower bound L0 + %.6g Δ, best member "
                        "found L0 + %.6g Δ, level L0 + %.6g Δ; %d solves", k, region.size,
                        (rb.lower - L0) / self.scale, (rb.best - L0) / self.scale,
                        (level - L0) / self.scale, rb.solves)
            out.append(ClassBound(k=k, lower=rb.lower, best=rb.best,
                                  best_support=rb.best_support, size=region.size))
        self._sync_stats()
        return out

    def region_minimum(self, region: Region, level: float = np.inf, *,
                       leaf_max: int | None = None) -> RegionBound:
        """The exact minimum of ``L`` over ``region`` if it is below ``level``.

        Branch and bound over sub-regions: each is bounded by :meth:`region_bound` with
        the cutoff ``min(level, best)``; a sub-region whose bound passes it is pruned, a
        small one (at most ``explicit_max`` or ``leaf_max`` members) is searched explicitly
        (:func:`~mipdp.enumeration.explicit.explicit_search`), any other is split on a free
        feature.  Returns
        ``best`` = the exact minimum when it is below ``level`` (``lower = best``), else
        ``lower >= level`` certified.
        """
        if leaf_max is None:
            leaf_max = 0
        tol = self.exact_abs_tol()
        best: list[Any] = [np.inf, None]
        lower_all = np.inf
        stack = [region]
        n_regions = 0
        name = f"class_{region.k}"
        self.progress.start(name, members=region.size, level=level)
        while stack:
            R = stack.pop()
            n_regions += 1
            cut = min(level, best[0] - tol)
            if R.size <= max(leaf_max, self.explicit_max, 1):
                res = explicit_search(self, R, level=cut, abs_tol=tol, name=f"class_{R.k}")
                if res.best < best[0]:
                    best[0], best[1] = res.best, res.best_support
                lower_all = min(lower_all, res.threshold)
                continue
            rb = self.region_bound(R, level=cut, abs_tol=tol, max_solves=self.bb_max_solves)
            if rb.best < best[0]:
                best[0], best[1] = rb.best, rb.best_support
            cut = min(level, best[0] - tol)
            if rb.lower >= cut:
                lower_all = min(lower_all, rb.lower)
                continue
            j = self.split_feature(R, rb.best_support)
            stack.extend(R.split(j))
        lower = min(lower_all, best[0], level)
        logger.debug("class %d: exact minimum search over %d sub-regions: minimum %.10g "
                     "(level %.10g; not private)", region.k, n_regions, best[0], level)
        self.progress.done(name, best=best[0], sub_regions=n_regions)
        return RegionBound(lower=float(lower), best=float(best[0]), best_support=best[1],
                           solves=n_regions)

    def split_feature(self, region: Region, best_support) -> int:
        """A free feature to split ``region`` on: centre features first (the drop set), the
        one whose loss the cuts bound highest; then the best member's added features."""
        assert self.master is not None
        G = self.master.cut_gradients()
        score = -G.min(axis=0)  # largest possible drop in L bounded by some cut
        if region.free_center.size and region.n_keep < region.free_center.size:
            return int(region.free_center[np.argmax(score[region.free_center])])
        cand = region.free_outside
        if best_support is not None:
            mine = np.intersect1d(cand, best_support)
            if mine.size:
                cand = mine
        return int(cand[np.argmax(score[cand])])

    def mistake_scores(self, theta=None) -> MistakeScores:
        """Class scores ``M_k = min(L_k, L_0 + θ_k)`` around the exact optimum (§2.2).

        Parameters
        ----------
        theta : array of float, optional
            Data-independent offsets ``θ_k`` (``k = 0..K``); class ``k`` is only searched
            below ``L_0 + θ_k``, and its minimum is exact below that level.  ``None``:
            exact class minima for every class.
        """
        self.optimum()
        K = min(self.s, self.p - self.s)
        th = np.full(K + 1, np.inf) if theta is None else np.asarray(theta, dtype=float)
        for _ in range(self.n_supports):  # re-centres at most this often (in practice never)
            center = self.center
            swaps = self._center_swaps
            assert center is not None and swaps is not None
            L0 = self.found[tuple(center.tolist())]
            scores = np.full(K + 1, np.inf)
            scores[0] = L0
            if K >= 1:  # class 1 (the one-swaps) is evaluated exactly: no cap needed
                scores[1] = float(np.min(swaps))
            cands: list[tuple[float, Any]] = [(float(np.min(swaps)), None)]
            if self._table is None:
                self.warm_class_cuts()
            for k in range(2, K + 1):
                level = L0 + th[k]
                if self._table is not None:
                    cb = next(c for c in self.class_bounds() if c.k == k)
                    best, S = cb.best, cb.best_support
                else:
                    rb = self.region_minimum(Region(center, k, self.p), level)
                    best, S = rb.best, rb.best_support
                scores[k] = best if best < level else level
                cands.append((best, S))
            # The centre is kept unless a member is better by more than the optimum phase's
            # tolerance (as certify_center): tied supports (duplicated columns) have values
            # a few ulps apart by the one-swap update and by a full evaluation, and an
            # exact comparison re-centred between them until the loop gave up.
            if min(c[0] for c in cands) >= L0 - self.optimum_tol(L0):
                self.stats.certified = True
                return MistakeScores(center=center.copy(), scores=scores, levels=L0 + th,
                                     second_best=float(np.min(scores[1:])))
            v, S = min(cands, key=lambda t: t[0])
            if S is None:
                a, j = np.unravel_index(np.argmin(swaps), swaps.shape)
                S = np.r_[np.delete(center, a), j]
            self._recenter(np.sort(np.asarray(S)))
        raise CertificationError(  # pragma: no cover
            "mistake classes: could not settle the optimum")

    def exact_abs_tol(self) -> float:
        """Accuracy at which a class minimum counts as exact (the optimum phase's tolerance)."""
        assert self.center is not None
        L0 = self.found[tuple(self.center.tolist())]
        return max(self.tol * abs(L0), 1e-6 * self.scale)


def _level(levels, k: int, L0: float) -> float:
    if levels is None:
        return np.inf
    if callable(levels):
        return float(levels(k, L0))
    return float(levels[k])
