"""Permute-and-flip over all supports: the exact law, the exact sampler, its privacy."""

import math

import numpy as np
import pytest
from scipy.stats import chisquare, ks_2samp, kstest

from mipdp import private_bss, solvers
from mipdp.brute_force import all_supports
from mipdp.enumeration import SupportEnumerator
from mipdp.enumeration.envelope import build_envelope
from mipdp.exceptions import CertificationError, InvalidParameterError
from mipdp.guarantee import Neighbour
from mipdp.losses import LeastSquares
from mipdp.mechanisms import PermuteAndFlipSampler, permute_and_flip_log_law
from mipdp.mechanisms.permute_flip import pf_log_probability_bounds, truncated_exp_max

B = 0.5


# -- the law of report-noisy-max with exponential noise -----------------------------------
def test_truncated_maximum_has_its_law():
    rng = np.random.default_rng(0)
    m, t = 7, 1.5
    x = np.array([truncated_exp_max(rng, m, t) for _ in range(4000)])

    def cdf(y):
        return (-np.expm1(-np.clip(y, 0, t)) / -math.expm1(-t)) ** m

    assert np.all((x >= 0) & (x <= t))
    assert kstest(x, cdf).pvalue > 1e-3
    y = np.array([truncated_exp_max(rng, 10**15) for _ in range(2000)])  # no overflow
    assert kstest(y - math.log(1e15), "gumbel_r").pvalue > 1e-3


def test_next_order_statistics_match_sequential_draws():
    from mipdp.mechanisms.permute_flip import next_order_statistics
    rng = np.random.default_rng(5)
    m, x, k = 50, 3.0, 4
    vec = np.array([next_order_statistics(rng, m, x, k) for _ in range(3000)])
    seq = np.empty_like(vec)
    for i in range(seq.shape[0]):
        t = x
        for j in range(k):
            t = seq[i, j] = truncated_exp_max(rng, m - j, t)
    assert np.all(np.diff(vec, axis=1) <= 0) and np.all(vec < x)
    for j in range(k):
        assert ks_2samp(vec[:, j], seq[:, j]).pvalue > 1e-3


def test_explicit_law_two_candidates_closed_form():
    for d in (0.0, 0.3, 2.0, 30.0):
        lp = permute_and_flip_log_law(np.array([0.0, -d]))
        assert math.exp(lp[0]) == pytest.approx(1 - math.exp(-d) / 2, rel=1e-6)
        assert np.exp(lp).sum() == pytest.approx(1.0, abs=1e-6)


def test_explicit_law_matches_report_noisy_max_simulation():
    """10^6 draws of report-noisy-max with Exp(1) noise on an explicit score list."""
    rng = np.random.default_rng(1)
    q = np.r_[0.0, -0.2, -0.2, -1.0, -rng.exponential(2.0, size=8)]
    lp = permute_and_flip_log_law(q)
    assert np.exp(lp).sum() == pytest.approx(1.0, abs=1e-6)
    counts = np.zeros(q.size)
    for _ in range(4):
        counts += np.bincount(np.argmax(q + rng.exponential(size=(250_000, q.size)), axis=1),
                              minlength=q.size)
    assert chisquare(counts, np.exp(lp) * counts.sum() / np.exp(lp).sum()).pvalue > 1e-3
    lo, hi = pf_log_probability_bounds(q[3], np.delete(q, 3))
    assert lo <= lp[3] <= hi and hi - lo < 1e-5


