"""BudgetAccountant: composition across calls, refusal before the data is read."""

import math

import numpy as np
import pytest

from mipdp import BudgetAccountant, BudgetError, Guarantee, PrivacyLeakWarning, private_bss
from mipdp.comparators import dp_kendall, dp_sis, mcmc, two_stage
from mipdp.datasets import make_bss_regression
from mipdp.screening import dp_frank_wolfe


class Untouchable:
    """Data that raises on any access: proves a call was refused before reading it."""

    def __getattr__(self, name):
        raise AssertionError(f"the data was read ({name})")

    def __array__(self, *a, **k):
        raise AssertionError("the data was read (__array__)")

    def __len__(self):
        raise AssertionError("the data was read (__len__)")

    def __iter__(self):
        raise AssertionError("the data was read (__iter__)")


@pytest.fixture(scope="module")
def data():
    X, y, _ = make_bss_regression(n=250, p=7, s=2, random_state=3)
    return X, y


def test_grid_search_is_26_releases_and_the_27th_is_refused_unread(data):
    """5-fold CV over 5 values of s (25 fits) + the final refit = 26 releases of eps 0.1."""
    X, y = data
    acc = BudgetAccountant(epsilon=2.6)
    folds = np.array_split(np.random.default_rng(0).permutation(len(y)), 5)
    for s in range(1, 6):
        for f in folds:
            train = np.setdiff1d(np.arange(len(y)), f)
            private_bss(X[train], y[train], s, 0.1, bounds=(0.5, 0.5), random_state=0,
                        accountant=acc)
    private_bss(X, y, 2, 0.1, bounds=(0.5, 0.5), random_state=0, accountant=acc)   # refit
    assert len(acc) == 26
    total = acc.total()
    assert total.is_private and total.epsilon == pytest.approx(2.6)
    assert acc.remaining()[0] == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(BudgetError, match="over the budget"):
        private_bss(Untouchable(), Untouchable(), 2, 0.1, bounds=(0.5, 0.5), accountant=acc)
    assert len(acc) == 26


def test_refusal_before_reading_for_every_public_function():
    acc = BudgetAccountant(epsilon=0.5)
    D = Untouchable()
    calls = [
        lambda: private_bss(D, D, 2, 1.0, bounds=(0.5, 0.5), accountant=acc),
        lambda: private_bss(D, D, 2, 0.2, bounds=(0.5, 0.5), n_draws=3, accountant=acc),
        lambda: dp_sis(D, D, 2, 1.0, bounds=(1.0, 1.0), accountant=acc),
        lambda: dp_kendall(D, D, 2, 0.3, n_draws=2, accountant=acc),
        lambda: two_stage(D, D, 2, 1.0, accountant=acc),
        lambda: dp_frank_wolfe(D, D, 1.0, 10, eps=1.0, delta=1e-6, accountant=acc),
    ]
    for call in calls:
        with pytest.raises(BudgetError):
            call()
    assert len(acc) == 0


def test_not_private_and_conditional_releases(data):
    X, y = data
    D = Untouchable()
    finite = BudgetAccountant(epsilon=10.0)
    with pytest.raises(BudgetError, match="not private"):
        private_bss(D, D, 2, 1.0, bounds="data", accountant=finite)
    with pytest.raises(BudgetError, match="conditionally private"):
        private_bss(D, D, 2, 1.0, bounds=(0.5, 0.5), method="mistakes", accountant=finite)
    with pytest.raises(BudgetError, match="conditionally private"):
        mcmc(D, D, 2, 1.0, bounds=(0.5, 0.5), accountant=finite)
    lenient = BudgetAccountant(epsilon=10.0, allow_conditional=True)
    with pytest.warns(Warning):
        private_bss(X, y, 2, 1.0, bounds=(0.5, 0.5), method="mistakes", accountant=lenient)
    assert lenient.total().status == "conditional"
    # an infinite budget records a non-private release, and then says so
    recorder = BudgetAccountant()
    private_bss(X, y, 2, 1.0, bounds=(0.5, 0.5), accountant=recorder)
    with pytest.warns(PrivacyLeakWarning):
        private_bss(X, y, 2, 1.0, bounds="data", accountant=recorder)
    assert recorder.total().status == "not private" and math.isnan(recorder.total().epsilon)


def test_neighbour_notions_do_not_mix(data):
    X, y = data
    acc = BudgetAccountant(epsilon=10.0)
    dp_kendall(X, y, 2, 1.0, random_state=0, accountant=acc)           # replace-one
    with pytest.raises(BudgetError, match="neighbour"):
        dp_kendall(Untouchable(), Untouchable(), 2, 1.0, neighbours="add_remove", accountant=acc)
    fixed = BudgetAccountant(epsilon=10.0, neighbours="add_remove")
    with pytest.raises(BudgetError, match="neighbour"):
        private_bss(Untouchable(), Untouchable(), 2, 1.0, bounds=(0.5, 0.5), accountant=fixed)


def test_default_accountant_context_and_nested_prescreen(data):
    X, y = data
    with BudgetAccountant(epsilon=1.0) as acc:
        private_bss(X, y, 2, 0.5, bounds=(0.5, 0.5), prescreen=("kendall", 4, 0.2),
                    random_state=0)
        assert len(acc) == 1 and acc.total().epsilon == pytest.approx(0.5)   # not counted twice
        assert len(acc.spent[0].parts) == 2
        with pytest.raises(BudgetError):
            dp_sis(Untouchable(), Untouchable(), 2, 0.6, bounds=(1.0, 1.0))
    assert BudgetAccountant.load_default() is None
    dp_sis(X, y, 2, 5.0, bounds=(1.0, 1.0), random_state=0)   # no accountant: not recorded
    assert len(acc) == 1


