"""The plan of a private_bss call: built before the data, its stages and its guarantee."""

import inspect

import numpy as np
import pytest

from mipdp import InvalidParameterError, private_bss
from mipdp.exceptions import BudgetError
from mipdp.plan import Budget, make_plan, planned_epsilon, planned_guarantee
from mipdp.plan.stages import (
    BoundsStage,
    ClipStage,
    EnumerateStage,
    MethodStage,
    PrescreenStage,
    PrivateRangesStage,
    RanksStage,
    RecordStage,
    SampleStage,
)
from mipdp.private_ranges import PrivateBounds

DEFAULTS = {name: p.default for name, p in inspect.signature(private_bss).parameters.items()
            if p.default is not inspect.Parameter.empty}


def _args(**kw):
    return dict(DEFAULTS, X=None, y=None, s=2, eps=1.0, **kw)


@pytest.mark.parametrize("bounds,first", [((0.5, 0.5), BoundsStage), (None, RanksStage),
                                          ("ranks", RanksStage), ("data", BoundsStage),
                                          ("private", PrivateRangesStage),
                                          (PrivateBounds(fraction=0.2), PrivateRangesStage)])
def test_the_stages_in_order(bounds, first):
    plan = make_plan(_args(bounds=bounds))
    kinds = [type(st) for st in plan.stages]
    assert kinds == [first, ClipStage, EnumerateStage, MethodStage, SampleStage, RecordStage]
    pre = make_plan(_args(bounds=bounds, prescreen=("kendall", 4, 0.3)))
    assert [type(st) for st in pre.stages][:2] == [first, PrescreenStage]


@pytest.mark.parametrize("kw", [
    dict(bounds=(0.5, 0.5)), dict(bounds=None, n_draws=3), dict(bounds="private", n_draws=2),
    dict(bounds=(0.5, 0.5), method="mistakes", delta=1e-6, prescreen=("dp_sis", 5, 0.2)),
    dict(bounds="private", method="top_r", R=4, neighbours="add_remove"),
    dict(bounds="data", method="permute_and_flip", loss="hinge"),
    dict(bounds=PrivateBounds(fraction=0.3), prescreen=("kendall", 4, 0.25), n_draws=4),
])
def test_the_plan_is_what_planned_epsilon_and_planned_guarantee_report(kw):
    plan = make_plan(_args(**kw))
    keys = ("n_draws", "prescreen", "method", "delta", "eps_test", "bounds")
    public = {k: kw[k] for k in keys if k in kw}
    assert plan.budget.total == planned_epsilon(1.0, **public)
    extra = {k: kw[k] for k in ("loss", "R", "neighbours") if k in kw}
    planned = planned_guarantee(1.0, **public, **extra)
    assert plan.guarantee() == planned
    assert str(plan.guarantee()) == str(planned)
    if plan.guarantee().is_private:
        assert plan.guarantee().epsilon == pytest.approx(plan.budget.total, rel=1e-12)


def test_the_budget_split():
    b = Budget.split(2.0, n_draws=3, prescreen=("kendall", 4, 0.25), ranges=PrivateBounds(0.1))
    assert b.eps_ranges == pytest.approx(0.2) and b.eps_rest == pytest.approx(1.8)
    assert b.eps_screen == pytest.approx(0.45) and b.eps_select == pytest.approx(1.35)
    assert b.total == pytest.approx(0.2 + 0.45 + 3 * 1.35)
    guarded = Budget.split(1.0, method="mistakes", delta=1e-6)
    assert guarded.eps_once == pytest.approx(0.1) and guarded.total == pytest.approx(1.1)


def test_the_plan_needs_no_data():
    """Everything that can be refused is refused by make_plan, which never sees X or y."""
    with pytest.raises(InvalidParameterError, match="prescreen"):
        make_plan(_args(bounds=(0.5, 0.5), neighbours="add_remove",
                        prescreen=("kendall", 4, 0.2)))
    with pytest.raises(InvalidParameterError, match="prescreen"):
        make_plan(_args(bounds=None, prescreen=("dp_sis", 4, 0.2)))
    with pytest.raises(BudgetError, match="private ranges"):
        make_plan(_args(bounds="private", n_draws=3, max_epsilon=2.0))
    with pytest.raises(ValueError, match="delta"):
        make_plan(_args(bounds=(0.5, 0.5), delta=1e-6))
    with pytest.raises(InvalidParameterError):
        make_plan(_args(bounds=(0.5, 0.5), enumeration_options={"no_such_option": 1}))


def test_data_bounds_label_the_whole_release():
    plan = make_plan(_args(bounds=(0.5, None)))
    assert not plan.guarantee().is_private and plan.derived


def test_the_run_refines_the_planned_guarantee():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 6)) * 0.3
    y = X[:, 0] - X[:, 3] + 0.1 * rng.normal(size=60)
    res = private_bss(X, y, 2, 1.0, bounds="private", n_draws=2, random_state=1)
    plan = make_plan(_args(bounds="private", n_draws=2))
    assert res.epsilon == pytest.approx(plan.guarantee().epsilon)
    assert "releases of eps_r/" in str(res.guarantee)          # the ranges' own record
    assert "releases of eps_r/" not in str(plan.guarantee())   # (known after the run)


def test_two_class_labels_with_private_ranges():
    """The labels are encoded before every stage, the ranges stage included (the path
    that re-entered private_bss refused string labels with bounds="private")."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 6)) * 0.3
    labels = np.where(X[:, 0] - X[:, 2] > 0, "yes", "no")
    a = private_bss(X, labels, 2, 1.0, loss="hinge", bounds="private", random_state=0)
    b = private_bss(X, np.where(labels == "yes", 1.0, -1.0), 2, 1.0, loss="hinge",
                    bounds="private", random_state=0)
    np.testing.assert_array_equal(a.support, b.support)
