"""The exact exponential-mechanism sampler: valid envelopes, exact law, refinement."""

import math

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import chisquare

from mipdp.brute_force import all_supports
from mipdp.enumeration import SupportEnumerator
from mipdp.enumeration.envelope import build_envelope
from mipdp.exceptions import CertificationError
from mipdp.losses import Hinge, Huber, LeastSquares
from mipdp.mechanisms import ExponentialMechanismSampler
from mipdp.mechanisms.regions import Region

B = 0.5
KINDS = ["well", "ill", "ties", "flat"]
# (seed, p, s, kind): 20 small instances, p <= 14, s <= 4
CASES = [(seed, p, s, KINDS[seed % 4])
         for seed, (p, s) in enumerate([(8, 2), (9, 3), (10, 4), (12, 3), (14, 2), (11, 4), (13, 3),
                                        (14, 4), (10, 3), (12, 2), (9, 4), (11, 3), (13, 2),
                                        (14, 3), (8, 3), (12, 4), (10, 2), (13, 4), (11, 2),
                                        (9, 2)])]


def make_data(instance, seed, p, kind, n=60, labels=False):
    if kind == "flat":  # pure noise: no best subset stands out
        rng = np.random.default_rng(seed)
        X = np.clip(0.4 * rng.normal(size=(n, p)), -B, B)
        y = np.clip(0.5 * rng.normal(size=n), -B, B)
    else:
        X, y = instance(seed, n=n, p=p, kind=kind)
    if labels:
        y = np.where(y + 0.05 * np.sin(np.arange(n)) >= 0, 1.0, -1.0)
    return X, y


def loss_of(name):
    return {"least_squares": LeastSquares(5.0, 1.1), "hinge": Hinge(2.0, 1.5),
            "huber": Huber(5.0, 1.1, huber_delta=0.3)}[name]


def exact_law(obj, p, s, eps, scale):
    sup = all_supports(p, s)
    vals = obj.values(sup)
    lw = -eps * (vals - vals.min()) / (2 * scale)
    return sup, vals, lw - logsumexp(lw)


def envelope(obj, s, scale, eps, backend, full_class_max=0):
    """The envelope by outer approximation (regions, not small classes evaluated in full;
    region searches by master solves, not the explicit search)."""
    enum = SupportEnumerator(obj, s, scale=scale, backend=backend, exhaustive_max=0,
                             explicit_max=0)
    return enum, build_envelope(enum, eps, scale, full_class_max=full_class_max)


def check_valid(env, sup, vals, refine_rounds=2):
    """Every region's bound is at most the brute-force minimum over the region (and the
    regions plus singletons partition all supports); also after refining every region."""
    singles = {tuple(r) for r in env.singletons.tolist()}
    index = {tuple(r): i for i, r in enumerate(sup.tolist())}
    np.testing.assert_allclose(env.values, vals[[index[tuple(r)] for r in env.singletons.tolist()]],
                               rtol=1e-12, atol=1e-14)
    regions = list(env.regions)
    for _ in range(refine_rounds):
        regions = [c for R in regions for c in (env.refine(R, None) if R.size > 1 else [R])]
    covered = np.zeros(len(sup), dtype=int)
    covered[[index[S] for S in singles]] += 1
    for R in regions:
        mine = R.contains(sup)
        covered[mine] += 1
        assert mine.sum() == R.size
        if R.size:
            assert R.bound <= vals[mine].min() + 1e-12 * max(1.0, abs(vals[mine].min()))
    assert np.all(covered == 1)


@pytest.mark.parametrize("loss_name", ["least_squares", "hinge", "huber"])
@pytest.mark.parametrize("case", CASES, ids=[f"{c[3]}-p{c[1]}-s{c[2]}-{c[0]}" for c in CASES])
def test_envelope_valid(instance, case, loss_name, backend):
    """20 instances x every loss x every installed backend: every region's certified bound
    (also after refining) is at most the brute-force minimum over the region."""
    seed, p, s, kind = case
    X, y = make_data(instance, seed, p, kind, labels=loss_name == "hinge")
    loss = loss_of(loss_name)
    obj = loss.bind(X, y)
    scale = loss.sensitivity(X.shape[0], s, B, B)
    eps = 1.0 + seed % 3
    sup, vals, _ = exact_law(obj, p, s, eps, scale)
    enum, env = envelope(obj, s, scale, eps, backend)
    check_valid(env, sup, vals, refine_rounds=2 if backend == "highs" else 1)


