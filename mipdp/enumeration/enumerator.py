"""Exact enumeration of the best supports by outer approximation (SPEC §3).

:class:`SupportEnumerator` holds one master problem and everything evaluated so far;
its three queries share cuts and evaluations:

* :meth:`SupportEnumerator.optimum` — the best support ``S*`` (IHT + one-swap local
  search warm start, then outer approximation with exact cuts until the master's
  bound meets the incumbent).
* :meth:`SupportEnumerator.top_supports` — the exact ``R`` best supports for a
  data-independent ``R``: all one-swaps of ``S*`` are evaluated in one vectorised
  pass; then the master restricted to supports with ``>= 2`` mistakes is searched
  only for supports below ``τ`` (the current ``R``-th best value), each one found is
  evaluated, cut and excluded by a no-good row, ``τ`` is lowered, and the search ends
  when the master is infeasible — a proof that every support not evaluated has
  ``L > τ``.  No support is ever guessed and no branch gives up.
* :meth:`SupportEnumerator.region_bound` — a certified lower bound of ``L`` over a
  :class:`~mipdp.mechanisms.regions.Region` (supports with ``k`` mistakes around a centre,
  some features fixed in or out), by an improving outer-approximation search inside it;
  the envelope of the exponential-mechanism sampler is built from it
  (:mod:`mipdp.enumeration.envelope`).
* :meth:`SupportEnumerator.mistake_scores` — the class scores
  ``M_k = min(L_k, L_0 + θ_k)`` of the mistakes sampler (data-independent ``θ_k``), with
  the class minima below the levels found exactly by branch and bound over regions
  (:meth:`SupportEnumerator.region_minimum`).

Every search phase is one backend solve with a lazy-row oracle: native lazy
constraints where the backend has them (Gurobi), otherwise solve / add rows /
re-solve on the same persistent model (HiGHS, Pyomo).
"""

from __future__ import annotations

import itertools
import logging
import math
import time
from typing import Any, cast

import numpy as np

from mipdp.solvers.base import MIPBackend, SolverTimeLimitError

from ..deadline import Deadline
from ..exceptions import CertificationError, TimeLimitError
from ..losses.base import SupportObjective, one_swap_supports
from ..mechanisms.regions import Region
from .cuts import CutStore, cut_of
from .dominance import DominanceCache, SharedDominance
from .explicit import explicit_search
from .fixing import screened_columns
from .master import MasterProblem
from .progress import Progress
from .records import ClassBound, EnumerationStats, MistakeScores, RegionBound, TopSupports, _Phase  # noqa: F401
from .region_search import RegionSearch
from .warm_start import iht_support, local_search

logger = logging.getLogger(__name__)

#: Gram entries (``m s²``) per batch of the exhaustive evaluation of all supports
_EXHAUSTIVE_BATCH_ENTRIES = 1 << 14

__all__ = ["SupportEnumerator", "TopSupports", "MistakeScores", "default_R"]


def default_R(p: int, s: int) -> int:
    """The data-independent default ``R = 1 + s (p - s)`` (the optimum and its one-swaps)."""
    return 1 + s * (p - s)