def test_explicit_law_is_dp_for_both_neighbour_notions():
    """The worst cases of the proofs (docs/privacy.md): replace-one moves every score by at
    most ε/2 (either way); add/remove (monotone) moves every score down by [0, ε]."""
    rng = np.random.default_rng(2)
    eps = 1.0
    worst = {"replace_one": 0.0, "add_remove": 0.0}
    for _ in range(12):
        q = -rng.exponential(1.5, size=6)
        base = permute_and_flip_log_law(q)
        for i in range(q.size):  # push candidate i down and the others up, and back
            for sign in (1, -1):
                shift = np.full(q.size, sign * eps / 2)
                shift[i] = -sign * eps / 2
                lp = permute_and_flip_log_law(q + shift)
                worst["replace_one"] = max(worst["replace_one"], np.max(np.abs(lp - base)))
                mono = np.zeros(q.size) if sign > 0 else np.full(q.size, -eps)
                mono[i] = -eps if sign > 0 else 0.0
                lp = permute_and_flip_log_law(q + mono)
                worst["add_remove"] = max(worst["add_remove"], np.max(np.abs(lp - base)))
    for v in worst.values():
        assert v <= eps + 1e-6
        assert v > 0.6 * eps  # the audit has power


def test_never_worse_than_the_exponential_mechanism():
    """Permute-and-flip's expected score is at least the EM's (McKenna & Sheldon 2020)."""
    rng = np.random.default_rng(3)
    for _ in range(10):
        q = -rng.exponential(2.0, size=15)
        pf = np.exp(permute_and_flip_log_law(q))
        em = np.exp(q - np.logaddexp.reduce(q))
        assert pf @ q >= em @ q - 1e-9
        assert pf[np.argmax(q)] >= em[np.argmax(q)] - 1e-9


# -- the exact sampler over all supports ------------------------------------------------
def make_data(instance, seed, p, kind, n=60):
    return instance(seed, n=n, p=p, kind=kind)


_LAWS = {}


def law(obj, p, s, eps, scale):
    """Brute force: every support's objective, and permute-and-flip's law (cached)."""
    sup = all_supports(p, s)
    vals = obj.values(sup)
    key = (p, s, eps, scale, vals.tobytes())
    if key not in _LAWS:
        _LAWS[key] = permute_and_flip_log_law(-eps * (vals - vals.min()) / (2 * scale),
                                              grid=1500)
    return sup, vals, _LAWS[key]


def sampled_pvalue(draws, sup, logp):
    index = {tuple(r): i for i, r in enumerate(sup.tolist())}
    counts = np.bincount([index[tuple(r)] for r in draws.tolist()], minlength=len(sup))
    exp = np.exp(logp) * counts.sum()
    big = exp >= 5
    obs = np.r_[counts[big], counts[~big].sum()] if (~big).any() else counts
    ex = np.r_[exp[big], exp[~big].sum()] if (~big).any() else exp
    return chisquare(obs, ex * obs.sum() / ex.sum()).pvalue


def sampler_for(obj, p, s, eps, scale, backend, envelope, vals=None):
    enum = SupportEnumerator(obj, s, scale=scale, backend=backend, exhaustive_max=0,
                             explicit_max=0)
    env = build_envelope(enum, eps, scale, full_class_max=0)
    assert env.regions  # the test exercises the search over regions
    refine = None
    if envelope in ("loose", "refined"):
        for R in env.regions:
            R.bound = float(vals.min())  # valid, loose
    if envelope == "refined":
        refine = env.refine
    return PermuteAndFlipSampler(obj.values, env.singletons, env.values, env.regions, p, eps,
                                 scale, refine=refine, refine_after=4, split_cost=0.0)


def _instance_law(instance, p, s, eps, seed=1, kind="ill"):
    """A least-squares instance (ridge 5, radius 1.1), its scale and its brute-force
    permute-and-flip law: ``(obj, scale, supports, values, log_law)``."""
    X, y = make_data(instance, seed, p, kind)
    loss = LeastSquares(5.0, 1.1)
    obj = loss.bind(X, y)
    scale = loss.sensitivity(X.shape[0], s, B, B)
    return (obj, scale) + tuple(law(obj, p, s, eps, scale))


LAW_PARAMS = [pytest.param(b, e, id=f"{b}-{e}",
                           marks=[pytest.mark.slow] if b != "highs" and e != "tight" else [])
              for b in solvers.available_backends() for e in ("tight", "loose", "refined")]


