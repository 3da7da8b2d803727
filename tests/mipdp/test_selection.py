"""The public entry point: usage, reproducibility, validation."""

import warnings

import numpy as np
import pytest

from mipdp import (
    BackendUnavailableError,
    ConditionalPrivacyWarning,
    PrivacyLeakWarning,
    PrivateBestSubsetSelector,
    private_bss,
    solvers,
)
from mipdp.datasets import make_bss_regression

B = (0.5, 0.5)
#: the MIP backend path (no exhaustive table, no explicit region search)
MIP_PATH = {"exhaustive_max": 0, "explicit_max": 0}


@pytest.fixture(scope="module")
def data():
    X, y, support = make_bss_regression(n=600, p=14, s=3, random_state=0)
    return X, y, support


def test_release_and_result_fields(data):
    X, y, _ = data
    res = private_bss(X, y, 3, 1.0, bounds=B, random_state=0, method="top_r",
                      enumeration_options=MIP_PATH)
    assert res.support.shape == (3,) and np.all(np.diff(res.support) > 0)
    assert res.neighbour == "replace-one" and res.delta == 0.0
    assert "pure" in str(res.guarantee) and res.is_private
    assert res.stats["certified"] and res.stats["optimality_gap"] <= 1e-9
    assert res.R == 1 + 3 * 11
    assert 0.0 < res.probability(res.support) <= 1.0
    assert res.probability([0, 0, 1]) == 0.0
    assert set(res.timings) >= {"warm_start", "optimum", "top_r", "sampling", "total"}
    small = private_bss(X, y, 3, 1.0, bounds=B, random_state=0, method="top_r")  # 364 supports
    assert small.stats["backend"] == "exhaustive" and "exhaustive" in small.timings
    np.testing.assert_array_equal(small.support, res.support)


def test_high_epsilon_recovers_truth(data):
    X, y, support = data
    res = private_bss(X, y, 3, 1e4, bounds=B, random_state=0)
    np.testing.assert_array_equal(res.support, support)
    np.testing.assert_array_equal(res.candidates[0], support)


def test_reproducible_and_fresh_entropy(data):
    X, y, _ = data
    a = private_bss(X, y, 3, 0.5, bounds=B, n_draws=20, random_state=7)
    b = private_bss(X, y, 3, 0.5, bounds=B, n_draws=20, random_state=7)
    np.testing.assert_array_equal(a.supports, b.supports)
    c = private_bss(X, y, 3, 0.5, bounds=B, n_draws=20, random_state=np.random.default_rng(7))
    assert c.supports.shape == (20, 3)
    private_bss(X, y, 3, 0.5, bounds=B, random_state=None)


@pytest.mark.parametrize("backend", solvers.available_backends())
@pytest.mark.parametrize("method", ["top_r", "mistakes"])
def test_same_release_on_every_backend(data, backend, method):
    """The truncated samplers' mechanism is the same exact object on every backend."""
    X, y, _ = data
    kw = dict(bounds=B, n_draws=10, random_state=3, method=method)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConditionalPrivacyWarning)
        ref = private_bss(X, y, 3, 0.5, **kw)
        res = private_bss(X, y, 3, 0.5, **kw, backend=backend,
                          enumeration_options=MIP_PATH)
    np.testing.assert_array_equal(ref.supports, res.supports)


@pytest.mark.parametrize("backend", solvers.available_backends())
def test_exponential_mechanism_same_law_on_every_backend(data, backend):
    """The exponential mechanism's law is the same on every backend (its draws depend on the
    envelope the backend certified): exact probabilities agree with the exhaustive path."""
    X, y, _ = data
    ref = private_bss(X, y, 3, 0.5, bounds=B, random_state=3)
    res = private_bss(X, y, 3, 0.5, bounds=B, random_state=3, backend=backend,
                      enumeration_options=MIP_PATH)
    assert ref.stats["backend"] == "exhaustive" and res.stats["backend"] == backend
    for S in [ref.support, res.support, ref.candidates[0], [0, 1, 2]]:
        assert res.probability(S) == pytest.approx(ref.probability(S), rel=1e-9)
        lo, hi = res.probability_bounds(S)
        assert lo <= ref.probability(S) * (1 + 1e-9) and hi >= ref.probability(S) * (1 - 1e-9)


def test_inputs_not_modified(data):
    X, y, _ = data
    X0, y0 = X.copy(), y.copy()
    private_bss(X, y, 3, 1.0, bounds=B, random_state=0)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)


