"""Private top-k mechanisms: exact distributions, samplers, privacy, numerics, inputs."""

import collections
import itertools
import math
import time
import warnings

import numpy as np
import pytest
from scipy import integrate, optimize, stats

from mipdp.mechanisms.topk import (
    canonical_lipschitz_topk,
    canonical_lipschitz_topk_distribution,
    canonical_loss,
    distribution_as_dict,
    exp_noise_argmax_logprobs,
    gumbel_peeling_topk,
    gumbel_peeling_topk_distribution,
    laplace_topk,
)


# ----------------------------------------------------------------------------- helpers
def chi_square_pvalue(samples, subsets, log_prob):
    """Pearson chi-square of sampled subsets against exact probabilities (bins pooled to >= 5)."""
    counts = collections.Counter(tuple(int(i) for i in s) for s in samples)
    n = len(samples)
    observed = np.array([counts.pop(tuple(int(i) for i in row), 0) for row in subsets], float)
    assert not counts, f"sampler produced subsets outside the support: {counts}"
    expected = n * np.exp(log_prob)
    order = np.argsort(expected)
    obs_b, exp_b, acc_o, acc_e = [], [], 0.0, 0.0
    for i in order:
        acc_o += observed[i]
        acc_e += expected[i]
        if acc_e >= 5:
            obs_b.append(acc_o)
            exp_b.append(acc_e)
            acc_o = acc_e = 0.0
    if acc_e > 0:
        obs_b[-1] += acc_o
        exp_b[-1] += acc_e
    obs_b, exp_b = np.array(obs_b), np.array(exp_b)
    if obs_b.size < 2:
        return 1.0
    return stats.chisquare(obs_b, exp_b * obs_b.sum() / exp_b.sum()).pvalue


def lp_canonical_loss(x, subset):
    """min_{v: top-k indices of v are `subset`} ||x - v||_inf, as a linear programme."""
    d = x.size
    inside = set(int(i) for i in subset)
    # variables (v_1..v_d, s); minimise s
    c = np.zeros(d + 1)
    c[-1] = 1.0
    rows, rhs = [], []

    def add_row(coef, value):
        r = np.zeros(d + 1)
        for idx, cval in coef:
            r[idx] = cval
        rows.append(r)
        rhs.append(value)

    for i in range(d):
        add_row([(i, -1.0), (d, -1.0)], -x[i])        # x_i - v_i <= s
        add_row([(i, 1.0), (d, -1.0)], x[i])          # v_i - x_i <= s
    for i in inside:
        for j in range(d):
            if j not in inside:
                add_row([(j, 1.0), (i, -1.0)], 0.0)   # v_j <= v_i
    res = optimize.linprog(c, A_ub=np.array(rows), b_ub=np.array(rhs),
                           bounds=[(None, None)] * d + [(0, None)], method="highs")
    assert res.status == 0
    return res.fun


def class_of(subset, order, k):
    """(h, t) of a subset relative to the ordering `order` (1-based t), from Definition A.2."""
    pos = sorted(int(np.flatnonzero(order == i)[0]) for i in subset)   # 0-based ranks
    h = 0
    while h < k - 1 and pos[h] == h:
        h += 1
    return h, pos[-1] + 1


def quad_argmax_probs(u):
    """P(argmax u_i + E_i = i), E_i ~ Exp(1), by adaptive quadrature (independent check)."""
    u = np.asarray(u, float)
    top = u.max()
    out = []
    for i in range(u.size):
        others = np.delete(u, i)

        def f(v, i=i, others=others):
            return math.exp(-(v - u[i])) * float(np.prod(-np.expm1(-(v - others))))

        val, _ = integrate.quad(f, top, top + 60.0, epsabs=1e-14, epsrel=1e-11, limit=200)
        out.append(val)
    return np.array(out)


# ------------------------------------------------------------------- class structure
@pytest.mark.parametrize("d", range(2, 10))
def test_utility_classes_partition_all_subsets(d):
    for k in range(1, d):
        order = np.arange(d)
        sizes = collections.Counter(class_of(s, order, k)
                                    for s in itertools.combinations(range(d), k))
        assert sum(sizes.values()) == math.comb(d, k)
        for (h, t), m in sizes.items():
            expected = 1 if t == k else math.comb(t - h - 2, k - h - 1)
            assert m == expected, (d, k, h, t)
        # the seed's C(t-h-1, k-h-1) overcounts as soon as some class has a body
        if 1 < k < d - 1:
            seed = 1 + sum(math.comb(t - h - 1, k - h - 1) for t in range(k + 1, d + 1)
                           for h in range(k))
            assert seed > math.comb(d, k)


