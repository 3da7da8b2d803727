"""Huber loss (robust sparse regression) with ridge and an ℓ2-ball constraint.

    L(S) = min_{||β||_2 <= r}  (1/n) Σ_k ℓ_δ(y_k - x_{k,S}ᵀβ)  +  (λ/2n) ||β||²

    ℓ_δ(ρ) = ρ²/2  (|ρ| <= δ),   δ(|ρ| - δ/2)  (|ρ| > δ),   ψ_δ(ρ) = ℓ_δ'(ρ) = clip(ρ, -δ, δ).

Solver (batched over many supports)
-----------------------------------
The objective is convex, C¹ and piecewise quadratic in ``β``.  On a fixed *structure*
(which residuals are in the quadratic zone ``Q`` and which are above/below it) it is a
ridge quadratic.  The start is the least-squares solution (the structure "every residual
in ``Q``", exact from the cached Gram matrix without a pass over the data), accepted at
once when its certificate holds (no residual beyond ``δ``); otherwise
:func:`~mipdp.losses._newton.ball_newton` takes exact Newton steps on the current piece
restricted to the ball (trust-region subproblem) with an exact line search; once the
structure of the optimum is found the step lands on the exact minimiser, so the method
terminates finitely.  A support that is not certified after that is restarted from zero
with more iterations; one that still is not raises
:class:`~mipdp.exceptions.CertificationError`.

Certificate
-----------
With ``a = ψ_δ(ρ)`` at the returned ``β`` (``|a_k| <= δ``) and ``w = X_Sᵀa``, the dual

    D(a, μ) = (1/n) Σ_k (a_k y_k - a_k²/2) - μ r² - ||w||² / (2nλ''),   λ'' = λ + 2nμ,

with the best ``μ`` for this ``a`` (``λ'' = max(λ, ||w||/r)``) is a lower bound on
``L(S)`` (weak duality, from ``ℓ_δ(ρ) = max_{|a| <= δ} aρ - a²/2``), and the primal
value ``P`` of the feasible ``β`` an upper bound.  Every returned value has
``P - D <= 1e-12 · max(1, P)``; a support the restart from zero cannot certify to that
is accepted at ``1e-12 · max(ℓ_S, P)``, ``ℓ_S = ℓ_δ(max_k |y_k| + r · max_k ||x_{k,S}||)``
the support's loss scale (the largest loss of one sample at a feasible ``β``, at most
the public ``B``; residuals are computed with an error of about ``ε_mach · ℓ_S``).

Outer-approximation cut, certified
----------------------------------
For any ``|a_k| <= δ`` and ``μ >= 0`` put ``w = Xᵀa`` (all ``p`` columns) and
``λ'' = λ + 2nμ``.  For every support ``T``, minimising the Lagrangian of the problem on
``T`` over ``β_T`` (minimiser ``w_T/λ''``) gives

    L(T) >= φ(a, μ, 1_T) := (1/n) Σ_k (a_k y_k - a_k²/2) - μ r² - Σ_{i ∈ T} w_i² / (2nλ''),

which is linear in ``1_T``; hence with ``D = φ(a, μ, 1_S)``

    L(T) >= D + gᵀ(1_T - 1_S),     g_i = -w_i² / (2nλ'')   for every i,

for every support ``T``, whatever the accuracy of ``(a, μ)``.  The enumeration uses the
certified ``D`` as the cut constant.  On ``S`` this is ``-(λ''/2n) β_i²``; off ``S`` with
the ball inactive it is the least-squares cut with ``ψ_δ(ρ)`` in place of ``ρ``.
"""

from __future__ import annotations

from typing import cast

import numpy as np

from .._validation import check_positive
from ..exceptions import CertificationError
from ._batched import BatchedCertifiedSolves
from ._newton import HuberPiece, ball_newton, margins
from ._tangents import ball_tangent_cuts
from .base import Loss, SupportObjective, _fmt
from .least_squares import ridge_ball_values

__all__ = ["Huber", "HuberObjective"]

