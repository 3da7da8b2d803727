"""Numerics of the samplers: extreme ε, tiny sensitivities, near-equal objectives, huge C(p, s).

Every reference value is computed independently in log space by hand: objective
differences are taken exactly with :class:`fractions.Fraction` (floats are dyadic
rationals), scaled exactly, and only then rounded, so no cancellation can hide a bias.
"""

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy.special import gammaln
from scipy.stats import chisquare

from mipdp.mechanisms import (
    MistakesMechanism,
    TopRMechanism,
    canonical_lipschitz_topk,
    canonical_lipschitz_topk_distribution,
    gumbel_argmax,
    gumbel_peeling_topk,
    laplace_topk,
    log_comb,
    ptr_test,
)
from mipdp.mechanisms.topk import _log_max_exp_noise


@pytest.fixture(autouse=True)
def strict_floats():
    """Any overflow, invalid operation (NaN) or warning is an error in this module."""
    with np.errstate(over="raise", invalid="raise"), warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def ls_sensitivity(n, s=5, b=0.5, r=1.1):
    return (b + b * r * math.sqrt(s)) ** 2 / (2 * n)


def reference_bucket_logprobs(values, n_supports, eps, sens):
    """Exact-difference log-probabilities of the top-R buckets (inside..., outside)."""
    v = [Fraction(float(x)) for x in values]
    c = Fraction(eps) / (2 * Fraction(sens))
    w = [-c * (x - v[0]) for x in v]                        # exact rationals
    R = len(v)
    extra = []
    if n_supports > R:
        extra = [math.log(n_supports - R)]                  # exact to rounding (Python int)
    wf = [float(x) for x in w] + [extra[0] + float(w[-1])] if extra else [float(x) for x in w]
    m = max(wf)
    lse = m + math.log(math.fsum(math.exp(x - m) for x in wf))
    out = [x - lse for x in wf]
    return np.array(out if extra else out + [-math.inf])


EPS_GRID = [1e-6, 1e-3, 1.0, 1e3, 1e6]
N_GRID = [100, 10**4, 10**7]


@pytest.mark.parametrize("eps", EPS_GRID)
@pytest.mark.parametrize("n", N_GRID)
def test_top_r_bucket_law_matches_exact_reference(eps, n):
    sens = ls_sensitivity(n)
    rng = np.random.default_rng(0)
    base = 0.123456789
    values = np.sort(base + np.r_[0.0, rng.uniform(0, 50 * sens, size=9)])
    p, s = 40, 5
    mech = TopRMechanism(np.array([sorted(rng.choice(p, s, replace=False)) for _ in range(10)]),
                         values, p, eps, sens)
    ref = reference_bucket_logprobs(values, math.comb(p, s), eps, sens)
    assert np.all(np.isfinite(mech.log_bucket) | np.isneginf(mech.log_bucket))
    np.testing.assert_allclose(mech.log_bucket, ref, rtol=1e-12, atol=1e-12)
    assert math.isclose(float(np.logaddexp.reduce(mech.log_bucket)), 0.0, abs_tol=1e-12)


def test_objectives_differing_by_1e_15():
    """Differences far below the float spacing of the objectives' scale are not lost."""
    n, eps = 10**7, 1e6
    sens = ls_sensitivity(n)
    base = 0.5
    values = np.array([base, np.nextafter(base, 1), np.nextafter(np.nextafter(base, 1), 1)])
    assert 0 < values[1] - values[0] < 2e-16 * 2
    mech = TopRMechanism(np.array([[0, 1], [0, 2], [1, 2]]), values, p=3, epsilon=eps,
                         sensitivity=sens)
    ref = reference_bucket_logprobs(values, 3, eps, sens)
    np.testing.assert_allclose(mech.log_bucket, ref, rtol=1e-12, atol=1e-13)
    # 1e-15-scale differences at eps=1e6 and Δ~1e-7 weigh exp(-eps*1e-16/(2Δ)) ≈ 0.9994
    w = eps * float(Fraction(values[1]) - Fraction(values[0])) / (2 * sens)
    assert mech.log_bucket[0] - mech.log_bucket[1] == pytest.approx(w, rel=1e-9)


