"""The plan of a :func:`mipdp.private_bss` call: built from the arguments, before the data.

:func:`make_plan` checks every argument that needs no data, splits the budget
(:class:`~mipdp.plan.budget.Budget`), lays out the stages and composes their guarantee,
which the accountant checks before :meth:`Plan.run` reads the data.  The public
:func:`planned_epsilon` and :func:`planned_guarantee` read the same plan.

========================  =====================  ========================================
stage                     spends                 guarantee
========================  =====================  ========================================
ranges                    ``fraction · eps``     quantile releases (``bounds="private"``);
                          or nothing             ranks: noted on the method's record;
                                                 ``"data"``: the release not private
pre-screen (optional)     ``f · eps_rest``       the pre-screener's record
clip, enumerate           nothing                (data handling)
method                    ``eps_select``/draw    the method's unit (``mipdp/methods``),
                          + PTR test once        ``n_draws`` draws
sample, record            nothing                (post-processing)
========================  =====================  ========================================
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from .._validation import check_epsilon, check_random_state, data_derived_bounds
from ..bounds_free import BOUNDS_RULE_DOC, default_bounds_free
from ..enumeration.options import check_enumeration_options
from ..exceptions import BudgetError, InvalidParameterError
from ..guarantee import Guarantee, Neighbour
from ..kendall_score import check_kendall_options, is_kendall
from ..losses import Loss, get_loss
from ..losses.score_rule import check_certifiable
from ..low_utility import public_rows, warn_low_utility
from ..private_ranges import MAPPED_BOUNDS, as_private_bounds
from ..ranks import RANK_BOUNDS, check_ranks_options, is_ranks
from .budget import Budget, check_method_args, neighbour_record, neighbour_scale_factor
from .stages import (
    BoundsStage,
    ClipStage,
    EnumerateStage,
    KendallScoreStage,
    MethodStage,
    PrescreenStage,
    PrivateRangesStage,
    RanksStage,
    RecordStage,
    Run,
    SampleStage,
    Stage,
    read_data,
)

__all__ = ["Plan", "make_plan", "planned_epsilon", "planned_guarantee"]


@dataclass
class Plan:
    """What a :func:`~mipdp.private_bss` call will do, known before the data is read.

    Attributes
    ----------
    budget : Budget
        The split of ``eps`` (ranges, pre-screen, per draw, PTR test) and its total.
    stages : tuple of Stage
        In order: ranges, pre-screen (optional), clip, enumerate, method, sample, record.
    loss : Loss
        With its default score resolved when the bounds are public.
    The other attributes are the call's validated arguments.
    """

    budget: Budget
    stages: tuple
    loss: Loss
    method: str = "exponential"
    neighbours: str = "replace_one"
    s: int | None = None
    R: int | None = None
    delta: float | None = None
    eps_test: float | None = None
    prescreen: Any = None
    ranks: bool = False
    kendall: bool = False
    derived: tuple = ()
    scale_factor: float = 1.0
    score_rule: str = "default"
    backend: Any = "highs"
    backend_options: dict | None = None
    time_limit: float | None = None
    enum_options: dict | None = None
    report_gap: bool = False
    bounds_rule: str | None = None

    @property
    def neighbour(self) -> Neighbour:
        return neighbour_record(self.neighbours)

    def guarantee(self, **details) -> Guarantee:
        """The composed guarantee: each stage's record before those after it.

        Without ``details`` it is the planned guarantee (from the arguments alone);
        the run passes what it learnt (``sensitivity``, ``R``, ``ptr_passed``, the
        pre-screen's and the ranges' records).
        """
        out = None
        for stage in reversed(self.stages):
            out = stage.compose(stage.guarantee(self, details), out)
        assert out is not None       # the method stage always has a guarantee
        return out

    def run(self, X, y, random_state, *, started: float | None = None):
        """Run the stages on the data; the :class:`~mipdp.result.PrivateBSSResult`."""
        state = Run(X, y, time.perf_counter() if started is None else started,
                    rng=check_random_state(random_state))
        if self.ranks or self.kendall:     # before the data is read: n (public), ε, s only
            warn_low_utility(public_rows(X), self.budget.eps_select, int(self.s or 0),
                             "ranks" if self.ranks else "kendall", self.neighbours)
        state.X, state.y, state.n, state.p = read_data(self, X, y)
        result = None
        for stage in self.stages:
            result = stage.run(self, state)
        if self.bounds_rule is not None and result is not None:
            result.info["bounds_rule"] = self.bounds_rule
        return result


def _layout(bounds, prescreen, loss: Loss) -> tuple[tuple, Any, bool, list]:
    """The stages for these (validated) arguments; ``(stages, spec, ranks, derived)``."""
    spec = as_private_bounds(bounds)
    ranks = spec is None and is_ranks(bounds)
    derived = []
    if spec is not None:
        first: Stage = PrivateRangesStage(spec)
    elif ranks:
        first = RanksStage()
    elif is_kendall(bounds):
        first = KendallScoreStage()
    else:
        leaky = None if isinstance(bounds, str) and bounds == "data" else bounds
        derived = data_derived_bounds(leaky, need_y=loss.needs_y_bound)
        first = BoundsStage(leaky, derived)
    screen = (PrescreenStage(prescreen),) if prescreen is not None else ()
    return ((first,) + screen + (ClipStage(), EnumerateStage(), MethodStage(), SampleStage(),
                                 RecordStage()), spec, ranks, derived)


def _resolve_public_score(loss_obj: Loss, s: int, bounds) -> Loss:
    """Apply the default score rule now when the bounds it needs are public numbers.

    So that a rule that cannot apply raises before the data is read; with bounds left
    to the data the rule runs after they are read (and the result is not private).
    """
    if loss_obj.resolved or bounds is None or isinstance(bounds, str):
        return loss_obj
    b_x, b_y = (float(bounds), float(bounds)) if not isinstance(bounds, (tuple, list)) \
        else bounds
    if b_x is None or (b_y is None and loss_obj.needs_y_bound):
        return loss_obj
    return loss_obj.resolve(s, float(b_x), None if b_y is None else float(b_y))


def make_plan(args: dict) -> Plan:
    """The plan of ``private_bss(**args)``: every check that needs no data, then the budget.

    Raises before the data is read: bad relations between arguments, a method or
    pre-screen the neighbour notion or the bounds do not support, an unknown backend or
    enumeration option, a score rule that cannot apply, and
    :class:`~mipdp.exceptions.BudgetError` when the total exceeds ``max_epsilon``.
    """
    a = args
    method, neighbours, prescreen = a["method"], a["neighbours"], a["prescreen"]
    delta, eps_test = check_method_args(method, a["R"], a["delta"], a["eps_test"],
                                        a["n_draws"])
    bounds, bounds_rule = a["bounds"], None
    if bounds is None:      # a data-free rule: the call's arguments and the public n only
        bounds = default_bounds_free(
            public_rows(a.get("X")) if "X" in a else None,
            Budget.split(a["eps"], n_draws=a["n_draws"], prescreen=prescreen, method=method,
                         delta=delta, eps_test=eps_test).eps_select,
            loss=a["loss"], method=method, prescreen=prescreen, neighbours=neighbours,
            ridge=a["ridge"], radius=a["radius"])
        bounds_rule = f"bounds=None ran {bounds!r} ({BOUNDS_RULE_DOC})"
    scale_factor = neighbour_scale_factor(method, neighbours)
    if neighbours == "add_remove" and prescreen is not None:
        raise InvalidParameterError(
            "neighbours: prescreen= is not available under add/remove neighbours (the "
            "pre-screeners run under replace-one, and guarantees under different notions do "
            "not compose); drop prescreen= or pass neighbours='replace_one'")
    from mipdp.solvers import check_backend
    check_backend(a["backend"], a["backend_options"])
    enum_options = check_enumeration_options(a["enumeration_options"], "private_bss")
    loss_obj = get_loss(a["loss"], ridge=a["ridge"], radius=a["radius"])
    score_rule = "given" if loss_obj.resolved else "default"
    stages, spec, ranks, derived = _layout(bounds, prescreen, loss_obj)
    kendall = is_kendall(bounds)
    if ranks:   # the score on ranks is not monotone under add/remove: the full Δ
        scale_factor = 1.0
        check_ranks_options(loss_obj.name, prescreen, method, neighbours)
    if kendall:   # nor is the Kendall score
        scale_factor = 1.0
        check_kendall_options(loss_obj.name, prescreen, method, neighbours)
    public = (MAPPED_BOUNDS if spec is not None else RANK_BOUNDS if ranks or kendall
              else bounds)
    loss_obj = _resolve_public_score(loss_obj, a["s"], public)
    check_certifiable(loss_obj, public)      # hinge, Huber: a floor on λ/b_x², data-free
    budget = Budget.split(a["eps"], n_draws=a["n_draws"], prescreen=prescreen, method=method,
                          delta=delta, eps_test=eps_test, ranges=spec)
    max_eps = a["max_epsilon"]
    if max_eps is not None and budget.total > max_eps * (1 + 1e-12):
        ranges_txt = "private ranges + " if spec is not None else ""
        raise BudgetError(f"max_epsilon: this call would spend epsilon = {budget.total:g} "
                          f"({ranges_txt}pre-screen + {a['n_draws']} draw(s) + PTR test) > "
                          f"max_epsilon = {max_eps:g}; nothing was computed")
    return Plan(budget, stages, loss_obj, method=method, neighbours=neighbours, s=a["s"],
                R=a["R"], delta=delta, eps_test=eps_test, prescreen=prescreen, ranks=ranks,
                kendall=kendall,
                derived=tuple(derived), scale_factor=scale_factor, score_rule=score_rule,
                backend=a["backend"], backend_options=a["backend_options"],
                time_limit=a["time_limit"], enum_options=enum_options,
                report_gap=a["report_gap"], bounds_rule=bounds_rule)


def planned_epsilon(eps: float, *, n_draws: int = 1, prescreen=None, method: str = "exponential",
                    delta: float | None = None, eps_test: float | None = None,
                    bounds=None) -> float:
    """Total ε a :func:`~mipdp.private_bss` call with these arguments spends (basic composition).

    ``fraction * eps`` for the pre-screen (once), ``(1 - fraction) * eps`` per draw, and
    the propose-test-release test (``eps_test``, default ``eps_select / 10``) once.  With
    private clipping ranges (``bounds="private"`` or a
    :class:`~mipdp.private_ranges.PrivateBounds`) their ``bounds.fraction * eps`` comes
    first (once) and the rest is planned on the remainder.  The plan's
    :attr:`Budget.total <mipdp.plan.budget.Budget.total>`.
    """
    return Budget.split(check_epsilon(eps), n_draws=n_draws, prescreen=prescreen,
                        method=method, delta=delta, eps_test=eps_test,
                        ranges=as_private_bounds(bounds)).total


def planned_guarantee(eps: float, *, n_draws: int = 1, prescreen=None,
                      method: str = "exponential",
                      delta: float | None = None, eps_test: float | None = None, bounds=None,
                      loss: str | Loss = "least_squares", sensitivity: float | None = None,
                      R: int | None = None, ptr_passed: bool | None = None,
                      prescreen_guarantee: Guarantee | None = None,
                      neighbours: str = "replace_one", n: int | None = None) -> Guarantee:
    """The :class:`~mipdp.guarantee.Guarantee` of a :func:`~mipdp.private_bss` call.

    Computed from the arguments alone (so an accountant can check it before the data is
    read): the plan's composed guarantee (:meth:`Plan.guarantee`); ``sensitivity``, ``R``,
    ``ptr_passed`` and ``prescreen_guarantee`` refine it as the run does.  Its
    ``epsilon`` is :func:`planned_epsilon`.  The method's own part is its unit's
    :meth:`~mipdp.methods.base.SelectionMethod.guarantee` (``mipdp/methods/<method>.py``).
    ``bounds=None`` is resolved as in :func:`~mipdp.private_bss`, by the data-free rule
    :func:`mipdp.bounds_free.default_bounds_free` on the public number of rows ``n``
    (``None``: ``"ranks"``).

    Under ``neighbours="add_remove"`` the record's ``neighbour`` is
    :attr:`~mipdp.guarantee.Neighbour.ADD_REMOVE` and its ``sensitivity`` is ``B``, the
    add/remove sensitivity of the monotone sum-form score ``F = n·L`` (``n`` is not public
    then, so ``B/n`` is not reported); pass ``sensitivity=B``.
    """
    if bounds is None:
        bounds = default_bounds_free(
            n, Budget.split(eps, n_draws=n_draws, prescreen=prescreen, method=method,
                            delta=delta, eps_test=eps_test).eps_select,
            loss=loss, method=method, prescreen=prescreen, neighbours=neighbours)
    loss_obj = get_loss(loss)
    stages, spec, ranks, derived = _layout(bounds, prescreen, loss_obj)
    budget = Budget.split(eps, n_draws=n_draws, prescreen=prescreen, method=method,
                          delta=delta, eps_test=eps_test, ranges=spec)
    plan = Plan(budget, stages, loss_obj, method=method, neighbours=neighbours, R=R,
                delta=delta, eps_test=eps_test, prescreen=prescreen, ranks=ranks,
                kendall=is_kendall(bounds), derived=tuple(derived))
    return plan.guarantee(sensitivity=sensitivity, ptr_passed=ptr_passed,
                          prescreen_guarantee=prescreen_guarantee)