def test_missing_bounds_warn(data):
    """bounds="data" reads the bounds off the data (not private, with a warning); no
    bounds at all runs a bounds-free score (private, no warning): here n * eps < 1000, the
    Kendall score (mipdp.bounds_free)."""
    X, y, _ = data
    with pytest.warns(PrivacyLeakWarning, match="bounds"):
        private_bss(X, y, 3, 1.0, bounds="data", random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        res = private_bss(X, y, 3, 1.0, random_state=0)
    assert res.is_private and res.info["bounds"] == "kendall"


@pytest.mark.parametrize("kwargs,exc,match", [
    (dict(s=0), ValueError, "s"),
    (dict(s=14), ValueError, "s"),
    (dict(s=2.5), TypeError, "s"),
    (dict(eps=0.0), ValueError, "eps"),
    (dict(eps=-1.0), ValueError, "eps"),
    (dict(eps=np.inf), ValueError, "eps"),
    (dict(bounds=(0.0, 1.0)), ValueError, "bounds"),
    (dict(bounds=(1.0, -1.0)), ValueError, "bounds"),
    (dict(backend="nope"), ValueError, "backend"),
    (dict(method="nope"), ValueError, "method"),
    (dict(R=0), ValueError, "R"),
    (dict(R=2.5), TypeError, "R"),
    (dict(n_draws=0), ValueError, "n_draws"),
    (dict(delta=0.1), ValueError, "delta"),
    (dict(method="mistakes", delta=2.0), ValueError, "delta"),
    (dict(ridge=0.0), ValueError, "ridge"),
    (dict(loss="nope"), ValueError, "loss"),
    (dict(random_state="x"), TypeError, "random_state"),
])
def test_bad_parameters(data, kwargs, exc, match):
    X, y, _ = data
    args = dict(s=3, eps=1.0, bounds=B)
    args.update(kwargs)
    s, eps = args.pop("s"), args.pop("eps")
    with pytest.raises(exc, match=match):
        private_bss(X, y, s, eps, **args)


@pytest.mark.parametrize("mutate,match", [
    (lambda X, y: (np.where(np.arange(X.size).reshape(X.shape) == 5, np.nan, X), y), "X"),
    (lambda X, y: (X, np.where(np.arange(y.size) == 3, np.inf, y)), "y"),
    (lambda X, y: (X[:-1], y), "X and y"),
    (lambda X, y: (X[:, 0], y), "X"),
    (lambda X, y: (X, np.c_[y, y]), "y"),
    (lambda X, y: (X.astype(str).astype(object).tolist(), y), None),
])
def test_bad_data(data, mutate, match):
    X, y, _ = data
    Xb, yb = mutate(X, y)
    if match is None:  # numeric strings are converted: that is valid input
        private_bss(Xb, yb, 3, 1.0, bounds=B, random_state=0)
        return
    with pytest.raises(ValueError, match=match):
        private_bss(Xb, yb, 3, 1.0, bounds=B)


def test_unavailable_backend(data, monkeypatch):
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "gurobipy" else real(name, *a))
    X, y, _ = data
    with pytest.raises(BackendUnavailableError, match="gurobi"):
        private_bss(X, y, 3, 1.0, bounds=B, backend="gurobi")


def test_selector_in_a_pipeline(data):
    from sklearn.linear_model import LinearRegression
    from sklearn.pipeline import make_pipeline
    X, y, support = data
    sel = PrivateBestSubsetSelector(s=3, eps=1e4, bounds=B, random_state=0)
    pipe = make_pipeline(sel, LinearRegression()).fit(X, y)
    np.testing.assert_array_equal(sel.support_, support)
    assert sel.get_support().sum() == 3
    assert sel.transform(X).shape == (X.shape[0], 3)
    assert pipe.predict(X[:3]).shape == (3,)


def test_budget_is_planned_and_refused_before_touching_data(data):
    from mipdp import BudgetError
    from mipdp.selection import planned_epsilon
    X, y, _ = data
    assert planned_epsilon(1.0, n_draws=3) == pytest.approx(3.0)
    assert planned_epsilon(1.0, n_draws=2, prescreen=("dp_sis", 5, 0.2)) == pytest.approx(1.8)
    assert planned_epsilon(1.0, method="mistakes", delta=1e-6, eps_test=0.3) == pytest.approx(1.3)
    with pytest.raises(BudgetError, match="max_epsilon"):
        # NaN data would raise ValueError if it were read: the budget check comes first
        private_bss(np.full_like(X, np.nan), y, 3, 1.0, bounds=B, n_draws=5, max_epsilon=4.0)
    res = private_bss(X, y, 3, 1.0, bounds=B, n_draws=4, max_epsilon=4.0, random_state=0)
    assert res.epsilon == pytest.approx(4.0)
    res = private_bss(X, y, 3, 1.0, bounds=B, n_draws=2, prescreen=("dp_sis", 6, 0.25),
                      max_epsilon=1.75, random_state=0)
    assert res.epsilon == pytest.approx(1.75)


