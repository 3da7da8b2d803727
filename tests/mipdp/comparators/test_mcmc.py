"""MCMC (Roy & Tewari): inner l1-constrained solver, stationary law, target privacy, inputs."""

import collections
import itertools
import math

import numpy as np
import pytest
from scipy import optimize, stats

from mipdp.comparators.mcmc import l1_ball_lstsq, l1_ball_lstsq_pgd, mcmc, project_l1_ball
from mipdp.exceptions import PrivacyLeakWarning

B = (0.5, 0.5)


def scipy_l1_lstsq(XS, y, radius):
    """Split b = u - v, u, v >= 0, sum(u + v) <= radius; solved by SLSQP."""
    s = XS.shape[1]
    G, c = XS.T @ XS, XS.T @ y

    def f(w):
        b = w[:s] - w[s:]
        return b @ G @ b - 2 * c @ b

    def g(w):
        b = w[:s] - w[s:]
        gb = 2 * (G @ b - c)
        return np.concatenate([gb, -gb])

    res = optimize.minimize(f, np.zeros(2 * s), jac=g, method="SLSQP",
                            bounds=[(0, None)] * (2 * s),
                            constraints=[{"type": "ineq", "fun": lambda w: radius - w.sum(),
                                          "jac": lambda w: -np.ones(2 * s)}],
                            options={"ftol": 1e-14, "maxiter": 1000})
    return res.x[:s] - res.x[s:]


def rss(XS, y, b):
    r = y - XS @ b
    return float(r @ r)


def test_projection_onto_l1_ball_far_outside():
    """Entries whose last bit exceeds the radius (neighbour fuzz, issue 28): the largest one
    is kept (it raised IndexError: the test ``u_1 > u_1 - r`` rounded to False)."""
    w = project_l1_ball(np.array([2.5e89, -1e95, 5e89, 5e89]), 1.0)
    np.testing.assert_array_equal(w, [0.0, -1.0, 0.0, 0.0])
    X = np.zeros((4, 5))
    X[3] = [0.25, 1e5, 0.5, 0.5, -1.0]
    y = np.array([1e4, -1e4, -1e4, 1e300])
    res = mcmc(X, y, 4, 1.0, bounds=(1e100, 1e100), n_iter=1, random_state=4)
    assert res.support.shape == (4,)


def test_projection_onto_l1_ball():
    rng = np.random.default_rng(0)
    for _ in range(100):
        v = rng.normal(size=int(rng.integers(1, 8))) * 3
        r = float(rng.uniform(0.1, 5))
        w = project_l1_ball(v, r)
        assert np.abs(w).sum() <= r + 1e-12
        if np.abs(v).sum() <= r:
            np.testing.assert_array_equal(w, v)
        else:
            assert np.abs(w).sum() == pytest.approx(r)
            # optimality: <v - w, u - w> <= 0 for feasible u (vertices of the ball)
            for j in range(v.size):
                for sgn in (-1, 1):
                    u = np.zeros(v.size)
                    u[j] = sgn * r
                    assert (v - w) @ (u - w) <= 1e-9


def test_l1_constrained_least_squares_is_exact():
    rng = np.random.default_rng(1)
    for trial in range(60):
        n, s = int(rng.integers(4, 40)), int(rng.integers(1, 6))
        XS = rng.normal(size=(n, s))
        y = rng.normal(size=n) * 2 + XS @ rng.normal(size=s)
        if trial % 6 == 0 and s > 1:
            XS[:, -1] = XS[:, 0]                        # rank deficient
        radius = float(rng.uniform(0.05, 4))
        b = l1_ball_lstsq(XS, y, radius)
        assert np.abs(b).sum() <= radius * (1 + 1e-10)
        ref = min(rss(XS, y, scipy_l1_lstsq(XS, y, radius)),
                  rss(XS, y, l1_ball_lstsq_pgd(XS, y, radius, n_iter=50000)))
        assert rss(XS, y, b) <= ref * (1 + 1e-8) + 1e-10
    XS = rng.normal(size=(30, 3))
    y = XS @ np.array([0.1, -0.1, 0.05])
    np.testing.assert_allclose(l1_ball_lstsq(XS, y, 10.0), [0.1, -0.1, 0.05], atol=1e-12)


def target_log_probs(X, y, s, eps, radius, factor):
    """Exact log pi(S) ∝ -eps L(S) / (factor Delta_u) over all supports (clipped data)."""
    Xc, yc = np.clip(X, -B[0], B[0]), np.clip(y, -B[1], B[1])
    delta_u = (radius * B[0] + B[1]) ** 2
    subsets = list(itertools.combinations(range(X.shape[1]), s))
    L = np.array([rss(Xc[:, list(S)], yc, l1_ball_lstsq(Xc[:, list(S)], yc, radius))
                  for S in subsets])
    logits = -eps * L / (factor * delta_u)
    return subsets, logits - np.logaddexp.reduce(logits), L, delta_u