@pytest.mark.parametrize("backend,envelope", LAW_PARAMS)
def test_sampled_law_is_permute_and_flip(instance, backend, envelope):
    """Chi-square of the draws against the brute-force permute-and-flip law, every backend,
    with the certified envelope, a deliberately loose one, and a loose one refined while
    sampling (the loose and refined envelopes of the other backends are marked slow: the
    backend only builds the singletons and the bounds that those envelopes replace)."""
    p, s, eps = 9, 3, 2.0
    obj, scale, sup, vals, logp = _instance_law(instance, p, s, eps)
    sampler = sampler_for(obj, p, s, eps, scale, backend, envelope, vals)
    draws = sampler.sample(np.random.default_rng(7), 2000)
    assert sampled_pvalue(draws, sup, logp) > 1e-3
    if envelope == "refined":
        assert sampler.n_refinements > 0
    # certified bounds contain the law; exact value at this size
    for i in np.argsort(logp)[-2:]:
        lo, hi = sampler.log_probability_bounds(sup[i])
        assert lo <= logp[i] + 1e-6 and hi >= logp[i] - 1e-6
        assert sampler.log_probability(sup[i]) == pytest.approx(logp[i], abs=1e-5)


def test_sampled_law_other_instance(instance):
    """A second instance (ties) with the tight envelope at a sharper ε."""
    p, s, eps = 10, 2, 6.0
    obj, scale, sup, vals, logp = _instance_law(instance, p, s, eps, seed=2, kind="ties")
    sampler = sampler_for(obj, p, s, eps, scale, "highs", "tight", vals)
    assert sampled_pvalue(sampler.sample(np.random.default_rng(3), 2000), sup, logp) > 1e-3


def test_invalid_envelope_is_detected(instance):
    X, y = make_data(instance, 0, 9, "well")
    loss = LeastSquares(5.0, 1.1)
    obj = loss.bind(X, y)
    scale = loss.sensitivity(X.shape[0], 2, B, B)
    enum = SupportEnumerator(obj, 2, scale=scale, exhaustive_max=0, explicit_max=0)
    env = build_envelope(enum, 1.0, scale, full_class_max=0)
    sup = all_supports(9, 2)
    vals = obj.values(sup)
    for R in env.regions:
        R.bound = float(np.median(vals[R.contains(sup)]))  # not a lower bound
    sampler = PermuteAndFlipSampler(obj.values, env.singletons, env.values, env.regions, 9,
                                    1.0, scale)
    with pytest.raises(CertificationError, match="invalid envelope"):
        sampler.sample(np.random.default_rng(0), 500)


def test_envelope_must_cover_every_support():
    with pytest.raises(ValueError, match="covers"):
        PermuteAndFlipSampler(lambda S: np.zeros(len(S)), np.array([[0, 1]]), np.zeros(1), [],
                              5, 1.0, 1.0)


def test_probability_needs_every_score_above_exact_max(instance):
    X, y = make_data(instance, 0, 12, "well")
    loss = LeastSquares(5.0, 1.1)
    obj = loss.bind(X, y)
    scale = loss.sensitivity(X.shape[0], 3, B, B)
    enum = SupportEnumerator(obj, 3, scale=scale, exhaustive_max=0, explicit_max=0)
    env = build_envelope(enum, 1.0, scale, full_class_max=0)
    sampler = PermuteAndFlipSampler(obj.values, env.singletons, env.values, env.regions, 12,
                                    1.0, scale)
    sampler.exact_max = 10
    with pytest.raises(ValueError, match="probability_bounds"):
        sampler.log_probability(env.singletons[0])
    lo, hi = sampler.probability_bounds(env.singletons[0])
    assert 0 < lo <= hi <= 1