def sampled_pvalue(draws, sup, logp):
    index = {tuple(r): i for i, r in enumerate(sup.tolist())}
    counts = np.bincount([index[tuple(r)] for r in draws.tolist()], minlength=len(sup))
    exp = np.exp(logp) * counts.sum()
    big = exp >= 5  # pool the small cells
    obs = np.r_[counts[big], counts[~big].sum()] if (~big).any() else counts
    ex = np.r_[exp[big], exp[~big].sum()] if (~big).any() else exp
    return chisquare(obs, ex).pvalue


LAW_CASES = [(0, 10, 3, "well", 1.0), (1, 12, 3, "ill", 2.0), (2, 12, 4, "ties", 1.0),
             (3, 14, 3, "flat", 1.0), (5, 11, 2, "well", 6.0)]


@pytest.mark.parametrize("loose", [False, True], ids=["envelope", "loose"])
@pytest.mark.parametrize("case", LAW_CASES,
                         ids=[f"{c[3]}-p{c[1]}-s{c[2]}-eps{c[4]:g}" for c in LAW_CASES])
def test_sampled_law_is_the_exponential_mechanism(instance, case, loose):
    """Chi-square of 20 000 draws against the brute-force exponential mechanism; a
    deliberately loose envelope (every bound = the global minimum) gives the same law."""
    seed, p, s, kind, eps = case
    X, y = make_data(instance, seed, p, kind)
    loss = loss_of("least_squares")
    obj = loss.bind(X, y)
    scale = loss.sensitivity(X.shape[0], s, B, B)
    sup, vals, logp = exact_law(obj, p, s, eps, scale)
    enum, env = envelope(obj, s, scale, eps, "highs")
    if loose:
        for R in env.regions:
            R.bound = float(vals.min())
    sampler = ExponentialMechanismSampler(obj.values, env.singletons, env.values, env.regions, p,
                                          eps, scale, refine=None)
    draws = sampler.sample(np.random.default_rng(seed), 20_000)
    assert sampled_pvalue(draws, sup, logp) > 1e-3
    # exact probability (every support evaluated at this size) and certified bounds
    for i in np.argsort(logp)[-3:]:
        assert sampler.log_probability(sup[i]) == pytest.approx(logp[i], abs=1e-9)
        lo, hi = sampler.log_probability_bounds(sup[i])
        assert lo <= logp[i] + 1e-9 and hi >= logp[i] - 1e-9


def test_refinement_keeps_the_law(instance):
    """Loose regions at a sharp ε waste proposals, so the sampler splits them while
    sampling; the law stays the exponential mechanism's."""
    X, y = make_data(instance, 4, 13, "well", n=200)
    loss = loss_of("least_squares")
    obj = loss.bind(X, y)
    s, eps = 3, 8.0
    scale = loss.sensitivity(X.shape[0], s, B, B)
    sup, vals, logp = exact_law(obj, 13, s, eps, scale)
    enum, env = envelope(obj, s, scale, eps, "highs")
    for R in env.regions:
        R.bound = float(vals.min())
    sampler = ExponentialMechanismSampler(obj.values, env.singletons, env.values, env.regions,
                                          13, eps, scale, refine=env.refine)
    draws = sampler.sample(np.random.default_rng(0), 20_000)
    assert sampler.n_refinements > 0
    assert sampled_pvalue(draws, sup, logp) > 1e-3
    stats = sampler.stats()
    assert stats["n_accepted"] >= 20_000 and len(stats["regions"]) > len(env.regions) - 1


def test_invalid_envelope_is_detected(instance):
    X, y = make_data(instance, 0, 9, "well")
    loss = loss_of("least_squares")
    obj = loss.bind(X, y)
    scale = loss.sensitivity(X.shape[0], 2, B, B)
    enum, env = envelope(obj, 2, scale, 1.0, "highs")
    sup = all_supports(9, 2)
    vals = obj.values(sup)
    for R in env.regions:
        R.bound = float(np.median(vals[R.contains(sup)]))  # not a lower bound
    sampler = ExponentialMechanismSampler(obj.values, env.singletons, env.values, env.regions, 9,
                                          1.0, scale)
    with pytest.raises(CertificationError, match="invalid envelope"):
        sampler.sample(np.random.default_rng(0), 2000)