def test_objective_sensitivity_and_exact_privacy_of_target():
    rng = np.random.default_rng(2)
    X = rng.uniform(-0.6, 0.6, size=(12, 5))
    y = X[:, 0] - X[:, 2] + 0.05 * rng.normal(size=12)
    eps, radius = 1.0, 2.0
    subsets, lp, L, delta_u = target_log_probs(X, y, 2, eps, radius, 2.0)
    for r in itertools.product((-0.5, 0.5), repeat=6):
        X2, y2 = X.copy(), y.copy()
        X2[3], y2[3] = r[:5], r[5]
        _, lq, L2, _ = target_log_probs(X2, y2, 2, eps, radius, 2.0)
        assert np.max(np.abs(L - L2)) <= delta_u + 1e-9
        assert np.max(np.abs(lp - lq)) <= eps + 1e-9
    # add/remove: L only grows when a row is added, so factor 1 suffices
    _, lp1, L, _ = target_log_probs(X, y, 2, eps, radius, 1.0)
    for r in itertools.product((-0.5, 0.5), repeat=6):
        X2, y2 = np.vstack([X, r[:5]]), np.append(y, r[5])
        _, lq1, L2, _ = target_log_probs(X2, y2, 2, eps, radius, 1.0)
        assert np.all(L2 >= L - 1e-12) and np.all(L2 - L <= delta_u + 1e-9)
        assert np.max(np.abs(lp1 - lq1)) <= eps + 1e-9


def test_chain_samples_the_target():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 5)) * 0.4
    y = X[:, 1] + X[:, 3] + 0.1 * rng.normal(size=40)
    eps, radius = 3.0, 2.0
    subsets, lp, _, _ = target_log_probs(X, y, 2, eps, radius, 2.0)
    res = mcmc(X, y, 2, eps, bounds=B, l1_radius=radius, n_iter=40, random_state=4, n_draws=1500)
    counts = collections.Counter(tuple(int(i) for i in s) for s in res.supports)
    observed = np.array([counts[S] for S in subsets], float)
    expected = 1500 * np.exp(lp)
    keep = expected >= 5
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] < 5:
        obs, exp = obs[:-1], exp[:-1]
    assert stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue > 1e-3


def test_result_recovery_and_honest_guarantee():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(1500, 30)) * 0.3
    y = X[:, [1, 3, 5, 7]].sum(axis=1) + 0.2 * rng.normal(size=1500)
    X0, y0 = X.copy(), y.copy()
    res = mcmc(X, y, 4, 5.0, bounds=B, l1_radius=2.0, n_iter=600, random_state=0, n_draws=2)
    np.testing.assert_array_equal(res.support, [1, 3, 5, 7])
    assert res.supports.shape == (2, 4)
    assert res.epsilon == pytest.approx(10.0) and math.isnan(res.delta)
    assert "ONLY IF the chain has mixed" in str(res.guarantee) and res.neighbour == "replace-one"
    assert not res.is_private and res.guarantee.status == "conditional"
    assert res.sensitivity == pytest.approx((2.0 * 0.5 + 0.5) ** 2)
    assert res.info["target_scale"] == pytest.approx(5.0 / (2 * res.sensitivity))
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)
    ar = mcmc(X, y, 4, 5.0, bounds=B, l1_radius=2.0, n_iter=5, neighbours="add_remove",
              random_state=0)
    assert ar.info["target_scale"] == pytest.approx(5.0 / ar.sensitivity)


def test_reproducible_no_global_rng_and_warning():
    rng = np.random.default_rng(6)
    X, y = rng.normal(size=(50, 8)), rng.normal(size=50)
    state = np.random.get_state()[1].copy()
    a = mcmc(X, y, 2, 1.0, bounds=B, n_iter=50, random_state=1)
    b = mcmc(X, y, 2, 1.0, bounds=B, n_iter=50, random_state=1)
    np.testing.assert_array_equal(a.supports, b.supports)
    np.testing.assert_array_equal(np.random.get_state()[1], state)
    with pytest.warns(PrivacyLeakWarning):
        mcmc(X, y, 2, 1.0, n_iter=5, random_state=0)


def test_bad_inputs():
    rng = np.random.default_rng(7)
    X, y = rng.normal(size=(50, 8)), rng.normal(size=50)
    with pytest.raises(ValueError, match="s"):
        mcmc(X, y, 8, 1.0, bounds=B)
    with pytest.raises(ValueError, match="s"):
        mcmc(X, y, 0, 1.0, bounds=B)
    with pytest.raises(ValueError, match="eps"):
        mcmc(X, y, 2, -2.0, bounds=B)
    with pytest.raises(ValueError, match="l1_radius"):
        mcmc(X, y, 2, 1.0, bounds=B, l1_radius=0.0)
    with pytest.raises(ValueError, match="n_iter"):
        mcmc(X, y, 2, 1.0, bounds=B, n_iter=-1)
    with pytest.raises(TypeError, match="n_iter"):
        mcmc(X, y, 2, 1.0, bounds=B, n_iter=2.5)
    with pytest.raises(TypeError, match="bounds"):
        mcmc(X, y, 2, 1.0, bounds="wide")


def test_objective_in_scaled_units_never_overflows():
    """Issue 39's overflow class: ``||y - X_S b||^2`` summed n residuals up to
    ``(radius b_x + b_y)^2`` each, and overflowed on a neighbour only (D: 179 rows at
    b_y = 1e153 and one at 0, 1.79e308; D': the last one at b_y too, inf).  In units of
    ``radius b_x + b_y`` the objective is at most n, and both neighbours run alike."""
    import numpy as np

    from mipdp.comparators import mcmc
    b, n = 1e153, 180
    X = np.zeros((n, 3))
    y = np.full(n, b)
    y[-1] = 0.0
    y2 = np.full(n, b)
    for yd in (y, y2):
        with np.errstate(over="raise", invalid="raise"):
            res = mcmc(X, yd, 1, 1.0, bounds=(b, b), l1_radius=1e-3, n_iter=5, random_state=0)
        assert res.support.size == 1
