"""Linear envelopes (mipdp/mechanisms/linear_envelope.py): exact fixed-size weighted subsets,
exact envelope masses, and the exponential mechanism's law unchanged when regions sample
from their best cut (chi-square against brute force, also with holes and refinement)."""

import itertools
import math

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import chisquare

from mipdp.brute_force import all_supports
from mipdp.enumeration import SupportEnumerator
from mipdp.enumeration.cuts import CutStore
from mipdp.enumeration.envelope import build_envelope
from mipdp.exceptions import CertificationError
from mipdp.losses import LeastSquares
from mipdp.mechanisms import ExponentialMechanismSampler
from mipdp.mechanisms.linear_envelope import LinearEnvelope, WeightedSubsets, best_linear_envelope
from mipdp.mechanisms.regions import Region, region_members

B = 0.5


def _pvalue(counts, prob):
    """Chi-square p-value of ``counts`` against probabilities ``prob`` (cells expecting
    fewer than 5 draws pooled)."""
    expected = prob / prob.sum() * counts.sum()
    big = expected >= 5
    obs = np.r_[counts[big], counts[~big].sum()]
    ex = np.r_[expected[big], expected[~big].sum()]
    if ex[-1] == 0:
        assert obs[-1] == 0
        obs, ex = obs[:-1], ex[:-1]
    return chisquare(obs, ex).pvalue


# -- weighted subsets ---------------------------------------------------------------------------