def test_canonical_loss_equals_linear_programme():
    rng = np.random.default_rng(3)
    for _ in range(40):
        d = int(rng.integers(3, 7))
        k = int(rng.integers(1, d))
        x = np.round(rng.normal(size=d), 1)          # rounding creates ties
        for sub in itertools.combinations(range(d), k):
            assert canonical_loss(sub, x, 1.0, 0.5) == pytest.approx(lp_canonical_loss(x, sub),
                                                                     abs=1e-9)


def test_canonical_loss_is_one_lipschitz():
    rng = np.random.default_rng(4)
    for _ in range(200):
        d = 6
        k = int(rng.integers(1, d))
        gamma = float(rng.uniform())
        x = rng.normal(size=d)
        x2 = x + rng.uniform(-1, 1, size=d)
        sub = rng.choice(d, size=k, replace=False)
        change = canonical_loss(sub, x, gamma=gamma) - canonical_loss(sub, x2, gamma=gamma)
        assert abs(change) <= 1 + 1e-12


# ------------------------------------------------------- exact distribution vs brute force
@pytest.mark.parametrize("d,k,eps,gamma,scale", [
    (4, 2, 1.0, 0.5, 1.0), (5, 1, 2.0, 0.5, 1.0), (6, 3, 3.0, 0.5, 0.5), (7, 2, 0.7, 0.25, 2.0),
    (8, 4, 2.0, 0.5, 1.0), (8, 3, 5.0, 0.9, 1.0), (6, 5, 1.5, 0.0, 1.0), (8, 7, 2.0, 1.0, 1.0),
])
def test_exact_distribution_equals_brute_force_definition(d, k, eps, gamma, scale):
    rng = np.random.default_rng(d * 100 + k)
    x = np.round(rng.normal(size=d) * 2, 1)           # some ties
    sens = 0.5
    scores = x * sens * scale
    subsets, logp = canonical_lipschitz_topk_distribution(scores, k, eps, sens, gamma)
    assert subsets.shape == (math.comb(d, k), k)
    # brute force over all C(d, k) subsets: Definition A.1 with the canonical loss,
    # loss from its class (h, t) as in App. A.3, argmax law by adaptive quadrature
    xn = scores / sens
    order = np.argsort(-xn, kind="stable")
    xs = xn[order]
    util = []
    for sub in subsets:
        h, t = class_of(sub, order, k)
        loss = (1 - 2 * gamma) * xs[k - 1] if t == k else (1 - gamma) * xs[h] - gamma * xs[t - 1]
        if gamma == 0.5:
            assert loss == pytest.approx(lp_canonical_loss(xn, sub), abs=1e-9)
        util.append(-eps / 2 * loss)
    brute = quad_argmax_probs(util)
    np.testing.assert_allclose(np.exp(logp), brute, rtol=1e-7, atol=1e-12)
    assert np.exp(logp).sum() == pytest.approx(1.0, abs=1e-12)


def test_exact_argmax_law_against_monte_carlo_of_definition():
    """Definition A.1 literally: one Exp(1) noise per subset, argmax."""
    rng = np.random.default_rng(11)
    scores = np.array([2.0, 1.5, 1.4, 0.3, -0.2, -1.0])
    k, eps = 2, 2.0
    subsets, logp = canonical_lipschitz_topk_distribution(scores, k, eps, 1.0)
    util = np.array([-eps / 2 * canonical_loss(s, scores) for s in subsets])
    wins = np.argmax(util[None, :] + rng.standard_exponential((40000, util.size)), axis=1)
    samples = subsets[wins]
    assert chi_square_pvalue(samples, subsets, logp) > 1e-3


