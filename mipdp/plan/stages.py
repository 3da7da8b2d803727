"""The stages of :func:`mipdp.private_bss`, each with its guarantee beside its run.

A :class:`Stage` has a data-free :meth:`~Stage.guarantee` (its part of the plan's
composed guarantee; ``details`` refine it after the run: the sensitivity, the top-R size,
the PTR outcome, the pre-screen's and the ranges' own records) and a :meth:`~Stage.run`
on the :class:`Run` state.  They run in order:

    ranges (private ranges | ranks | public or data bounds) -> pre-screen -> clip
    -> enumerate -> method -> sample -> record

as the methods of :mod:`mipdp.methods` do for one selection (:mod:`mipdp.methods.base`).
Only the ranges, the pre-screen and the method spend ``ε``; the other stages are
post-processing or data handling (their guarantee is ``None``), and bounds read off the
data label the whole release not private.
"""

from __future__ import annotations

import logging
import time
import warnings
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .._param_validation import check_less_than
from .._validation import (
    CLIPPING_WARN_FRACTION,
    bounds_not_private_reason,
    check_bounds,
    check_input,
    check_random_state,
    check_X_y,
    clip_design,
    clipping_diagnostic,
    current_interface,
    min_samples,
)
from .._warnings import find_stack_level
from ..enumeration import SupportEnumerator, default_R
from ..exceptions import ClippingWarning
from ..guarantee import Guarantee, Neighbour
from ..methods import registry as _registry
from ..methods.base import _add_remove_note
from ..private_ranges import MAPPED_BOUNDS, estimate_ranges, ranges_guarantee
from ..ranks import RANK_BOUNDS, rank_design, rank_sensitivity, uniform_ranks

logger = logging.getLogger("mipdp.selection")

__all__ = ["Run", "Stage", "RangesKindStage", "PrivateRangesStage", "RanksStage",
           "KendallScoreStage", "BoundsStage",
           "PrescreenStage", "ClipStage", "EnumerateStage", "MethodStage", "SampleStage",
           "RecordStage"]


@dataclass
class Run:
    """What the stages hand on (data-dependent, **not private** but the release)."""

    X: Any
    y: Any
    started: float
    rng: Any = None                  # numpy Generator of the selection (after the ranges)
    n: int = 0
    p: int = 0
    b_x: float | None = None
    b_y: float | None = None
    columns: np.ndarray | None = None
    screen_info: dict | None = None
    ranges: Any = None               # PrivateRanges (a private output)
    info: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)
    scale: float = 0.0               # the samplers' scale B/n (or B/(2n))
    record_sens: float | None = None  # the guarantee's sensitivity
    objective: Any = None
    enum: Any = None
    release: Any = None
    draws: np.ndarray | None = None
    stats: dict = field(default_factory=dict)
    rngs: tuple = ()                 # pre-screen, PTR test, draws
    loss: Any = None                 # the loss with its score resolved on the bounds
    y_clipped: float | None = None   # fraction of y clipped by its private range

    def details(self) -> dict:
        """What the run knows that refines the planned guarantee."""
        rel = self.release
        return dict(sensitivity=self.record_sens,
                    R=None if rel is None else rel.R, ptr_passed=None if rel is None
                    else rel.ptr_passed,
                    prescreen_guarantee=None if self.screen_info is None
                    else self.screen_info["guarantee"],
                    ranges_guarantee=None if self.ranges is None else self.ranges.guarantee)


def read_data(plan, X, y):
    """Validate the data (lazily: never copied whole) and the labels; ``(X, y, n, p)``."""
    # the one input check of every interface (types, NaN in y), with its messages
    check_input(X, y, labels=getattr(plan.loss, "name", "") == "hinge")
    y = plan.loss.encode_targets(y)      # hinge: any two-class labels as ±1
    # arrays, memmaps, sparse: not copied (mipdp.data); n >= 1 under add/remove (n private)
    X, y = check_X_y(X, y, lazy=True, min_samples=min_samples(plan.neighbours == "add_remove"))
    n, p = X.shape
    check_less_than(plan.s, p, "s", "p", current_interface("private_bss"))
    return X, plan.loss.check_targets(y), n, p


