"""The contract every MIP backend in :mod:`mipdp.solvers` must honour.

Parametrised over all known backends; those whose package is not installed are
skipped.  Integer columns come back integral only up to the solver's integrality
tolerance, so callers (and these tests) round them with ``np.rint``.
"""

from __future__ import annotations

import importlib.util
import itertools
import time

import numpy as np
import pytest

from mipdp import solvers
from mipdp.solvers import (
    BACKENDS,
    BackendUnavailableError,
    SolverTimeLimitError,
    available_backends,
    get_backend,
)

INF = np.inf


@pytest.fixture(params=sorted(BACKENDS))
def name(request) -> str:
    if request.param not in available_backends():
        pytest.skip(f"{request.param} is not installed")
    return request.param


# -- builders -------------------------------------------------------------------------
def knapsack(b, w, v, cap):
    z = b.add_variables(len(w), 0, 1, integer=True)
    b.add_rows([(z, np.asarray(w, float), -INF, cap)])
    b.set_objective(z, -np.asarray(v, float))
    return z


def brute_knapsack(w, v, cap):
    best = 0.0
    for bits in itertools.product([0, 1], repeat=len(w)):
        bits = np.array(bits)
        if bits @ w <= cap:
            best = max(best, bits @ v)
    return -best


def market_split(b, m=4, seed=0):
    """A Cornuejols-Dawande market-split instance: tiny but very hard for B&B."""
    rng = np.random.default_rng(seed)
    n = 10 * (m - 1)
    A = rng.integers(0, 100, size=(m, n)).astype(float)
    d = np.floor(A.sum(axis=1) / 2)
    z = b.add_variables(n, 0, 1, integer=True)
    sp = b.add_variables(m, 0, INF)
    sm = b.add_variables(m, 0, INF)
    b.add_rows([(np.r_[z, sp[i], sm[i]], np.r_[A[i], 1.0, -1.0], d[i], d[i]) for i in range(m)])
    b.set_objective(np.r_[sp, sm], np.ones(2 * m))


def regression(seed, p, n=25):
    """A convex quadratic ``f(z) = 0.5 ||y - M z||^2`` and its gradient."""
    rng = np.random.default_rng(seed)
    M = rng.normal(size=(n, p))
    y = M[:, :3] @ np.array([1.5, -2.0, 1.0]) + 0.3 * rng.normal(size=n)
    return (lambda z: 0.5 * float(np.sum((y - M @ z) ** 2)),
            lambda z: -M.T @ (y - M @ z))


def subset_master(b, p, s, eta_lb=-1e3):
    """The typical master: min eta, sum(z) = s (cuts come later)."""
    eta = int(b.add_variables(1, eta_lb, INF)[0])
    z = b.add_variables(p, 0, 1, integer=True)
    b.add_rows([(z, np.ones(p), s, s)])
    b.set_objective([eta], [1.0])
    return eta, z


def indicator(p, support):
    out = np.zeros(p)
    out[list(support)] = 1.0
    return out


# -- basic solving --------------------------------------------------------------------
def test_knapsack_optimum_and_bound(name):
    w, v, cap = np.array([4, 3, 5, 7, 2, 6.0]), np.array([6, 5, 8, 10, 3, 9.0]), 14
    b = get_backend(name)
    z = knapsack(b, w, v, cap)
    res = b.solve()
    assert res.status == "optimal"
    assert res.objective == pytest.approx(brute_knapsack(w, v, cap), abs=1e-7)
    assert res.bound <= res.objective + 1e-12
    assert res.bound == pytest.approx(res.objective, abs=1e-6)
    zz = res.x[z]
    assert np.allclose(zz, np.rint(zz), atol=1e-5)          # 0/1 up to tolerance
    assert np.rint(zz) @ w <= cap
    assert np.rint(zz) @ v == pytest.approx(-res.objective)
    assert res.n_solves == 1 and res.time >= 0 and res.gap == pytest.approx(0, abs=1e-6)