def test_exp_noise_argmax_logprobs_handles_ties_and_huge_gaps():
    lp = exp_noise_argmax_logprobs([0.0, 0.0, 0.0])
    np.testing.assert_allclose(np.exp(lp), 1 / 3, rtol=1e-12)
    lp = exp_noise_argmax_logprobs([0.0, -1e6, -2e6])
    assert np.isfinite(lp).all() and lp[0] == pytest.approx(0.0, abs=1e-12)
    # P(1) = q_1 * int_0^1 (1 - z)(1 - q_2 z) dz = q_1 / 2 up to q_2 terms
    assert lp[1] == pytest.approx(-1e6 - math.log(2.0), abs=1e-6)


# --------------------------------------------------------------- sampler histograms
@pytest.mark.parametrize("d,k,eps,gamma,seed", [
    (6, 3, 2.0, 0.5, 0), (8, 4, 1.0, 0.5, 1), (5, 1, 3.0, 0.5, 2), (7, 6, 2.0, 0.5, 3),
    (7, 3, 2.0, 0.2, 4),
])
def test_canonical_sampler_matches_exact_distribution(d, k, eps, gamma, seed):
    rng = np.random.default_rng(seed)
    scores = np.round(rng.normal(size=d) * 1.5, 1)
    scores[1] = scores[2]                               # a tie
    subsets, logp = canonical_lipschitz_topk_distribution(scores, k, eps, 1.0, gamma)
    gen = np.random.default_rng(1000 + seed)
    samples = [canonical_lipschitz_topk(scores, k, eps, 1.0, gen, gamma=gamma) for _ in range(6000)]
    assert all(np.all(np.diff(s) > 0) and s.dtype.kind == "i" for s in samples[:50])
    assert chi_square_pvalue(samples, subsets, logp) > 1e-3


@pytest.mark.parametrize("d,k,eps,seed", [(6, 2, 2.0, 0), (7, 3, 4.0, 1), (5, 4, 1.0, 2)])
def test_gumbel_peeling_sampler_matches_exact_distribution(d, k, eps, seed):
    rng = np.random.default_rng(seed)
    scores = rng.normal(size=d) * 2
    subsets, logp = gumbel_peeling_topk_distribution(scores, k, eps, 0.5)
    gen = np.random.default_rng(60 + seed)
    samples = [gumbel_peeling_topk(scores, k, eps, 0.5, gen) for _ in range(6000)]
    assert chi_square_pvalue(samples, subsets, logp) > 1e-3


def test_gumbel_peeling_distribution_is_sequential_softmax():
    scores = np.array([1.0, 0.0, -0.5])
    _, logp = gumbel_peeling_topk_distribution(scores, 2, 2.0, 1.0)
    w = np.exp(scores * 2.0 / (2 * 2 * 1.0))
    p = lambda a, b: w[a] / w.sum() * w[b] / (w.sum() - w[a])  # noqa: E731
    np.testing.assert_allclose(np.exp(logp), [p(0, 1) + p(1, 0), p(0, 2) + p(2, 0),
                                              p(1, 2) + p(2, 1)], rtol=1e-12)


def test_distribution_as_dict():
    subsets, logp = gumbel_peeling_topk_distribution([1.0, 2.0, 3.0], 1, 1.0, 1.0)
    dist = distribution_as_dict(subsets, logp)
    assert set(dist) == {frozenset({0}), frozenset({1}), frozenset({2})}
    assert sum(dist.values()) == pytest.approx(1.0)


# ------------------------------------------------------------------------- privacy
def _neighbour_shifts(d, rng, n_random=20):
    """All vertices of [-1, 1]^d (adversarial) plus random interior shifts."""
    for signs in itertools.product((-1.0, 1.0), repeat=d):
        yield np.array(signs)
    for _ in range(n_random):
        yield rng.uniform(-1, 1, size=d)


@pytest.mark.parametrize("gamma", [0.5, 0.0, 0.3, 1.0])
def test_canonical_lipschitz_is_eps_dp_exactly(gamma):
    rng = np.random.default_rng(7)
    worst = 0.0
    for _ in range(6):
        d, k = 5, int(rng.integers(1, 5))
        eps, sens = float(rng.choice([0.2, 1.0, 3.0])), float(rng.choice([0.5, 2.0]))
        scores = rng.normal(size=d) * sens * rng.choice([0.5, 2.0])
        _, lp = canonical_lipschitz_topk_distribution(scores, k, eps, sens, gamma)
        for shift in _neighbour_shifts(d, rng):
            _, lq = canonical_lipschitz_topk_distribution(scores + sens * shift, k, eps, sens,
                                                          gamma)
            ratio = np.max(np.abs(lp - lq))
            assert ratio <= eps + 1e-9
            worst = max(worst, ratio / eps)
    assert worst > 0.5          # the bound is nearly attained: the test is not vacuous


