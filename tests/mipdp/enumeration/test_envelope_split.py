"""Envelope classes bounded by explicit search at their level (members below it exact,
the rest a region with holes bounded by it): valid against brute force on every backend and
loss, the samplers' laws unchanged, and regions with holes behave as sets."""

import math

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import chisquare

from mipdp.brute_force import all_supports
from mipdp.enumeration import SupportEnumerator
from mipdp.enumeration.envelope import _below_level, build_envelope
from mipdp.losses import Hinge, Huber, LeastSquares
from mipdp.mechanisms import ExponentialMechanismSampler, PermuteAndFlipSampler
from mipdp.mechanisms.regions import Region, region_members

B = 0.5


def _loss(name):
    return {"least_squares": LeastSquares(5.0, 1.1), "hinge": Hinge(2.0, 1.5),
            "huber": Huber(5.0, 1.1, huber_delta=0.3)}[name]


def _problem(instance, seed, p, loss_name, kind="ill", n=60):
    X, y = instance(seed, n=n, p=p, kind=kind)
    if loss_name == "hinge":
        y = np.where(y + 0.05 * np.sin(np.arange(n)) >= 0, 1.0, -1.0)
    loss = _loss(loss_name)
    return loss.bind(X, y), loss.sensitivity(n, 3, B, B)


def _split_envelope(obj, s, scale, eps, backend, c=1.0):
    """Regions only (no class in full), explicit searches on leaves of at most 40 members,
    so that classes are split and searched leaf by leaf (``split_slack=0.5``: also classes
    close to their level).  ``eps`` only sets the levels
    (the bounds are valid whatever it is): the tests pick one that puts the levels among the
    members' values, so that regions get holes."""
    enum = SupportEnumerator(obj, s, scale=scale, backend=backend, exhaustive_max=0,
                             explicit_max=40)
    env = build_envelope(enum, eps, scale, c=c, full_class_max=0, split_max_leaves=64,
                         split_slack=0.5)
    return enum, env


# -- regions with holes ---------------------------------------------------------------------

def _members(R):
    return {tuple(r) for rows in region_members(R) for r in rows.tolist()}


def test_region_holes_are_not_members():
    R = Region(np.array([0, 2, 4]), 2, 9)
    all_rows = np.vstack(list(region_members(R)))
    holes = all_rows[[0, 3, 7]]
    H = R.without(np.vstack([holes, [[0, 1, 2]]]))   # a non-member is ignored
    assert H.full_size == R.size and H.size == R.size - 3
    assert _members(H) == _members(R) - {tuple(h) for h in holes.tolist()}
    assert not H.contains(holes).any()
    assert H.contains(all_rows).sum() == H.size
    assert H.describe()["holes"] == 3
    a, b = H.split(5)
    assert a.size + b.size == H.size
    assert _members(a) | _members(b) == _members(H) and not (_members(a) & _members(b))
    with pytest.raises(ValueError, match="holes"):
        Region(np.array([0, 2, 4]), 2, 9, holes=frozenset({(0, 1, 2)}))


@pytest.mark.parametrize("n_holes", [5, 40])
def test_region_with_holes_samples_uniformly(n_holes):
    """Chi-square: draws are uniform over the members that are not holes (also when most
    members are holes and the region is listed instead)."""
    R = Region(np.array([1, 3, 5]), 2, 8)   # C(3,1) C(5,2) = 30 members
    rows = np.vstack(list(region_members(R)))
    H = R.without(rows[np.random.default_rng(0).choice(rows.shape[0], size=min(n_holes, 25),
                                                       replace=False)])
    rest = sorted(_members(H))
    draws = H.sample(np.random.default_rng(1), 6000)
    index = {r: i for i, r in enumerate(rest)}
    counts = np.bincount([index[tuple(r)] for r in draws.tolist()], minlength=len(rest))
    assert counts.sum() == 6000   # every draw is a member that is not a hole
    assert chisquare(counts).pvalue > 1e-3


# -- the explicit search at the level -----------------------------------------------------

