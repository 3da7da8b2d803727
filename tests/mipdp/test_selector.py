"""The scikit-learn selector: parameters derived from private_bss, feature names, RNGs, checks."""

import inspect
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import check_estimator

from mipdp import BudgetAccountant, PrivateBestSubsetSelector, private_bss
from mipdp.datasets import make_bss_classification, make_bss_regression
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
    assert set(PrivateBestSubsetSelector().get_params()) == bss | {"keep_not_private"}
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


# -- issue 20: pickling, accounting in parallel, s against the data, hinge labels ----------

def test_pickle_drops_the_not_private_state_unless_asked(data):
    """(4) A shipped selector carries the release, not the enumerated objective values."""
    import pickle
    X, y = data
    sel = PrivateBestSubsetSelector(s=2, eps=1.0, bounds=(0.5, 0.5), random_state=0).fit(X, y)
    blob = pickle.dumps(sel)
    back = pickle.loads(blob)
    assert not hasattr(back, "result_not_private_")
    assert np.array_equal(back.support_, sel.support_) and back.guarantee_.is_private
    assert back.transform(X).shape == (len(y), 2)
    # no objective value of any enumerated support survives in the pickle
    res = sel.result_not_private_
    for v in np.ravel(res.candidate_values):
        assert np.float64(v).tobytes() not in blob
    assert len(blob) < len(pickle.dumps(res))
    kept = pickle.loads(pickle.dumps(clone(sel).set_params(keep_not_private=True).fit(X, y)))
    assert kept.result_not_private_.mechanism is not None
    # the live object keeps it
    assert sel.result_not_private_.mechanism is not None
    # inside a Pipeline too
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import make_pipeline
    pipe = make_pipeline(clone(sel), LinearRegression()).fit(X, y)
    back = pickle.loads(pickle.dumps(pipe))
    assert not hasattr(back[0], "result_not_private_") and back.predict(X[:2]).shape == (2,)


def test_s_is_checked_against_the_data_naming_the_selector(data):
    """(7) s = 5 with 4 features: the error names the selector and its parameter."""
    from mipdp import InvalidParameterError
    X, y = data
    with pytest.raises(InvalidParameterError, match="'s' parameter of PrivateBestSubsetSelector"):
        PrivateBestSubsetSelector(bounds=(0.5, 0.5)).fit(X[:, :4], y)


def test_hinge_accepts_any_two_class_labels():
    """(7) 0/1 and string labels map to ±1 (classes_ as in scikit-learn); same release."""
    X, y, _ = make_bss_classification(n=150, p=6, s=2, random_state=0)
    kw = dict(s=2, eps=1.0, loss="hinge", bounds=(0.5, None), random_state=0)
    ref = PrivateBestSubsetSelector(**kw).fit(X, y)
    for labels, classes in (((y > 0).astype(int), [0, 1]),
                            (np.where(y > 0, "yes", "no"), ["no", "yes"]),
                            (np.where(y > 0, 0, 1), [0, 1])):    # flipped: same law
        sel = PrivateBestSubsetSelector(**kw).fit(X, labels)
        assert list(sel.classes_) == classes
        assert np.array_equal(sel.support_, ref.support_)
    one = PrivateBestSubsetSelector(**kw).fit(X, np.zeros(150, dtype=int))  # one class runs
    assert list(one.classes_) == [0]
    with pytest.raises(ValueError, match="two classes"):
        PrivateBestSubsetSelector(**kw).fit(X, np.arange(150) % 3)
    assert "b_y" in PrivateBestSubsetSelector.__doc__ and "ignored" in \
        PrivateBestSubsetSelector.__doc__


def test_parallel_search_cannot_bypass_the_accountant():
    """(5) GridSearchCV(n_jobs=2) under a with-block refuses instead of counting 1 fit."""
    from joblib import parallel_backend
    from sklearn.model_selection import GridSearchCV
    X, y, _ = make_bss_regression(n=60, p=4, s=1, random_state=0)
    base = PrivateBestSubsetSelector(s=1, eps=0.5, bounds=(0.5, 0.5), random_state=0)
    grid = {"eps": [0.5]}
    for backend in ("loky", "threading"):
        with parallel_backend(backend):
            with BudgetAccountant(epsilon=5) as acc:
                search = GridSearchCV(base, grid, cv=2, n_jobs=2, scoring=lambda *a: 0.0)
                with pytest.raises(ValueError, match="AccountantNotVisibleError"), \
                        warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    search.fit(X, y)
        assert len(acc) == 0, backend
    with BudgetAccountant(epsilon=5) as acc:       # the documented fix: n_jobs=1
        GridSearchCV(base, grid, cv=2, n_jobs=1, scoring=lambda *a: 0.0).fit(X, y)
    assert len(acc) == 3                           # 2 folds + the refit, every fit counted


def test_a_fitted_scaler_in_a_pipeline_is_no_longer_silent(data):
    """(3) StandardScaler then bounds 0.5 clips ~62 % of X: a ClippingWarning says so."""
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from mipdp import ClippingWarning
    X, y = data
    pipe = make_pipeline(StandardScaler(), PrivateBestSubsetSelector(
        s=2, eps=1.0, bounds=(0.5, 5.0), random_state=0))
    with pytest.warns(ClippingWarning, match="column") as rec:
        pipe.fit(X, y)
    assert "not private" in str(rec[0].message)
    clip = pipe[-1].result_not_private_.info["clipped_fraction_not_private"]
    assert 0.55 < clip["X"] < 0.7 and clip["y"] == 0.0
