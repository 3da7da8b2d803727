"""The scikit-learn selector: parameters derived from private_bss, feature names, RNGs, checks."""

import inspect
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import check_estimator

from mipdp import BudgetAccountant, PrivateBestSubsetSelector, private_bss
from mipdp.datasets import make_bss_regression
from mipdp.selector import SELECTOR_PARAMS

#: scikit-learn checks that do not apply, with the reason (none fail at the moment;
#: check_array_api_input is skipped by scikit-learn itself unless SCIPY_ARRAY_API is set)
EXPECTED_FAILED = {}


@pytest.fixture(scope="module")
def data():
    X, y, _ = make_bss_regression(n=200, p=8, s=2, random_state=0)
    return X, y


def test_parameters_are_private_bss_parameters():
    bss = set(inspect.signature(private_bss).parameters) - {"X", "y", "n_draws", "accountant"}
    assert set(SELECTOR_PARAMS) == bss
    assert set(PrivateBestSubsetSelector().get_params()) == bss
    for name in ("max_epsilon", "enumeration_options", "time_limit", "prescreen"):
        assert f"\n    {name}" in PrivateBestSubsetSelector.__doc__ or \
               f" {name}" in PrivateBestSubsetSelector.__doc__
    default = PrivateBestSubsetSelector()
    for name, p in inspect.signature(private_bss).parameters.items():
        if name in SELECTOR_PARAMS and p.default is not inspect.Parameter.empty:
            assert getattr(default, name) == p.default


def test_feature_names_and_transform_on_dataframes(data):
    pd = pytest.importorskip("pandas")
    X, y = data
    df = pd.DataFrame(X, columns=[f"g{i}" for i in range(X.shape[1])])
    sel = PrivateBestSubsetSelector(s=2, eps=5.0, bounds=(0.5, 0.5), random_state=0).fit(df, y)
    assert list(sel.feature_names_in_) == list(df.columns)
    names = sel.get_feature_names_out()
    assert list(names) == [f"g{i}" for i in sel.support_]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sel.transform(df).shape == (len(y), 2)


def test_random_state_kinds(data):
    X, y = data
    kw = dict(s=2, eps=1.0, bounds=(0.5, 0.5))
    a = PrivateBestSubsetSelector(random_state=np.random.RandomState(3), **kw).fit(X, y)
    b = PrivateBestSubsetSelector(random_state=np.random.RandomState(3), **kw).fit(X, y)
    assert np.array_equal(a.support_, b.support_)
    PrivateBestSubsetSelector(random_state=np.random.default_rng(0), **kw).fit(X, y)


def test_max_epsilon_and_accounting_through_clones(data):
    X, y = data
    from mipdp import BudgetError
    with pytest.raises(BudgetError):
        PrivateBestSubsetSelector(s=2, eps=1.0, bounds=(0.5, 0.5), max_epsilon=0.5).fit(X, y)
    base = PrivateBestSubsetSelector(s=2, eps=0.25, bounds=(0.5, 0.5), random_state=0)
    with BudgetAccountant(epsilon=0.5) as acc:
        clone(base).fit(X, y)
        clone(base).fit(X, y)
        with pytest.raises(BudgetError):
            clone(base).fit(X, y)
    assert len(acc) == 2


def test_fitted_attributes_label_what_is_not_private(data):
    X, y = data
    sel = PrivateBestSubsetSelector(s=2, eps=1.0, bounds=(0.5, 0.5), random_state=0).fit(X, y)
    assert sel.guarantee_.is_private and not hasattr(sel, "result_")
    assert "Not private" in PrivateBestSubsetSelector.__doc__.split("result_not_private_")[1][:200]
    assert sel.result_not_private_.mechanism is not None


def test_scikit_learn_estimator_checks():
    est = PrivateBestSubsetSelector(s=1, eps=1.0, bounds=(10.0, 10.0), random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(est, expected_failed_checks=EXPECTED_FAILED, on_fail=None,
                                  on_skip=None)
    bad = [(r["check_name"], str(r["exception"])[:200]) for r in results
           if r["status"] == "failed"]
    assert not bad
    assert sum(r["status"] == "passed" for r in results) > 30
