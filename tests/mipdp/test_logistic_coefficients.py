"""Logistic objective perturbation: the exact law of k = 1 on neighbours, and the argmin."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mipdp.logistic_coefficients import (
    _fit,
    logistic_calibration,
    logistic_objective_gradient,
    private_logistic_coefficients,
)


def _log_density(t: np.ndarray, x: np.ndarray, y: np.ndarray, cal) -> np.ndarray:
    """log-density of β̂ (k = 1) at ``t``: ``ν(−G(t)) G'(t)``, ``ν`` Laplace(noise_scale)."""
    lam = cal.ridge + cal.extra_ridge
    z = np.outer(t, y * x)                                  # (T, n)
    sig = 1.0 / (1.0 + np.exp(z))                           # σ(−z)
    G = (-(y * x)[None, :] * sig).sum(axis=1) + lam * t
    dG = (x * x * sig * (1.0 - sig)).sum(axis=1) + lam
    return -np.abs(G) / cal.noise_scale + np.log(dG) - math.log(2 * cal.noise_scale)


@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
@pytest.mark.parametrize("eps,ridge", [(0.5, 0.0), (1.0, 0.0), (1.0, 3.0)])
def test_exact_law_k1_on_neighbours(neighbours, eps, ridge):
    b_x = 0.5
    cal = logistic_calibration(1, eps, b_x=b_x, ridge=ridge, neighbours=neighbours)
    rng = np.random.default_rng(3)
    t = np.linspace(-30, 30, 2001)
    worst = 0.0
    corners = [(-b_x, -1.0), (-b_x, 1.0), (b_x, 1.0), (b_x, -1.0), (0.0, 1.0), (0.2, -1.0)]
    for _ in range(6):
        n = int(rng.integers(1, 8))
        x = rng.uniform(-b_x, b_x, n)
        y = rng.choice([-1.0, 1.0], n)
        base = _log_density(t, x, y, cal)
        for zx, zy in corners:
            if neighbours == "replace_one":
                x2, y2 = x.copy(), y.copy()
                x2[0], y2[0] = zx, zy
                pairs = [(x2, y2)]
            else:
                pairs = [(np.append(x, zx), np.append(y, zy))]
            for x2, y2 in pairs:
                other = _log_density(t, x2, y2, cal)
                worst = max(worst, float(np.max(np.abs(base - other))))
    assert worst <= eps + 1e-9
    assert worst >= 0.3 * eps          # the bound is not vacuous: the laws do differ


def test_the_fit_is_the_argmin():
    rng = np.random.default_rng(0)
    for k in (1, 3, 6):
        X = rng.uniform(-1, 1, (200, k))
        y = rng.choice([-1.0, 1.0], 200)
        b = rng.normal(size=k) * 5
        beta = _fit(X, y, b, 0.7)
        g = logistic_objective_gradient(beta, X, y, 0.7) + b
        assert np.max(np.abs(g)) < 1e-8


def test_release_is_pure_and_clips():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 2)) * 100
    y = np.sign(X[:, 0] + 0.1)
    coef, g, cal = private_logistic_coefficients(X, y, 1.0, b_x=1.0, rng=rng)
    assert coef.shape == (2,) and g.is_pure and g.epsilon == 1.0
    assert cal.sensitivity == pytest.approx(2 * math.sqrt(2))
    assert cal.epsilon_noise + cal.epsilon_jacobian == pytest.approx(1.0)


@pytest.mark.parametrize("bad", [dict(eps=0.0), dict(b_x=-1.0), dict(ridge=-1.0),
                                 dict(neighbours="x")])
def test_bad_calibration_arguments(bad):
    kw = dict(eps=1.0, b_x=1.0, ridge=0.0, neighbours="replace_one") | bad
    with pytest.raises(ValueError):
        logistic_calibration(2, **kw)