@pytest.mark.parametrize("loss_name", ["least_squares", "hinge", "huber"])
@pytest.mark.parametrize("seed,p", [(0, 10), (1, 12), (2, 11)])
def test_below_level_is_exact(instance, backend, loss_name, seed, p):
    """Every member below the level is returned with its exact value, every other member
    is in a returned region, and the regions' bound (the level) is below all of them."""
    s = 3
    obj, scale = _problem(instance, seed, p, loss_name)
    sup = all_supports(p, s)
    vals = obj.values(sup)
    enum = SupportEnumerator(obj, s, scale=scale, backend=backend, exhaustive_max=0,
                             explicit_max=30)
    center, _ = enum.warm_center()
    index = {tuple(r): i for i, r in enumerate(sup.tolist())}
    for k in (2, 3):
        R = Region(center, k, p)
        mine = R.contains(sup)
        level = float(np.quantile(vals[mine], 0.3))
        out = _below_level(enum, R, level, max_leaves=64)
        assert out is not None
        below, bv, rest = out
        want = {tuple(r) for r in sup[mine & (vals < level)].tolist()}
        assert {tuple(r) for r in below.tolist()} == want
        np.testing.assert_allclose(bv, vals[[index[tuple(r)] for r in below.tolist()]],
                                   rtol=1e-9, atol=1e-12)
        covered = np.zeros(len(sup), dtype=int)
        covered[[index[tuple(r)] for r in below.tolist()]] += 1
        for Q in rest:
            inside = Q.contains(sup)
            covered[inside] += 1
            assert Q.bound == level and inside.sum() == Q.size
            assert Q.bound <= vals[inside].min() + 1e-12   # a bound above a minimum: privacy bug
        assert np.array_equal(covered, mine.astype(int))


def test_below_level_gives_up_past_its_budget(instance):
    obj, scale = _problem(instance, 3, 12, "least_squares", kind="well")
    enum = SupportEnumerator(obj, 3, scale=scale, exhaustive_max=0, explicit_max=30)
    center, _ = enum.warm_center()
    R = Region(center, 2, 12)
    assert _below_level(enum, R, math.inf, max_leaves=2) is None           # too many leaves
    assert _below_level(enum, R, math.inf, max_leaves=64, max_evaluations=3) is None



def _leaves_fit(enum, R, max_leaves):
    """The split loop of ``_below_level`` alone: whether it ends with at most
    ``max_leaves`` leaves of at most ``enum.explicit_max`` members."""
    leaves, stack = [], [R]
    while stack:
        Q = stack.pop()
        if Q.size == 0:
            continue
        if Q.size <= enum.explicit_max:
            leaves.append(Q)
        else:
            stack.extend(Q.split(enum.split_feature(Q, None)))
        if len(leaves) + len(stack) > max_leaves:
            return False
    return True


def test_below_level_size_shortcut_gives_the_split_loops_answer(instance, monkeypatch):
    """A region of more than ``max_leaves * explicit_max`` members is given up without a
    split (no ``split_feature`` call), and that is what the split loop would decide: a
    region it gives up on at once is never one whose leaves fit."""
    obj, scale = _problem(instance, 3, 12, "least_squares", kind="well")
    enum = SupportEnumerator(obj, 3, scale=scale, exhaustive_max=0, explicit_max=10)
    center, _ = enum.warm_center()
    calls = []
    split = enum.split_feature
    monkeypatch.setattr(enum, "split_feature", lambda R, b: calls.append(1) or split(R, b))
    for k in (1, 2, 3):
        R = Region(center, k, 12)
        for max_leaves in (1, 2, 3, 5, 8, 20, 100):
            calls.clear()
            shortcut = R.size > max_leaves * enum.explicit_max
            out = _below_level(enum, R, math.inf, max_leaves=max_leaves)
            if shortcut:
                assert out is None and not calls
                assert not _leaves_fit(enum, R, max_leaves)
    R = Region(center, 3, 12)
    assert R.size > 3 * enum.explicit_max


# -- the envelope and the samplers ------------------------------------------------------------

@pytest.mark.parametrize("loss_name", ["least_squares", "hinge", "huber"])
@pytest.mark.parametrize("seed,p,s", [(0, 10, 3), (1, 12, 3), (2, 11, 4), (3, 13, 2)])
def test_split_envelope_is_valid(instance, backend, loss_name, seed, p, s):
    """Singletons (with the members found below the levels) and regions partition all
    supports; every region bound is at most the brute-force minimum over the region, also
    after refining it twice."""
    obj, scale = _problem(instance, seed, p, loss_name)
    sup = all_supports(p, s)
    vals = obj.values(sup)
    enum, env = _split_envelope(obj, s, scale, 5.0 * (1 + seed % 2), backend)
    index = {tuple(r): i for i, r in enumerate(sup.tolist())}
    np.testing.assert_allclose(env.values,
                               vals[[index[tuple(r)] for r in env.singletons.tolist()]],
                               rtol=1e-9, atol=1e-12)
    regions = list(env.regions)
    for _ in range(2):
        regions = [c for R in regions for c in (env.refine(R, None) if R.size > 1 else [R])]
    covered = np.zeros(len(sup), dtype=int)
    covered[[index[tuple(r)] for r in env.singletons.tolist()]] += 1
    for R in regions:
        inside = R.contains(sup)
        covered[inside] += 1
        assert inside.sum() == R.size
        if R.size:
            assert R.bound <= vals[inside].min() + 1e-12 * max(1.0, abs(vals[inside].min()))
    assert np.all(covered == 1)