# -- private_bss ------------------------------------------------------------------------
@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
def test_private_bss_permute_and_flip(instance, neighbours):
    """The release's law is the brute-force permute-and-flip law at the notion's scale:
    ``B/n`` (replace-one) or the monotone ``B/(2n)`` (add/remove)."""
    X, y = make_data(instance, 0, 8, "well")
    res = private_bss(X, y, 2, 1.0, bounds=(B, B), method="permute_and_flip", n_draws=3,
                      random_state=0, neighbours=neighbours, ridge=5.0, radius=1.1,
                      enumeration_options={"exhaustive_max": 0, "explicit_max": 0})
    loss = LeastSquares(5.0, 1.1)
    scale = loss.sensitivity(X.shape[0], 2, B, B) * (0.5 if neighbours == "add_remove" else 1)
    sup, _, logp = law(loss.bind(X, y), 8, 2, 1.0, scale)
    got = np.array([res.log_probability(S) for S in sup])
    np.testing.assert_allclose(got, logp, atol=1e-5)
    assert res.supports.shape == (3, 2)
    assert res.is_private and res.epsilon == pytest.approx(3.0)
    assert res.guarantee.neighbour is (Neighbour.ADD_REMOVE if neighbours == "add_remove"
                                       else Neighbour.REPLACE_ONE)
    assert "permute-and-flip" in str(res.guarantee)
    probs = np.exp([res.log_probability(S) for S in all_supports(8, 2)])
    assert probs.sum() == pytest.approx(1.0, abs=1e-5)
    assert "sampler" in res.stats


def test_exact_neighbour_audit_both_notions():
    from mipdp import audit
    for nb in ("replace_one", "add_remove"):
        rows = audit.audit_permute_and_flip(seeds=(0,), kinds=("near_tie",), n_random=1,
                                            n_corner=1, neighbours=nb)
        assert all(r["within_claim"] and r["pairs"] > 0 for r in rows), rows


def test_bad_input_raises_before_reading_data():
    with pytest.raises(InvalidParameterError, match="method"):
        private_bss(None, None, 2, 1.0, bounds=(B, B), method="permute_flip")
    with pytest.raises(InvalidParameterError, match="neighbours"):
        private_bss(None, None, 2, 1.0, bounds=(B, B), method="permute_and_flip",
                    neighbours="add-remove")


@pytest.mark.parametrize("first,largest", [(1, 1), (3, 7), (1024, 1024)])
def test_law_does_not_depend_on_the_evaluation_queue(instance, monkeypatch, first, largest):
    """Members are drawn ahead and evaluated in batches (a uniform random order of the
    unrevealed members, discarded at a split): the law is permute-and-flip's whatever the
    queue sizes, with refinements happening (chi-square against brute force)."""
    import mipdp.mechanisms.permute_flip as pf
    monkeypatch.setattr(pf, "_FIRST_QUEUE", first)
    monkeypatch.setattr(pf, "_MAX_QUEUE", largest)
    p, s, eps = 9, 3, 2.0
    obj, scale, sup, vals, logp = _instance_law(instance, p, s, eps)
    sampler = sampler_for(obj, p, s, eps, scale, "highs", "refined", vals)
    draws = sampler.sample(np.random.default_rng(11), 2000)
    assert sampled_pvalue(draws, sup, logp) > 1e-3
    assert sampler.n_refinements > 0


def test_batch_size_covers_the_expected_reveals():
    """The order-statistics batch is a little more than the expected number of noises above
    the threshold (at least 4, at most _MAX_BATCH)."""
    from mipdp.mechanisms.permute_flip import _MAX_BATCH, _batch_size
    assert _batch_size(0, 3.0, 1.0) == 0
    assert _batch_size(10**6, 5.0, -1.0) == _MAX_BATCH        # every noise is above
    assert _batch_size(100, 2.0, 3.0) == 4                    # none above (t > x)
    m, x, t = 1000, 6.0, 2.0
    expected = m * (math.exp(-t) - math.exp(-x)) / (1 - math.exp(-x))
    assert expected <= _batch_size(m, x, t) <= 1.25 * expected + 5


