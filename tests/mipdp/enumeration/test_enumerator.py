"""The enumeration must equal exhaustive search over all C(p, s) supports, on every backend."""

import numpy as np
import pytest

from mipdp.brute_force import all_supports, least_squares_value
from mipdp.enumeration import SupportEnumerator, default_R
from mipdp.losses import LeastSquares

# (seed, p, s, kind, ridge, radius): 24 instances, well- and ill-conditioned, with ties
CASES = [(seed, p, s, kind, ridge, radius)
         for seed, (p, s) in enumerate([(8, 2), (9, 3), (10, 4), (12, 3), (14, 2), (11, 1),
                                       (13, 4), (16, 3)])
         for kind, ridge, radius in [("well", 5.0, 1.1), ("ill", 1.0, 0.3), ("ties", 20.0, 10.0)]]


def brute(X, y, s, ridge, radius):
    sup = all_supports(X.shape[1], s)
    vals = np.array([least_squares_value(X, y, S, ridge, radius) for S in sup])
    return {tuple(S): v for S, v in zip(sup.tolist(), vals, strict=True)}


def check_top(top, table, R):
    ref = np.sort(np.fromiter(table.values(), float))[:R]
    assert top.supports.shape == (R, top.supports.shape[1])
    np.testing.assert_allclose(top.values, ref, rtol=1e-10, atol=1e-13)
    for S, v in zip(top.supports.tolist(), top.values, strict=True):
        assert table[tuple(S)] == pytest.approx(v, rel=1e-10, abs=1e-13)
    assert len({tuple(S) for S in top.supports.tolist()}) == R


def check_mistakes(ms, table, p, s):
    center = set(ms.center.tolist())
    best = min(table.values())
    assert table[tuple(ms.center.tolist())] == pytest.approx(best, rel=1e-10, abs=1e-13)
    K = min(s, p - s)
    L = np.full(K + 1, np.inf)
    for S, v in table.items():
        k = s - len(center.intersection(S))
        L[k] = min(L[k], v)
    np.testing.assert_allclose(ms.scores, L, rtol=1e-10, atol=1e-13)  # exact class minima
    assert ms.second_best == pytest.approx(np.sort(list(table.values()))[1], rel=1e-10, abs=1e-13)


#: enumeration paths: master solves only, and explicit region search (small regions)
PATHS = {"mip": dict(exhaustive_max=0, explicit_max=0), "explicit": dict(exhaustive_max=0)}


def run_case(instance, case, backend, path="mip"):
    seed, p, s, kind, ridge, radius = case
    X, y = instance(seed, n=40 + 5 * seed, p=p, kind=kind if p >= 7 else "well")
    loss = LeastSquares(ridge, radius)
    table = brute(X, y, s, ridge, radius)
    scale = loss.sensitivity(X.shape[0], s, 0.5, 0.5)
    N = len(table)
    Rs = {default_R(p, s), 1, 3, min(N, default_R(p, s) + 7)} | ({N} if N <= 60 else set())
    for R in sorted(Rs):
        enum = SupportEnumerator(loss.bind(X, y), s, scale=scale, backend=backend, **PATHS[path])
        top = enum.top_supports(R)
        check_top(top, table, min(R, N))
        assert enum.stats.certified
    enum = SupportEnumerator(loss.bind(X, y), s, scale=scale, backend=backend, **PATHS[path])
    check_mistakes(enum.mistake_scores(), table, p, s)


#: the default run: two of the three kinds of each size (every case in the slow set)
HIGHS_CASES = [pytest.param(c, id=f"{c[3]}-p{c[1]}-s{c[2]}-{c[0]}",
                            marks=[pytest.mark.slow] if i % 3 == 2 else [])
               for i, c in enumerate(CASES)]


@pytest.mark.parametrize("path", list(PATHS))
@pytest.mark.parametrize("case", HIGHS_CASES)
def test_matches_brute_force_highs(instance, case, path):
    run_case(instance, case, "highs", path)