def _law(obj, p, s, eps, scale):
    sup = all_supports(p, s)
    vals = obj.values(sup)
    lw = -eps * (vals - vals.min()) / (2 * scale)
    return sup, vals, lw - logsumexp(lw)


def _pvalue(draws, sup, logp):
    index = {tuple(r): i for i, r in enumerate(sup.tolist())}
    counts = np.bincount([index[tuple(r)] for r in draws.tolist()], minlength=len(sup))
    exp = np.exp(logp) * counts.sum()
    big = exp >= 5
    obs = np.r_[counts[big], counts[~big].sum()] if (~big).any() else counts
    ex = np.r_[exp[big], exp[~big].sum()] if (~big).any() else exp
    return chisquare(obs, ex * obs.sum() / ex.sum()).pvalue


@pytest.mark.parametrize("linear", [False, True], ids=["constant", "linear"])
@pytest.mark.parametrize("seed,p,s,eps_env,eps", [(0, 10, 3, 10.0, 1.0), (1, 12, 3, 5.0, 3.0),
                                                  (1, 11, 3, 10.0, 1.0)])
def test_exponential_mechanism_law_with_split_envelope(instance, seed, p, s, eps_env, eps,
                                                       linear, monkeypatch):
    """Chi-square of 20 000 draws against the brute-force exponential mechanism, with an
    envelope whose classes have holes; certified probability bounds hold the exact value.
    ``linear``: regions sample from their best cut even where it has more mass than the
    constant bound (holes proposed and rejected)."""
    from mipdp.mechanisms import em_rejection
    monkeypatch.setattr(em_rejection, "_LINEAR_MIN_GAIN", -math.inf)
    obj, scale = _problem(instance, seed, p, "least_squares")
    sup, vals, logp = _law(obj, p, s, eps, scale)
    enum, env = _split_envelope(obj, s, scale, eps_env, "highs")
    assert any(R.holes for R in env.regions)
    sampler = ExponentialMechanismSampler(obj.values, env.singletons, env.values, env.regions,
                                          p, eps, scale, refine=env.refine,
                                          cuts=env.cuts if linear else None)
    if linear:
        assert any(R.holes and r["envelope"] == "linear"
                   for R, r in zip(sampler.regions, sampler.stats()["regions"], strict=True))
    draws = sampler.sample(np.random.default_rng(seed), 20_000)
    assert _pvalue(draws, sup, logp) > 1e-3
    for i in np.argsort(logp)[-3:]:
        lo, hi = sampler.log_probability_bounds(sup[i])
        assert lo <= logp[i] + 1e-9 and hi >= logp[i] - 1e-9


def test_permute_and_flip_law_with_split_envelope(instance):
    """Chi-square of permute-and-flip draws (report-noisy-max with exponential noise)
    against its brute-force law, with an envelope whose classes have holes."""
    from mipdp.mechanisms import permute_and_flip_log_law
    seed, p, s, eps = 1, 12, 3, 2.0
    obj, scale = _problem(instance, seed, p, "least_squares")
    sup = all_supports(p, s)
    vals = obj.values(sup)
    logp = permute_and_flip_log_law(-eps * (vals - vals.min()) / (2 * scale), grid=1500)
    enum, env = _split_envelope(obj, s, scale, 5.0, "highs")
    assert any(R.holes for R in env.regions)
    sampler = PermuteAndFlipSampler(obj.values, env.singletons, env.values, env.regions, p,
                                    eps, scale, refine=env.refine, refine_after=4)
    draws = sampler.sample(np.random.default_rng(seed), 3000)
    assert _pvalue(draws, sup, logp) > 1e-3


def test_region_members_skips_chunks_of_holes_and_without_sorts():
    """A chunk made only of holes yields nothing (no empty chunk reaches an objective), and
    ``without`` accepts rows in any order (review findings)."""
    R = Region(np.array([0, 1, 2]), 1, 7)                 # C(3,2) C(4,1) = 12 members
    rows = np.vstack(list(region_members(R)))
    H = R.without(rows[:3][:, ::-1])                       # unsorted rows
    assert H.size == 9
    chunks = list(region_members(H, chunk=3))
    assert all(c.shape[0] > 0 for c in chunks)
    assert sum(c.shape[0] for c in chunks) == 9
