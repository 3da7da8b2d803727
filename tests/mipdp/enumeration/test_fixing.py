"""Column fixing from the cut store (mipdp/enumeration/fixing.py) against brute force.

A fixed column must be in no support of the search's pattern below the cutoff: a bound
above a true minimum is a privacy bug, so the enumeration with fixing is checked against
brute force on every backend and loss.
"""

import itertools

import numpy as np
import pytest

from mipdp.brute_force import all_supports
from mipdp.enumeration import SupportEnumerator
from mipdp.enumeration.fixing import aggregated_cut, pattern_bounds, screened_columns
from mipdp.losses import Hinge, Huber, LeastSquares
from mipdp.mechanisms.regions import Region

MIP = dict(exhaustive_max=0, explicit_max=0)


def _pattern_supports(p, forced, groups):
    parts = [list(itertools.combinations(list(cols), m)) for cols, m in groups]
    for choice in itertools.product(*parts):
        yield np.array(sorted(list(forced) + [i for c in choice for i in c]), dtype=np.intp)


def _random_pattern(rng, p=11):
    perm = rng.permutation(p)
    forced = perm[:1]
    groups = [(np.sort(perm[1:5]), 2), (np.sort(perm[5:]), 1)]
    return forced, groups


@pytest.mark.parametrize("seed", range(6))
def test_single_cut_bound_is_the_pattern_minimum(seed):
    rng = np.random.default_rng(seed)
    p = 11
    a = rng.normal(size=3)
    G = -np.round(rng.random((3, p)), 1)  # ties included
    forced, groups = _random_pattern(rng, p)
    sups = list(_pattern_supports(p, forced, groups))
    for t in range(3):
        lb = pattern_bounds(a[t:t + 1], G[t:t + 1], forced, groups)
        for cols, _ in groups:
            for j in cols:
                true = min(a[t] + G[t, S].sum() for S in sups if j in S)
                assert lb[j] == pytest.approx(true, abs=1e-12)
    lb = pattern_bounds(a, G, forced, groups)
    for cols, _ in groups:
        for j in cols:  # several cuts: the best single cut, below the true max-of-cuts minimum
            assert lb[j] <= min(np.max(a + G[:, S].sum(axis=1)) for S in sups if j in S) + 1e-12


@pytest.mark.parametrize("seed", range(6))
def test_screened_columns_are_in_no_support_below_the_cutoff(seed):
    rng = np.random.default_rng(100 + seed)
    p = 11
    a = rng.normal(size=5)
    G = -rng.random((5, p))
    forced, groups = _random_pattern(rng, p)
    sups = list(_pattern_supports(p, forced, groups))
    bound = np.array([np.max(a + G[:, S].sum(axis=1)) for S in sups])
    for q in (0.1, 0.3, 0.6):
        cutoff = float(np.quantile(bound, q))
        mask = screened_columns(a, G, forced, groups, cutoff, 0.0)
        for S, b in zip(sups, bound, strict=True):
            if b <= cutoff:
                assert not mask[S].any()
        single = screened_columns(a, G, forced, groups, cutoff, 0.0, lagrangian=False)
        assert np.all(single <= mask)  # the aggregate only adds fixings
    assert not screened_columns(a, G, forced, groups, np.inf, 0.0).any()


def test_aggregated_cut_reaches_the_lp_value():
    rng = np.random.default_rng(7)
    p = 10
    a = rng.normal(size=4)
    G = -rng.random((4, p))
    groups = [(np.arange(p), 3)]
    a_bar, g_bar, phi = aggregated_cut(a, G, np.zeros(0, dtype=np.intp), groups)
    sups = list(_pattern_supports(p, [], groups))
    # a convex combination: below the max of the cuts at every support ...
    for S in sups:
        assert a_bar + g_bar[S].sum() <= np.max(a + G[:, S].sum(axis=1)) + 1e-12
    # ... and at least as good as every single cut on the pattern
    assert phi >= max(min(a[t] + G[t, S].sum() for S in sups) for t in range(4)) - 1e-9
    assert phi == pytest.approx(a_bar + np.sort(g_bar)[:3].sum(), abs=1e-9)


def _losses():
    return [("ls", LeastSquares(5.0, 1.1)), ("huber", Huber(2.0, 1.5)), ("hinge", Hinge(2.0, 1.5))]


@pytest.mark.parametrize("name,loss", _losses(), ids=[n for n, _ in _losses()])
def test_enumeration_with_fixing_matches_brute_force(instance, backend, name, loss):
    p, s = 10, 3
    X, y = instance(3, n=50, p=p)
    if name == "hinge":
        y = np.where(y >= np.median(y), 1.0, -1.0)
    obj = loss.bind(X, y)
    sup = all_supports(p, s)
    vals = obj.values(sup)
    enum = SupportEnumerator(obj, s, scale=0.01, backend=backend, **MIP)
    center, L0 = enum.optimum()
    assert L0 == pytest.approx(vals.min(), rel=1e-7, abs=1e-9)
    enum.warm_class_cuts()
    true_center = sup[np.argmin(vals)]
    spread = float(np.quantile(vals, 0.3) - L0)
    screened = 0
    for k in (2, 3):
        R = Region(center, k, p)
        inside = R.contains(sup)
        true = vals[inside].min()
        for level in (L0 + 0.2 * spread, L0 + spread, np.inf):
            rb = enum.region_bound(R, level=level, abs_tol=1e-3)
            assert rb.lower <= true + 1e-9 * max(1.0, abs(true)), (k, level, rb.lower, true)
            if rb.lower >= level:  # "every member above the level" must be true
                assert true >= level - 1e-9
        screened += enum.stats.phases[f"class_{k}"].screened
    if not enum.master.backend.native_lazy:
        assert screened > 0  # the fixing was exercised
    assert np.array_equal(np.sort(center), np.sort(true_center)) or vals[
        np.argmin(vals)] == pytest.approx(L0)


def test_top_supports_with_fixing_match_brute_force(instance, backend):
    p, s, R = 9, 3, 25
    X, y = instance(4, n=60, p=p)
    obj = LeastSquares(5.0, 1.1).bind(X, y)
    vals = np.sort(obj.values(all_supports(p, s)))
    enum = SupportEnumerator(obj, s, scale=0.01, backend=backend, **MIP)
    top = enum.top_supports(R)
    np.testing.assert_allclose(top.values, vals[:R], rtol=1e-7, atol=1e-10)