# -- the evaluation queue under adversarial control decisions -----------------------------
def _synthetic(p, s, seed, loose, holes=True):
    """An explicit objective table over all ``C(p, s)`` supports, the centre and a few holes
    as singletons, one region per mistake class (bound: the true minimum less ``loose``)."""
    from mipdp.mechanisms.regions import Region, region_members
    sup = all_supports(p, s)
    vals = np.random.default_rng(seed).exponential(size=len(sup))
    table = dict(zip(map(tuple, sup.tolist()), vals, strict=True))
    single, regions = [tuple(range(s))], []
    for k in range(1, min(s, p - s) + 1):
        R = Region(np.arange(s), k, p)
        mem = np.vstack(list(region_members(R)))
        if holes and mem.shape[0] >= 4:
            h = mem[::3][:2]
            R = R.without(h)
            single += list(map(tuple, h.tolist()))
        R.bound = min(table[tuple(r)] for r in np.vstack(list(region_members(R))).tolist()) - loose
        regions.append(R)
    single = np.array(single, dtype=np.intp)
    sv = np.array([table[tuple(r)] for r in single.tolist()])

    def refine(R, best):      # split on the first free feature (children keep the bound)
        fixed = set(R.fixed_in.tolist()) | set(R.fixed_out.tolist())
        return list(R.split(next(j for j in range(R.p) if j not in fixed)))

    q = -np.array([table[tuple(r)] for r in sup.tolist()])     # eps / (2 scale) = 1
    return table, single, sv, regions, refine, sup, permute_and_flip_log_law(q - q.max())


# (1, 1) and (3, 7): the smallest and a top-up queue; (2, 2) in the slow set
@pytest.mark.parametrize("first,largest", [(1, 1), pytest.param(2, 2, marks=pytest.mark.slow),
                                           (3, 7)])
def test_law_with_splits_at_random_pops(monkeypatch, first, largest):
    """Splits at random pops (a decision independent of the noises), so queues are
    discarded after partial consumption and after top-ups, in regions with holes and with
    a loose envelope: the law is permute-and-flip's (chi-square against brute force)."""
    import mipdp.mechanisms.permute_flip as pf
    monkeypatch.setattr(pf, "_FIRST_QUEUE", first)
    monkeypatch.setattr(pf, "_MAX_QUEUE", largest)
    table, single, sv, regions, refine, sup, logp = _synthetic(7, 3, 0, 1.5)

    def values(rows):
        return np.array([table[tuple(r)] for r in np.asarray(rows).tolist()])

    smp = PermuteAndFlipSampler(values, single, sv, list(regions), 7, 2.0, 1.0, refine=refine)
    coin = np.random.default_rng(99)
    smp._want_split = lambda st, best: st.region.size > 1 and coin.random() < 0.2
    rng = np.random.default_rng(1)
    draws = np.empty((4000, 3), dtype=np.intp)
    for i in range(draws.shape[0]):
        smp.regions = list(regions)          # split afresh in every draw
        draws[i] = smp.sample(rng, 1)[0]
    assert smp.n_refinements > 1000
    assert sampled_pvalue(draws, sup, logp) > 1e-3


