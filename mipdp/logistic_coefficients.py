r"""Private logistic coefficients on a released support: objective perturbation.

A classifier's coefficients on a support ``Ŝ`` that was itself released privately (for
instance by :func:`~mipdp.private_bss` with ``loss="hinge"``).  The hinge loss is not
differentiable, which objective perturbation needs, so the coefficients are fitted with the
logistic loss ``ℓ(z) = log(1 + e^{−z})``, ``z = y xᵀβ``, ``y ∈ {−1, +1}`` (Chaudhuri,
Monteleoni and Sarwate 2011, "Differentially private empirical risk minimization", JMLR;
their Algorithm 2 for logistic regression), calibrated here for both neighbour notions of
the package exactly as :mod:`mipdp.coefficients` does for least squares.

Mechanism
---------
Rows clipped to a public bound ``|x_ij| ≤ b_x`` (labels are ±1), ``k = |Ŝ|``.  The
logistic loss has ``|ℓ'| ≤ 1`` and ``0 < ℓ'' ≤ 1/4``, so over all of ``R^k`` (no ball is
needed)::

    ζ    = b_x √k              bound on ||∇ℓ(β; x, y)||₂ = |ℓ'| ||x||
    λ_H  = k b_x² / 4          bound on the eigenvalue of the rank-1 Hessian ℓ'' x xᵀ
    ε_J  = log(1 + λ_H / λ_r)       and  Δ = 0                       if that is ≤ ε/2
    ε_J  = ε/2                      and  Δ = λ_H / (e^{ε/2} − 1) − λ_r   otherwise
    ε_b  = ε − ε_J,   Δ_G = 2ζ (replace-one) or ζ (add/remove)

Draw ``b`` with density ``∝ exp(−ε_b ||b|| / Δ_G)`` and release
``β̂ = argmin_β Σ_i ℓ(y_i x_iᵀβ) + ½ (λ_r + Δ) ||β||² + bᵀβ`` (solved by damped Newton
steps, each by the eigendecomposition of ``Σ ℓ'' x xᵀ`` with its eigenvalues plus ``Λ``
floored at ``Λ``, which no row can make fail, then polished by full Newton steps until
``G(β̂) = −b`` holds to machine precision; the objective is strongly convex).

Guarantee
---------
**ε-DP (pure) given Ŝ, under the notion of the call.**  The proof is that of
:mod:`mipdp.coefficients` with ``F = R^k`` (no sphere part): ``b = −G(β̂; D)``,
``G(β; D) = Σ_i ∇ℓ(β; z_i) + Λβ``, ``Λ = λ_r + Δ > 0``, is a bijection, the density of
``β̂`` is ``ν(b_D) det(H_D(β̂) + ΛI)`` with ``H_D(β) = Σ_i ℓ''(y_i x_iᵀβ) x_i x_iᵀ``;
between neighbours the noise value moves by at most ``Δ_G`` (one gradient removed and one
added under replace-one, one gradient under add/remove) and the Hessian by one or two
rank-1 terms of eigenvalue ``≤ λ_H``, whose determinant ratios the matrix determinant
lemma bounds by ``1 + λ_H/Λ`` (the other rows' terms ``ℓ''(y_i x_iᵀβ̂) x_i x_iᵀ`` are the
same on both sides at the same ``β̂``).  So the density ratio is at most
``e^{ε_b + ε_J} = e^ε``.  The logistic loss is infinitely differentiable, as the proof
needs.  For ``k = 1`` the law is in closed form (``G`` is increasing in ``β``:
``P(β̂ ≤ t) = P(b ≥ −G(t; D))``, a Laplace tail); ``tests/mipdp/test_logistic_coefficients.py``
checks the log-ratio of the densities on neighbouring data sets against ``ε``.

What is returned: ``coef`` (private) and the guarantee; the noise is not returned.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .coefficients import sample_l2_laplace
from .guarantee import Guarantee, Neighbour

__all__ = ["LogisticCalibration", "logistic_calibration", "logistic_objective_gradient",
           "private_logistic_coefficients"]


@dataclass(frozen=True)
class LogisticCalibration:
    """Data-free constants of :func:`private_logistic_coefficients` (module docstring)."""

    epsilon: float
    zeta: float
    lambda_h: float
    ridge: float
    extra_ridge: float
    epsilon_jacobian: float
    epsilon_noise: float
    noise_scale: float
    neighbours: str
    sensitivity: float


def logistic_calibration(k: int, eps: float, *, b_x: float, ridge: float = 0.0,
                         neighbours: str = "replace_one") -> LogisticCalibration:
    """Calibration of logistic objective perturbation for ``k`` coefficients."""
    if not (isinstance(k, (int, np.integer)) and k >= 1):
        raise ValueError(f"k: expected a positive integer, got {k!r}")
    if not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"eps: expected a finite positive number, got {eps!r}")
    if not (math.isfinite(b_x) and b_x > 0):
        raise ValueError(f"b_x: expected a finite positive bound on |x_ij|, got {b_x!r}")
    if not (math.isfinite(ridge) and ridge >= 0):
        raise ValueError(f"ridge: expected a finite number >= 0, got {ridge!r}")
    if neighbours not in ("replace_one", "add_remove"):
        raise ValueError(f"neighbours: expected 'replace_one' or 'add_remove', got "
                         f"{neighbours!r}")
    zeta = b_x * math.sqrt(k)
    lam_h = k * b_x * b_x / 4.0
    eps_j = math.log1p(lam_h / ridge) if ridge > 0 else math.inf
    if eps_j <= eps / 2:
        extra = 0.0
    else:
        # λ_H / (e^{ε/2} − 1), written so that it does not overflow for a large ε
        extra = lam_h * math.exp(-eps / 2) / -math.expm1(-eps / 2) - ridge
        if not ridge + extra >= np.finfo(float).tiny:
            raise ValueError(f"eps: {eps!r} is too large for logistic objective perturbation "
                             "(the regulariser it needs underflows); use eps <= 1000")
        eps_j = math.log1p(lam_h / (ridge + extra))
    eps_b = eps - eps_j
    sens = (2.0 if neighbours == "replace_one" else 1.0) * zeta
    return LogisticCalibration(float(eps), float(zeta), float(lam_h), float(ridge),
                               float(extra), float(eps_j), float(eps_b), float(sens / eps_b),
                               neighbours, float(sens))


def _sigmoid(z: np.ndarray) -> np.ndarray:
    out = np.empty_like(z)
    pos = z >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-z[pos]))
    ez = np.exp(z[~pos])
    out[~pos] = ez / (1.0 + ez)
    return out


def logistic_objective_gradient(beta: np.ndarray, X: np.ndarray, y: np.ndarray,
                                total_ridge: float) -> np.ndarray:
    """``G(β) = Σ_i ∇ℓ(β; x_i, y_i) + Λβ`` (the map whose value is ``−b`` at the output)."""
    z = y * (X @ beta)
    return X.T @ (-y * _sigmoid(-z)) + total_ridge * beta


def _fit(X: np.ndarray, y: np.ndarray, b: np.ndarray, total_ridge: float) -> np.ndarray:
    """``argmin_β Σ ℓ(y_i x_iᵀβ) + ½Λ||β||² + bᵀβ`` by damped Newton (strongly convex)."""
    k = X.shape[1]
    beta = np.zeros(k)

    def objective(v):
        z = y * (X @ v)
        return float(np.sum(np.logaddexp(0.0, -z)) + 0.5 * total_ridge * v @ v + b @ v)

    def newton(v):
        s = _sigmoid(-(y * (X @ v)))
        g = X.T @ (-y * s) + total_ridge * v + b
        H = (X * (s * (1.0 - s))[:, None]).T @ X
        # H + ΛI has every eigenvalue >= Λ: solve by its eigendecomposition with the
        # eigenvalues floored at Λ, which cannot fail whatever the rows (a LU solve raised
        # "Singular matrix" on duplicate columns once Λ was below their rounding error)
        lam, V = np.linalg.eigh(0.5 * (H + H.T))
        return g, V @ ((V.T @ g) / np.maximum(lam + total_ridge, total_ridge))

    f = objective(beta)
    for _ in range(200):
        g, step = newton(beta)
        t = 1.0
        while True:
            cand = beta - t * step
            fc = objective(cand)
            if fc <= f - 1e-4 * t * float(g @ step) or t < 1e-12:
                break
            t *= 0.5
        if not fc <= f:               # no decrease left in floating point: at the optimum
            break
        beta, f = cand, fc
        # stop when the step is below the rounding of β (not when f stops changing: near
        # the optimum f changes by ~|g|², which stopped one Newton step short)
        if np.max(np.abs(t * step)) <= 4 * np.finfo(float).eps * max(1.0, np.max(np.abs(beta))):
            break
    # near the optimum f changes by about |g|², below its rounding: polish with full Newton
    # steps while the gradient's norm falls (quadratic convergence), to machine precision
    g, step = newton(beta)
    for _ in range(8):
        g_new, step_new = newton(beta - step)
        if not np.linalg.norm(g_new) < np.linalg.norm(g):
            break
        beta, g, step = beta - step, g_new, step_new
    return beta


def private_logistic_coefficients(X: np.ndarray, y: np.ndarray, eps: float, *, b_x: float,
                                  ridge: float = 0.0, neighbours: str = "replace_one",
                                  rng: np.random.Generator
                                  ) -> tuple[np.ndarray, Guarantee, LogisticCalibration]:
    """ε-DP logistic coefficients of ``y`` (±1) on all columns of ``X`` (module docstring).

    ``X`` holds the (public) support's columns only and is clipped here to ``±b_x``; the
    caller accounts for the release.  Returns ``(coef, guarantee, calibration)``.

    Notes
    -----
    Neighbours: one row replaced (``n`` public) or one row added or removed.  Sensitivity of
    the gradient sum: ``2 b_x √k`` (replace-one) or ``b_x √k`` (add/remove).  Guarantee:
    pure ε-DP given the columns (a private release or data-independent).
    """
    cal = logistic_calibration(X.shape[1], eps, b_x=b_x, ridge=ridge, neighbours=neighbours)
    Xc = np.clip(np.asarray(X, dtype=float), -b_x, b_x)
    yc = np.where(np.asarray(y, dtype=float) > 0, 1.0, -1.0)
    b = sample_l2_laplace(Xc.shape[1], cal.noise_scale, rng)
    coef = _fit(Xc, yc, b, cal.ridge + cal.extra_ridge)
    nb = Neighbour.ADD_REMOVE if neighbours == "add_remove" else Neighbour.REPLACE_ONE
    g = Guarantee.pure(
        cal.epsilon, nb, "objective perturbation of the logistic loss, given the support "
        "(itself a private release or data-independent)", sensitivity=cal.sensitivity,
        notes=(f"gradient moves by <= {cal.sensitivity:.4g}; noise epsilon "
               f"{cal.epsilon_noise:.4g}, Jacobian epsilon {cal.epsilon_jacobian:.4g}, extra "
               f"ridge {cal.extra_ridge:.4g}; data clipped to b_x = {float(b_x):g}"))
    return coef, g, cal
