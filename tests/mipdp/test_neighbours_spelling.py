"""Issue 30 item 4: one spelling of the neighbour notion, ``neighbours="replace_one" |
"add_remove"``, on every function and class; the old ``neighbour="replace-one" |
"add/remove"`` warns (FutureWarning, at the caller's line) and works; both at once raise.
"""

import warnings

import numpy as np
import pytest

from mipdp import BudgetAccountant, InvalidParameterError, Neighbour, private_bss
from mipdp.comparators import dp_kendall, dp_sis, mcmc, prescreen, two_stage
from mipdp.comparators.kendall import dp_kendall_distribution, kendall_sensitivities
from mipdp.datasets import make_bss_regression
from mipdp.methods import registry

from .test_accounting import Untouchable

D = Untouchable()


@pytest.fixture(scope="module")
def data():
    X, y, _ = make_bss_regression(n=200, p=6, s=2, random_state=0)
    return X, y


#: name -> call(neighbours keyword dict) on small data
def _calls(X, y):
    B = (0.5, 0.5)
    return {
        "dp_sis": lambda **kw: dp_sis(X, y, 2, 1.0, bounds=B, random_state=0, **kw).support,
        "dp_kendall": lambda **kw: dp_kendall(X, y, 2, 1.0, random_state=0, **kw).support,
        "two_stage": lambda **kw: two_stage(X, y, 2, 1.0, n_blocks=4, random_state=0,
                                            **kw).support,
        "mcmc": lambda **kw: mcmc(X, y, 2, 1.0, bounds=B, n_iter=5, random_state=0,
                                  **kw).support,
        "private_bss": lambda **kw: private_bss(X, y, 2, 1.0, bounds=B, random_state=0,
                                                **kw).support,
        "kendall_sensitivities": lambda **kw: np.array(kendall_sensitivities(**kw)),
        "dp_kendall_distribution": lambda **kw: dp_kendall_distribution(X[:20], y[:20], 2,
                                                                        1.0, **kw)[1],
    }


OLD_NAME_FUNCS = ["dp_sis", "dp_kendall", "two_stage", "mcmc", "kendall_sensitivities",
                  "dp_kendall_distribution"]


@pytest.mark.parametrize("func", list(_calls(None, None)))
@pytest.mark.parametrize("new,old", [("replace_one", "replace-one"), ("add_remove", "add/remove")])
def test_old_values_warn_and_work(data, func, new, old):
    call = _calls(*data)[func]
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)   # the new spelling is silent
        expected = call(neighbours=new)
    with pytest.warns(FutureWarning, match=f"neighbours='{new}'") as rec:
        got = call(neighbours=old)
    np.testing.assert_array_equal(got, expected)
    assert all(r.filename == __file__ for r in rec if r.category is FutureWarning)
    if func in OLD_NAME_FUNCS:                         # the old argument name
        with pytest.warns(FutureWarning, match=f"neighbour= is deprecated.*neighbours='{new}'"):
            got = call(neighbour=old)
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("func", OLD_NAME_FUNCS)
def test_both_names_raise(data, func):
    call = _calls(*data)[func]
    with pytest.raises(InvalidParameterError, match="both neighbour= and neighbours="):
        call(neighbour="add/remove", neighbours="add_remove")


def test_both_names_raise_before_the_data():
    with pytest.raises(InvalidParameterError, match="both neighbour= and neighbours="):
        dp_kendall(D, D, 2, 1.0, neighbour="add/remove", neighbours="add_remove")
    with pytest.raises(InvalidParameterError, match="neighbours"):
        dp_kendall(D, D, 2, 1.0, neighbour="bounded")


def test_enum_members_are_accepted_silently(data):
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        a = dp_kendall(X, y, 2, 1.0, random_state=0, neighbours=Neighbour.ADD_REMOVE)
        b = dp_kendall(X, y, 2, 1.0, random_state=0, neighbours="add_remove")
    np.testing.assert_array_equal(a.support, b.support)


def test_accountant_spellings():
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        acc = BudgetAccountant(epsilon=1.0, neighbours="add_remove")
    assert acc.neighbours == "add_remove" and acc.neighbour is Neighbour.ADD_REMOVE
    with pytest.warns(FutureWarning, match="neighbours='add_remove'") as rec:
        old = BudgetAccountant(epsilon=1.0, neighbour="add/remove")
    assert rec[0].filename == __file__
    assert old.neighbours == "add_remove"
    with pytest.warns(FutureWarning):
        assert BudgetAccountant(neighbours="replace-one").neighbours == "replace_one"
    with pytest.raises(InvalidParameterError, match="both neighbour= and neighbours="):
        BudgetAccountant(neighbour="add/remove", neighbours="add_remove")
    with pytest.raises(TypeError, match="unexpected"):
        BudgetAccountant(neighbor="add_remove")


def test_method_guarantee_and_prescreen_spellings(data):
    X, y = data
    method = registry.get_method("exponential")
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        new = method.guarantee(1.0, 1, neighbours="add_remove")
    with pytest.warns(FutureWarning):
        old = method.guarantee(1.0, 1, neighbour="add_remove")
    assert new == old and new.neighbour is Neighbour.ADD_REMOVE
    with pytest.warns(FutureWarning), pytest.raises(ValueError, match="replace_one"):
        prescreen("kendall", X, y, 3, 1.0, neighbour="add/remove")