@pytest.mark.parametrize("q", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("spread", [0.0, 1.0, 8.0])
def test_weighted_subsets_law_and_normaliser(q, spread):
    """Chi-square of 40 000 draws against ``Π w_i`` over all q-subsets; the log normaliser
    is the brute-force one (also with one item of weight zero and very unequal weights)."""
    m = 8
    rng = np.random.default_rng(int(10 * spread) + q)
    log_w = spread * rng.normal(size=m)
    log_w[3] = -np.inf
    subsets = list(itertools.combinations(range(m), q))
    logp = np.array([log_w[list(c)].sum() for c in subsets])
    ws = WeightedSubsets(log_w, q)
    assert ws.log_norm == pytest.approx(float(logsumexp(logp)), rel=1e-12, abs=1e-12)
    draws = ws.sample(np.random.default_rng(1), 40_000)
    assert draws.shape == (40_000, q)
    if q == 0:
        return
    assert np.all(np.diff(draws, axis=1) > 0) and not np.any(draws == 3)
    index = {c: i for i, c in enumerate(subsets)}
    counts = np.bincount([index[tuple(r)] for r in draws.tolist()], minlength=len(subsets))
    assert _pvalue(counts, np.exp(logp - logsumexp(logp))) > 1e-3


def test_weighted_subsets_too_few_items():
    ws = WeightedSubsets(np.array([0.0, -np.inf, 1.0]), 3)
    assert ws.log_norm == -math.inf
    with pytest.raises(ValueError, match="positive weight"):
        ws.sample(np.random.default_rng(0), 1)


# -- one region ------------------------------------------------------------------------------

def _region_cases():
    c = np.array([1, 4, 6])
    return [Region(c, 1, 10), Region(c, 2, 10, fixed_in=np.array([0]), fixed_out=np.array([4])),
            Region(c, 3, 10, fixed_out=np.array([2, 9])), Region(c, 2, 10, fixed_in=np.array([6]))]


@pytest.mark.parametrize("case", range(4))
def test_linear_envelope_mass_and_law(case):
    R = _region_cases()[case]
    rng = np.random.default_rng(case)
    g = rng.normal(size=10)
    coef, ref, a = 1.7, -0.3, 0.25
    lin = LinearEnvelope(R, a, g, coef, ref)
    members = np.vstack(list(region_members(R)))
    logh = -coef * (lin.bounds(members) - ref)
    assert lin.log_mass == pytest.approx(float(logsumexp(logh)), rel=1e-12)
    np.testing.assert_allclose(lin.bounds(members), a + g[members].sum(axis=1))
    draws = lin.sample(np.random.default_rng(7), 30_000)
    assert R.contains(draws).all()
    index = {tuple(r): i for i, r in enumerate(members.tolist())}
    counts = np.bincount([index[tuple(r)] for r in draws.tolist()], minlength=len(members))
    assert _pvalue(counts, np.exp(logh - logsumexp(logh))) > 1e-3


def test_best_linear_envelope_takes_the_least_mass():
    R = _region_cases()[0]
    rng = np.random.default_rng(3)
    a, G = rng.normal(size=6), rng.normal(size=(6, 10))
    best = best_linear_envelope(R, a, G, 0.0, 2.0, 0.0, exact=6)
    masses = [LinearEnvelope(R, a[t], G[t], 2.0, 0.0).log_mass for t in range(6)]
    assert best.log_mass == pytest.approx(min(masses))
    assert best_linear_envelope(R, a[:0], G[:0], 0.0, 2.0, 0.0) is None


# -- the exponential mechanism with linear envelopes ------------------------------------------

def _problem(instance, seed, p, kind, n=80):
    X, y = instance(seed, n=n, p=p, kind=kind)
    loss = LeastSquares(5.0, 1.1)
    obj = loss.bind(X, y)
    return obj, loss.sensitivity(n, 3, B, B)


def _law(obj, p, s, eps, scale):
    sup = all_supports(p, s)
    vals = obj.values(sup)
    lw = -eps * (vals - vals.min()) / (2 * scale)
    return sup, vals, lw - logsumexp(lw)


@pytest.mark.parametrize("seed,p,kind,eps", [(0, 11, "well", 1.0), (1, 12, "ill", 3.0),
                                             (2, 12, "ties", 1.0), (3, 13, "well", 6.0)])
def test_sampled_law_with_linear_envelopes(instance, seed, p, kind, eps):
    """Chi-square of 20 000 draws against the brute-force exponential mechanism when the
    regions sample from their cuts; the sampler refines while sampling; probability bounds
    bracket the exact law.  (Regions with holes: test_envelope_split.py.)"""
    s = 3
    obj, scale = _problem(instance, seed, p, kind)
    sup, vals, logp = _law(obj, p, s, eps, scale)
    enum = SupportEnumerator(obj, s, scale=scale, exhaustive_max=0, explicit_max=0)
    env = build_envelope(enum, eps, scale, full_class_max=0)
    sampler = ExponentialMechanismSampler(obj.values, env.singletons, env.values, env.regions,
                                          p, eps, scale, refine=env.refine, cuts=env.cuts)
    kinds = [r["envelope"] for r in sampler.stats()["regions"]]
    assert "linear" in kinds
    draws = sampler.sample(np.random.default_rng(seed), 20_000)
    index = {tuple(r): i for i, r in enumerate(sup.tolist())}
    counts = np.bincount([index[tuple(r)] for r in draws.tolist()], minlength=len(sup))
    assert _pvalue(counts, np.exp(logp)) > 1e-3
    for i in list(np.argsort(logp)[-3:]) + [int(np.argmin(logp))]:
        lo, hi = sampler.log_probability_bounds(sup[i])
        assert lo <= logp[i] + 1e-9 and hi >= logp[i] - 1e-9


def test_linear_envelopes_save_proposals(instance):
    """The same envelope with and without cuts: the linear envelopes' mass is smaller, and so
    is the bound on the expected number of proposals."""
    obj, scale = _problem(instance, 4, 13, "well", n=200)
    enum = SupportEnumerator(obj, 3, scale=scale, exhaustive_max=0, explicit_max=0)
    env = build_envelope(enum, 8.0, scale, full_class_max=0)
    args = (obj.values, env.singletons, env.values, env.regions, 13, 8.0, scale)
    with_cuts = ExponentialMechanismSampler(*args, cuts=env.cuts)
    without = ExponentialMechanismSampler(*args)
    assert with_cuts.log_envelope_mass() < without.log_envelope_mass()


def test_an_invalid_cut_is_caught(instance):
    """A 'cut' above half the true values makes proposals fall below their envelope bound:
    the sampler raises and releases nothing."""
    obj, scale = _problem(instance, 0, 10, "well")
    sup, vals, _ = _law(obj, 10, 3, 1.0, scale)
    enum = SupportEnumerator(obj, 3, scale=scale, exhaustive_max=0, explicit_max=0)
    env = build_envelope(enum, 1.0, scale, full_class_max=0)
    bad = CutStore(10, 3)
    bad.add(sup[0], float(np.median(vals)), np.zeros(10))   # above half the supports
    sampler = ExponentialMechanismSampler(obj.values, env.singletons, env.values, env.regions,
                                          10, 1.0, scale, cuts=bad)
    if all(r["envelope"] == "constant" for r in sampler.stats()["regions"]):
        pytest.skip("the bad cut's envelope was not smaller")   # pragma: no cover
    with pytest.raises(CertificationError, match="invalid envelope"):
        sampler.sample(np.random.default_rng(0), 2000)


def test_private_bss_option_turns_linear_envelopes_off():
    """``enumeration_options={"linear_envelopes": False}`` gives constant envelopes only;
    by default regions of a correlated design sample from their cuts (fewer proposals)."""
    import warnings

    from mipdp import private_bss
    from mipdp.datasets import make_bss_regression
    X, y, _ = make_bss_regression(n=500, p=60, s=5, rho=0.7, random_state=1)
    stats = {}
    for opt in ({}, {"linear_envelopes": False}):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = private_bss(X, y, 5, 1.0, bounds=(0.5, 0.5), n_draws=5, random_state=0,
                              enumeration_options=opt)
        stats[bool(opt)] = res.stats["sampler"]
    assert {r["envelope"] for r in stats[True]["regions"]} == {"constant"}
    assert "linear" in {r["envelope"] for r in stats[False]["regions"]}
    assert stats[False]["n_proposals"] < stats[True]["n_proposals"]


@pytest.mark.parametrize("q", [1, 2, 4])
def test_inclusion_probabilities_by_brute_force(q):
    m = 9
    log_w = 3.0 * np.random.default_rng(q).normal(size=m)
    subsets = list(itertools.combinations(range(m), q))
    logp = np.array([log_w[list(c)].sum() for c in subsets])
    p = np.exp(logp - logsumexp(logp))
    want = np.array([sum(pk for c, pk in zip(subsets, p, strict=True) if i in c) for i in range(m)])
    np.testing.assert_allclose(WeightedSubsets(log_w, q).inclusion(), want, rtol=1e-10,
                               atol=1e-14)
    R = _region_cases()[1]
    lin = LinearEnvelope(R, 0.0, np.random.default_rng(q).normal(size=10), 1.3, 0.0)
    members = np.vstack(list(region_members(R)))
    lh = -1.3 * lin.bounds(members)
    pm = np.exp(lh - logsumexp(lh))
    want = np.array([pm[(members == i).any(axis=1)].sum() for i in range(10)])
    np.testing.assert_allclose(lin.inclusion(), want, rtol=1e-10, atol=1e-14)


def test_combined_cuts_lower_the_mass_and_stay_below_the_cuts():
    """Frank-Wolfe over convex combinations of the cuts: the combined envelope has at most
    the best single cut's mass (strictly less on some of these random cut sets), and its
    bound is at most the max of the cuts on every member — a convex combination of valid
    bounds."""
    gains = []
    for seed in range(8):
        R = _region_cases()[seed % 4]
        rng = np.random.default_rng(seed)
        a, G = rng.normal(size=8), rng.normal(size=(8, 10))
        single = best_linear_envelope(R, a, G, 0.0, 2.0, 0.0, exact=8)
        combined = best_linear_envelope(R, a, G, 0.0, 2.0, 0.0, exact=8,
                                        combination_slack=1e-12)
        assert combined.log_mass <= single.log_mass + 1e-12
        gains.append(single.log_mass - combined.log_mass)
        members = np.vstack(list(region_members(R)))
        cut_max = np.max(a[:, None] + G[:, members].sum(axis=2), axis=0)
        assert np.all(combined.bounds(members) <= cut_max + 1e-9)
    assert max(gains) > 1e-3


# -- numerical range (review) ------------------------------------------------------------------

@pytest.mark.parametrize("log_w,q", [([1000.0, 0.0, 0.0, 0.0], 2), ([0.0, -800.0, -800.0], 2),
                                     ([0.0, -400.0, -400.0, -400.0, 3.0], 3),
                                     ([5.0, -np.inf, -900.0, 0.0, -300.0], 2)])
def test_weighted_subsets_very_unequal_weights(log_w, q):
    """Weights spread over more than the floating-point range: every product used to be
    scaled by the largest weight alone, so a mass carried by products with small weights
    underflowed to zero (``log_norm = -inf``, nothing sampled) — e.g. ``(1000, 0, 0, 0)``,
    ``q = 2``, whose normaliser is ``e^1000 · 3``.  Normaliser and law against brute force."""
    log_w = np.asarray(log_w)
    subsets = list(itertools.combinations(range(log_w.size), q))
    logp = np.array([log_w[list(c)].sum() for c in subsets])
    ws = WeightedSubsets(log_w, q)
    assert ws.log_norm == pytest.approx(float(logsumexp(logp)), rel=1e-12)
    draws = ws.sample(np.random.default_rng(0), 20_000)
    assert np.all(np.diff(draws, axis=1) > 0)
    index = {c: i for i, c in enumerate(subsets)}
    counts = np.bincount([index[tuple(r)] for r in draws.tolist()], minlength=len(subsets))
    assert _pvalue(counts, np.exp(logp - logsumexp(logp))) > 1e-3


def test_weighted_subsets_many_equal_weights_do_not_overflow():
    """``e_q`` of 5000 unit weights, ``q = 300``, is ``C(5000, 300) ≈ e^1131``: it used to
    overflow to ``inf``.  Draws are uniform: each item is in a draw with probability q/m."""
    m, q = 5000, 300
    ws = WeightedSubsets(np.zeros(m), q)
    exact = math.lgamma(m + 1) - math.lgamma(q + 1) - math.lgamma(m - q + 1)
    assert ws.log_norm == pytest.approx(exact, rel=1e-12)
    draws = ws.sample(np.random.default_rng(0), 200)
    assert np.all(np.diff(draws, axis=1) > 0) and draws.max() < m
    freq = np.bincount(draws.ravel(), minlength=m) / 200
    assert abs(freq.mean() - q / m) < 1e-12 and freq.max() < 0.3


def test_em_law_with_a_steep_exact_cut():
    """An additive score ``L(T) = Σ_{i∈T} c_i`` and its own (exact, valid) cut, with one
    slope ``e^1000`` times the others: the class-1 region's linear envelope used to get mass
    ``0`` (underflow), was preferred to the constant one, and its members — each with
    probability 1/10 — were never drawn.  Chi-square against the exact law."""
    p, s = 6, 3
    c = np.array([-1000.0, 0.0, 0.0, 0.0, 0.0, 0.0])

    def values(rows):
        return c[np.asarray(rows, dtype=np.intp)].sum(axis=1)

    center = np.array([0, 1, 2])
    regions = []
    for k in range(1, s + 1):
        R = Region(center, k, p)
        R.bound = min(float(values(rows).min()) for rows in region_members(R))
        regions.append(R)
    cuts = CutStore(p, s)
    cuts.add(center, float(values(center[None])[0]), c)
    sampler = ExponentialMechanismSampler(values, center[None], values(center[None]), regions,
                                          p, 2.0, 1.0, cuts=cuts)   # coef = 1
    logZ = sampler._region_logZ()
    assert np.all(np.isfinite(logZ))
    sup = all_supports(p, s)
    lw = -values(sup)
    logp = lw - logsumexp(lw)
    draws = sampler.sample(np.random.default_rng(1), 5000)
    index = {tuple(r): i for i, r in enumerate(sup.tolist())}
    counts = np.bincount([index[tuple(r)] for r in draws.tolist()], minlength=len(sup))
    assert _pvalue(counts, np.exp(logp)) > 1e-3


def test_linear_envelopes_respect_the_memory_cap(instance, monkeypatch):
    """Past ``_LINEAR_MAX_BYTES`` no linear envelope is built (their size is known before)."""
    import mipdp.mechanisms.em_rejection as em
    obj, scale = _problem(instance, 4, 13, "well", n=200)
    enum = SupportEnumerator(obj, 3, scale=scale, exhaustive_max=0, explicit_max=0)
    env = build_envelope(enum, 8.0, scale, full_class_max=0)
    monkeypatch.setattr(em, "_LINEAR_MAX_BYTES", 64)
    sampler = ExponentialMechanismSampler(obj.values, env.singletons, env.values, env.regions,
                                          13, 8.0, scale, cuts=env.cuts)
    assert all(r["envelope"] == "constant" for r in sampler.stats()["regions"])
    assert sampler._linear_bytes == 0


def test_inclusion_probabilities_in_log_scale():
    """Weights spanning more than the floating-point range (the log-scale recurrence): the
    inclusion probabilities still match brute force computed in log space."""
    log_w = np.array([0.0, -800.0, -800.0, -700.0, 3.0, -1.0])
    q = 3
    ws = WeightedSubsets(log_w, q)
    assert ws._log
    subsets = list(itertools.combinations(range(log_w.size), q))
    logp = np.array([log_w[list(c)].sum() for c in subsets])
    logp -= logsumexp(logp)
    want = np.array([np.exp(logsumexp([lp for c, lp in zip(subsets, logp, strict=True) if i in c]))
                     for i in range(log_w.size)])
    np.testing.assert_allclose(ws.inclusion(), want, rtol=1e-9, atol=1e-300)


def test_em_law_large_n_least_squares():
    """A plain Gaussian design, n = 20 000, p = 7, s = 5, ridge 1e-6, ε = 5: the only
    region (10 supports, 16% of the law) got a linear envelope of mass 0 (its slopes span
    more than e^745) and was never proposed.  Its mass is the brute-force one and the
    draws follow the exact law."""
    n, p, s, eps = 20_000, 7, 5, 5.0
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, p))
    y = 0.4 * X[:, :3] @ np.array([1.0, -1.0, 0.5]) + 0.3 * rng.normal(size=n)
    X, y = np.clip(0.4 * X, -B, B), np.clip(y, -B, B)
    loss = LeastSquares(1e-6, 0.5)
    obj = loss.bind(X, y)
    scale = loss.sensitivity(n, s, B, B)
    sup, vals, logp = _law(obj, p, s, eps, scale)
    enum = SupportEnumerator(obj, s, scale=scale, exhaustive_max=0, explicit_max=0)
    env = build_envelope(enum, eps, scale, full_class_max=0)
    sampler = ExponentialMechanismSampler(obj.values, env.singletons, env.values, env.regions,
                                          p, eps, scale, cuts=env.cuts)
    index = {tuple(r): i for i, r in enumerate(sup.tolist())}
    for R, lin in zip(sampler.regions, sampler._linear, strict=True):
        if lin is not None:
            mem = np.vstack(list(region_members(R)))
            exact = float(logsumexp(-sampler.coef * (lin.bounds(mem) - sampler.ref)))
            assert lin.log_mass == pytest.approx(exact, rel=1e-9, abs=1e-9)
            L = vals[[index[tuple(r)] for r in mem.tolist()]]
            assert np.all(lin.bounds(mem) <= L + 1e-12)
    draws = sampler.sample(np.random.default_rng(2), 5000)
    counts = np.bincount([index[tuple(r)] for r in draws.tolist()], minlength=len(sup))
    assert _pvalue(counts, np.exp(logp)) > 1e-3