#: accepted duality gap, relative to max(1, P)
CERT_TOL = 1e-12


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
    ridge : float, optional
        ``λ > 0``; default: the rule of :func:`mipdp.losses.default_score`.
    radius : float, optional
        ``r > 0`` (finite: the sensitivity depends on it); default: the rule of
        :func:`mipdp.losses.default_score`, ``b_y / (b_x √s)``.
    huber_delta : float, default 1.0
        Threshold ``δ > 0`` between the quadratic and linear zones.
    """

    name = "huber"
    needs_y_bound = True

    def __init__(self, ridge: float | None = None, radius: float | None = None,
                 huber_delta: float = 1.0) -> None:
        super().__init__(ridge, radius)
        self.huber_delta = check_positive(huber_delta, "huber_delta")

    def sample_bound(self, s: int, b_x: float, b_y: float | None) -> float:
        if b_y is None:
            raise ValueError("bounds: the Huber loss needs a bound on |y|")
        return float(_huber(np.asarray(b_y + b_x * cast(float, self.radius) * np.sqrt(s)),
                            self.huber_delta))

    def bind(self, X: np.ndarray, y: np.ndarray) -> HuberObjective:
        return HuberObjective(self, X, y)

    def __repr__(self) -> str:
        return (f"Huber(ridge={_fmt(self.ridge)}, radius={_fmt(self.radius)}, "
                f"huber_delta={self.huber_delta:g})")


class HuberObjective(BatchedCertifiedSolves, SupportObjective):
    """:class:`Huber` on fixed data (``max_gap``: largest certified duality gap ``P - D``)."""

    cost_kind = "huber"

    def __init__(self, loss: Huber, X: np.ndarray, y: np.ndarray) -> None:
        super().__init__(loss, X, y)
        assert loss.ridge is not None and loss.radius is not None  # checked by super()
        self.lam = loss.ridge
        self.radius = loss.radius
        self.hd = loss.huber_delta
        self.max_gap = 0.0
        self.n_fallback = 0
        self._Xty = self.X.rmatvec(y)
        self._gram: np.ndarray | None = None

    def _loss_scale(self, Zt: np.ndarray) -> np.ndarray:
        """``max(1, ℓ_δ(max_k |y_k| + r · max_k ||x_{k,S}||))`` per support: the largest
        loss of a sample at a feasible ``β`` (at most the public ``B``; module notes)."""
        if Zt.shape[2] == 0:
            return np.ones(Zt.shape[0])
        reach = (float(np.max(np.abs(self.y))) + self.radius
                 * np.sqrt(np.max(np.einsum("msn,msn->mn", Zt, Zt), axis=1)))
        return np.maximum(1.0, _huber(reach, self.hd))

    def _bounds(self, Zt: np.ndarray, beta: np.ndarray):
        """Primal values, dual bounds and dual weights ``a = ψ_δ(ρ)`` at feasible ``β``."""
        n, lam, r = self.n, self.lam, self.radius
        rho = margins(Zt, beta, self.y)
        P = _huber(rho, self.hd).sum(axis=1) / n + lam / (2 * n) * np.einsum("ms,ms->m", beta, beta)
        a = np.clip(rho, -self.hd, self.hd)
        w = np.matmul(Zt, a[:, :, None])[:, :, 0]
        D, _ = _huber_dual(a, w, self.y, lam, r, n)
        return P, D, a

    def _solve_chunk(self, supports: np.ndarray, want_dual: bool):
        m, s = supports.shape
        n, lam, r = self.n, self.lam, self.radius
        Zt = self.X.rows_T(supports)  # (m, s, n): only the supports' columns
        G = self._grams(supports, Zt)
        _, beta, _ = ridge_ball_values(G + lam * np.eye(s), self._Xty[supports], 0.0, n, r,
                                       return_coef=True)
        beta = _into_ball(beta, r)
        P, D, a = self._bounds(Zt, beta)
        loss = HuberPiece(self.hd)
        todo = np.flatnonzero(~(P - D <= CERT_TOL * np.maximum(1.0, np.abs(P))))
        if todo.size:  # some residual leaves [-δ, δ]: Newton from the least-squares start
            b1, _ = ball_newton(Zt[todo], self.y, G[todo], loss, lam / n, r, beta[todo])
            beta[todo] = _into_ball(b1, r)
            P[todo], D[todo], a[todo] = self._bounds(Zt[todo], beta[todo])
        bad = np.flatnonzero(~(P - D <= CERT_TOL * np.maximum(1.0, np.abs(P))))
        if bad.size:  # restart from zero with a longer budget
            self.n_fallback += bad.size
            b2, _ = ball_newton(Zt[bad], self.y, G[bad], loss, lam / n, r, np.zeros((bad.size, s)),
                                max_iter=1000)
            b2 = _into_ball(b2, r)
            P2, D2, a2 = self._bounds(Zt[bad], b2)
            better = P2 - D2 < P[bad] - D[bad]
            k = bad[better]
            beta[k], P[k], D[k], a[k] = b2[better], P2[better], D2[better], a2[better]
            # what the strict tolerance cannot certify is accepted at the same relative
            # tolerance of the support's loss scale (module notes)
            ref = self._loss_scale(Zt[bad])
            for i, j in enumerate(bad):
                if not P[j] - D[j] <= CERT_TOL * max(ref[i], abs(P[j])):
                    # no support and no gap in the message: both are data
                    raise CertificationError(
                        f"huber: could not certify the objective of a support to a duality "
                        f"gap of {CERT_TOL:g} times its loss scale; nothing was released. "
                        "Please report this data set.")
        return P, D, beta, (a if want_dual else None)

    def solve(self, supports: np.ndarray, want_dual: bool = False):
        """Certified values ``P``, dual bounds ``D``, minimisers (and dual weights ``ψ_δ(ρ)``).

        ``D <= L(S) <= P`` and ``P - D <= 1e-12 max(1, P)`` (or ``1e-12 max(ℓ_S, P)``,
        module notes) for every support; otherwise
        :class:`~mipdp.exceptions.CertificationError` is raised.
        """
        return self._solve_batched(supports, want_dual)

    def values(self, supports: np.ndarray) -> np.ndarray:
        return self.solve(supports)[0]

    def value_bounds(self, supports: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        P, D, _, _ = self.solve(supports)
        return P, D

    def value_and_cut(self, support: np.ndarray) -> tuple[float, float, np.ndarray]:
        """``(P, D, g)`` with ``g_i = -w_i²/(2nλ'')``, ``w = Xᵀψ_δ(ρ)``, ``λ'' = max(λ, ||w_S||/r)``

        and ``D`` the dual bound at the same ``(a, λ'')`` (module notes: the cut
        ``η >= D + gᵀ(z - 1_S)`` is a global lower bound on ``L``).
        """
        S = np.asarray(support, dtype=np.intp)
        P, _, _, A = self.solve(S[None], want_dual=True)
        a = A[0]
        w = self.X.rmatvec(a)
        D, lam_pp = _huber_dual(a[None], w[S][None], self.y, self.lam, self.radius, self.n)
        self._extra = (tuple(S.tolist()), float(a @ self.y - 0.5 * (a @ a)), w * w,
                       float(lam_pp[0]))
        return (float(P[0]), min(float(D[0]), float(P[0])),
                -(w * w) / (2.0 * self.n * float(lam_pp[0])))

    def extra_cuts(self, support: np.ndarray) -> list[tuple[float, np.ndarray]]:
        """Tangents of the same dual at larger ``λ''`` (:mod:`._tangents`, ``α = 1/2, β = 2``)."""
        ext = getattr(self, "_extra", None)
        if ext is None or ext[0] != tuple(int(i) for i in np.asarray(support)):
            return []
        _, base, c2, lam_pp = ext
        return ball_tangent_cuts(base, c2, support, self.lam, lam_pp, self.radius, self.n,
                                 0.5, 2.0)


def _into_ball(beta: np.ndarray, radius: float) -> np.ndarray:
    nb = np.linalg.norm(beta, axis=1)
    over = nb > radius
    beta[over] *= (radius / nb[over])[:, None]
    return beta


def _huber_dual(a: np.ndarray, w: np.ndarray, y: np.ndarray, lam: float, radius: float, n: int):
    """``D(a, μ)`` with the best ``μ`` (``λ'' = max(λ, ||w||/r)``) and that ``λ''``."""
    nw = np.linalg.norm(w, axis=1)
    lam_pp = np.maximum(lam, nw / radius)
    D = ((a @ y) - 0.5 * np.einsum("mn,mn->m", a, a)) / n \
        - (lam_pp - lam) / (2.0 * n) * radius ** 2 - nw * nw / (2.0 * n * lam_pp)
    return D, lam_pp
