"""Kendall's tau (vs scipy and brute force) and DPKendall (sensitivity, exact privacy, sampler)."""

import collections
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from mipdp.comparators.kendall import (
    dp_kendall,
    dp_kendall_distribution,
    kendall_sensitivities,
    kendall_tau,
    scaled_kendall,
)
from mipdp.result import SelectionResult


def brute_tau_a(x, y):
    n = x.size
    i, j = np.triu_indices(n, 1)
    return float(np.sum(np.sign(x[i] - x[j]) * np.sign(y[i] - y[j])) / (n * (n - 1) / 2))


def chi_square_pvalue(samples, subsets, log_prob):
    counts = collections.Counter(tuple(int(i) for i in s) for s in samples)
    observed = np.array([counts.pop(tuple(int(i) for i in r), 0) for r in subsets], float)
    assert not counts
    expected = len(samples) * np.exp(log_prob)
    keep = expected >= 5
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] < 5:
        obs, exp = obs[:-1], exp[:-1]
    return stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue


# ------------------------------------------------------------------- Kendall's tau
@pytest.mark.parametrize("n", [2, 3, 8, 31, 64, 257])
def test_tau_matches_scipy_without_ties(n):
    rng = np.random.default_rng(n)
    X = rng.normal(size=(n, 5))
    y = rng.normal(size=n)
    ref = np.array([stats.kendalltau(X[:, j], y).statistic for j in range(5)])
    np.testing.assert_allclose(kendall_tau(X, y, "b"), ref, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(kendall_tau(X, y, "a"), ref, rtol=1e-12, atol=1e-14)
    assert kendall_tau(X[:, 0], y) == pytest.approx(ref[0], abs=1e-14)


@pytest.mark.parametrize("n", [3, 10, 50, 200])
def test_tau_with_ties_b_matches_scipy_and_a_matches_brute_force(n):
    rng = np.random.default_rng(100 + n)
    X = rng.integers(0, 4, size=(n, 6)).astype(float)
    X[:, 5] = 1.0                                        # a constant column
    y = rng.integers(0, 3, size=n).astype(float)
    ref_b = np.array([stats.kendalltau(X[:, j], y).statistic for j in range(6)])
    np.testing.assert_allclose(kendall_tau(X, y, "b"), ref_b, rtol=1e-12, equal_nan=True)
    ref_a = np.array([brute_tau_a(X[:, j], y) for j in range(6)])
    np.testing.assert_allclose(kendall_tau(X, y, "a"), ref_a, rtol=1e-12, atol=1e-15)
    assert kendall_tau(X, y, "a")[5] == 0.0
    np.testing.assert_allclose(scaled_kendall(X, y), n / 2 * ref_a, rtol=1e-12, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(-3, 3), st.floats(-5, 5)),
                min_size=2, max_size=40))
def test_tau_property_based(rows):
    arr = np.array(rows, dtype=float)
    X, y = arr[:, :2], arr[:, 2]
    np.testing.assert_allclose(kendall_tau(X, y, "a"), [brute_tau_a(X[:, j], y) for j in range(2)],
                               atol=1e-12)
    ref = [stats.kendalltau(X[:, j], y).statistic for j in range(2)]
    np.testing.assert_allclose(kendall_tau(X, y, "b"), ref, atol=1e-12, equal_nan=True)


def test_tau_large_and_bad_inputs():
    rng = np.random.default_rng(3)
    x = rng.normal(size=3000)
    y = x + rng.normal(size=3000)
    assert kendall_tau(x, y) == pytest.approx(stats.kendalltau(x, y).statistic, abs=1e-12)
    with pytest.raises(ValueError, match="variant"):
        kendall_tau(x, y, "c")
    with pytest.raises(ValueError, match="rows"):
        kendall_tau(x, y[:-1])
    with pytest.raises(ValueError, match="NaN"):
        kendall_tau(np.array([1.0, np.nan, 2.0]), np.arange(3.0))


# -------------------------------------------------------------------- sensitivity
def test_scaled_tau_sensitivity_add_remove_and_replace():
    rng = np.random.default_rng(4)
    worst_add = worst_rep = 0.0
    for _ in range(300):
        n = int(rng.integers(3, 12))
        x = rng.integers(0, 5, size=n).astype(float)
        y = rng.integers(0, 5, size=n).astype(float)
        t = scaled_kendall(x, y)
        nx, ny = rng.integers(-1, 6, size=2).astype(float)
        worst_add = max(worst_add, abs(scaled_kendall(np.append(x, nx), np.append(y, ny)) - t))
        x2, y2 = x.copy(), y.copy()
        x2[0], y2[0] = nx, ny
        worst_rep = max(worst_rep, abs(scaled_kendall(x2, y2) - t))
    s1_add, _ = kendall_sensitivities("add_remove")
    s1_rep, _ = kendall_sensitivities("replace_one")
    assert worst_add <= s1_add + 1e-12 and worst_rep <= s1_rep + 1e-12
    # Lemma 3.2's tight example: sorted data plus a point discordant with all of them
    n = 10
    x = np.arange(n, dtype=float)
    change = abs(scaled_kendall(np.append(x, -1.0), np.append(x, n)) - scaled_kendall(x, x))
    assert change == pytest.approx(1.5, abs=1e-12)
    # replace-one: sorted -> the smallest point moved to be discordant with all
    x2, y2 = x.copy(), x.copy()
    y2[0] = n
    assert abs(scaled_kendall(x2, y2) - scaled_kendall(x, x)) == pytest.approx(2.0, abs=1e-12)