class Stage:
    """One step of the plan: its guarantee (data-free) and its run."""

    name = "stage"

    def guarantee(self, plan, details: dict) -> Guarantee | None:
        """This stage's part of the composed guarantee (``None``: spends nothing)."""
        return None

    def compose(self, own: Guarantee | None, after: Guarantee | None) -> Guarantee | None:
        """This stage's record before those of the stages after it (basic composition)."""
        if own is None:
            return after
        return own if after is None else own + after

    def run(self, plan, state: Run) -> None:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


# -- ranges: how the clipping bounds come ------------------------------------------------------
class RangesKindStage(Stage):
    """The first stage: sets the bounds ``(b_x, b_y)``; then the loss's default score is
    resolved on them and the selection's random streams are split off."""

    def run(self, plan, state):
        self._bounds(plan, state)
        state.loss = plan.loss.resolve(plan.s, state.b_x, state.b_y)   # data bounds: not private
        state.rngs = tuple(state.rng.spawn(3))          # pre-screen, PTR test, draws

    def _bounds(self, plan, state) -> None:
        raise NotImplementedError


class PrivateRangesStage(RangesKindStage):
    """``bounds="private"``: ranges released with ``eps_ranges``, the data mapped onto ±½."""

    name = "private_ranges"

    def __init__(self, spec) -> None:
        self.spec = spec

    def guarantee(self, plan, details):
        if details.get("ranges_guarantee") is not None:
            return details["ranges_guarantee"]     # refined: per column or pooled, p
        return ranges_guarantee(self.spec, plan.budget.eps_ranges, plan.neighbours,
                                plan.loss.needs_y_bound)

    def _bounds(self, plan, state):
        t0 = time.perf_counter()
        need_y = plan.loss.needs_y_bound
        rng_ranges, rng_select = state.rng.spawn(2)
        state.ranges = estimate_ranges(state.X, state.y if need_y else None, self.spec,
                                       plan.budget.eps_ranges, rng_ranges,
                                       neighbours=plan.neighbours)
        Xm = state.ranges.mapped(state.X)      # lazy: the mapped X is never formed whole
        ym = state.ranges.transform_y(state.y) if need_y else state.y
        if need_y:   # not private (a diagnostic): the fraction of y the map clips (the
            # selection sees the mapped y, within ±½; X's fraction is counted by the design)
            y_range = state.ranges.y_range
            assert y_range is not None      # estimated whenever y needs a range
            state.y_clipped = (float(np.count_nonzero((state.y < y_range[0])
                                                      | (state.y > y_range[1])))
                               / max(state.y.shape[0], 1))
        state.X, state.y, state.n, state.p = read_data(plan, Xm, ym)
        state.b_x, state.b_y = MAPPED_BOUNDS
        state.rng = check_random_state(rng_select)
        state.timings["private_ranges"] = time.perf_counter() - t0


class RanksStage(RangesKindStage):
    """``bounds="ranks"`` (the default): columns (and ``y``) replaced by centred ranks / n.

    Spends nothing by itself; the method's guarantee uses the sensitivity proven for
    ranks (:func:`mipdp.ranks.rank_sensitivity`, noted in its record).  With a pre-screen
    (Kendall, rank-invariant) only the kept columns are ranked, after it.
    """

    name = "ranks"

    def _bounds(self, plan, state):
        t0 = time.perf_counter()
        if plan.prescreen is None:
            state.X = rank_design(state.X)
        if plan.loss.needs_y_bound:
            state.y = uniform_ranks(state.y)
        state.b_x, state.b_y = RANK_BOUNDS[0], (RANK_BOUNDS[1] if plan.loss.needs_y_bound
                                                else None)
        state.timings["ranks"] = time.perf_counter() - t0