@pytest.mark.parametrize("case", CASES[::3],
                         ids=[f"{c[3]}-p{c[1]}-s{c[2]}-{c[0]}" for c in CASES[::3]])
def test_matches_brute_force_every_backend(instance, case, backend):
    if backend == "highs":
        pytest.skip("covered above")
    run_case(instance, case, backend)


def test_queries_share_cuts(instance):
    X, y = instance(0, n=60, p=12)
    loss = LeastSquares(5.0, 1.1)
    enum = SupportEnumerator(loss.bind(X, y), 3, scale=0.01, **PATHS["mip"])
    enum.top_supports(default_R(12, 3))
    cuts = enum.master.n_cuts
    enum.mistake_scores()
    assert enum.master.n_cuts >= cuts  # rows are only ever appended
    assert enum.stats.optimality_gap <= 1e-9


@pytest.mark.parametrize("path", list(PATHS))
def test_larger_instance_against_brute_force(instance, path):
    X, y = instance(7, n=120, p=20)
    loss = LeastSquares(10.0, 1.1)
    table = brute(X, y, 3, 10.0, 1.1)
    enum = SupportEnumerator(loss.bind(X, y), 3, scale=loss.sensitivity(120, 3, 0.5, 0.5),
                             **PATHS[path])
    check_top(enum.top_supports(default_R(20, 3)), table, default_R(20, 3))
    check_mistakes(enum.mistake_scores(), table, 20, 3)


@pytest.mark.parametrize("case", CASES[::2],
                         ids=[f"{c[3]}-p{c[1]}-s{c[2]}-{c[0]}" for c in CASES[::2]])
def test_exhaustive_mode_matches_brute_force(instance, case):
    seed, p, s, kind, ridge, radius = case
    X, y = instance(seed, n=40 + 5 * seed, p=p, kind=kind if p >= 7 else "well")
    loss = LeastSquares(ridge, radius)
    table = brute(X, y, s, ridge, radius)
    enum = SupportEnumerator(loss.bind(X, y), s, scale=0.01)
    check_top(enum.top_supports(default_R(p, s)), table, default_R(p, s))
    assert enum.stats.backend == "exhaustive" and enum.master is None
    check_mistakes(enum.mistake_scores(), table, p, s)


@pytest.mark.parametrize("p, s", [(6, 2), (8, 3), (9, 1), (7, 6)])
def test_exhaustive_centre_swaps_are_the_table_values(instance, p, s):
    """On the exhaustive path the centre's one-swaps are read off the table (the same
    arithmetic as the centre), and agree with the closed-form one-swap values."""
    X, y = instance(1, n=40, p=p, kind="well")
    obj = LeastSquares(1.0, 2.0).bind(X, y)
    enum = SupportEnumerator(obj, s, scale=0.01)
    center, best = enum.optimum()
    swaps = enum._center_swaps
    closed = obj.one_swap_values(center)
    assert np.array_equal(np.isinf(swaps), np.isinf(closed))
    np.testing.assert_allclose(swaps[np.isfinite(swaps)], closed[np.isfinite(closed)],
                               rtol=1e-9, atol=1e-12)
    assert np.all(swaps[np.isfinite(swaps)] >= best)
    table = enum.table[0]          # the lexicographic rank finds every row of the table
    np.testing.assert_array_equal(enum._table_index(table), np.arange(table.shape[0]))


def test_flat_objective_is_fast_in_exhaustive_mode():
    """Pure noise: outer approximation needs minutes, exhaustive evaluation seconds."""
    rng = np.random.default_rng(0)
    X = np.clip(rng.normal(size=(2000, 30)), -0.5, 0.5)
    y = np.clip(rng.normal(size=2000), -0.5, 0.5)
    loss = LeastSquares(120.0, 1.1)
    enum = SupportEnumerator(loss.bind(X, y), 5, scale=loss.sensitivity(2000, 5, 0.5, 0.5),
                             time_limit=60)
    top = enum.top_supports(default_R(30, 5))
    assert top.supports.shape == (default_R(30, 5), 5)
    assert np.all(np.diff(top.values) >= 0)