def test_flat_law_at_eps_1e_6_has_no_bias():
    """At ε = 1e-6 every support is (almost exactly) equally likely; draws agree."""
    p, s, eps, sens = 7, 2, 1e-6, ls_sensitivity(10**7, s=2)
    N = math.comb(p, s)
    sup = np.array([[0, 1], [0, 2], [1, 2]])
    mech = TopRMechanism(sup, np.array([0.1, 0.2, 0.3]), p, eps, sens)
    ref = reference_bucket_logprobs([0.1, 0.2, 0.3], N, eps, sens)
    np.testing.assert_allclose(mech.log_bucket, ref, rtol=1e-12)
    # eps/(2Δ) = 1e-6 / (2 · 1.3e-7) ~ 4: weights differ. Use a truly flat one too:
    flat = TopRMechanism(sup, np.array([0.1, 0.1 + 1e-12, 0.1 + 2e-12]), p, eps, 1.0)
    for S in [[0, 1], [3, 6], [5, 6]]:
        assert flat.log_probability(S) == pytest.approx(-math.log(N), abs=1e-12)
    draws = flat.sample(np.random.default_rng(1), size=21000)
    keys = [tuple(r) for r in draws.tolist()]
    allsup = [(i, j) for i in range(p) for j in range(i + 1, p)]
    counts = np.array([keys.count(k) for k in allsup])
    assert chisquare(counts).pvalue > 1e-3


def test_eps_1e6_always_releases_the_optimum():
    sens = ls_sensitivity(10**7)
    mech = TopRMechanism(np.array([[0, 1], [0, 2]]), np.array([1.0, 1.0 + 1e-3]), 50,
                         1e6, sens)
    assert mech.log_probability([0, 1]) == 0.0
    assert np.isneginf(mech.log_probability([3, 4])) or mech.log_probability([3, 4]) < -1e9
    assert np.all(mech.sample(np.random.default_rng(0), size=200) == [0, 1])


def test_binomial_beyond_1e300():
    p, s = 5000, 200
    N = math.comb(p, s)
    assert N > 10**300 and math.log(N) > 690
    sup = np.array([list(range(s)), list(range(1, s + 1))])
    mech = TopRMechanism(sup, np.array([0.0, 0.001]), p, 1.0, 1e-3)
    lo = mech.log_prob_outside_each
    assert np.isfinite(lo)
    # log P(outside one) = log(N-R) - c(L_R - L_1) - logZ - log(N-R) = -c(L_R-L_1) - logZ
    c = 1.0 / (2 * 1e-3)
    logZ = np.logaddexp.reduce([0.0, -c * 0.001, math.log(N - 2) - c * 0.001])
    assert lo == pytest.approx(-c * 0.001 - logZ, rel=1e-13)
    assert math.log(N) == pytest.approx(gammaln(p + 1) - gammaln(s + 1) - gammaln(p - s + 1),
                                        rel=1e-12)
    assert log_comb(p, s) == pytest.approx(math.log(N), rel=1e-15)
    S = mech.sample(np.random.default_rng(0), size=3)
    assert S.shape == (3, s) and np.all(np.diff(S, axis=1) > 0)