class KendallScoreStage(RangesKindStage):
    """``bounds="kendall"``: the redundancy-aware Kendall score (:mod:`mipdp.kendall_score`).

    Spends nothing by itself and transforms nothing: the score reads Kendall correlations
    of the raw columns (rank statistics, no ranges); the method's guarantee uses its proven
    sensitivity (:func:`mipdp.kendall_score.kendall_score_sensitivity`).
    """

    name = "kendall_score"

    def run(self, plan, state):
        state.b_x, state.b_y = RANK_BOUNDS     # unused by the score (the pre-screen's dummies)
        state.loss = plan.loss
        state.rngs = tuple(state.rng.spawn(3))          # pre-screen, PTR test, draws

    def _bounds(self, plan, state):   # pragma: no cover - run() is overridden
        raise NotImplementedError


class BoundsStage(RangesKindStage):
    """Public bounds ``(b_x, b_y)``, or bounds read off the data (``"data"`` or a ``None``
    inside the pair): then the whole release is labelled **not private**."""

    name = "bounds"

    def __init__(self, bounds, derived: list) -> None:
        self.bounds, self.derived = bounds, derived

    def compose(self, own, after):
        if self.derived and after is not None:
            return after.not_private(bounds_not_private_reason(self.derived))
        return after

    def _bounds(self, plan, state):
        state.b_x, state.b_y = check_bounds(self.bounds, state.X, state.y,
                                            need_y=plan.loss.needs_y_bound)


# -- the selection ------------------------------------------------------------------------------
class PrescreenStage(Stage):
    """Private pre-screen ``(name, k, fraction)``: ``k`` columns with ``eps_screen``."""

    name = "prescreen"

    def __init__(self, prescreen) -> None:
        self.prescreen = prescreen

    def guarantee(self, plan, details):
        if details.get("prescreen_guarantee") is not None:
            return details["prescreen_guarantee"]
        pre = self.prescreen
        name = pre[0] if isinstance(pre, (tuple, list)) and pre else "?"
        return Guarantee.pure(plan.budget.eps_screen, plan.neighbour,
                              f"private pre-screen ({name})")

    def run(self, plan, state):
        from ..prescreen import run_prescreen
        need_y = plan.loss.needs_y_bound
        screen_bounds = (state.b_x, state.b_y if need_y else 1.0)   # ±1 labels: public
        state.columns, state.screen_info = run_prescreen(
            self.prescreen, state.X, state.y, plan.s, plan.budget.eps_rest, screen_bounds,
            state.rngs[0])
        state.X = take_columns(state.X, state.columns)
        state.p = state.X.shape[1]
        state.timings["prescreen"] = state.screen_info["time_not_private"]
        if plan.ranks:
            t0 = time.perf_counter()
            state.X = rank_design(state.X)
            state.timings["ranks"] += time.perf_counter() - t0