def test_canonical_lipschitz_with_ties_is_eps_dp():
    scores = np.array([1.0, 1.0, 1.0, 0.0, 0.0])
    _, lp = canonical_lipschitz_topk_distribution(scores, 2, 1.0, 1.0)
    for shift in itertools.product((-1.0, 0.0, 1.0), repeat=5):
        _, lq = canonical_lipschitz_topk_distribution(scores + np.array(shift), 2, 1.0, 1.0)
        assert np.max(np.abs(lp - lq)) <= 1.0 + 1e-9


def test_gumbel_peeling_is_eps_dp_exactly():
    rng = np.random.default_rng(8)
    worst = 0.0
    for _ in range(3):
        d, k = 5, int(rng.integers(1, 4))
        eps, sens = float(rng.choice([0.5, 2.0])), 1.0
        scores = rng.normal(size=d) * 2
        _, lp = gumbel_peeling_topk_distribution(scores, k, eps, sens)
        for shift in _neighbour_shifts(d, rng, n_random=5):
            _, lq = gumbel_peeling_topk_distribution(scores + sens * shift, k, eps, sens)
            ratio = np.max(np.abs(lp - lq))
            assert ratio <= eps + 1e-9
            worst = max(worst, ratio / eps)
    assert worst > 0.5


def test_laplace_top1_of_two_closed_form_privacy():
    """d = 2, k = 1: P(pick 0) in closed form; neighbours move each score by <= Delta."""
    eps, sens = 1.3, 0.7
    b = 2 * 1 * sens / eps

    def p0(gap):  # P(gap + L0 - L1 > 0), L ~ Laplace(b) i.i.d.
        g = abs(gap)
        tail = 0.5 * math.exp(-g / b) * (1 + g / (2 * b))
        return 1 - tail if gap >= 0 else tail

    for gap in np.linspace(-5, 5, 41):
        for move in (-2 * sens, -sens, 0.0, sens, 2 * sens):
            for pa, pb in ((p0(gap), p0(gap + move)), (1 - p0(gap), 1 - p0(gap + move))):
                assert abs(math.log(pa) - math.log(pb)) <= eps + 1e-12
    rng = np.random.default_rng(0)
    hits = np.mean([laplace_topk([0.5, 0.0], 1, eps, sens, rng)[0] == 0 for _ in range(20000)])
    assert hits == pytest.approx(p0(0.5), abs=0.015)


# ------------------------------------------------------------------------- numerics
@pytest.mark.parametrize("fn", [canonical_lipschitz_topk, gumbel_peeling_topk, laplace_topk])
def test_extreme_eps_and_magnitudes(fn):
    rng = np.random.default_rng(0)
    scores = rng.normal(size=200) * 1e12
    truth = np.sort(np.argsort(-scores)[:7])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            out = fn(scores, 7, 1e6, 1.0, rng)
            np.testing.assert_array_equal(out, truth)
            small = fn(scores / 1e12, 7, 1e-6, 1.0, rng)
    assert small.shape == (7,) and np.unique(small).size == 7


def test_exact_distributions_extreme_eps():
    scores = np.array([3e12, 1e12, -1e12, 2.5e12, 0.0])
    for dist in (canonical_lipschitz_topk_distribution, gumbel_peeling_topk_distribution):
        subsets, lp = dist(scores, 2, 1e6, 1.0)
        assert np.all(np.isfinite(lp))
        best = int(np.argmax(lp))
        assert set(subsets[best]) == {0, 3} and lp[best] == pytest.approx(0.0, abs=1e-12)
        subsets, lp = dist(scores / 1e12, 2, 1e-6, 1.0)
        np.testing.assert_allclose(np.exp(lp), 1 / 10, rtol=1e-5)