def test_split_decision_ignores_the_time_of_queued_members(monkeypatch):
    """A queued member's identity is the order of the next noises: a split decision that
    depends on it (here through the time its evaluation took) biases the law, since the
    split re-randomises the holder of ``x``.  A virtual clock makes evaluating one support
    S* slow; with queue size 2, S* evaluated ahead of its reveal used to trigger a split
    and lose its noise to its twin T (same score): P(S*) 0.41, P(T) 0.44, law 0.425 each
    (19bbc61).  Batch times now count only once the batch is revealed."""
    import types

    from scipy.stats import binomtest

    import mipdp.mechanisms.permute_flip as pf
    from mipdp.mechanisms.regions import Region
    p, s, star, twin = 4, 2, (0, 2), (0, 3)
    q = {(0, 1): -1.0, (0, 2): 0.0, (0, 3): 0.0, (1, 2): -3.0, (1, 3): -8.0, (2, 3): -3.0}
    table = {k: -v for k, v in q.items()}
    R1 = Region(np.array([0, 1]), 1, p, bound=0.0).without(np.array([[1, 3]]))
    R2 = Region(np.array([0, 1]), 2, p, bound=0.0)                       # loose
    single = np.array([[0, 1], [1, 3]])
    clock = [0.0]

    def values(rows):
        rows = np.asarray(rows).tolist()
        clock[0] += 1e-6 * len(rows) + (1e6 if star in map(tuple, rows) else 0.0)
        return np.array([table[tuple(r)] for r in rows])

    def refine(R, best):
        fixed = set(R.fixed_in.tolist()) | set(R.fixed_out.tolist())
        return list(R.split(next(j for j in range(p) if j not in fixed)))

    monkeypatch.setattr(pf, "_FIRST_QUEUE", 2)
    monkeypatch.setattr(pf, "_MAX_QUEUE", 2)
    monkeypatch.setattr(pf, "time", types.SimpleNamespace(perf_counter=lambda: clock[0]))
    smp = PermuteAndFlipSampler(values, single, np.array([1.0, 8.0]), [R1, R2], p, 2.0, 1.0,
                                refine=refine, refine_after=0, split_cost=1.0)
    rng = np.random.default_rng(1)
    draws = np.empty((20000, s), dtype=np.intp)
    for i in range(draws.shape[0]):
        smp.regions = [R1, R2]
        draws[i] = smp.sample(rng, 1)[0]
    sup = np.array(sorted(q))
    logp = permute_and_flip_log_law(np.array([q[tuple(r)] for r in sup.tolist()]))
    assert sampled_pvalue(draws, sup, logp) > 1e-3
    rows = list(map(tuple, draws.tolist()))
    n_star, n_twin = rows.count(star), rows.count(twin)
    assert binomtest(n_star, n_star + n_twin).pvalue > 1e-3


@pytest.mark.parametrize("m,x,k", [(10, 3.0, 5), (10**9, 25.0, 16), (5, 1e-3, 4),
                                   (100, math.inf, 10), (7, 0.0, 3)])
def test_scalar_order_statistics_equal_the_vectorised_ones(monkeypatch, m, x, k):
    """Small batches of order statistics are computed in scalar arithmetic: the same values
    as the vectorised path from the same generator state."""
    import mipdp.mechanisms.permute_flip as pf
    scalar = pf.next_order_statistics(np.random.default_rng(5), m, x, k)
    monkeypatch.setattr(pf, "_SCALAR_K", 0)
    vector = pf.next_order_statistics(np.random.default_rng(5), m, x, k)
    np.testing.assert_array_equal(scalar, vector)
    assert np.all(np.diff(scalar) <= 0) and np.all((scalar >= 0) & (scalar <= x))


# -- thinning over linear envelopes -------------------------------------------------------
class _Cuts:
    """A cut store of explicit cuts ``L(T) >= a_t + Σ_{i∈T} G[t, i]`` (no rounding)."""

    def __init__(self, a, G):
        self.a, self.G = np.asarray(a, dtype=float), np.asarray(G, dtype=float)

    def __len__(self):
        return self.a.size

    @property
    def arrays(self):
        return self.a, self.G

    def slack(self):
        return 0.0

    def combination_slack(self):
        return 0.0


