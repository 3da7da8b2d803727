"""Objective perturbation (Kifer, Smith & Thakurta 2012, Alg. 1) on hand-computed cases."""

import math

import numpy as np
import pytest

from mipdp.experiments.coefficients import (objective_perturbation, op_constants,
                                            sample_l2_laplace, split_budget)

# 4 rows, 2 orthogonal columns inside the clipping box: X^T X = diag(0.5, 0.5), X^T y = (0.5, 0.25)
X = np.array([[0.5, 0.0, 9.0], [-0.5, 0.0, 9.0], [0.0, 0.5, 9.0], [0.0, -0.5, 9.0]])
Y = np.array([0.5, -0.5, 0.25, -0.25])


def test_constants_by_hand():
    c = op_constants(k=2, eps_fit=1.0, b_x=0.5, b_y=0.5, radius=1.1)
    zeta = (0.5 + 0.5 * math.sqrt(2) * 1.1) * 0.5 * math.sqrt(2)   # |y - x'b| ||x||
    assert c["zeta"] == pytest.approx(zeta)
    assert c["lambda_h"] == pytest.approx(0.5)                      # k b_x^2
    assert c["Delta"] == pytest.approx(1.0)                          # 2 lambda / eps
    assert c["noise_scale"] == pytest.approx(2 * zeta)               # 2 zeta / eps
    assert split_budget(1.0) == (0.5, 0.5)


def test_minimiser_by_hand_interior():
    # A = diag(0.5) + (ridge 1 + Delta 1) I = 2.5 I ; q = X^T y - b = (0.5, 0.25) - (0.1, -0.2)
    fit = objective_perturbation(X, Y, [0, 1], 1.0, bounds=(0.5, 0.5), ridge=1.0, radius=1.1,
                                 noise=[0.1, -0.2])
    np.testing.assert_allclose(fit.coef, [0.4 / 2.5, 0.45 / 2.5], rtol=1e-10)
    assert "1-DP" in fit.guarantee and "Kifer" in fit.guarantee


def test_minimiser_by_hand_on_the_ball():
    # A is a multiple of I, so the constrained minimiser is r q / ||q||
    fit = objective_perturbation(X, Y, [0, 1], 1.0, bounds=(0.5, 0.5), ridge=1.0, radius=0.1,
                                 noise=[0.1, -0.2])
    q = np.array([0.4, 0.45])
    np.testing.assert_allclose(fit.coef, 0.1 * q / np.linalg.norm(q), rtol=1e-8)


def test_clipping_applied():
    Xbig = X * 4.0               # clipped back to +-0.5: same answer
    Ybig = Y.copy()
    Ybig[0] = 3.0                # clipped back to 0.5
    fit = objective_perturbation(Xbig, Ybig, [0, 1], 1.0, bounds=(0.5, 0.5), ridge=1.0,
                                 radius=1.1, noise=[0.1, -0.2])
    np.testing.assert_allclose(fit.coef, [0.16, 0.18], rtol=1e-10)


def test_noise_law():
    rng = np.random.default_rng(0)
    k, scale = 3, 2.0
    b = np.array([sample_l2_laplace(k, scale, rng) for _ in range(20000)])
    norms = np.linalg.norm(b, axis=1)
    assert norms.mean() == pytest.approx(k * scale, rel=0.03)       # Gamma(k, scale)
    assert norms.var() == pytest.approx(k * scale ** 2, rel=0.06)
    np.testing.assert_allclose(b.mean(axis=0), 0.0, atol=0.1)       # uniform direction


def test_noise_scale_used():
    # with the noise drawn internally, b = q_0 - q where q_0 = X^T y; recover ||b|| law
    norms = []
    for seed in range(400):
        fit = objective_perturbation(X, Y, [0, 1], 2.0, bounds=(0.5, 0.5), ridge=1.0,
                                     radius=1e6, random_state=seed)
        norms.append(np.linalg.norm(fit.noise))
    c = op_constants(2, 2.0, 0.5, 0.5, 1e6)
    assert np.mean(norms) == pytest.approx(2 * c["noise_scale"], rel=0.1)