def test_envelope_must_cover_every_support():
    with pytest.raises(ValueError, match="covers"):
        ExponentialMechanismSampler(lambda S: np.zeros(len(S)), np.array([[0, 1]]), np.zeros(1),
                                    [], 5, 1.0, 1.0)


def test_probability_estimate_is_close(instance):
    X, y = make_data(instance, 1, 12, "ill")
    loss = loss_of("least_squares")
    obj = loss.bind(X, y)
    scale = loss.sensitivity(X.shape[0], 3, B, B)
    sup, vals, logp = exact_law(obj, 12, 3, 1.0, scale)
    enum, env = envelope(obj, 3, scale, 1.0, "highs")
    sampler = ExponentialMechanismSampler(obj.values, env.singletons, env.values, env.regions,
                                          12, 1.0, scale)
    sampler.sample(np.random.default_rng(0), 5000)
    i = int(np.argmax(logp))
    est, se = sampler.probability_estimate(sup[i])
    assert abs(est - math.exp(logp[i])) <= 5 * se + 1e-12


# -- regions ----------------------------------------------------------------------------------
def test_region_sizes_membership_and_uniform_draws():
    p, center = 9, np.array([1, 4, 6])
    sup = all_supports(p, 3)
    total = 0
    for k in range(4):
        R = Region(center, k, p)
        mine = R.contains(sup)
        assert mine.sum() == R.size == math.comb(3, k) * math.comb(6, k)
        total += R.size
        a, b = R.split(int(R.free_outside[0])) if k else R.split(int(center[0]))
        assert a.size + b.size == R.size
        assert np.all(a.contains(sup) | b.contains(sup) == mine)
    assert total == len(sup)
    R = Region(center, 2, p, fixed_in=[4], fixed_out=[0])
    draws = R.sample(np.random.default_rng(0), 30_000)
    assert np.all(R.contains(draws))
    members = sup[R.contains(sup)]
    index = {tuple(r): i for i, r in enumerate(members.tolist())}
    counts = np.bincount([index[tuple(r)] for r in draws.tolist()], minlength=len(members))
    assert chisquare(counts).pvalue > 1e-3


def test_time_limit_releases_nothing(instance, monkeypatch):
    import time as _time
    X, y = make_data(instance, 0, 12, "flat")
    loss = loss_of("least_squares")
    obj = loss.bind(X, y)
    scale = loss.sensitivity(X.shape[0], 3, B, B)
    enum, env = envelope(obj, 3, scale, 1.0, "highs")
    for R in env.regions:
        R.bound = -1e3  # valid but useless: almost every proposal is rejected
    sampler = ExponentialMechanismSampler(obj.values, env.singletons, env.values, env.regions, 12,
                                          1.0, scale, deadline=_time.perf_counter() + 0.2)
    with pytest.raises(CertificationError, match="time_limit"):
        sampler.sample(np.random.default_rng(0), 10)


def test_small_classes_become_singletons(instance):
    """A class small enough (cheap batched values) is evaluated in full: exact singletons."""
    X, y = make_data(instance, 2, 12, "ties")
    loss = loss_of("least_squares")
    obj = loss.bind(X, y)
    scale = loss.sensitivity(X.shape[0], 3, B, B)
    sup, vals, logp = exact_law(obj, 12, 3, 1.0, scale)
    enum, env = envelope(obj, 3, scale, 1.0, "highs", full_class_max=100)
    sizes = {R.k: R.size for R in env.regions}
    assert sizes == {2: 108}  # class 3 (84 supports) evaluated in full, class 2 (108) a region
    assert env.singletons.shape[0] == 1 + 27 + 84
    check_valid(env, sup, vals)
    sampler = ExponentialMechanismSampler(obj.values, env.singletons, env.values, env.regions, 12,
                                          1.0, scale)
    assert sampled_pvalue(sampler.sample(np.random.default_rng(0), 20_000), sup, logp) > 1e-3


