"""top-R: exact probabilities, sampling frequencies, and ε-DP on neighbouring datasets."""

import math

import numpy as np
import pytest
from scipy.stats import chisquare

from mipdp import private_bss
from mipdp.brute_force import all_supports, exponential_mechanism_log_probs, least_squares_value
from mipdp.enumeration import default_R
from mipdp.mechanisms import TopRMechanism

B = 0.5


def log_probs(X, y, s, eps, R=None, **kw):
    res = private_bss(X, y, s, eps, bounds=(B, B), R=R, random_state=0, method="top_r", **kw)
    sup = all_supports(X.shape[1], s)
    return res, sup, np.array([res.log_probability(S) for S in sup])


def test_probability_is_exponential_mechanism_on_truncated_score(instance):
    X, y = instance(0, n=40, p=8)
    s, eps, R = 2, 3.0, 6
    res, sup, lp = log_probs(X, y, s, eps, R=R, ridge=5.0)
    L = np.array([least_squares_value(X, y, S, 5.0, 1.1) for S in sup])
    trunc = np.minimum(L, np.sort(L)[R - 1])
    expected = exponential_mechanism_log_probs(trunc, eps, res.sensitivity)
    np.testing.assert_allclose(lp, expected, atol=1e-9)
    assert math.isclose(np.exp(lp).sum(), 1.0, rel_tol=1e-12)


def test_sampled_frequencies_match_probability(instance):
    X, y = instance(1, n=40, p=6)
    s, eps = 2, 4.0
    res = private_bss(X, y, s, eps, bounds=(B, B), ridge=5.0, n_draws=20000, random_state=1,
                      method="top_r")
    sup = all_supports(6, s)
    p = np.exp([res.log_probability(S) for S in sup])
    index = {tuple(S): i for i, S in enumerate(sup.tolist())}
    counts = np.bincount([index[tuple(S)] for S in res.supports.tolist()], minlength=len(sup))
    assert chisquare(counts, p * counts.sum()).pvalue > 1e-3
    assert res.epsilon == pytest.approx(20000 * eps)


def neighbours(X, y, rng, n_random=4):
    """Replace one row by corners of the clipping box (adversarial) and random rows."""
    n, p = X.shape
    out = []
    for sign in (1.0, -1.0):
        for i in (0, n - 1):
            Xn, yn = X.copy(), y.copy()
            Xn[i] = sign * B
            yn[i] = -sign * B
            out.append((Xn, yn))
    for _ in range(n_random):
        Xn, yn = X.copy(), y.copy()
        i = rng.integers(n)
        Xn[i] = rng.choice([-B, B], p)
        yn[i] = rng.choice([-B, B])
        out.append((Xn, yn))
    return out


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("R", [None, 1, 4, 30])
def test_pure_dp_on_neighbouring_datasets(instance, seed, R):
    X, y = instance(seed, n=30, p=7)
    s, eps = 2, 1.0
    _, _, lp = log_probs(X, y, s, eps, R=R, ridge=3.0)
    worst = 0.0
    for Xn, yn in neighbours(X, y, np.random.default_rng(seed)):
        _, _, lpn = log_probs(Xn, yn, s, eps, R=R, ridge=3.0)
        worst = max(worst, np.max(np.abs(lp - lpn)))
    assert worst <= eps + 1e-9


def test_outside_bucket_is_uniform_and_never_in_top_r():
    sup = np.array([[0, 1], [0, 2], [1, 2]])
    mech = TopRMechanism(sup, np.array([0.0, 0.1, 0.2]), p=5, epsilon=1.0, sensitivity=1e9)
    draws = mech.sample(np.random.default_rng(0), size=4000)
    keys = {tuple(r) for r in draws.tolist()}
    assert len(keys) == 10  # every support reachable
    assert mech.log_probability([0, 1]) == pytest.approx(math.log(0.1), abs=1e-6)


@pytest.mark.parametrize("eps", [1e-6, 1e6])
def test_extreme_epsilon_is_finite_and_normalised(eps):
    vals = np.linspace(0.0, 1.0, 5)
    mech = TopRMechanism(np.array([[0, 1], [0, 2], [0, 3], [1, 2], [1, 3]]), vals, p=200,
                         epsilon=eps, sensitivity=1e-3)
    assert np.isfinite(mech.log_bucket[0])
    total = np.exp(mech.log_bucket).sum()
    assert total == pytest.approx(1.0)
    mech.sample(np.random.default_rng(0), size=10)


def test_huge_number_of_supports():
    # C(5000, 200) > 10^300: the out bucket's log-weight is still finite and exact
    mech = TopRMechanism(np.arange(200)[None, :], np.array([0.0]), p=5000, epsilon=1.0,
                         sensitivity=1.0)
    assert math.comb(5000, 200) > 10 ** 300
    assert np.isfinite(mech.log_prob_outside_each)
    assert mech.sample(np.random.default_rng(0), size=2).shape == (2, 200)


def test_default_R():
    assert default_R(100, 5) == 476