def test_assignment_optimum(name):
    rng = np.random.default_rng(3)
    n = 4
    C = rng.integers(1, 20, size=(n, n)).astype(float)
    b = get_backend(name)
    x = b.add_variables(n * n, 0, 1, integer=True).reshape(n, n)
    b.add_rows([(x[i], np.ones(n), 1, 1) for i in range(n)]
               + [(x[:, j], np.ones(n), 1, 1) for j in range(n)])
    b.set_objective(x.ravel(), C.ravel())
    res = b.solve()
    best = min(sum(C[i, perm[i]] for i in range(n)) for perm in itertools.permutations(range(n)))
    assert res.status == "optimal"
    assert res.objective == pytest.approx(best)
    X = np.rint(res.x[x])
    assert (X.sum(0) == 1).all() and (X.sum(1) == 1).all()


def test_pure_lp_bound_equals_objective(name):
    b = get_backend(name)
    x = b.add_variables(2, 0, INF)
    b.add_rows([(x, np.array([1.0, 2.0]), 4, INF), (x, np.array([3.0, 1.0]), 6, INF)])
    b.set_objective(x, [1.0, 1.0])
    res = b.solve()
    assert res.status == "optimal"
    assert res.objective == pytest.approx(2.8)
    assert res.bound == pytest.approx(res.objective)


def test_rows_added_after_solve_take_effect(name):
    b = get_backend(name)
    z = knapsack(b, [1, 1, 1, 1], [4, 3, 2, 1], 3)
    assert b.solve().objective == pytest.approx(-9)
    rows = b.add_rows([(z[:2], np.ones(2), -INF, 1)])
    assert list(rows) == [1] and b.n_rows == 2
    res = b.solve()
    assert res.objective == pytest.approx(-7)
    assert np.rint(res.x[z]).tolist() == [1, 0, 1, 1]


def test_set_row_bounds(name):
    b = get_backend(name)
    z = knapsack(b, [2, 3, 4, 5], [3, 4, 5, 6], 7)
    assert b.solve().objective == pytest.approx(-9)
    b.set_row_bounds([0], 8, 9)                      # becomes a range row
    assert b.solve().objective == pytest.approx(-12)
    b.set_row_bounds([0], 5, 5)                      # equality
    res = b.solve()
    assert res.objective == pytest.approx(-7) and np.rint(res.x[z]) @ [2, 3, 4, 5] == 5
    b.set_row_bounds(np.array([0]), -INF, INF)       # free row
    assert b.solve().objective == pytest.approx(-18)
    b.set_row_bounds([0], -INF, 7)                   # and back
    assert b.solve().objective == pytest.approx(-9)


def test_set_variable_bounds(name):
    b = get_backend(name)
    z = knapsack(b, [2, 3, 4, 5], [3, 4, 5, 7], 7)
    res = b.solve()
    assert res.objective == pytest.approx(-10) and np.rint(res.x[z]).tolist() == [1, 0, 0, 1]
    b.set_variable_bounds([z[3]], 0, 0)
    res = b.solve()
    assert res.objective == pytest.approx(-9) and np.rint(res.x[z]).tolist() == [0, 1, 1, 0]
    b.set_variable_bounds([z[0], z[3]], [1, 0], [1, 1])   # force z0 in, free z3 again
    res = b.solve()
    assert res.objective == pytest.approx(-10) and np.rint(res.x[z]).tolist() == [1, 0, 0, 1]
    b.set_variable_bounds(z[:2], 1.0, 1.0)                # scalar bounds broadcast
    res = b.solve()
    assert res.objective == pytest.approx(-7) and np.rint(res.x[z]).tolist() == [1, 1, 0, 0]
    with pytest.raises(ValueError):
        b.set_variable_bounds([z[0]], 1, 0)