# -- issue 28 (7): both envelope paths of private_bss, every backend and loss ----------------
#: ``default``: the MIP backend, small classes of the envelope evaluated in full (cheap
#: batched values: least squares); ``regions``: ``full_class_max = 0`` forces the certified
#: MIP region bounds for every class, at any p (the path a large p takes).
ENVELOPE_PATHS = {"default": {"exhaustive_max": 0, "explicit_max": 0},
                  "regions": {"exhaustive_max": 0, "explicit_max": 0, "full_class_max": 0}}


def release_and_law(instance, loss_name, backend, path, method="exponential", p=8, s=2,
                    eps=2.0, seed=3):
    """One private_bss release on a small instance, with the brute-force values, the
    brute-force law and the supports, computed independently of the enumeration."""
    from mipdp import private_bss
    from mipdp.brute_force import exponential_mechanism_log_probs
    from mipdp.mechanisms import permute_and_flip_log_law
    X, y = make_data(instance, seed, p, "ill", labels=loss_name == "hinge")
    loss = loss_of(loss_name)
    res = private_bss(X, y, s, eps, bounds=(B, B), loss=loss, method=method, backend=backend,
                      enumeration_options=ENVELOPE_PATHS[path], random_state=seed)
    sup = all_supports(p, s)
    vals = loss.bind(X, y).values(sup)
    scale = loss.sensitivity(X.shape[0], s, B, B)
    assert res.sensitivity == pytest.approx(scale, rel=1e-12)
    if method == "exponential":
        logp = exponential_mechanism_log_probs(vals, eps, scale)
    else:
        logp = permute_and_flip_log_law(-eps * (vals - vals.min()) / (2 * scale), grid=1500)
        logp = logp - logsumexp(logp)       # the quadrature's sum is 1 to about 1e-7
    return res, sup, vals, logp


def check_release_against_brute_force(res, sup, vals, logp, path, draws=3000, seed=0):
    regions = res.mechanism.regions
    if path == "regions":
        assert regions, "full_class_max=0 must bound the classes by certified regions"
    for R in regions:        # certified region bounds <= the brute-force class minima
        mine = R.contains(sup)
        assert mine.sum() == R.size
        if R.size:
            assert R.bound <= vals[mine].min() + 1e-9 * max(1.0, abs(vals[mine].min()))
    got = np.array([res.log_probability(S) for S in sup])
    np.testing.assert_allclose(got, logp, atol=1e-5)
    assert sampled_pvalue(res.mechanism.sample(np.random.default_rng(seed), draws), sup,
                          logp) > 1e-3


@pytest.mark.parametrize("path", list(ENVELOPE_PATHS))
@pytest.mark.parametrize("loss_name", ["least_squares", "hinge", "huber"])
def test_private_bss_envelope_paths_match_brute_force(instance, backend, loss_name, path):
    """Both envelope paths, every backend, every loss (p = 8, s = 2): the certified region
    bounds are at most the brute-force class minima, the release's exact law is the
    brute-force exponential mechanism and a chi-square test of the sampler's draws does
    not reject it."""
    res, sup, vals, logp = release_and_law(instance, loss_name, backend, path)
    check_release_against_brute_force(res, sup, vals, logp, path)


@pytest.mark.parametrize("path", list(ENVELOPE_PATHS))
@pytest.mark.parametrize("loss_name", ["least_squares", "hinge", "huber"])
def test_private_bss_permute_and_flip_paths_match_brute_force(instance, loss_name, path):
    """The same for permute-and-flip (HiGHS; every backend in the slow suite, below)."""
    res, sup, vals, logp = release_and_law(instance, loss_name, "highs", path,
                                           "permute_and_flip")
    check_release_against_brute_force(res, sup, vals, logp, path, draws=800)


@pytest.mark.slow
@pytest.mark.parametrize("path", list(ENVELOPE_PATHS))
@pytest.mark.parametrize("loss_name", ["least_squares", "hinge", "huber"])
def test_private_bss_permute_and_flip_paths_every_backend(instance, backend, loss_name, path):
    res, sup, vals, logp = release_and_law(instance, loss_name, backend, path,
                                           "permute_and_flip")
    check_release_against_brute_force(res, sup, vals, logp, path)


