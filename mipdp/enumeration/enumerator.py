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
* :meth:`SupportEnumerator.mistake_scores` — the class scores
  ``M_k = min(L_k, τ₁)`` of the mistakes sampler, each class searched the same way
  below ``min(best in class, τ₁)``.

Every search phase is one backend solve with a lazy-row oracle: native lazy
constraints where the backend has them (Gurobi), otherwise solve / add rows /
re-solve on the same persistent model (HiGHS, Pyomo).
"""

from __future__ import annotations

import itertools
import logging
import math
import time
from dataclasses import dataclass, field

import numpy as np

from solvers.base import MIPBackend, SolverTimeLimitError

from ..exceptions import CertificationError
from ..losses.base import SupportObjective
from .dominance import dominated_columns
from .master import MasterProblem
from .warm_start import iht_support, local_search

logger = logging.getLogger(__name__)

__all__ = ["SupportEnumerator", "TopSupports", "MistakeScores", "default_R"]


def default_R(p: int, s: int) -> int:
    """The data-independent default ``R = 1 + s (p - s)`` (the optimum and its one-swaps)."""
    return 1 + s * (p - s)


@dataclass
class TopSupports:
    """The exact ``R`` best supports, best first."""

    supports: np.ndarray  # (R, s) sorted indices
    values: np.ndarray  # (R,) ascending
    R: int
    n_supports: int  # C(p, s), exact integer


@dataclass
class MistakeScores:
    """Scores of the mistake classes around the optimum ``center``."""

    center: np.ndarray
    scores: np.ndarray  # M_k = min(L_k, tau1), k = 0..K
    tau1: float
    second_best: float  # L(S_(2)) (exact)


@dataclass
class _Phase:
    time: float = 0.0
    solves: int = 0
    evaluations: int = 0
    lazy_rows: int = 0
    fixed: int = 0


@dataclass
class EnumerationStats:
    """What the enumeration did: times, solver calls, cuts, certification."""

    phases: dict = field(default_factory=dict)
    n_cuts: int = 0
    n_nogoods: int = 0
    n_evaluations: int = 0
    optimality_gap: float = float("nan")
    certified: bool = False
    backend: str = ""

    def as_dict(self) -> dict:
        return {"phases": {k: vars(v).copy() for k, v in self.phases.items()},
                "n_cuts": self.n_cuts, "n_nogoods": self.n_nogoods,
                "n_evaluations": self.n_evaluations,
                "optimality_gap": self.optimality_gap, "certified": self.certified,
                "backend": self.backend}


class SupportEnumerator:
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
    """

    def __init__(self, objective: SupportObjective, s: int, *, scale: float,
                 backend: str | MIPBackend = "highs", backend_options: dict | None = None,
                 time_limit: float | None = None, n_warm_cuts: int | None = None,
                 search_gap: float = 1e-4, tol: float = 1e-9,
                 cutoff_margin: float = 1e-5, dominance: bool = True,
                 exhaustive_max: int = 200_000) -> None:
        self.objective = objective
        self.p, self.s = objective.p, s
        self.scale = float(scale)
        self.n_supports = math.comb(self.p, s)
        self.search_gap = search_gap
        self.cutoff_margin = cutoff_margin
        self.dominance = dominance
        self.exhaustive_max = int(exhaustive_max)
        self._table: tuple[np.ndarray, np.ndarray] | None = None
        self.tol = tol
        self.n_warm_cuts = 0 if n_warm_cuts is None else n_warm_cuts
        self._deadline = None if time_limit is None else time.perf_counter() + time_limit
        self._backend_spec = backend
        self._backend_options = backend_options
        self.stats = EnumerationStats()
        self.found: dict[tuple, float] = {}
        self.nogoods: set[tuple] = set()
        self.master: MasterProblem | None = None
        self.center: np.ndarray | None = None
        self._center_swaps: np.ndarray | None = None
        self._optimum_certified = False

    # -- helpers ----------------------------------------------------------------------
    def _remaining(self) -> float | None:
        if self._deadline is None:
            return None
        left = self._deadline - time.perf_counter()
        if left <= 0:
            raise CertificationError("time_limit reached before the enumeration was certified; "
                                     "nothing was released. Raise time_limit or pre-screen.")
        return left

    def _phase(self, name: str) -> _Phase:
        return self.stats.phases.setdefault(name, _Phase())

    def _evaluate_cut(self, S: np.ndarray) -> tuple[float, float, np.ndarray]:
        """``(value, lower, g)``: the value recorded, and the certified cut constant and slope."""
        out = self.objective.value_and_cut(S)
        v, lower, g = out if len(out) == 3 else (out[0], out[0], out[1])
        self.found[tuple(int(i) for i in S)] = v
        return v, lower, g

    def _record_swaps(self, center: np.ndarray, swaps: np.ndarray) -> None:
        a_idx, j_idx = np.nonzero(np.isfinite(swaps))
        rest = np.array([np.delete(center, a) for a in range(center.size)])
        sup = np.sort(np.column_stack([rest[a_idx], j_idx]), axis=1)
        for row, v in zip(map(tuple, sup.tolist()), swaps[a_idx, j_idx].tolist()):
            self.found.setdefault(row, v)

    def _solve(self, phase: _Phase, oracle, gap: float):
        try:
            res, S = self.master.solve(mip_rel_gap=gap, time_limit=self._remaining(), lazy=oracle)
        except SolverTimeLimitError as exc:
            raise CertificationError(f"the MIP backend hit its time limit before certifying the "
                                     f"enumeration ({exc}); nothing was released. Raise "
                                     "time_limit or pre-screen to fewer features.") from exc
        phase.solves += res.n_solves
        phase.lazy_rows += res.n_lazy_rows
        return res, S

    def _sync_stats(self) -> None:
        m = self.master
        self.stats.n_cuts = m.n_cuts if m else 0
        self.stats.n_nogoods = m.n_nogoods if m else 0
        self.stats.n_evaluations = self.objective.n_evaluations

    # -- optimum ----------------------------------------------------------------------------
    def optimum(self) -> tuple[np.ndarray, float]:
        """The best support and its value, certified by outer approximation."""
        if self._optimum_certified:
            return self.center, self.found[tuple(self.center.tolist())]
        if self.objective.cheap_values and self.n_supports <= self.exhaustive_max:
            return self._exhaustive()
        t0 = time.perf_counter()
        ph = self._phase("warm_start")
        obj = self.objective
        S0 = iht_support(obj.X, obj.y, self.s, getattr(obj.loss, "ridge", 1.0))
        center, value, swaps = local_search(obj, S0)
        self.center, self._center_swaps = center, swaps
        self.found[tuple(center.tolist())] = value
        self._record_swaps(center, swaps)
        ph.time += time.perf_counter() - t0
        self._remaining()

        t0 = time.perf_counter()
        self.master = MasterProblem(self.p, self.s, offset=value, scale=self.scale,
                                    backend=self._backend_spec,
                                    backend_options=self._backend_options)
        self.stats.backend = self.master.backend.name
        rows = [self.master.cut_row(center, *self._evaluate_cut(center)[1:])]
        if self.n_warm_cuts > 0:
            flat = np.argsort(swaps, axis=None)[:self.n_warm_cuts]
            for a, j in zip(*np.unravel_index(flat, swaps.shape)):
                S = np.sort(np.r_[np.delete(center, a), j])
                rows.append(self.master.cut_row(S, *self._evaluate_cut(S)[1:]))
        self.master.backend.add_rows(rows)
        self._phase("warm_cuts").time += time.perf_counter() - t0

        t0 = time.perf_counter()
        ph = self._phase("optimum")
        best = [value, center]

        def oracle(x):
            S = self.master.support_of(x)
            if self.master.has_cut(S):
                return []
            v, lower, g = self._evaluate_cut(S)
            ph.evaluations += 1
            if v < best[0]:
                best[0], best[1] = v, S
            row = self.master.cut_row(S, lower, g)
            self._fix_dominated(ph, region=False)
            return [row]

        self._fix_dominated(ph, region=False)
        res, _ = self._solve(ph, oracle, self.tol)
        self.master.set_fixed_zero(np.zeros(self.p, dtype=bool))
        if res.status == "infeasible":  # impossible for a correct solver: Σz = s always fits
            raise CertificationError("the master problem of the optimum phase was reported "
                                     "infeasible, which cannot happen; nothing was released")
        lower = self.master.to_value(res.bound)
        self.stats.optimality_gap = max(0.0, best[0] - lower) / max(abs(best[0]), 1e-300)
        ph.time += time.perf_counter() - t0
        if self.stats.optimality_gap > max(self.tol, 1e-6 * self.scale / max(abs(best[0]), 1e-300)):
            raise CertificationError(
                f"outer approximation stopped with relative gap {self.stats.optimality_gap:.3g}; "
                "the optimum is not certified and nothing was released")
        if not np.array_equal(best[1], self.center):
            self._recenter(best[1])
        self._optimum_certified = True
        self._sync_stats()
        return self.center, best[0]

    def _exhaustive(self) -> tuple[np.ndarray, float]:
        """Evaluate all ``C(p, s)`` supports (small problems with cheap batched values)."""
        t0 = time.perf_counter()
        sup = np.array(list(itertools.combinations(range(self.p), self.s)), dtype=np.intp)
        vals = np.concatenate([self.objective.values(sup[lo:lo + 50_000])
                               for lo in range(0, sup.shape[0], 50_000)])
        self._table = (sup, vals)
        best = int(np.argmin(vals))
        self.center = sup[best].copy()
        self._center_swaps = self.objective.one_swap_values(self.center)
        self.found[tuple(self.center.tolist())] = float(vals[best])
        self.stats.optimality_gap = 0.0
        self.stats.certified = True
        self.stats.backend = "exhaustive"
        self._optimum_certified = True
        self._phase("exhaustive").time += time.perf_counter() - t0
        self._phase("exhaustive").evaluations += sup.shape[0]
        self._sync_stats()
        return self.center, float(vals[best])

    def _recenter(self, S: np.ndarray) -> None:
        t0 = time.perf_counter()
        self.center = np.sort(np.asarray(S))
        self._center_swaps = self.objective.one_swap_values(self.center)
        self._record_swaps(self.center, self._center_swaps)
        self._phase("one_swaps").time += time.perf_counter() - t0

    def _best_found(self) -> tuple[tuple, float]:
        key = min(self.found, key=self.found.__getitem__)
        return key, self.found[key]

    # -- region search -----------------------------------------------------------------------
    def _fix_dominated(self, phase: _Phase, region: bool = True) -> None:
        """Fix the columns dominance proves unnecessary (see :mod:`.dominance`).

        With ``region=False`` (the optimum phase: no region row) all columns form one
        group; a swap never raises a cut, so the master's optimum value is unchanged.
        """
        if not self.dominance or self.master.backend.native_lazy:
            # With native lazy rows, no-goods are added inside the solve, after the
            # fixing was computed, so the count K it relies on would be stale.
            return
        if region:
            inside = np.zeros(self.p, dtype=bool)
            inside[self.center] = True
            groups = [np.flatnonzero(inside), np.flatnonzero(~inside)]
        else:
            groups = [np.arange(self.p)]
        need = self.s + self.master.n_nogoods
        self.master.set_fixed_zero(dominated_columns(self.master.cut_gradients(), groups, need))
        phase.fixed = max(phase.fixed, self.master.n_fixed)

    def _search(self, phase_name: str, lo: int, hi: int, threshold, on_value) -> None:
        """Find every support in the region ``lo <= |S ∩ center| <= hi`` with ``L < threshold()``."""
        ph = self._phase(phase_name)
        t0 = time.perf_counter()
        master = self.master
        master.set_region(self.center, lo, hi)
        master.set_cutoff(threshold(), self.cutoff_margin)
        self._fix_dominated(ph)
        emulated = not master.backend.native_lazy
        current = [threshold()]

        def oracle(x):
            S = master.support_of(x)
            key = tuple(S.tolist())
            rows = []
            if not master.has_cut(S):
                v, lower, g = self._evaluate_cut(S)
                ph.evaluations += 1
                rows.append(master.cut_row(S, lower, g))
            else:
                v = self.found[key]
            if key not in self.nogoods:
                self.nogoods.add(key)
                rows.append(master.nogood_row(S))
            elif not rows:  # a solver may offer an excluded point again: reject it again
                rows.append(master.nogood_row(S, new=False))
            on_value(key, v)
            t = threshold()
            if emulated:  # between two emulated solves: tighten the model
                if t < current[0]:
                    master.set_cutoff(t, self.cutoff_margin)
                    current[0] = t
                self._fix_dominated(ph)
            return rows

        res, _ = self._solve(ph, oracle, self.search_gap)
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
        if self._table is not None:
            sup, vals = self._table
            order = np.lexsort((np.arange(vals.size), vals))[:R]
            return TopSupports(supports=sup[order], values=vals[order], R=R,
                               n_supports=self.n_supports)
        values = np.fromiter(self.found.values(), float, len(self.found))

        def tau():
            if values.size < R:
                return np.inf
            return float(np.partition(values, R - 1)[R - 1])

        def on_value(key, v):
            nonlocal values
            if len(self.found) != values.size:
                values = np.fromiter(self.found.values(), float, len(self.found))

        if self.s >= 2 and self.p - self.s >= 2:
            self._search("top_r", -np.inf, self.s - 2, tau, on_value)
        keys = list(self.found)
        vals = np.array([self.found[k] for k in keys])
        order = np.lexsort((np.arange(vals.size), vals))[:R]
        supports = np.array([keys[i] for i in order], dtype=np.intp).reshape(-1, self.s)
        best = tuple(supports[0].tolist())
        if best != tuple(self.center.tolist()):
            self._recenter(np.array(best))
        self.stats.certified = True
        return TopSupports(supports=supports, values=vals[order], R=R, n_supports=self.n_supports)

    # -- mistakes -------------------------------------------------------------------------------
    def mistake_scores(self) -> MistakeScores:
        """Class scores ``M_k = min(L_k, τ₁)`` around the exact optimum (SPEC §2.2, §3)."""
        self.optimum()
        K = min(self.s, self.p - self.s)
        if self._table is not None:
            sup, vals = self._table
            k = self.s - np.isin(sup, self.center).sum(axis=1)
            L = np.full(K + 1, np.inf)
            np.minimum.at(L, k, vals)
            tau1 = float(vals[k == 1].max())
            scores = np.minimum(L, tau1)
            scores[:2] = L[:2]
            return MistakeScores(center=self.center.copy(), scores=scores, tau1=tau1,
                                 second_best=float(np.min(L[1:])))
        for _ in range(self.n_supports):  # re-centres at most this often (in practice never)
            center = self.center
            cset = set(center.tolist())
            swaps = self._center_swaps
            L0 = self.found[tuple(center.tolist())]
            tau1 = float(np.max(swaps[np.isfinite(swaps)]))
            scores = np.full(K + 1, np.inf)
            scores[0], scores[1] = L0, float(np.min(swaps))
            better = [None]
            for k in range(2, K + 1):
                in_class = [v for key, v in self.found.items()
                            if self.s - len(cset.intersection(key)) == k]
                best_k = [min(in_class, default=np.inf)]

                def on_value(key, v, best_k=best_k):
                    if v < best_k[0]:
                        best_k[0] = v
                    if v < L0 and better[0] is None:
                        better[0] = key

                self._search(f"class_{k}", self.s - k, self.s - k,
                             lambda best_k=best_k: min(best_k[0], tau1), on_value)
                scores[k] = min(best_k[0], tau1)
            if better[0] is None and scores[1] >= L0:
                self.stats.certified = True
                return MistakeScores(center=center.copy(), scores=scores, tau1=tau1,
                                     second_best=float(np.min(scores[1:])))
            key, _ = self._best_found()
            self._recenter(np.array(key))
        raise CertificationError("mistake classes: could not settle the optimum")  # pragma: no cover