def _additive(p, s, seed, loose):
    """Objective ``L(T) = Σ_{i∈T} w_i + noise_T`` (noise >= 0), so ``(0, w)`` is a valid cut;
    the centre, holes and mistake classes as in :func:`_synthetic`."""
    from mipdp.mechanisms.regions import Region, region_members
    rng = np.random.default_rng(seed)
    sup = all_supports(p, s)
    w = rng.uniform(0.0, 1.2, size=p)
    w[:s] = 0.0
    vals = w[sup].sum(axis=1) + rng.exponential(0.4, size=len(sup))
    table = dict(zip(map(tuple, sup.tolist()), vals, strict=True))
    single, regions = [tuple(range(s))], []
    for k in range(1, min(s, p - s) + 1):
        R = Region(np.arange(s), k, p)
        mem = np.vstack(list(region_members(R)))
        if mem.shape[0] >= 4:
            h = mem[::3][:2]
            R = R.without(h)
            single += list(map(tuple, h.tolist()))
        R.bound = min(table[tuple(r)] for r in np.vstack(list(region_members(R))).tolist()) - loose
        regions.append(R)
    single = np.array(single, dtype=np.intp)
    sv = np.array([table[tuple(r)] for r in single.tolist()])
    cuts = _Cuts([0.0, -0.5], np.vstack([w, 0.7 * w]))

    def values(rows):
        return np.array([table[tuple(r)] for r in np.asarray(rows).tolist()])

    q = -vals
    return values, single, sv, regions, cuts, sup, permute_and_flip_log_law(q - q.max())


@pytest.mark.parametrize("loose,force", [(0.0, False), (0.0, True), (2.0, True)])
def test_thinning_law_is_permute_and_flip(monkeypatch, loose, force):
    """Regions searched by thinning a Poisson process over their linear envelopes (every
    region where it applies with ``force``; by expected cost otherwise), with holes, tight
    and loose constant bounds: chi-square of the draws against brute force."""
    import mipdp.mechanisms.permute_flip as pf
    values, single, sv, regions, cuts, sup, logp = _additive(8, 3, 4, loose)
    smp = PermuteAndFlipSampler(values, single, sv, list(regions), 8, 2.0, 1.0, cuts=cuts)
    if force:
        monkeypatch.setattr(pf.PermuteAndFlipSampler, "_search_cost",
                            lambda self, R, thr: math.inf)
    draws = smp.sample(np.random.default_rng(11), 4000)
    assert smp.n_thinned > 100
    assert sampled_pvalue(draws, sup, logp) > 1e-3


def test_thinning_intervals_near_the_cap(monkeypatch):
    """A running best just above a region's cap needs several pieces (the dominating rate
    factor ``1/(1 - H t)``): the law stays permute-and-flip's."""
    import mipdp.mechanisms.permute_flip as pf
    monkeypatch.setattr(pf, "_THIN_MARGIN", 1e-6)
    monkeypatch.setattr(pf.PermuteAndFlipSampler, "_search_cost", lambda self, R, thr: math.inf)
    seen = []
    orig = pf.PermuteAndFlipSampler._intervals
    monkeypatch.setattr(pf.PermuteAndFlipSampler, "_intervals",
                        staticmethod(lambda s_end: seen.append(len(orig(s_end))) or orig(s_end)))
    values, single, sv, regions, cuts, sup, logp = _additive(7, 3, 6, 0.0)
    smp = PermuteAndFlipSampler(values, single, sv, list(regions), 7, 4.0, 2.0, cuts=cuts)
    draws = smp.sample(np.random.default_rng(2), 4000)
    assert max(seen) >= 3
    assert sampled_pvalue(draws, sup, logp) > 1e-3


def test_sampled_law_with_the_enumerations_cuts(instance):
    """The real envelope and cut store (what private_bss passes): the law is exact."""
    p, s, eps = 9, 3, 2.0
    obj, scale, sup, vals, logp = _instance_law(instance, p, s, eps)
    enum = SupportEnumerator(obj, s, scale=scale, exhaustive_max=0, explicit_max=0)
    env = build_envelope(enum, eps, scale, full_class_max=0)
    smp = PermuteAndFlipSampler(obj.values, env.singletons, env.values, env.regions, p, eps,
                                scale, refine=env.refine, cuts=env.cuts)
    draws = smp.sample(np.random.default_rng(8), 2000)
    assert sampled_pvalue(draws, sup, logp) > 1e-3