@pytest.mark.parametrize("eps", [1e-6, 1.0, 1e6])
def test_mistakes_with_huge_classes(eps):
    p, s = 4000, 150
    K = s
    sens = ls_sensitivity(10**7, s=s)
    scores = np.r_[0.3, 0.3 + np.linspace(1e-15, 1e-6, K)]
    mech = MistakesMechanism(np.arange(s), scores, p, eps, sens)
    assert np.all(np.isfinite(mech.log_class) | np.isneginf(mech.log_class))
    # reference: log m_k - c M_k, normalised by hand in log space
    c = Fraction(eps) / (2 * Fraction(sens))
    lw = [log_comb(s, k) + log_comb(p - s, k) - float(c * (Fraction(float(scores[k]))
                                                          - Fraction(float(scores[0]))))
          for k in range(K + 1)]
    m = max(lw)
    lse = m + math.log(math.fsum(math.exp(x - m) for x in lw))
    np.testing.assert_allclose(mech.log_class, np.array(lw) - lse, rtol=1e-12, atol=1e-9)
    draw = mech.sample(np.random.default_rng(0), size=2)
    assert draw.shape == (2, s) and all(np.unique(r).size == s for r in draw)
    if eps == 1e-6:    # essentially uniform over all C(p, s) supports
        assert mech.log_probability(np.arange(s)) == pytest.approx(-log_comb(p, s), rel=1e-6)


def test_log_max_exp_noise_branches_are_continuous():
    # -log(1 - exp(-w)), w = E/m, around the switch at log w = -30 and far beyond it
    lz = np.array([-29.999999, -30.000001, -200.0, -1e5, 0.0, 3.0])
    out = _log_max_exp_noise(lz, np.zeros_like(lz))
    w = np.exp(lz[:2])
    exact = -np.log(-np.expm1(-w))
    np.testing.assert_allclose(out[:2], exact, rtol=1e-14)
    np.testing.assert_allclose(out[2:4], -lz[2:4], rtol=1e-14)   # -log w + w/2, w ≈ 0
    assert np.all(np.isfinite(out))


@pytest.mark.parametrize("eps", [1e-6, 1e6])
def test_topk_mechanisms_at_extreme_eps(eps):
    rng = np.random.default_rng(0)
    d, k = 3000, 40          # canonical Lipschitz classes C(t-h-2, k-h-1) exceed 1e80
    scores = np.sort(rng.normal(size=d))[::-1] * 1e12      # huge magnitudes
    sens = 1e-7
    for fn in (canonical_lipschitz_topk, gumbel_peeling_topk, laplace_topk):
        out = fn(scores, k, eps, sens, np.random.default_rng(1))
        assert out.shape == (k,) and np.unique(out).size == k and out.min() >= 0 and out.max() < d
        if eps == 1e6:
            assert np.array_equal(out, np.arange(k))


def test_canonical_lipschitz_distribution_at_extremes():
    f = np.array([5.0, 4.0, 3.0, 2.0, 1.0])
    _, lp = canonical_lipschitz_topk_distribution(f, 2, 1e6, 1e-7)
    assert np.all(np.isfinite(lp) | np.isneginf(lp))
    assert lp[0] == pytest.approx(0.0, abs=1e-12)                 # {0, 1} surely
    _, lp = canonical_lipschitz_topk_distribution(f, 2, 1e-6, 1.0)
    np.testing.assert_allclose(lp, -math.log(10), atol=1e-5)


def test_gumbel_argmax_with_extreme_log_weights():
    lw = np.array([-1e300, 0.0, -1e6, -5e9])
    rng = np.random.default_rng(0)
    assert set(gumbel_argmax(lw, rng, size=1000).tolist()) == {1}
    lw = np.array([1e300, 1e300])                    # equal huge weights: still 50/50
    hits = gumbel_argmax(lw - lw.max(), rng, size=20000)
    assert abs(hits.mean() - 0.5) < 0.02


@pytest.mark.parametrize("eps_test", [1e-6, 1e6])
def test_ptr_test_extremes(eps_test):
    rng = np.random.default_rng(0)
    sens = ls_sensitivity(10**7)
    # no gap: never passes at large eps_test, passes with prob. δ/2 otherwise
    res = [ptr_test(0.0, sens, eps_test, 1e-6, rng) for _ in range(2000)]
    assert sum(res) <= 5
    # a gap of 1e9 Δ: passes at eps_test = 1e6 (threshold log(1/δ)/ε0 ≈ 1.4e-5)
    if eps_test == 1e6:
        assert ptr_test(1e9 * sens, sens, eps_test, 1e-6, rng)
