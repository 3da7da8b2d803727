"""Property-based tests of the public API: valid result or a clear error; inputs untouched."""

import copy
import math
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mipdp import PrivateBestSubsetSelector, comparators, private_bss

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

CONTAINERS = ["float64", "float32", "int", "bool", "object", "sparse", "dataframe"]


def wrap(X, y, container):
    """``X`` (float64) and ``y`` in the requested container / dtype."""
    if container == "float32":
        return X.astype(np.float32), y.astype(np.float32)
    if container == "int":
        return np.rint(X * 4).astype(np.int64), np.rint(y * 4).astype(np.int64)
    if container == "bool":
        return X > 0, y > 0
    if container == "object":
        return X.astype(object), y.astype(object)
    if container == "sparse":
        return sp.csr_matrix(np.where(np.abs(X) < 0.2, 0.0, X)), y
    if container == "dataframe":
        return (pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])]),
                pd.Series(y, name="target"))
    return X, y


@st.composite
def problems(draw):
    """A small problem and, possibly, one defect; returns (X, y, s, eps, bounds, bad_arg)."""
    n = draw(st.integers(3, 25))
    p = draw(st.integers(2, 6))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * 0.4
    y = X[:, 0] * 0.5 + 0.2 * rng.normal(size=n)
    if p >= 3 and draw(st.booleans()):
        X[:, 2] = X[:, 0]                                 # duplicate column
    if draw(st.booleans()):
        X[:, -1] = 0.25                                   # constant column
    s = draw(st.sampled_from([1, p - 1, max(1, p // 2)]))
    eps, bounds = 1.0, (0.5, 0.5)
    container = draw(st.sampled_from(CONTAINERS))
    defect = draw(st.sampled_from([None, None, None, "nan_X", "inf_y", "s", "eps", "bounds",
                                   "shape", "y_len", "str_X"]))
    bad = None
    if defect == "nan_X":
        X[rng.integers(n), rng.integers(p)] = np.nan
        bad = "X"
    elif defect == "inf_y":
        y[rng.integers(n)] = np.inf
        bad = "y"
    Xw, yw = wrap(X, y, container if defect not in ("nan_X", "inf_y") or container not in
                  ("int", "bool", "sparse") else "float64")
    if defect == "s":
        s = draw(st.sampled_from([0, p, -1, 1.5, "2", True]))
        bad = "s"
    elif defect == "eps":
        eps = draw(st.sampled_from([0.0, -1.0, math.nan, math.inf, "1", None]))
        bad = "eps"
    elif defect == "bounds":
        bounds = draw(st.sampled_from([(-1.0, 0.5), (0.5, 0.0), (0.5,), "big", (math.nan, 1.0)]))
        bad = "bounds"
    elif defect == "shape":
        Xw = np.asarray(X)[:, 0]
        bad = "X"
    elif defect == "y_len":
        yw = np.asarray(y)[:-1]
        bad = "y"
    elif defect == "str_X":
        Xw = np.full((n, p), "a", dtype=object)
        bad = "X"
    return Xw, yw, s, eps, bounds, bad


def snapshot(obj):
    if isinstance(obj, (pd.DataFrame, pd.Series)):
        return obj.copy(deep=True)
    if sp.issparse(obj):
        return obj.copy()
    return copy.deepcopy(obj)


def same(a, b):
    if isinstance(a, (pd.DataFrame, pd.Series)):
        return a.equals(b)
    if sp.issparse(a):
        return (a != b).nnz == 0
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and bool(
        np.all((a == b) | ((a != a) & (b != b))))


def check_call(fn, X, y, s, bad, p_of=None):
    """Call ``fn``; a result must be valid, an error must be ValueError/TypeError naming ``bad``."""
    X0, y0 = snapshot(X), snapshot(y)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = fn()
    except (ValueError, TypeError) as exc:
        assert bad is not None, f"unexpected error on a valid call: {exc!r}"
        msg = str(exc)
        names = {"X": ("X",), "y": ("y",), "s": ("s", "k"), "eps": ("eps",),
                 "bounds": ("bounds",)}[bad]
        assert any(nm in msg for nm in names), f"message does not name {bad!r}: {msg!r}"
    else:
        assert bad is None, f"bad {bad!r} was accepted"
        sup = np.asarray(res.support)
        p = np.asarray(X).shape[1] if not hasattr(X, "shape") else X.shape[1]
        assert sup.shape == (s,)
        assert np.issubdtype(sup.dtype, np.integer)
        assert np.all(np.diff(sup) > 0) and sup.min() >= 0 and sup.max() < p
    assert same(X, X0) and same(y, y0), "input was modified"


@SETTINGS
@given(problems())
def test_private_bss_property(prob):
    X, y, s, eps, bounds, bad = prob
    check_call(lambda: private_bss(X, y, s, eps, bounds=bounds, ridge=5.0, random_state=0),
               X, y, s, bad)


@SETTINGS
@given(problems(), st.sampled_from(["dp_sis", "kendall", "two_stage", "mcmc"]))
def test_comparators_property(prob, name):
    X, y, s, eps, bounds, bad = prob
    fn = comparators.get_method(name)
    kw = {"kendall": {}, "two_stage": {"n_blocks": 2}, "mcmc": {"bounds": bounds, "n_iter": 5},
          "dp_sis": {"bounds": bounds}}[name]
    if name in ("kendall", "two_stage") and bad == "bounds":
        bad = None                                        # these take no bounds
    check_call(lambda: fn(X, y, s, eps, random_state=0, **kw), X, y, s, bad)


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(problems(), st.sampled_from(["top_r", "mistakes"]))
def test_selector_property(prob, method):
    X, y, s, eps, bounds, bad = prob
    kw = {"delta": 1e-3} if method == "mistakes" else {}

    class Res:
        pass

    def fit():
        sel = PrivateBestSubsetSelector(s=s, eps=eps, bounds=bounds, ridge=5.0, method=method,
                                        random_state=0, **kw).fit(X, y)
        r = Res()
        r.support = sel.support_
        assert sel.get_support().sum() == s
        return r

    check_call(fit, X, y, s, bad)


@pytest.mark.parametrize("kw, name", [({"method": "nope"}, "method"), ({"R": 0}, "R"),
                                      ({"R": 2.5}, "R"),
                                      ({"delta": 2.0, "method": "mistakes"}, "delta"),
                                      ({"eps_test": 0.1}, "eps_test"), ({"n_draws": 0}, "n_draws"),
                                      ({"ridge": -1.0}, "ridge"), ({"radius": 0.0}, "radius"),
                                      ({"random_state": -3}, "random_state"),
                                      ({"random_state": "x"}, "random_state"),
                                      ({"time_limit": -1.0}, "time_limit"),
                                      ({"backend": "nope"}, "backend"),
                                      ({"loss": "nope"}, "loss"),
                                      ({"prescreen": ("nope", 3, 0.5)}, "prescreen")])
def test_bad_parameters_are_named(kw, name):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 5)) * 0.3
    y = X[:, 0]
    with pytest.raises((ValueError, TypeError)) as info:
        private_bss(X, y, 2, 1.0, bounds=(0.5, 0.5), random_state=0, **kw)
    assert name in str(info.value)