class ClipStage(Stage):
    """Clip to the bounds and bind the loss; the score's scale ``B/n`` (or ``B/(2n)``)."""

    name = "clip"

    def run(self, plan, state):
        loss, n, s = state.loss, state.n, plan.s
        if plan.kendall:
            self._kendall(plan, state)
            return
        b_y = state.b_y if loss.needs_y_bound else None
        # uniform ranks lie in (−½, ½) = (−b_x, b_x) by construction: no bound for the
        # design, so it skips the read pass that checks it (the same design, bit for bit)
        Xc, yc = clip_design(state.X, state.y, None if plan.ranks else state.b_x, b_y,
                             statistics=loss.sufficient_statistics)   # tall dask data
        clipped = clipping_diagnostic(Xc, state.y, state.b_x, b_y)   # not private
        # B/n (replace-one) or B/(2n) (add/remove, monotone score): n enters only here,
        # through F = n·L, and every quantity that carries the scale is a data-free
        # multiple of it (docs/privacy.md, "MIP methods under add/remove neighbours")
        if plan.ranks:   # Δ of F = n·L on ranks (uniform in n under add/remove)
            assert loss.radius is not None  # resolved by the ranges stage
            rank_delta = rank_sensitivity(loss.name, n, s, loss.radius, plan.neighbours)
            state.scale = rank_delta / n
            state.record_sens = rank_delta if plan.neighbours == "add_remove" else state.scale
        else:
            state.scale = plan.scale_factor * loss.sensitivity(n, s, state.b_x, state.b_y)
            state.record_sens = (loss.sample_bound(s, state.b_x, state.b_y)
                                 if plan.neighbours == "add_remove" else state.scale)
        state.objective = loss.bind(Xc, yc)
        bounds_key = "bounds_not_private" if plan.derived else "bounds"
        if isinstance(clipped, dict) and state.y_clipped is not None:
            clipped["y"] = state.y_clipped    # private ranges: y was clipped by its map
            if state.y_clipped > CLIPPING_WARN_FRACTION:
                warnings.warn(
                    f"private_bss: {state.y_clipped:.0%} of y is clipped by its private "
                    "range. The release is still private, but a y clipped almost everywhere "
                    "is ignored; widen the range (PrivateBounds(widen=...)) or give bounds "
                    "from domain knowledge. This warning and "
                    "result.info['clipped_fraction_not_private'] depend on the data and are "
                    "not private.", ClippingWarning, stacklevel=find_stack_level())
        state.info.update({"loss": loss.name,
                           bounds_key: "ranks" if plan.ranks else (state.b_x, state.b_y),
                           "ridge": loss.ridge, "radius": loss.radius,
                           "score_rule": plan.score_rule,
                           "clipped_fraction_not_private": clipped})

    @staticmethod
    def _kendall(plan, state):
        """The Kendall score's objective ``L = s/2 − R/n`` and its scale ``Δ/n``."""
        from ..kendall_score import (
            DEFAULT_GAMMA,
            KendallRedundancyObjective,
            kendall_score_sensitivity,
        )
        delta = kendall_score_sensitivity(plan.s, DEFAULT_GAMMA, plan.neighbours)
        state.scale = delta / state.n
        state.record_sens = delta if plan.neighbours == "add_remove" else state.scale
        t0 = time.perf_counter()
        state.objective = KendallRedundancyObjective(state.X, state.y, plan.s, DEFAULT_GAMMA)
        state.timings["kendall"] = time.perf_counter() - t0
        state.info.update({"loss": "kendall_redundancy", "bounds": "kendall",
                           "gamma": DEFAULT_GAMMA, "score_rule": plan.score_rule})


class EnumerateStage(Stage):
    """The certified enumerator of the supports' objective (the MIP backend)."""

    name = "enumerate"

    def run(self, plan, state):
        state.enum = SupportEnumerator(
            state.objective, plan.s, scale=state.scale, backend=plan.backend,
            backend_options=plan.backend_options, time_limit=plan.time_limit,
            started=state.started, **plan.enum_options)
        logger.info("private_bss: method=%s, loss=%s, n=%d (not private under add/remove), "
                    "p=%d, s=%d, eps per draw %g, %d draw(s), backend %s", plan.method,
                    state.loss.name, state.n, state.p, plan.s, plan.budget.eps_select,
                    plan.budget.n_draws, plan.backend)