def test_canonical_huge_classes_do_not_overflow():
    # C(t - h - 2, k - h - 1) far beyond 1e308 for d = 20000, k = 200
    rng = np.random.default_rng(1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = canonical_lipschitz_topk(rng.normal(size=20000), 200, 1e-6, 1.0, rng)
    assert out.shape == (200,) and np.unique(out).size == 200


def test_linear_time_d_1e5():
    rng = np.random.default_rng(2)
    scores = rng.normal(size=100_000)
    t = time.perf_counter()
    out = canonical_lipschitz_topk(scores, 10, 1.0, 1.0, rng)
    elapsed = time.perf_counter() - t
    assert out.shape == (10,)
    assert elapsed < 5.0
    scores[:10] += 1e4          # a clear top-10 is found at moderate eps
    out = canonical_lipschitz_topk(scores, 10, 1.0, 1.0, rng)
    np.testing.assert_array_equal(out, np.arange(10))


# ------------------------------------------------------------------- reproducibility
@pytest.mark.parametrize("fn", [canonical_lipschitz_topk, gumbel_peeling_topk, laplace_topk])
def test_seeded_and_no_global_rng(fn):
    scores = np.linspace(0, 1, 30)
    state = np.random.get_state()[1].copy()
    a = fn(scores, 5, 1.0, 1.0, np.random.default_rng(42))
    b = fn(scores, 5, 1.0, 1.0, np.random.default_rng(42))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(np.random.get_state()[1], state)
    assert scores[3] == 3 / 29          # input untouched


# ------------------------------------------------------------------------ bad inputs
@pytest.mark.parametrize("fn", [canonical_lipschitz_topk, gumbel_peeling_topk, laplace_topk])
def test_bad_inputs(fn):
    rng = np.random.default_rng(0)
    s = np.arange(5.0)
    with pytest.raises(ValueError, match="k"):
        fn(s, 0, 1.0, 1.0, rng)
    with pytest.raises(ValueError, match="k"):
        fn(s, 5, 1.0, 1.0, rng)
    with pytest.raises(TypeError, match="k"):
        fn(s, 2.0, 1.0, 1.0, rng)
    with pytest.raises(ValueError, match="eps"):
        fn(s, 2, 0.0, 1.0, rng)
    with pytest.raises(ValueError, match="eps"):
        fn(s, 2, float("nan"), 1.0, rng)
    with pytest.raises(ValueError, match="sensitivity"):
        fn(s, 2, 1.0, -1.0, rng)
    with pytest.raises(ValueError, match="scores"):
        fn(np.array([1.0, np.nan, 2.0]), 1, 1.0, 1.0, rng)
    with pytest.raises(ValueError, match="scores"):
        fn(np.array([1.0, np.inf, 2.0]), 1, 1.0, 1.0, rng)
    with pytest.raises(ValueError, match="scores"):
        fn(np.ones((2, 3)), 1, 1.0, 1.0, rng)
    with pytest.raises(TypeError, match="scores"):
        fn(["a", "b", "c"], 1, 1.0, 1.0, rng)
    with pytest.raises(TypeError, match="rng"):
        fn(s, 2, 1.0, 1.0, "not a generator")


def test_bad_gamma_and_too_many_subsets():
    with pytest.raises(ValueError, match="gamma"):
        canonical_lipschitz_topk(np.arange(4.0), 2, 1.0, 1.0, 0, gamma=1.5)
    with pytest.raises(TypeError, match="gamma"):
        canonical_lipschitz_topk_distribution(np.arange(4.0), 2, 1.0, 1.0, gamma="x")
    with pytest.raises(ValueError, match="MAX_EXACT_SUBSETS"):
        canonical_lipschitz_topk_distribution(np.arange(40.0), 20, 1.0, 1.0)


@pytest.mark.parametrize("gamma", [0.0, 0.5])
def test_canonical_release_does_not_depend_on_chunk_size(monkeypatch, gamma):
    """The classes are processed in chunks of whole rows: the noise stream, and so the
    release, are the same whatever the chunk size (it only bounds the workspace)."""
    import mipdp.mechanisms.topk as topk_mod
    scores = np.random.default_rng(3).normal(size=500) * 4
    outs = []
    for entries in (1 << 20, 1 << 15, 7 * 3, 1):
        monkeypatch.setattr(topk_mod, "_CHUNK_ENTRIES", entries)
        outs.append([topk_mod.canonical_lipschitz_topk(scores, 7, 2.0, 1.0,
                                                       np.random.default_rng(r), gamma=gamma)
                     for r in range(20)])
    for other in outs[1:]:
        for a, b in zip(outs[0], other, strict=True):
            np.testing.assert_array_equal(a, b)