# --------------------------------------------------------------- exact privacy
def _neighbours(X, y, rng, neighbour):
    n, p = X.shape
    rows = [np.array(v, float) for v in itertools.product((-10.0, 10.0), repeat=p + 1)][::3]
    rows += [rng.normal(size=p + 1) for _ in range(4)]
    for r in rows:
        if neighbour == "add_remove":
            yield np.vstack([X, r[:p]]), np.append(y, r[p])
        else:
            X2, y2 = X.copy(), y.copy()
            X2[0], y2[0] = r[:p], r[p]
            yield X2, y2
    if neighbour == "add_remove":
        yield X[1:], y[1:]


@pytest.mark.parametrize("neighbour", ["add_remove", "replace_one"])
@pytest.mark.parametrize("p,k", [(4, 1), (4, 2), (5, 2)])
def test_exact_privacy_of_dp_kendall(neighbour, p, k):
    rng = np.random.default_rng(10 * p + k)
    eps = 2.0
    worst = 0.0
    for _ in range(2):
        n = 7
        X = rng.normal(size=(n, p))
        X[:, 1] = X[:, 0] + 0.1 * rng.normal(size=n)     # redundant pair
        y = X[:, 0] + 0.5 * rng.normal(size=n)
        _, lp = dp_kendall_distribution(X, y, k, eps, neighbour)
        assert np.exp(lp).sum() == pytest.approx(1.0, abs=1e-12)
        for X2, y2 in _neighbours(X, y, rng, neighbour):
            _, lq = dp_kendall_distribution(X2, y2, k, eps, neighbour)
            ratio = float(np.max(np.abs(lp - lq)))
            assert ratio <= eps + 1e-9
            worst = max(worst, ratio)
    assert worst > 0.05 * eps


@pytest.mark.parametrize("neighbour", ["add_remove", "replace_one"])
def test_sampler_matches_exact_distribution(neighbour):
    rng = np.random.default_rng(20)
    X = rng.normal(size=(15, 5))
    X[:, 1] = X[:, 0] + 0.3 * rng.normal(size=15)
    y = X[:, 0] + X[:, 3] + 0.5 * rng.normal(size=15)
    subsets, lp = dp_kendall_distribution(X, y, 2, 3.0, neighbour)
    res = dp_kendall(X, y, 2, 3.0, random_state=5, neighbours=neighbour, n_draws=5000)
    assert chi_square_pvalue(res.supports, subsets, lp) > 1e-3


# -------------------------------------------------------------------- behaviour
def test_redundancy_term_avoids_copies():
    rng = np.random.default_rng(30)
    n = 400
    a, b = rng.normal(size=n), rng.normal(size=n)
    X = np.column_stack([a, a + 0.01 * rng.normal(size=n), b, rng.normal(size=(n, 3))])
    y = a + 0.8 * b + 0.1 * rng.normal(size=n)
    res = dp_kendall(X, y, 2, 200.0, random_state=0, n_draws=20)
    for s in res.supports:
        assert 2 in s and (0 in s or 1 in s)
    assert isinstance(res, SelectionResult)
    assert res.epsilon == pytest.approx(4000.0) and res.delta == 0.0
    assert res.neighbour == "replace-one" and res.method == "kendall"
    assert res.sensitivity == 4.0 and "2 (round 1)" in str(res.guarantee)
    other = dp_kendall(X, y, 2, 1.0, random_state=0, neighbours="add_remove")
    assert other.neighbour == "add/remove-one" and other.sensitivity == 3.0


def test_reproducible_no_global_rng_inputs_untouched():
    rng = np.random.default_rng(31)
    X, y = rng.normal(size=(40, 10)), rng.normal(size=40)
    X0, y0 = X.copy(), y.copy()
    state = np.random.get_state()[1].copy()
    a = dp_kendall(X, y, 3, 1.0, random_state=9)
    b = dp_kendall(X, y, 3, 1.0, random_state=9)
    np.testing.assert_array_equal(a.supports, b.supports)
    np.testing.assert_array_equal(np.random.get_state()[1], state)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)
    assert a.support.size == 3 and np.all(np.diff(a.support) > 0)


def test_bad_inputs():
    rng = np.random.default_rng(32)
    X, y = rng.normal(size=(20, 5)), rng.normal(size=20)
    with pytest.raises(ValueError, match="k"):
        dp_kendall(X, y, 5, 1.0)
    with pytest.raises(ValueError, match="k"):
        dp_kendall(X, y, -1, 1.0)
    with pytest.raises(ValueError, match="eps"):
        dp_kendall(X, y, 2, 0.0)
    with pytest.raises(ValueError, match="eps"):
        dp_kendall(X, y, 2, float("inf"))
    Xi = X.copy()
    Xi[3, 3] = np.inf
    with pytest.raises(ValueError, match="X"):
        dp_kendall(Xi, y, 2, 1.0)
    with pytest.raises(ValueError, match="neighbour"):
        dp_kendall(X, y, 2, 1.0, neighbours="nope")
