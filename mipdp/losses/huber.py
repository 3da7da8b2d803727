"""Huber loss (robust sparse regression) with ridge and an ℓ2-ball constraint.

    L(S) = min_{||β||_2 <= r}  (1/n) Σ_k ℓ_δ(y_k - x_{k,S}ᵀβ)  +  (λ/2n) ||β||²

    ℓ_δ(ρ) = ρ²/2  (|ρ| <= δ),   δ(|ρ| - δ/2)  (|ρ| > δ),   ψ_δ(ρ) = ℓ_δ'(ρ) = clip(ρ, -δ, δ).

Solver
------
The objective is convex, C¹ and piecewise quadratic in ``β``.  On a fixed *structure*
(which residuals are in the quadratic zone ``Q`` and which are above/below it) it is a
ridge quadratic ``½βᵀ(X_QᵀX_Q + λI)β/n - bᵀβ/n``, ``b = X_Qᵀy_Q + δ(Σ_{ρ>δ} x_k -
Σ_{ρ<-δ} x_k)``.  :func:`~mipdp.losses.hinge.ball_newton` takes exact Newton steps on the
current piece restricted to the ball (trust-region subproblem solved by
eigendecomposition and the secular equation), with Armijo backtracking across pieces;
once the structure of the optimum is found the step lands on the exact minimiser, so the
method terminates finitely.  Certificate: the Frank–Wolfe gap ``∇f(β)ᵀβ + r||∇f(β)||``
bounds ``f(β) - L(S)`` from above (convexity over the ball); it is recorded in
``max_gap`` and is at rounding level (``<= 1e-15``) in the tests.

Outer-approximation cut
-----------------------
Huber's conjugate gives ``ℓ_δ(ρ) = max_{|a| <= δ} aρ - a²/2``, so the perspective
relaxation (``(λ/2n) Σ β_i² / z_i``) is

    c(z) = max_{|a_k| <= δ, μ >= 0}  (1/n) Σ (a_k y_k - a_k²/2) - μ r²
                                      - Σ_i w_i² z_i / (2n (λ + 2nμ z_i)),   w = Xᵀa,

a maximum of functions convex in ``z``.  At ``z = 1_S`` the optimal ``a = ψ_δ(ρ)``
(``ρ = y - X_S β``), and

    g_i = -(λ/2n) β_i²                  (i ∈ S;  β_i = w_i / (λ + 2nμ))
    g_i = -(x_iᵀ ψ_δ(ρ))² / (2nλ)        (i ∉ S;  the limit of β_i/z_i = x_iᵀψ_δ(ρ)/λ)

which reduces to the least-squares cut when no residual exceeds ``δ``.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_positive
from .base import Loss, SupportObjective
from .hinge import ball_newton

__all__ = ["Huber", "HuberObjective"]

_CHUNK = 4_000_000


def _huber(r: np.ndarray, delta: float) -> np.ndarray:
    a = np.abs(r)
    return np.where(a <= delta, 0.5 * r * r, delta * (a - 0.5 * delta))


class Huber(Loss):
    """Huber loss with threshold ``huber_delta``, ridge ``(λ/2n)||β||²``, ball ``||β|| <= r``.

    Sensitivity (replace-one, ``|x_ij| <= b_x``, ``|y_k| <= b_y``).  For a feasible
    ``β`` on a size-``s`` support, Cauchy–Schwarz gives ``|y_k - x_{k,S}ᵀβ| <= b_y +
    ||x_{k,S}||·||β|| <= b_y + b_x √s r``.  ``ℓ_δ`` is even and nondecreasing in
    ``|ρ|`` with ``ℓ_δ(0) = 0``, so each sample's loss lies in ``[0, B]`` with
    ``B = ℓ_δ(b_y + b_x r √s)``.  Replacing one row changes ``(1/n) Σ_k ℓ_δ`` by at most
    ``B/n`` at every ``β``, hence the minimum over the (data-free) feasible set moves by
    at most ``Δ = B/n``; the ridge term is data-free.

    Parameters
    ----------
    ridge : float, default 120
        ``λ > 0``.
    radius : float, default 1.1
        ``r > 0`` (finite).
    huber_delta : float, default 1.0
        Threshold ``δ > 0`` between the quadratic and linear zones.
    """

    name = "huber"
    needs_y_bound = True

    def __init__(self, ridge: float = 120.0, radius: float = 1.1,
                 huber_delta: float = 1.0) -> None:
        super().__init__(ridge, radius)
        if not np.isfinite(self.radius):
            raise ValueError("radius: must be finite (the sensitivity of L(S) depends on it)")
        self.huber_delta = check_positive(huber_delta, "huber_delta")

    def sample_bound(self, s: int, b_x: float, b_y: float | None) -> float:
        if b_y is None:
            raise ValueError("bounds: the Huber loss needs a bound on |y|")
        return float(_huber(np.asarray(b_y + b_x * self.radius * np.sqrt(s)), self.huber_delta))

    def bind(self, X: np.ndarray, y: np.ndarray) -> "HuberObjective":
        return HuberObjective(self, X, y)

    def __repr__(self) -> str:
        return (f"Huber(ridge={self.ridge:g}, radius={self.radius:g}, "
                f"huber_delta={self.huber_delta:g})")


class HuberObjective(SupportObjective):
    """:class:`Huber` on fixed data (``max_gap``: largest certified suboptimality)."""

    def __init__(self, loss: Huber, X: np.ndarray, y: np.ndarray) -> None:
        super().__init__(loss, X, y)
        self.lam = loss.ridge
        self.radius = loss.radius
        self.hd = loss.huber_delta
        self.max_gap = 0.0

    def _fgh(self, XS: np.ndarray):
        n, lam, hd, y = self.n, self.lam, self.hd, self.y

        def fgh(beta, idx, order):
            Xi = XS[idx]
            rho = y - np.einsum("mns,ms->mn", Xi, beta)
            f = _huber(rho, hd).mean(axis=1) + lam / (2 * n) * np.einsum("ms,ms->m", beta, beta)
            if order == 0:
                return f
            g = -np.einsum("mn,mns->ms", np.clip(rho, -hd, hd), Xi) / n + (lam / n) * beta
            wq = (np.abs(rho) <= hd) / n
            H = np.matmul(Xi.transpose(0, 2, 1) * wq[:, None, :], Xi)
            H += (lam / n) * np.eye(beta.shape[1])
            return f, g, H

        return fgh

    def solve(self, supports: np.ndarray):
        """Values ``L(S)``, minimisers ``β`` and Frank–Wolfe gaps for many supports."""
        supports = np.atleast_2d(np.asarray(supports, dtype=np.intp))
        m, s = supports.shape
        self.n_evaluations += m
        step = max(1, _CHUNK // (self.n * s))
        vals, betas, gaps = [], [], []
        for lo in range(0, m, step):
            XS = self.X[:, supports[lo:lo + step]].transpose(1, 0, 2)  # (m, n, s)
            fgh = self._fgh(XS)
            beta = ball_newton(fgh, np.zeros((XS.shape[0], s)), self.radius, self.n)
            norm = np.linalg.norm(beta, axis=1)
            over = norm > self.radius
            beta[over] *= (self.radius / norm[over])[:, None]
            f, g, _ = fgh(beta, np.arange(beta.shape[0]), 2)
            gap = np.einsum("ms,ms->m", g, beta) + self.radius * np.linalg.norm(g, axis=1)
            vals.append(f)
            betas.append(beta)
            gaps.append(np.maximum(gap, 0.0))
        gaps = np.concatenate(gaps)
        self.max_gap = max(self.max_gap, float(gaps.max()))
        return np.concatenate(vals), np.concatenate(betas), gaps

    def values(self, supports: np.ndarray) -> np.ndarray:
        return self.solve(supports)[0]

    def value_and_cut(self, support: np.ndarray) -> tuple[float, np.ndarray]:
        """``(L(S), g)`` with ``g_i = -w_i² / (2nλ'')``, ``w = Xᵀψ_δ(ρ)``, ``λ'' = max(λ, ||w_S||/r)``."""
        S = np.asarray(support, dtype=np.intp)
        val, beta, _ = self.solve(S[None])
        psi = np.clip(self.y - self.X[:, S] @ beta[0], -self.hd, self.hd)
        w = self.X.T @ psi
        lam_pp = max(self.lam, float(np.linalg.norm(w[S])) / self.radius)
        return float(val[0]), -(w * w) / (2.0 * self.n * lam_pp)