def test_objective_can_be_replaced(name):
    b = get_backend(name)
    z = knapsack(b, [1, 1, 1], [1, 2, 3], 1)
    assert np.rint(b.solve().x[z]).tolist() == [0, 0, 1]
    b.set_objective(z, [-5.0, -1.0, -1.0])
    assert np.rint(b.solve().x[z]).tolist() == [1, 0, 0]


def test_infeasible(name):
    b = get_backend(name)
    z = b.add_variables(3, 0, 1, integer=True)
    b.add_rows([(z, np.full(3, 2.0), 3, 3)])          # 2 * integer = 3
    b.set_objective(z, np.ones(3))
    res = b.solve()
    assert res.status == "infeasible"
    assert res.x is None and res.objective == np.inf and res.gap == 0.0


def test_infeasible_with_free_objective_column(name):
    """'Unbounded or infeasible' answers must be resolved to 'infeasible'."""
    b = get_backend(name)
    eta = b.add_variables(1, -INF, INF)
    z = b.add_variables(2, 0, 1, integer=True)
    b.add_rows([(z, np.ones(2), 3, INF)])
    b.set_objective(eta, [1.0])
    assert b.solve().status == "infeasible"


def test_unbounded_raises(name):
    b = get_backend(name)
    eta = b.add_variables(1, -INF, INF)
    z = b.add_variables(2, 0, 1, integer=True)
    b.add_rows([(z, np.ones(2), 1, 1)])
    b.set_objective(eta, [1.0])
    with pytest.raises(solvers.SolverError, match="unbounded"):
        b.solve()


def test_malformed_rows_rejected(name):
    b = get_backend(name)
    z = b.add_variables(3, 0, 1, integer=True)
    with pytest.raises(ValueError):
        b.add_rows([(np.array([0, 5]), np.ones(2), 0, 1)])
    with pytest.raises(ValueError):
        b.add_rows([(z, np.ones(3), 2, 1)])
    with pytest.raises(ValueError):
        b.add_rows([(z, np.ones(2), 0, 1)])
    assert b.n_rows == 0
    # duplicate indices inside one row are summed
    b.add_rows([(np.array([0, 0, 1]), np.array([1.0, 1.0, 1.0]), 3, 3)])
    b.set_objective(z, np.ones(3))
    res = b.solve()
    assert np.rint(res.x[z]).tolist() == [1, 1, 0]


# -- the typical model and lazy rows --------------------------------------------------
def test_no_good_enumeration_in_score_order(name):
    """Enumerate all 2-subsets of 6 items by a linear score via persistent no-good rows."""
    p, k = 6, 2
    c = np.array([0.3, -1.2, 0.7, 2.0, -0.4, 1.1])
    b = get_backend(name)
    z = b.add_variables(p, 0, 1, integer=True)
    b.add_rows([(z, np.ones(p), k, k)])
    b.set_objective(z, c)
    expected = sorted(sum(c[list(s)]) for s in itertools.combinations(range(p), k))
    got = []
    while True:
        res = b.solve()
        if res.status == "infeasible":
            break
        sup = np.flatnonzero(np.rint(res.x[z]))
        got.append(res.objective)
        b.add_rows([(z[sup], np.ones(k), -INF, k - 1)])
    assert np.allclose(got, expected)
    assert b.n_rows == 1 + len(expected)