class MethodStage(Stage):
    """The method's release on the enumerator (``mipdp/methods/<method>.py``)."""

    name = "method"

    def guarantee(self, plan, details):
        b = plan.budget
        sensitivity = details.get("sensitivity")
        R = plan.R if details.get("R") is None else details["R"]
        stage = _registry.get_method(plan.method).guarantee(
            b.eps_select, b.n_draws, plan.neighbour, sensitivity=sensitivity, R=R,
            delta=plan.delta, eps_test=plan.eps_test, ptr_passed=details.get("ptr_passed"))
        if plan.ranks or plan.kendall:   # its own Δ, and not monotone under add/remove
            note = ("score on uniform ranks (bounds='ranks', no public ranges): sensitivity "
                    "of F = n L proven for ranks (docs/privacy.md, 'Rank-based scores')"
                    if plan.ranks else
                    "redundancy-aware Kendall score (bounds='kendall', no public ranges): "
                    "sensitivity of R proven (docs/privacy.md, 'Redundancy-aware Kendall "
                    "score')")
            old = stage.notes
            if plan.neighbour is Neighbour.ADD_REMOVE:
                note += (", not monotone: weights exp(-eps F(S) / (2 Delta)), Delta uniform in n"
                         if plan.ranks else
                         ", not monotone: weights exp(eps R(S) / (2 Delta)), Delta uniform in n")
                old = old.replace(_add_remove_note(sensitivity), "").strip("; ")
            stage = replace(stage, notes=f"{old}; {note}" if old else note)
        return stage

    def run(self, plan, state):
        R_used = default_R(state.p, plan.s) if plan.R is None else int(plan.R)
        state.release = _registry.get_method(plan.method).release(
            state.enum, state.objective, p=state.p, s=plan.s,
            eps_select=plan.budget.eps_select, scale=state.scale, R=R_used, delta=plan.delta,
            eps_test=plan.eps_test, rng_test=state.rngs[1], report_gap=plan.report_gap)
        state.info.update(state.release.info)


class SampleStage(Stage):
    """``n_draws`` independent draws from the method's mechanism."""

    name = "sample"

    def run(self, plan, state):
        enum, n_draws = state.enum, plan.budget.n_draws
        state.timings.update({k: v.time for k, v in enum.stats.phases.items()})
        t0 = time.perf_counter()
        enum.progress.start("sampling", draws=n_draws)     # the progress bar shows this phase
        state.draws = state.release.mechanism.sample(state.rngs[2], size=n_draws)
        state.timings["sampling"] = time.perf_counter() - t0
        enum.progress.done("sampling", draws=n_draws)
        logger.info("private_bss: %s (%s) enumeration %.2f s, sampling %.2f s (timings are "
                    "not private)", plan.method, state.release.method_run,
                    sum(v.time for v in enum.stats.phases.values()), state.timings["sampling"])
        state.stats = enum.stats.as_dict()
        sampler_stats = state.release.sampler_stats()
        if sampler_stats is not None:
            state.stats["sampler"] = sampler_stats


class RecordStage(Stage):
    """The result: draws in the original column indices and the composed guarantee."""

    name = "record"

    def run(self, plan, state):
        from ..result import PrivateBSSResult
        rel, draws, candidates = state.release, state.draws, state.release.candidates
        if state.columns is not None:
            draws = np.sort(state.columns[draws], axis=1)
            candidates = state.columns[candidates]
            state.info["prescreen"] = state.screen_info
        guarantee = plan.guarantee(**state.details())
        state.info["method_run"] = rel.method_run
        if state.ranges is not None:
            state.info["private_ranges"] = state.ranges.as_info()
        state.timings["total"] = time.perf_counter() - state.started
        return PrivateBSSResult(
            support=draws[0].copy(), supports=draws, method=plan.method, guarantee=guarantee,
            timings=state.timings, info=state.info, mechanism=rel.mechanism, R=rel.R,
            candidates=candidates, candidate_values=rel.candidate_values, stats=state.stats,
            _columns=state.columns)


def take_columns(X, columns: np.ndarray):
    """The columns ``columns`` of an array, memmap, sparse or mapped matrix (a small copy)."""
    from .._kinds import is_sparse
    from ..mapped import MappedMatrix
    if isinstance(X, MappedMatrix):      # private ranges: the k columns, still lazy
        return X.take_columns(columns)
    if is_sparse(X):
        return X.tocsc()[:, columns]
    return np.asarray(X[:, columns])     # a dask array computes only these columns