@pytest.mark.parametrize("loss", ["least_squares", "hinge", "huber"])
def test_exponential_is_the_default_for_every_loss(loss):
    X, y, truth = make_bss_regression(n=400, p=12, s=3, random_state=1)
    if loss == "hinge":
        y = np.where(y >= 0, 1.0, -1.0)
    res = private_bss(X, y, 3, 2.0, bounds=(B[0], None if loss == "hinge" else B[1]), loss=loss,
                      n_draws=50, random_state=0, enumeration_options=MIP_PATH)
    assert res.method == "exponential" and res.supports.shape == (50, 3)
    assert res.is_private and res.epsilon == pytest.approx(100.0)
    assert "exponential mechanism over all C(p, s) supports" in str(res.guarantee)
    lo, hi = res.probability_bounds(res.support)
    assert 0.0 < lo <= hi <= 1.0
    assert res.probability(res.support) == pytest.approx(lo, rel=1e-6) or lo <= res.probability(
        res.support) <= hi * (1 + 1e-9)
    sampler = res.stats["sampler"]
    assert sampler["n_accepted"] >= 50 and sampler["n_proposals"] >= sampler["n_accepted"]


def test_exponential_with_a_prescreen():
    X, y, truth = make_bss_regression(n=2000, p=40, s=3, random_state=2)
    res = private_bss(X, y, 3, 4.0, bounds=B, prescreen=("dp_sis", 12, 0.25), n_draws=5,
                      random_state=0)
    assert res.method == "exponential" and res.supports.shape == (5, 3)
    assert res.epsilon == pytest.approx(0.25 * 4.0 + 5 * 0.75 * 4.0)
    cols = res.info["prescreen"]["columns"]
    assert np.all(np.isin(res.supports, cols))
    outside = np.setdiff1d(np.arange(40), cols)[:3]
    assert res.probability_bounds(outside) == (0.0, 0.0)


def test_selector_follows_the_default():
    X, y, _ = make_bss_regression(n=300, p=10, s=2, random_state=0)
    sel = PrivateBestSubsetSelector(s=2, eps=1.0, bounds=B, random_state=0).fit(X, y)
    assert sel.get_params()["method"] == "exponential"
    assert sel.transform(X).shape == (300, 2)


def test_time_limit_releases_nothing_with_the_exponential_mechanism():
    from mipdp import CertificationError
    X, y, _ = make_bss_regression(n=500, p=60, s=4, random_state=0)
    with pytest.raises(CertificationError, match="time_limit"):
        private_bss(X, y, 4, 1.0, bounds=B, time_limit=1e-4, random_state=0)


# -- issue 20 (3): clipping is reported, and warned about when it is most of the data -----

def test_clipping_is_reported_and_warned_when_it_is_most_of_a_column():
    """Raw-scale y (as scikit-learn's diabetes, 25-346) under b_y = 0.5: all of it clipped."""
    from mipdp import ClippingWarning
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.1, 0.1, size=(80, 5))
    y = 25 + 300 * rng.random(80)
    with pytest.warns(ClippingWarning, match=r"100% of y is clipped") as rec:
        res = private_bss(X, y, 2, 1.0, bounds=(0.5, 0.5), random_state=0)
    assert "not private" in str(rec[0].message)
    clip = res.info["clipped_fraction_not_private"]
    assert clip["y"] == 1.0 and clip["X"] == 0.0 and clip["X_columns_mostly_clipped"] == 0
    assert res.is_private                    # a diagnostic, not a change of the release
    # bounds that fit the data: nothing clipped, no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", ClippingWarning)
        res = private_bss(X, y / 400, 2, 1.0, bounds=(0.5, 1.0), random_state=0)
    assert res.info["clipped_fraction_not_private"] == {
        "X": 0.0, "X_max_column": 0.0, "X_columns_mostly_clipped": 0, "y": 0.0}
    # one column mostly clipped is enough to warn; hinge labels are never "clipped"
    X2 = X.copy()
    X2[:, 3] *= 100
    with pytest.warns(ClippingWarning, match="1 of 5 column"):
        res = private_bss(X2, np.sign(y - 150), 2, 1.0, bounds=(0.5, None), loss="hinge",
                          random_state=0)
    assert res.info["clipped_fraction_not_private"]["y"] is None


def test_y_column_vector_is_raveled_with_a_warning_and_other_2d_y_rejected(data):
    """(9) scikit-learn's column_or_1d rule: (n, 1) warns and ravels; (1, n) is rejected."""
    from sklearn.exceptions import DataConversionWarning
    X, y, _ = data
    with pytest.warns(DataConversionWarning, match=r"shape \(n, 1\)"):
        a = private_bss(X, y[:, None], 3, 1.0, bounds=B, random_state=0)
    b = private_bss(X, y, 3, 1.0, bounds=B, random_state=0)
    assert np.array_equal(a.support, b.support)
    with pytest.raises(ValueError, match="1-D"):
        private_bss(X, y[None, :], 3, 1.0, bounds=B, random_state=0)