def test_lazy_outer_approximation(name):
    """min f(z) over |z| = s by lazy tangent cuts; cuts persist to the next solve."""
    p, s = 10, 3
    f, grad = regression(0, p)
    best = min(f(indicator(p, S)) for S in itertools.combinations(range(p), s))
    b = get_backend(name)
    eta, z = subset_master(b, p, s)
    seen = []

    def oracle(x):
        zz = np.rint(x[z])
        fz, g = f(zz), grad(zz)
        seen.append(zz)
        if x[eta] >= fz - 1e-7 * max(1.0, abs(fz)):
            return []
        return [(np.r_[eta, z], np.r_[1.0, -g], fz - g @ zz, INF)]

    res = b.solve(lazy=oracle)
    assert res.status == "optimal"
    assert res.objective == pytest.approx(best, rel=1e-6)
    assert f(np.rint(res.x[z])) == pytest.approx(best, rel=1e-6)
    assert res.n_lazy_rows > 0 and b.n_rows == 1 + res.n_lazy_rows
    # the cuts persist: without the oracle the master already has the right answer
    again = b.solve()
    assert again.objective == pytest.approx(best, rel=1e-6)
    assert f(np.rint(again.x[z])) == pytest.approx(best, rel=1e-6)


@pytest.mark.parametrize("seed,p,s", [(5, 11, 1), (0, 9, 2), (3, 12, 3)])
def test_lazy_oracle_only_sees_points_satisfying_its_rows(name, seed, p, s):
    """A memoising OA oracle (accepts a support once it has a cut there) stays exact.

    Gurobi may offer candidates that violate rows already passed to ``cbLazy``; the
    backend must cut those off again itself instead of trusting the oracle to.
    """
    f, grad = regression(seed, p)
    best = min(f(indicator(p, S)) for S in itertools.combinations(range(p), s))
    scale = 0.05
    b = get_backend(name)
    eta, z = subset_master(b, p, s, eta_lb=-1e3)
    returned, have_cut = [], set()

    def oracle(x):
        for idx, coef, lb, _ub in returned:               # the contract under test
            assert coef @ x[idx] >= lb - 1e-6 * max(1.0, abs(lb))
        zz = np.rint(x[z])
        key = tuple(np.flatnonzero(zz).tolist())
        if key in have_cut:
            return []
        have_cut.add(key)
        fz, g = f(zz) / scale, grad(zz) / scale
        row = (np.r_[eta, z], np.r_[1.0, -g], fz - g @ zz, INF)
        returned.append(row)
        return [row]

    res = b.solve(lazy=oracle)
    assert res.objective * scale == pytest.approx(best, rel=1e-6)
    assert f(np.rint(res.x[z])) == pytest.approx(best, rel=1e-6)


def test_lazy_rows_never_violated(name):
    """A lazy no-good oracle forbidding pairs: the answer must respect every returned row."""
    p, k = 7, 3
    c = np.array([-5.0, -4.0, -3.5, -1.0, -0.5, 0.2, 0.4])
    banned = [(0, 1), (0, 2), (1, 2), (2, 3)]
    returned = []

    def oracle(x):
        sup = set(np.flatnonzero(np.rint(x[z])).tolist())
        rows = [(np.array(pair), np.ones(2), -INF, 1.0) for pair in banned if set(pair) <= sup]
        returned.extend(rows)
        return rows

    b = get_backend(name)
    z = b.add_variables(p, 0, 1, integer=True)
    b.add_rows([(z, np.ones(p), k, k)])
    b.set_objective(z, c)
    res = b.solve(lazy=oracle)
    feasible = [S for S in itertools.combinations(range(p), k)
                if not any(set(pr) <= set(S) for pr in banned)]
    assert res.objective == pytest.approx(min(c[list(S)].sum() for S in feasible))
    zz = np.rint(res.x[z])
    for idx, coef, lb, ub in returned:
        assert lb - 1e-9 <= coef @ zz[idx] <= ub + 1e-9


def test_lazy_ranged_rows(name):
    """Rows with two finite sides coming from the oracle are honoured on both sides."""
    p = 6
    b = get_backend(name)
    z = b.add_variables(p, 0, 1, integer=True)
    b.set_objective(z, -np.arange(1.0, p + 1))           # wants everything
    row = (z[:4], np.ones(4), 1.0, 2.0)                  # 1 <= z0+..+z3 <= 2

    def oracle(x):
        s = np.rint(x[z[:4]]).sum()
        return [] if 1 <= s <= 2 else [row]

    res = b.solve(lazy=oracle)
    zz = np.rint(res.x[z])
    assert 1 <= zz[:4].sum() <= 2
    assert res.objective == pytest.approx(-(3 + 4 + 5 + 6))
    b.set_objective(z, np.arange(1.0, p + 1))            # now wants nothing: lb side binds
    res = b.solve()
    assert np.rint(res.x[z]).tolist() == [1, 0, 0, 0, 0, 0]