class SupportEnumerator(RegionSearch):
    """Exact top supports of a support objective by outer approximation.

    Parameters
    ----------
    objective : SupportObjective
        ``L(S)`` on the (clipped) data.
    s : int
        Support size.
    scale : float
        Unit of the master's epigraph variable, normally the sensitivity ``Δ``.
    backend : str or MIPBackend, default "highs"
    backend_options : dict, optional
    time_limit : float, optional
        Wall-clock limit (seconds) for all solves together.  Hitting it raises
        :class:`~mipdp.exceptions.CertificationError`: nothing uncertified is returned.
    n_warm_cuts : int, optional
        Cuts added at the best one-swaps of the warm start (default 0: measured slower,
        each dense cut enlarges every later master LP).
    search_gap : float, default 1e-4
        Relative MIP gap of the search solves (any feasible point is progress there;
        the certificates are infeasibility proofs, which do not depend on the gap).
    tol : float, default 1e-9
        Relative optimality tolerance of the optimum phase.
    cutoff_margin : float, default 1e-5
        Slack (in units of ``scale``) above each search cutoff; it exceeds the solvers'
        feasibility tolerance so an infeasible master is a proof.
    exhaustive_max : int, default 200 000
        When the objective evaluates supports cheaply in batches (least squares) and
        ``C(p, s)`` is at most this, every support is evaluated instead (exact by
        construction, and far faster than outer approximation on flat objectives:
        seconds where OA needs minutes).  ``0`` always uses the MIP.
    dominance : bool, default True
        Fix columns that cut dominance proves unnecessary in each search
        (:mod:`mipdp.enumeration.dominance`; exact).
    screening : bool, default True
        Before each master solve, fix to zero the columns the cut store proves to be in no
        support of the search below its cutoff (:mod:`mipdp.enumeration.fixing`; exact).
        At large ``p`` almost every column is fixed and the master shrinks to the rest.
    envelope_split : bool, default True
        The envelope of the exponential mechanism and permute-and-flip bounds a mistake
        class whose MIP bound stays below its level by explicit search at the level
        (:func:`mipdp.enumeration.envelope.build_envelope`, ``split``; exact): tight
        envelopes on correlated designs.  ``False``: MIP bounds only.
    shifted_cuts : bool, default True
        Least squares with ``p <= min(n, 2048)``: cuts with a certified diagonal moved
        from ``XᵀX`` into the ridge
        (:meth:`~mipdp.losses.least_squares.LeastSquaresObjective.cut_shift`; exact,
        tighter bounds when the ridge is small or the columns are correlated).
        ``False``: the plain cuts.
    linear_envelopes : bool, default True
        The envelope hands its cuts to the exponential mechanism's sampler, whose regions
        then sample from their best cut's linear envelope when it has less mass
        (:mod:`mipdp.mechanisms.linear_envelope`; exact).  ``False``: constant envelopes.
    explicit_max : int, default 6 000 000
        Regions (mistake classes, sub-regions) with at most this many supports are searched
        explicitly (:mod:`mipdp.enumeration.explicit`: the bound of every cut for every
        member, exact values only where the cuts cannot decide) instead of by master
        solves; when every mistake class around the warm start is that small, so is the
        optimum.  ``0`` always uses the MIP backend.  Memory: about 24 bytes per member.
    reduced_search : bool, optional
        A region too large for ``explicit_max`` is first searched over its members that
        use no column fixed by screening or dominance, by a branch and bound on the cuts
        alone, with a certificate for the whole region
        (:mod:`mipdp.enumeration.reduced_explicit`; exact); master solves only when that
        search gives up.  Default: ``explicit_max > 0`` (so ``explicit_max=0`` still
        means master solves only).
    full_class_max : int, default 100 000
        The envelope of the exponential mechanism and permute-and-flip
        (:func:`mipdp.enumeration.envelope.build_envelope`) evaluates a mistake class of at
        most this many supports in full when the objective evaluates supports cheaply in
        batches (least squares): its members become exact singletons.  ``0`` bounds every
        class by the certified MIP region bounds, at any ``p`` (with ``exhaustive_max=0``
        and ``explicit_max=0`` it forces the certified region bounds, as the exactness
        tests do).
    progress : callable or Progress, optional
        Receives progress events (:mod:`mipdp.enumeration.progress`); long phases are
        also logged at INFO every few seconds.
    started : float, optional
        ``time.perf_counter()`` when the public call began: ``time_limit`` counts from
        there (default: from construction).
    """

    def __init__(self, objective: SupportObjective, s: int, *, scale: float,
                 backend: str | MIPBackend = "highs", backend_options: dict | None = None,
                 time_limit: float | None = None, n_warm_cuts: int | None = None,
                 search_gap: float = 1e-4, tol: float = 1e-9,
                 cutoff_margin: float = 1e-5, dominance: bool = True, screening: bool = True,
                 envelope_split: bool = True, shifted_cuts: bool = True,
                 linear_envelopes: bool = True,
                 exhaustive_max: int = 200_000, explicit_max: int = 6_000_000,
                 full_class_max: int = 100_000, reduced_search: bool | None = None,
                 progress=None, started: float | None = None) -> None:
        self.objective = objective
        objective.shifted_cuts = bool(shifted_cuts)
        self.p, self.s = objective.p, s
        self.scale = float(scale)
        self.n_supports = math.comb(self.p, s)
        self.search_gap = search_gap
        self.cutoff_margin = cutoff_margin
        self.dominance = dominance
        self.screening = screening
        self.envelope_split = bool(envelope_split)
        self.linear_envelopes = bool(linear_envelopes)
        self._solving = False
        self._dominance = DominanceCache()
        #: dominance states shared by the forks' reduced searches (reduced_explicit)
        self._shared_dominance = SharedDominance()
        self._screen_prev: tuple | None = None  # (pattern, cutoff, mask) of the last screening
        self.exhaustive_max = int(exhaustive_max)
        self.explicit_max = int(explicit_max)
        self.reduced_search = (self.explicit_max > 0 if reduced_search is None
                               else bool(reduced_search))
        self.full_class_max = int(full_class_max)
        self.progress = progress if isinstance(progress, Progress) else Progress(progress)
        self.cuts = CutStore(self.p, s)
        #: extra cuts of the objective at a support, until their master rows are made
        self._extra_cuts: dict[tuple, list] = {}
        self._table: tuple[np.ndarray, np.ndarray] | None = None
        self.tol = tol
        self.n_warm_cuts = 0 if n_warm_cuts is None else n_warm_cuts
        self._clock = Deadline(time_limit, start=started)
        self._time_limit = self._clock.time_limit      # inf: no limit, as None
        self.search_gap_exact = 1e-9
        self.bound_margin = 1e-4
        self.exhaustive_class_max = 300_000
        self.bb_max_solves = 8
        self._backend_spec = backend
        self._backend_options = backend_options
        self.stats = EnumerationStats()
        self.found: dict[tuple, float] = {}
        self._found_cache: tuple[list, np.ndarray] | None = None   # found_array()
        self._ints: list[int] = []   # int objects of the features, shared by found's keys
        self.nogoods: set[tuple] = set()
        self.master: MasterProblem | None = None
        #: in a fork (:mod:`.fork`): every evaluation cut, ``(S, [(lower, g), ...])``
        self._journal_cuts: list | None = None
        self.center: np.ndarray | None = None
        self._center_swaps: np.ndarray | None = None
        self._optimum_certified = False

    @property
    def table(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(supports, values)`` of every support on the exhaustive path, else ``None``."""
        return self._table

    @property
    def clock(self) -> Deadline:
        """The :class:`~mipdp.deadline.Deadline` of ``time_limit`` (shared with the sampler)."""
        return self._clock

    @property
    def center_swaps(self) -> np.ndarray:
        """One-swap objectives of the centre, shape ``(s, p)`` (``inf`` where ``j ∈ S*``)."""
        return cast(np.ndarray, self._center_swaps)

    # -- helpers ----------------------------------------------------------------------
    def _remaining(self, name: str = "enumeration") -> float | None:
        return self._clock.remaining(name)

    def remaining_time(self, name: str) -> float | None:
        """Seconds left of ``time_limit`` (``None``: no limit); raises once it is spent."""
        return self._remaining(name)

    def _phase(self, name: str) -> _Phase:
        return self.stats.phases.setdefault(name, _Phase())

    def record_phase(self, name: str, seconds: float, *, evaluations: int = 0) -> None:
        """Add work done outside the enumerator (e.g. a class evaluated in full) to a phase."""
        ph = self._phase(name)
        ph.time += seconds
        ph.evaluations += evaluations

    def _evaluate_cut(self, S: np.ndarray, *, add_to_master: bool = False
                      ) -> tuple[float, float, np.ndarray]:
        """``(value, lower, g)``: the value recorded, and the certified cut constant and slope.

        Every cut goes to the cut store (:attr:`cuts`); with ``add_to_master`` its rows are
        also given to the master (outside a solve; deferred,
        :meth:`~mipdp.enumeration.master.MasterProblem.defer_rows`: they reach the backend
        before its next use, in this order).
        """
        return self._record_cut(S, *cut_of(self.objective, S), add_to_master=add_to_master)

    def _record_cut(self, S: np.ndarray, v: float, lower: float, g: np.ndarray, extra: list,
                    *, add_to_master: bool = False) -> tuple[float, float, np.ndarray]:
        """Record an evaluation and its cuts (:meth:`_evaluate_cut` once computed)."""
        S = np.asarray(S, dtype=np.intp)
        key = tuple(int(i) for i in S)
        self.found[key] = v
        self.cuts.add(S, lower, g)
        for lo_k, g_k in extra:
            self.cuts.add(S, lo_k, g_k)
        self._extra_cuts[key] = extra
        if self._journal_cuts is not None:
            self._journal_cuts.append((S, [(lower, g)] + list(extra)))
        if add_to_master and self.master is not None and not self.master.has_cut(S):
            self.master.defer_rows(self._master_rows(S, lower, g))
        return v, lower, g

    def _master_rows(self, S: np.ndarray, lower: float, g: np.ndarray) -> list:
        """The master rows of the cut at ``S`` and of the extra cuts the objective gave
        there (:meth:`~mipdp.losses.base.SupportObjective.extra_cuts`)."""
        assert self.master is not None
        rows = [self.master.cut_row(S, lower, g)]
        for lo_k, g_k in self._extra_cuts.pop(tuple(int(i) for i in S), ()):
            rows.append(self.master.cut_row(S, lo_k, g_k))
        return rows

    def _cut_or_recall(self, S: np.ndarray, ph: _Phase) -> tuple[tuple, float, list]:
        """``(key, value, rows)`` of a point the master offered: evaluated and cut (one row)
        if the master has no cut at it yet, else its recorded value and no row."""
        key = tuple(S.tolist())
        assert self.master is not None
        if self.master.has_cut(S):
            return key, self.found[key], []
        v, lower, g = self._evaluate_cut(S)
        ph.evaluations += 1
        return key, v, self._master_rows(S, lower, g)

    def _record_swaps(self, center: np.ndarray, swaps: np.ndarray, chunk: int = 65536) -> None:
        # s (p - s) keys: built a chunk at a time from one shared int object per feature
        # (tolist() would make one per entry: 0.6 GB more at p = 10⁶, s = 5)
        a_idx, j_idx = np.nonzero(np.isfinite(swaps))
        rest = np.array([np.delete(center, a) for a in range(center.size)])
        if len(self._ints) < self.p:
            self._ints = list(range(self.p))
        feat = self._ints.__getitem__
        found = self.found
        for lo in range(0, a_idx.size, chunk):
            a, j = a_idx[lo:lo + chunk], j_idx[lo:lo + chunk]
            sup = np.sort(np.column_stack([rest[a], j]), axis=1)
            # the tuples are made by zip (in C), entries added in order by one update;
            # supports already found keep their value and place (as setdefault would)
            cols = [list(map(feat, sup[:, i].tolist())) for i in range(sup.shape[1])]
            new = dict(zip(zip(*cols, strict=True), swaps[a, j].tolist(), strict=True))
            for key in new.keys() & found.keys():
                del new[key]
            found.update(new)

    def _solve(self, phase: _Phase, oracle, gap: float, *, name: str = "search", fields=None):
        calls = [0]
        master = self.master
        assert master is not None

        def reported(x):
            rows = oracle(x)
            calls[0] += 1
            self.progress.update(name, solves=phase.solves + calls[0],
                                 evaluations=phase.evaluations, rows=master.backend.n_rows,
                                 **(fields() if fields is not None else {}))
            return rows

        self._solving = True
        try:
            res, S = master.solve(mip_rel_gap=gap, time_limit=self._remaining(name),
                                  lazy=reported)
        except SolverTimeLimitError as exc:
            if self._time_limit is not None:   # the user's limit: one message, solver at DEBUG
                raise self._clock.error(name, detail=str(exc)) from None
            logger.debug("time limit in the %s phase (not private): %s", name, exc)
            raise TimeLimitError(
                f"the backend's own time limit (backend_options) was reached; not private: "
                f"during the {name} phase, before it was certified (where a call reaches a "
                "limit depends on the data); nothing was released. To finish, raise it, "
                "pre-screen to fewer features (prescreen=(name, k, fraction)), or ask for a "
                "smaller s.") from None
        finally:
            self._solving = False
        phase.solves += res.n_solves
        phase.lazy_rows += res.n_lazy_rows
        return res, S

    def _sync_stats(self) -> None:
        m = self.master
        self.stats.n_cuts = m.n_cuts if m else 0
        self.stats.n_nogoods = m.n_nogoods if m else 0
        self.stats.n_evaluations = self.objective.n_evaluations

    # -- optimum ----------------------------------------------------------------------------
    @property
    def optimum_certified(self) -> bool:
        """Whether the centre is the certified optimum (exhaustive path, optimum phase, or
        class bounds that certified it)."""
        return bool(self._optimum_certified)

    def warm_center(self) -> tuple[np.ndarray, float]:
        """A one-swap local optimum and its value, with the master built around it.

        The certified optimum when it is already known (or on the exhaustive path); else
        the warm start (IHT, then one-swap local search), *not* certified.  The envelope of
        the exponential mechanism is built around it (:mod:`.envelope`): its regions only
        need valid bounds, and they certify the centre for free when every class bound
        passes its value (:meth:`certify_center`).
        """
        if self._optimum_certified or self.master is not None:
            assert self.center is not None
            return self.center, self.found[tuple(self.center.tolist())]
        if self.objective.cheap_values and self.n_supports <= self.exhaustive_max:
            return self._exhaustive()
        self._warm_start()
        assert self.center is not None
        return self.center, self.found[tuple(self.center.tolist())]

    def certify_center(self, class_lower: list[float]) -> bool:
        """Certify the centre as the optimum from lower bounds of every class ``k >= 2``.

        Classes 0 and 1 (the centre and its one-swaps) are evaluated and the centre is a
        one-swap local optimum; if every other class is bounded below by the centre's value
        (less the optimum phase's tolerance), no support is better: the optimum phase is
        not needed.  Returns whether it certified.
        """
        if self._optimum_certified:
            return True
        if self.center is None or self.master is None:
            return False
        L0 = self.found[tuple(self.center.tolist())]
        K = min(self.s, self.p - self.s)
        if len(class_lower) != max(0, K - 1):
            return False
        tol = self.optimum_tol(L0)
        assert self._center_swaps is not None
        one_swaps = float(np.min(self._center_swaps)) if self._center_swaps.size else np.inf
        lows = [one_swaps] + [float(v) for v in class_lower]
        if min(lows) < L0 - tol:
            return False
        self.stats.optimality_gap = tol / max(abs(L0), 1e-300)
        self._optimum_certified = True
        self._sync_stats()
        logger.info("optimum: the centre is certified by the class bounds (no optimum phase)")
        return True

    def optimum(self) -> tuple[np.ndarray, float]:
        """The best support and its value, certified by outer approximation."""
        if self._optimum_certified:
            assert self.center is not None
            return self.center, self.found[tuple(self.center.tolist())]
        if self.objective.cheap_values and self.n_supports <= self.exhaustive_max:
            return self._exhaustive()
        if self.master is None:
            self._warm_start()
        center = self.center
        assert center is not None
        value = self.found[tuple(center.tolist())]
        K = min(self.s, self.p - self.s)
        if (K < 2 or max(Region(center, k, self.p).size for k in range(2, K + 1))
                <= self.explicit_max):
            return self._explicit_optimum()
        return self._oa_optimum(value)

    def _warm_start(self) -> None:
        """IHT and one-swap local search, then the master with the cut at the result."""
        self._remaining("warm start")
        t0 = time.perf_counter()
        ph = self._phase("warm_start")
        self.progress.start("warm_start", p=self.p, s=self.s, supports=self.n_supports)
        obj = self.objective
        kw: dict[str, Any] = ({} if self._clock.end is None
                              else {"check": lambda: self._remaining("warm start")})
        warm = getattr(obj, "warm_support", None)    # a score with its own warm start
        S0 = (warm(self.s) if warm is not None
              else iht_support(obj.X, obj.y, self.s, getattr(obj.loss, "ridge", 1.0), **kw))
        center, value, swaps = local_search(obj, S0, **kw)
        self.center, self._center_swaps = center, swaps
        self.found[tuple(center.tolist())] = value
        self._record_swaps(center, swaps)
        ph.time += time.perf_counter() - t0
        self.progress.done("warm_start", best=value, evaluations=obj.n_evaluations)
        self._remaining("warm start")

        t0 = time.perf_counter()
        self.master = MasterProblem(self.p, self.s, offset=value, scale=self.scale,
                                    backend=self._backend_spec,
                                    backend_options=self._backend_options)
        self.stats.backend = self.master.backend.name
        rows = self._master_rows(center, *self._evaluate_cut(center)[1:])
        if self.n_warm_cuts > 0:
            flat = np.argsort(swaps, axis=None)[:self.n_warm_cuts]
            for a, j in zip(*np.unravel_index(flat, swaps.shape), strict=True):
                S = np.sort(np.r_[np.delete(center, a), j])
                rows.extend(self._master_rows(S, *self._evaluate_cut(S)[1:]))
        self.master.backend.add_rows(rows)
        self._phase("warm_cuts").time += time.perf_counter() - t0

    def _oa_optimum(self, value: float) -> tuple[np.ndarray, float]:
        """The optimum by outer approximation from the warm start (value ``value``)."""
        center = self.center
        assert self.center is not None and self.master is not None
        t0 = time.perf_counter()
        ph = self._phase("optimum")
        best: list[Any] = [value, center]
        key, v = self._best_found()  # supports already evaluated (some under no-goods)
        if v < value:
            best = [v, np.array(key, dtype=np.intp)]

        def oracle(x):
            S = self.master.support_of(x)
            if self.master.has_cut(S):
                return []
            v, lower, g = self._evaluate_cut(S)
            ph.evaluations += 1
            if v < best[0]:
                best[0], best[1] = v, S
            rows = self._master_rows(S, lower, g)
            self._fix_dominated(ph, region=False, cutoff=best[0])
            return rows

        self._fix_dominated(ph, region=False, cutoff=best[0])
        self.progress.start("optimum", supports=self.n_supports)
        res, _ = self._solve(ph, oracle, self.tol, name="optimum",
                             fields=lambda: {"best": best[0]})
        self.master.set_fixed_zero(np.zeros(self.p, dtype=bool))
        if res.status == "infeasible":  # impossible for a correct solver: Σz = s always fits
            raise CertificationError("the master problem of the optimum phase was reported "
                                     "infeasible, which cannot happen; nothing was released")
        # Columns fixed by screening are in no support with L <= best (fixing.py), so
        # min(bound, best) bounds every support; the incumbent is never fixed out.
        lower = min(self.master.to_value(res.bound), best[0])
        self.stats.optimality_gap = max(0.0, best[0] - lower) / max(abs(best[0]), 1e-300)
        ph.time += time.perf_counter() - t0
        self.progress.done("optimum", best=best[0], bound=lower, solves=ph.solves)
        if self.stats.optimality_gap > max(self.tol, 1e-6 * self.scale / max(abs(best[0]), 1e-300)):
            # the gap itself is data: it is in result.stats (not private) when a run ends,
            # never in an exception's text
            logger.debug("outer approximation stopped with relative gap %.3g (not private)",
                         self.stats.optimality_gap)
            raise CertificationError(
                "outer approximation stopped before its relative gap reached the tolerance; "
                "the optimum is not certified and nothing was released")
        if not np.array_equal(best[1], self.center):
            self._recenter(best[1])
        self._optimum_certified = True
        self._sync_stats()
        return self.center, best[0]

    def _explicit_optimum(self) -> tuple[np.ndarray, float]:
        """The optimum by explicit search of every mistake class around the warm start.

        Classes 0 and 1 (the warm start and its one-swaps) are evaluated; each class
        ``k >= 2`` is searched below ``best - tol`` (``best`` the best value so far), so
        every support not evaluated has ``L > best_final - tol``.
        """
        assert self.center is not None and self._center_swaps is not None
        center = self.center
        value = self.found[tuple(center.tolist())]
        tol = self.optimum_tol(value)
        best: list[Any] = [float(np.min(self._center_swaps)) if self._center_swaps.size else np.inf,
                           None]
        if best[0] < value:  # pragma: no cover - the warm start is a one-swap local optimum
            a, j = np.unravel_index(np.argmin(self._center_swaps), self._center_swaps.shape)
            best[1] = np.sort(np.r_[np.delete(center, a), j])
        else:
            best = [value, center]
        self.progress.start("optimum", supports=self.n_supports)
        for k in range(2, min(self.s, self.p - self.s) + 1):
            res = explicit_search(self, Region(center, k, self.p), level=best[0] - tol,
                                  abs_tol=tol, name="optimum")
            if res.best < best[0]:
                best = [res.best, res.best_support]
        self.stats.optimality_gap = tol / max(abs(best[0]), 1e-300)
        self.progress.done("optimum", best=best[0], evaluations=self._phase("optimum").evaluations)
        if not np.array_equal(best[1], self.center):
            self._recenter(np.asarray(best[1]))
        self._optimum_certified = True
        self._sync_stats()
        return self.center, best[0]

    def _exhaustive(self) -> tuple[np.ndarray, float]:
        """Evaluate all ``C(p, s)`` supports (small problems with cheap batched values)."""
        t0 = time.perf_counter()
        self._remaining("exhaustive")  # the time limit holds on this path too
        n_sup = math.comb(self.p, self.s)
        sup = np.fromiter(itertools.chain.from_iterable(
            itertools.combinations(range(self.p), self.s)), dtype=np.intp,
            count=n_sup * self.s).reshape(n_sup, self.s)
        # batches of about 2^14 Gram entries: the (m, s, s) workspaces of the batched solves
        # stay near 0.13 MB each (50 000 supports took 3 MB each, the peak of a small
        # release) and the batches ran faster (0.14 against 0.22 s at C(30, 5))
        batch = max(1, _EXHAUSTIVE_BATCH_ENTRIES // (self.s * self.s))
        parts = []
        for lo in range(0, sup.shape[0], batch):
            self._remaining("exhaustive")
            parts.append(self.objective.values(sup[lo:lo + batch]))
        vals = np.concatenate(parts)
        self._table = (sup, vals)
        best = int(np.argmin(vals))
        self.center = sup[best].copy()
        # the one-swaps' values read off the table: the same arithmetic as the centre's, so
        # no one-swap can undercut the table's minimum by rounding (a second closed form
        # disagreeing in the last bits made `mistakes` re-centre on a support missing from
        # `found`: a KeyError on one neighbour only, found by the neighbour fuzz)
        self._center_swaps = self._table_swaps(self.center)
        self.found[tuple(self.center.tolist())] = float(vals[best])
        self.stats.optimality_gap = 0.0
        self.stats.certified = True
        self.stats.backend = "exhaustive"
        self._optimum_certified = True
        self._phase("exhaustive").time += time.perf_counter() - t0
        self._phase("exhaustive").evaluations += sup.shape[0]
        self._sync_stats()
        return self.center, float(vals[best])

    def _table_index(self, rows: np.ndarray) -> np.ndarray:
        """Positions in the exhaustive table of the sorted supports ``rows``.

        The table lists ``itertools.combinations(range(p), s)`` in order, so a support's
        position is its lexicographic rank, ``C(p, s) − 1 − Σ_i C(p − 1 − S_i, s − i)``
        (every term is at most ``C(p, s)``: exact in int64)."""
        p, s = self.p, self.s
        binom = np.array([[math.comb(m, k) for k in range(s + 1)] for m in range(p)],
                         dtype=np.int64)
        rows = np.asarray(rows, dtype=np.intp).reshape(-1, s)
        tail = binom[p - 1 - rows, np.arange(s, 0, -1)].sum(axis=1)
        return math.comb(p, s) - 1 - tail

    def _table_swaps(self, center: np.ndarray) -> np.ndarray:
        """:meth:`one_swap_values` of ``center`` read off the exhaustive table."""
        assert self._table is not None
        out = np.full((self.s, self.p), np.inf)
        outside, cand = one_swap_supports(center, self.p)
        if outside.size:
            vals = np.asarray(self._table[1])
            out[:, outside] = vals[self._table_index(cand)].reshape(self.s, outside.size)
        return out

    def _recenter(self, S: np.ndarray) -> None:
        t0 = time.perf_counter()
        self.center = np.sort(np.asarray(S))
        key = tuple(int(i) for i in self.center)
        if self._table is not None:
            # on the exhaustive path the table's own values (one arithmetic: a one-swap
            # closed form differs from the table in the last bits for most supports, the
            # F7 hazard again after a re-centre; found by review2)
            if key not in self.found:
                i = int(self._table_index(self.center)[0])
                self.found[key] = float(self._table[1][i])
            self._center_swaps = self._table_swaps(self.center)
        else:
            if key not in self.found:
                self.found[key] = float(self.objective.values(self.center[None, :])[0])
            self._center_swaps = self.objective.one_swap_values(self.center)
        self._record_swaps(self.center, self._center_swaps)
        self._phase("one_swaps").time += time.perf_counter() - t0

    def found_array(self) -> tuple[list, np.ndarray]:
        """``(keys, array)``: the supports evaluated so far, as the list of :attr:`found`'s
        keys and an ``(m, s)`` array in the same order.  Kept between calls and extended by
        the supports added since (keys are only ever added to ``found``): at p = 10⁵ it
        holds the 5·10⁵ one-swaps, whose conversion cost 0.2 s per search.  The caller
        must not modify them."""
        cache = self._found_cache
        n = len(self.found)
        if cache is None or len(cache[0]) > n:
            keys = list(self.found)
            arr = np.array(keys, dtype=np.intp).reshape(-1, self.s)
        elif len(cache[0]) < n:
            tail = list(itertools.islice(self.found, len(cache[0]), None))
            keys = cache[0] + tail
            arr = np.concatenate([cache[1], np.array(tail, dtype=np.intp).reshape(-1, self.s)])
        else:
            return cache
        self._found_cache = (keys, arr)
        return keys, arr

    def _best_found(self) -> tuple[tuple, float]:
        key = min(self.found, key=self.found.__getitem__)
        return key, self.found[key]

    # -- region search -----------------------------------------------------------------------
    def _fix_dominated(self, phase: _Phase, region: bool = True,
                       cutoff: float | None = None) -> None:
        """Fix the columns the cut store excludes below the cutoff (:mod:`.fixing`) and
        those dominance proves unnecessary (:mod:`.dominance`).

        ``cutoff`` (objective units) replaces the master's cutoff for the screening (the
        optimum phase: the incumbent).  With ``region=False`` (the optimum phase: no region
        row) all columns form one group; a swap never raises a cut, so the master's
        optimum value is unchanged.
        """
        master = self.master
        assert master is not None
        if master.backend.native_lazy and self._solving:
            # inside a native lazy callback: bounds cannot change (and no-goods added
            # inside the solve would make the dominance count stale)
            return
        one, zero = master.fixed_columns
        free = ~(one | zero)  # columns a region fixes are in no group
        screened = np.zeros(self.p, dtype=bool)
        c = master.cutoff_value if cutoff is None else float(cutoff)
        if self.screening and c is not None and np.isfinite(c) and len(self.cuts):
            forced = np.flatnonzero(one)
            count = master.region_count if region else None
            if count is not None and count[0] == count[1]:
                inside = np.zeros(self.p, dtype=bool)
                inside[master.region_center] = True
                n_in = int(round(count[0])) - int((one & inside).sum())
                n_out = self.s - int(round(count[0])) - int((one & ~inside).sum())
                groups = [(np.flatnonzero(inside & free), n_in),
                          (np.flatnonzero(~inside & free), n_out)]
            else:  # no region row, or a range: one group (a relaxation, still valid)
                groups = [(np.flatnonzero(free), self.s - forced.size)]
            cut_c = c + self.cutoff_margin * self.scale
            key = (tuple(master.region_center.tolist()) if count is not None else None, count,
                   one.tobytes(), zero.tobytes())
            prev = self._screen_prev
            if prev is not None and prev[0] == key and cut_c <= prev[1]:
                # same pattern, lower cutoff, more cuts: the earlier fixings still hold, and
                # the rest is screened on the pattern restricted to the columns left
                screened = prev[2].copy()
                groups = [(cols[~screened[cols]], m) for cols, m in groups]
            if all(m >= 0 for _, m in groups):
                a, G = self.cuts.arrays
                # the Lagrangian round once per search (before its first solve): it costs a
                # few small LPs, the single-cut round O(T p)
                screened |= screened_columns(a, G, forced, groups, cut_c, self.cuts.slack(),
                                             lagrangian=not self._solving)
            self._screen_prev = (key, cut_c, screened.copy())
            phase.screened = max(phase.screened, int(screened.sum()))
        dom = np.zeros(self.p, dtype=bool)
        if self.dominance and not master.backend.native_lazy:
            # With native lazy rows, no-goods are added inside the solve, after the
            # fixing was computed, so the count K it relies on would be stale.
            if region and master.region_count is not None:
                inside = np.zeros(self.p, dtype=bool)
                inside[master.region_center] = True
                groups_d = [np.flatnonzero(inside & free), np.flatnonzero(~inside & free)]
            else:
                groups_d = [np.flatnonzero(free)]
            need = self.s + master.n_nogoods
            if any(g.size > need for g in groups_d):
                # only live columns (not fixed by the screening) count as dominators
                dom = self._dominance.mask(master.cut_gradients(), groups_d, need,
                                           free & ~screened)
        master.set_fixed_zero(screened | dom)
        phase.fixed = max(phase.fixed, master.n_fixed)

    def _search(self, phase_name: str, lo: int, hi: int, threshold) -> None:
        """Find every support in the region ``lo <= |S ∩ center| <= hi`` with
        ``L < threshold()``."""
        ph = self._phase(phase_name)
        t0 = time.perf_counter()
        master = self.master
        assert master is not None and self.center is not None
        master.set_region(self.center, lo, hi)
        master.set_cutoff(threshold(), self.cutoff_margin)
        self._fix_dominated(ph)
        emulated = not master.backend.native_lazy
        current = [threshold()]

        def oracle(x):
            S = master.support_of(x)
            key, _, rows = self._cut_or_recall(S, ph)
            if key not in self.nogoods:
                self.nogoods.add(key)
                rows.append(master.nogood_row(S))
            elif not rows:  # a solver may offer an excluded point again: reject it again
                rows.append(master.nogood_row(S, new=False))
            t = threshold()
            if emulated:  # between two emulated solves: tighten the model
                if t < current[0]:
                    master.set_cutoff(t, self.cutoff_margin)
                    current[0] = t
                self._fix_dominated(ph)
            return rows

        res, _ = self._solve(ph, oracle, self.search_gap, name=phase_name,
                             fields=lambda: {"threshold": threshold(), "found": len(self.found)})
        if res.status != "infeasible":  # pragma: no cover - the oracle rejects every point
            raise CertificationError(f"{phase_name}: the search ended without a certificate")
        master.set_fixed_zero(np.zeros(self.p, dtype=bool))
        master.set_cutoff(None)
        master.clear_region()
        ph.time += time.perf_counter() - t0
        self._sync_stats()

    # -- top-R ------------------------------------------------------------------------------
    def top_supports(self, R: int) -> TopSupports:
        """The exact ``R`` best supports (``R`` must not be chosen from the data)."""
        R = int(min(R, self.n_supports))
        if R < 1:
            raise ValueError(f"R: must be >= 1, got {R}")
        self.optimum()
        assert self.center is not None
        if self._table is not None:
            sup, vals = self._table
            order = np.lexsort((np.arange(vals.size), vals))[:R]
            return TopSupports(supports=sup[order], values=vals[order], R=R,
                               n_supports=self.n_supports)
        cache = [-1, np.inf]

        def tau():
            """The ``R``-th smallest value evaluated so far (recomputed when ``found`` grew)."""
            if len(self.found) != cache[0]:
                cache[0] = len(self.found)
                if cache[0] < R:
                    cache[1] = np.inf
                else:
                    values = np.fromiter(self.found.values(), float, cache[0])
                    cache[1] = float(np.partition(values, R - 1)[R - 1])
            return cache[1]

        if self.s >= 2 and self.p - self.s >= 2:
            self.progress.start("top_r", R=R)
            K = min(self.s, self.p - self.s)
            mip = []
            for k in range(2, K + 1):
                region = Region(self.center, k, self.p)
                if region.size <= self.explicit_max:
                    explicit_search(self, region, threshold=tau, name="top_r")
                else:
                    mip.append(k)
            # the other classes by master solves, one contiguous range of classes at a time
            for _, grp in itertools.groupby(enumerate(mip), key=lambda t: t[1] - t[0]):
                ks = [k for _, k in grp]
                self._search("top_r", self.s - ks[-1], self.s - ks[0], tau)
            self.progress.done("top_r", found=len(self.found), threshold=tau())
        keys = list(self.found)
        vals = np.array([self.found[k] for k in keys])
        order = np.lexsort((np.arange(vals.size), vals))[:R]
        supports = np.array([keys[i] for i in order], dtype=np.intp).reshape(-1, self.s)
        best = tuple(supports[0].tolist())
        if best != tuple(self.center.tolist()):
            self._recenter(np.array(best))
        self.stats.certified = True
        return TopSupports(supports=supports, values=vals[order], R=R, n_supports=self.n_supports)
