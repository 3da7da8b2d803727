"""Shared helpers for the screening tests: small problems and a reference ℓ1-ball solver."""

import numpy as np
import pytest
from scipy.optimize import minimize

from mipdp.screening.losses import get_loss


def _solve_l1_ball(X, y, lam, loss="squared"):
    """min F(w) s.t. ||w||_1 <= lam by SLSQP on w = a − b, a, b >= 0 (independent of mipdp's FW)."""
    loss = get_loss(loss)
    p = X.shape[1]

    def split(z):
        return z[:p] - z[p:]

    def fun(z):
        return loss.objective(X, y, split(z))

    def jac(z):
        g = loss.gradient(X, y, split(z))
        return np.concatenate([g, -g])

    cons = {"type": "ineq", "fun": lambda z: lam - z.sum(), "jac": lambda z: -np.ones(2 * p)}
    res = minimize(fun, np.full(2 * p, lam / (4 * p)), jac=jac, method="SLSQP",
                   bounds=[(0.0, None)] * (2 * p), constraints=[cons],
                   options={"ftol": 1e-16, "maxiter": 5000})
    w = split(res.x)
    norm = np.abs(w).sum()
    if norm > lam:                     # SLSQP may overshoot the constraint by ~1e-10
        w *= lam / norm
    return w, loss.objective(X, y, w)


@pytest.fixture
def solve_l1_ball():
    return _solve_l1_ball


def _problem(seed, n=80, p=10, loss="squared", active=0.6):
    """Data in [-1, 1]; λ = active·||w_LS||_1 (squared) so that the ℓ1 constraint binds."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (n, p))
    beta = np.zeros(p)
    beta[rng.choice(p, 3, replace=False)] = rng.choice([-1.0, 1.0], 3) * rng.uniform(0.5, 1.0, 3)
    if loss == "squared":
        y = np.clip(X @ beta + 0.1 * rng.standard_normal(n), -1.0, 1.0)
        w_ls = np.linalg.lstsq(X, y, rcond=None)[0]
        lam = active * np.abs(w_ls).sum()
    else:
        y = (rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-3.0 * X @ beta))).astype(float)
        lam = 1.0
    return X, y, float(lam)


@pytest.fixture
def make_problem():
    return _problem