@pytest.mark.slow
@pytest.mark.parametrize("method", ["exponential", "permute_and_flip"])
@pytest.mark.parametrize("path", list(ENVELOPE_PATHS))
@pytest.mark.parametrize("loss_name", ["least_squares", "hinge", "huber"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_private_bss_envelope_paths_match_brute_force_p12(instance, backend, loss_name, path,
                                                          method, seed):
    """The same at p = 12, s = 3 (220 supports, three classes) on three instances."""
    res, sup, vals, logp = release_and_law(instance, loss_name, backend, path, method, p=12,
                                           s=3, eps=1.0 + seed, seed=seed)
    check_release_against_brute_force(res, sup, vals, logp, path, draws=5000, seed=seed)


def test_full_class_max_is_an_enumeration_option():
    from mipdp import private_bss
    from mipdp.enumeration.options import check_enumeration_options
    from mipdp.exceptions import InvalidParameterError
    assert check_enumeration_options({"full_class_max": 0}) == {"full_class_max": 0}
    for bad in (-1, 1.5, "0"):
        with pytest.raises(InvalidParameterError, match="full_class_max"):
            private_bss(np.zeros((4, 3)), np.zeros(4), 1, 1.0, bounds=(B, B),
                        enumeration_options={"full_class_max": bad})


def test_chunk_timing_never_reaches_the_draws(instance, monkeypatch):
    """Region proposals are evaluated in chunks that grow while they are fast (measured);
    only the proposals a batch decides enter the statistics that refinements read, so
    chunks of one (every chunk slow on a clock that jumps 1 s per call) and chunks of 4096
    (every chunk instant) give the same statistics, refinements and draws, over 40 calls."""
    import types

    import mipdp.mechanisms.em_rejection as em
    X, y = make_data(instance, 4, 13, "well", n=200)
    loss = loss_of("least_squares")
    obj = loss.bind(X, y)
    s, eps = 3, 8.0
    scale = loss.sensitivity(X.shape[0], s, B, B)
    _, vals, _ = exact_law(obj, 13, s, eps, scale)
    enum, env = envelope(obj, s, scale, eps, "highs")
    out = []
    for first, step in ((1, 1.0), (4096, 0.0)):
        clock = [0.0]

        def tick(clock=clock, step=step):
            clock[0] += step
            return clock[0]

        monkeypatch.setattr(em, "time", types.SimpleNamespace(perf_counter=tick))
        monkeypatch.setattr(em, "_FIRST_CHUNK", first)
        regions = [Region(R.center, R.k, R.p, bound=float(vals.min())) for R in env.regions]
        smp = ExponentialMechanismSampler(obj.values, env.singletons, env.values, regions,
                                          13, eps, scale, refine=env.refine)
        rng = np.random.default_rng(3)
        draws = [smp.sample(rng, 1).tolist() for _ in range(40)]
        out.append((draws, smp.n_refinements, smp.n_proposals,
                    [(R.k, R.size, R.bound) for R in smp.regions], smp._prop, smp._acc,
                    [b[0] for b in smp._best]))
    assert out[0][1] > 0                # regions were refined between draws
    assert out[0] == out[1]


def test_a_result_with_a_refinable_envelope_pickles():
    """The refinement callback is a closure over the enumeration: a pickle leaves it out
    (the sampler's law does not depend on refinements) instead of failing (Kendall-score
    releases hold such an envelope; the estimators' ``keep_not_private=True`` pickles it)."""
    import pickle
    import warnings

    from mipdp import private_bss
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 8))
    y = X[:, 0] - X[:, 1] + rng.normal(size=300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = private_bss(X, y, 2, 1.0, bounds="kendall", random_state=0)
    back = pickle.loads(pickle.dumps(res))
    assert back.mechanism._refine is None
    assert back.probability(res.support) == res.probability(res.support)
    # joblib's loky workers send results back with cloudpickle, which pickled the closure
    # by value and reached the enumerator's lock ("cannot pickle '_thread.lock'")
    cloudpickle = pytest.importorskip("cloudpickle")
    again = pickle.loads(cloudpickle.dumps(res))
    assert again.probability(res.support) == res.probability(res.support)