def test_lazy_rejecting_everything_is_infeasible(name):
    p, k = 4, 2
    b = get_backend(name)
    z = b.add_variables(p, 0, 1, integer=True)
    b.add_rows([(z, np.ones(p), k, k)])
    b.set_objective(z, np.arange(p, dtype=float))

    def oracle(x):
        sup = np.flatnonzero(np.rint(x[z]))
        return [(z[sup], np.ones(k), -INF, k - 1)]

    res = b.solve(lazy=oracle)
    assert res.status == "infeasible"
    # all 6 no-goods persist
    assert b.solve().status == "infeasible"


def test_typical_master_with_dense_cuts(name):
    """eta + p binaries + sum(z) = s + dense tangent cuts (g <= 0), solved repeatedly.

    ``f(z) = (w'(1 - z))**2`` is convex; its minimiser over |z| = s is the top-s
    weights, and outer approximation reaches it in a few rounds.
    """
    p, s = 300, 4
    rng = np.random.default_rng(1)
    w = rng.random(p) + 0.1
    f = lambda z: float(w @ (1.0 - z)) ** 2              # noqa: E731
    grad = lambda z: -2.0 * float(w @ (1.0 - z)) * w     # noqa: E731 - always <= 0
    b = get_backend(name)
    eta, z = subset_master(b, p, s, eta_lb=0.0)
    cuts = []
    for _ in range(30):
        zt = indicator(p, rng.choice(p, s, replace=False))
        g = grad(zt)
        cuts.append((np.r_[eta, z], np.r_[1.0, -g], f(zt) - g @ zt, INF))
    b.add_rows(cuts)
    for _ in range(10):
        res = b.solve()
        zz = np.rint(res.x[z])
        if res.x[eta] >= f(zz) * (1 - 1e-9) - 1e-9:
            break
        g = grad(zz)
        b.add_rows([(np.r_[eta, z], np.r_[1.0, -g], f(zz) - g @ zz, INF)])
    top = np.argsort(-w)[:s]
    assert set(np.flatnonzero(zz)) == set(top.tolist())
    assert res.objective == pytest.approx(f(indicator(p, top)), rel=1e-6)
    assert res.bound <= res.objective + 1e-9


def test_time_limit_raises(name):
    b = get_backend(name)
    market_split(b, m=4)
    t0 = time.perf_counter()
    with pytest.raises(SolverTimeLimitError, match="time limit"):
        b.solve(time_limit=0.1)
    assert time.perf_counter() - t0 < 5.0


def test_default_time_limit_from_constructor(name):
    b = get_backend(name, time_limit=0.1)
    market_split(b, m=4)
    with pytest.raises(SolverTimeLimitError):
        b.solve()


# -- factory --------------------------------------------------------------------------
def test_unknown_backend_name():
    with pytest.raises(ValueError, match="backend"):
        get_backend("nope")


def test_unavailable_package(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda n, *a, **k: None if n == "gurobipy" else real(n, *a, **k))
    assert "gurobi" not in available_backends()
    with pytest.raises(BackendUnavailableError, match="gurobipy"):
        get_backend("gurobi")
    with pytest.raises(ImportError):              # also an ImportError for callers
        get_backend("gurobi")


def test_highs_is_always_available():
    assert "highs" in available_backends()
    b = get_backend("highs")
    assert b.name == "highs" and b.n_cols == 0
    assert get_backend(b) is b