def test_spend_check_remaining_interface():
    acc = BudgetAccountant(epsilon=1.0, delta=1e-5)
    acc.spend(0.25, 0.0)
    acc.spend(Guarantee.approximate(0.25, 5e-6, "replace-one", "Gaussian"))
    assert acc.remaining() == (pytest.approx(0.5), pytest.approx(5e-6))
    assert acc.remaining(k=2)[0] == pytest.approx(0.25)
    assert acc.check(0.5, 5e-6).epsilon == pytest.approx(1.0)
    with pytest.raises(BudgetError):
        acc.check(0.6)
    with pytest.raises(BudgetError):
        acc.spend(0.1, 1e-5)
    copy = BudgetAccountant(epsilon=1.0, delta=1e-5, spent=acc.spent)
    assert len(copy) == 2
    with pytest.raises(ValueError, match="epsilon"):
        BudgetAccountant(epsilon=-1.0)


def test_advanced_composition_option_admits_more_small_releases():
    basic = BudgetAccountant(epsilon=1.0, delta=1e-6)
    adv = BudgetAccountant(epsilon=1.0, delta=1e-6, delta_slack=1e-6 / 2)
    step = Guarantee.approximate(0.01, 1e-10, "replace-one", "small step")
    n_basic = n_adv = 0
    for acc in (basic, adv):
        while True:
            try:
                acc.spend(step)
            except BudgetError:
                break
    n_basic, n_adv = len(basic), len(adv)
    assert n_basic == 100 and n_adv > 2 * n_basic
    assert adv.total().delta <= 1e-6


def test_total_before_any_spend_is_zero():
    """(9) total() is a zero guarantee, not None, before the first release."""
    acc = BudgetAccountant(epsilon=1.0)
    assert acc.total().epsilon == 0.0 and acc.total().delta == 0.0
    assert acc.total().is_private and len(acc) == 0
    assert acc.remaining() == (1.0, 0.0)


def test_release_in_a_thread_that_cannot_see_the_accountant_refuses():
    """(5) A default accountant is per thread: a release elsewhere must not escape it."""
    import threading

    from mipdp import AccountantNotVisibleError, private_bss
    from mipdp.datasets import make_bss_regression
    X, y, _ = make_bss_regression(n=60, p=4, s=1, random_state=0)
    errors = []

    def worker():
        try:
            private_bss(X, y, 1, 0.5, bounds=(0.5, 0.5), random_state=0)
        except AccountantNotVisibleError as exc:
            errors.append(exc)

    with BudgetAccountant(epsilon=5) as acc:
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    assert len(errors) == 1 and "another thread" in str(errors[0]) and len(acc) == 0
    t = threading.Thread(target=worker)        # no accountant active anywhere: runs
    t.start()
    t.join()
    assert len(errors) == 1


def _release_in_child(_):
    from mipdp import AccountantNotVisibleError, private_bss
    from mipdp.datasets import make_bss_regression
    X, y, _ = make_bss_regression(n=60, p=4, s=1, random_state=0)
    try:
        private_bss(X, y, 1, 0.5, bounds=(0.5, 0.5), random_state=0)
        return "released"
    except AccountantNotVisibleError:
        return "refused"


def test_release_in_a_forked_process_refuses():
    """(5) A forked child inherits a copy of the default accountant: it must not record
    there (the parent would never see the spend)."""
    import multiprocessing as mp
    if "fork" not in mp.get_all_start_methods():
        pytest.skip("no fork start method on this platform")
    with BudgetAccountant(epsilon=5) as acc:
        with mp.get_context("fork").Pool(1) as pool:
            assert pool.map(_release_in_child, [0]) == ["refused"]
    assert len(acc) == 0
    with mp.get_context("fork").Pool(1) as pool:       # no accountant active: releases
        assert pool.map(_release_in_child, [0]) == ["released"]


@pytest.mark.parametrize("where", ["dp_sis", "private_bss"])
def test_a_failed_release_gives_its_reservation_back_at_once(monkeypatch, where):
    """A call that raises after booking its planned guarantee cancels the booking as the
    exception leaves it, even while the caller keeps the exception (and so its traceback
    and the call's frame) alive; before, it counted until that frame was freed."""
    import importlib

    dp_sis_module = importlib.import_module("mipdp.comparators.dp_sis")  # not the function
    plan_module = importlib.import_module("mipdp.plan.plan")

    def boom(*args, **kwargs):
        raise RuntimeError("solver crashed")

    rng = np.random.default_rng(0)
    X, y = rng.uniform(-0.5, 0.5, size=(50, 6)), rng.uniform(-0.5, 0.5, size=50)
    acc = BudgetAccountant(1.0)
    if where == "dp_sis":
        monkeypatch.setattr(dp_sis_module, "sis_scores", boom)
        call = lambda: dp_sis(X, y, 2, 0.8, bounds=(0.5, 0.5), accountant=acc)  # noqa: E731
    else:
        monkeypatch.setattr(plan_module.Plan, "run", boom)
        call = lambda: private_bss(X, y, 2, 0.8, bounds=(0.5, 0.5),  # noqa: E731
                                   accountant=acc, random_state=0)
    with pytest.raises(RuntimeError) as kept:
        call()
    assert kept.value.__traceback__ is not None          # the frame is still alive
    assert acc.remaining()[0] == pytest.approx(1.0)      # but nothing is booked
    monkeypatch.undo()
    call()                                               # and the budget is usable
    assert acc.remaining()[0] == pytest.approx(0.2)
