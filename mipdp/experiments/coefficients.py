r"""Private coefficients on a released support by objective perturbation.

Kifer, Smith & Thakurta (2012), *Private convex empirical risk minimization and
high-dimensional regression*, Algorithm 1, used as seed 002 App. D.1 uses it: the
support ``Ŝ`` is released with ``ε_select`` and the coefficients on ``Ŝ`` are fitted with
``ε_fit``; by basic composition the pair ``(Ŝ, β̂)`` is ``(ε_select + ε_fit)``-DP.  The
seed splits the budget in half (``ε_select = ε_fit = ε/2``); :func:`split_budget` does that.

Algorithm (pure-DP variant, ``δ = 0``), for the least-squares objective of
``private_bss`` restricted to ``Ŝ`` (``k = |Ŝ|`` coordinates), on the ball ``F = {||β||₂ ≤ r}``::

    J(β; D) = (1/n) Σ_i ½ (y_i − x_{i,Ŝ}ᵀβ)²  +  (λ_ridge / 2n) ||β||²
    Δ       = 2 λ_H / ε_fit                                  (extra ridge)
    b       ~ density ∝ exp(−ε_fit ||b||₂ / (2ζ))  on R^k    (||b|| ~ Gamma(k, 2ζ/ε_fit),
                                                               direction uniform)
    β̂       = argmin_{β ∈ F}  J(β; D) + (Δ / 2n) ||β||² + bᵀβ / n

**Guarantee** (KST 2012, Theorem 2 with ``δ = 0``): β̂ is ``ε_fit``-DP with respect to
replacing one row, given ``Ŝ`` (which is public after its own private release), provided

* the per-sample loss ``ℓ(β; x, y) = ½ (y − x_Ŝᵀβ)²`` is convex and twice continuously
  differentiable on ``F`` (it is);
* it is ``ζ``-Lipschitz on ``F``: ``||∇ℓ|| = |y − xᵀβ| ||x_Ŝ|| ≤ (b_y + b_x √k r) b_x √k = ζ``;
* its Hessian ``x_Ŝ x_Ŝᵀ`` has rank ≤ 1 and eigenvalue ``||x_Ŝ||² ≤ k b_x² = λ_H``;
* the data are bounded: ``|x_ij| ≤ b_x``, ``|y_i| ≤ b_y`` — enforced here by clipping to
  public bounds (seed 002: ``b_x = b_y = 0.5``), never read off the data;
* ``F`` is a closed convex set and the ridge ``λ_ridge`` and ``r`` are fixed in advance.

The minimisation is exact: the perturbed problem is a ridge problem on a ball,
``min (yᵀy − 2 qᵀβ + βᵀAβ) / 2n`` with ``A = X_ŜᵀX_Ŝ + (λ_ridge + Δ) I`` and
``q = X_Ŝᵀy − b``, solved by the trust-region secular equation
(:func:`mipdp.losses.least_squares.ridge_ball_values`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ObjectivePerturbation", "objective_perturbation", "op_constants", "sample_l2_laplace",
           "split_budget"]


def split_budget(eps: float, fraction_select: float = 0.5) -> tuple[float, float]:
    """``(ε_select, ε_fit)`` with ``ε_select = fraction_select · ε`` (seed 002: one half)."""
    if not 0 < fraction_select < 1:
        raise ValueError(f"fraction_select: must be in (0, 1), got {fraction_select}")
    return fraction_select * eps, (1.0 - fraction_select) * eps


def op_constants(k: int, eps_fit: float, b_x: float, b_y: float, radius: float) -> dict:
    """Lipschitz constant ``ζ``, smoothness ``λ_H``, extra ridge ``Δ`` and noise scale.

    ``noise_scale = 2ζ / ε_fit`` is the scale of the Gamma law of ``||b||``.
    """
    sk = np.sqrt(k)
    zeta = (b_y + b_x * sk * radius) * b_x * sk
    lam_h = k * b_x * b_x
    return {"zeta": float(zeta), "lambda_h": float(lam_h), "Delta": float(2.0 * lam_h / eps_fit),
            "noise_scale": float(2.0 * zeta / eps_fit)}


def sample_l2_laplace(k: int, scale: float, rng: np.random.Generator) -> np.ndarray:
    """A draw of ``b ∈ R^k`` with density ``∝ exp(−||b||₂ / scale)``.

    ``||b||`` is ``Gamma(k, scale)`` and the direction is uniform on the sphere.
    """
    direction = rng.standard_normal(k)
    direction /= np.linalg.norm(direction)
    return rng.gamma(shape=k, scale=scale) * direction


@dataclass
class ObjectivePerturbation:
    """Output of :func:`objective_perturbation`."""

    coef: np.ndarray      # β̂ on the support, in the support's order
    support: np.ndarray
    epsilon: float
    noise: np.ndarray     # b (not to be released: it and the data determine β̂)
    constants: dict
    guarantee: str


def objective_perturbation(X, y, support, eps_fit: float, *, bounds=(0.5, 0.5),
                           ridge: float = 120.0, radius: float = 1.1, random_state=None,
                           noise=None) -> ObjectivePerturbation:
    """Private least-squares coefficients on ``support`` (KST 2012, Algorithm 1, δ = 0).

    Parameters
    ----------
    X, y : array_like
        Training data (clipped here to ``bounds``).
    support : array_like of int
        The (already privately released) support.
    eps_fit : float
        Budget of this step.
    bounds : (b_x, b_y)
        Public clipping bounds.
    ridge, radius : float
        ``λ_ridge`` and ``r`` of the objective (seed 002: 120 and 1.1).
    random_state : None, int, SeedSequence or Generator
    noise : array_like, optional
        Use this ``b`` instead of drawing one (tests only; not private).
    """
    from .._validation import check_epsilon, check_random_state, clip_data
    from ..losses.least_squares import ridge_ball_values
    eps_fit = check_epsilon(eps_fit, "eps_fit")
    S = np.sort(np.asarray(support, dtype=np.intp))
    k = S.size
    b_x, b_y = bounds
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    n = X.shape[0]
    Xc, yc = clip_data(X[:, S], y, b_x, b_y)
    c = op_constants(k, eps_fit, b_x, b_y, radius)
    if noise is None:
        b = sample_l2_laplace(k, c["noise_scale"], check_random_state(random_state))
    else:
        b = np.asarray(noise, dtype=float).reshape(k)
    A = Xc.T @ Xc + (ridge + c["Delta"]) * np.eye(k)
    q = Xc.T @ yc - b
    _, beta, _ = ridge_ball_values(A[None], q[None], float(yc @ yc), n, radius,
                                   return_coef=True)
    guarantee = (f"{eps_fit:g}-DP (pure) given the released support, replace-one neighbours: "
                 f"objective perturbation (Kifer, Smith & Thakurta 2012, Alg. 1) with "
                 f"zeta = {c['zeta']:.4g}, lambda = {c['lambda_h']:.4g}, Delta = {c['Delta']:.4g}, "
                 f"data clipped to b_x = {b_x:g}, b_y = {b_y:g}, ||beta|| <= {radius:g}")
    return ObjectivePerturbation(beta[0], S, eps_fit, b, c, guarantee)
