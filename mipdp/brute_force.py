"""Exhaustive reference computations for small problems (the correctness oracle).

Everything here enumerates all ``C(p, s)`` supports, so it is only for small ``p``.
The least-squares objective is computed by a code path independent of
:mod:`mipdp.losses.least_squares` (SVD of ``X_S``, bracketing root finder, residual
formed explicitly) so that tests comparing the two are meaningful.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
from scipy.optimize import brentq
from scipy.special import logsumexp

__all__ = ["all_supports", "least_squares_value", "brute_force_values",
           "exponential_mechanism_log_probs", "hinge_value", "huber_value", "huber_loss"]

_MAX_SUPPORTS = 2_000_000


def all_supports(p: int, s: int) -> np.ndarray:
    """All ``C(p, s)`` supports in lexicographic order, shape ``(N, s)``."""
    if math.comb(p, s) > _MAX_SUPPORTS:
        raise ValueError(f"p, s: C({p}, {s}) supports is too many for brute force")
    return np.array(list(itertools.combinations(range(p), s)), dtype=np.intp).reshape(-1, s)


def least_squares_value(X: np.ndarray, y: np.ndarray, S, ridge: float, radius: float) -> float:
    """``min_{||β|| <= r} (1/2n)||y - X_S β||² + (λ/2n)||β||²`` by SVD and bracketing."""
    n = X.shape[0]
    XS = X[:, list(S)]
    U, sig, Vt = np.linalg.svd(XS, full_matrices=False)
    c = sig * (U.T @ y)

    def coef(nu):
        return Vt.T @ (c / (sig ** 2 + ridge + nu))

    beta = coef(0.0)
    if np.linalg.norm(beta) > radius:
        hi = np.linalg.norm(c) / radius + 1.0
        nu = brentq(lambda v: np.linalg.norm(coef(v)) - radius, 0.0, hi, xtol=1e-15, rtol=1e-15,
                    maxiter=500)
        beta = coef(nu)
    res = y - XS @ beta
    return float((res @ res + ridge * (beta @ beta)) / (2.0 * n))


def brute_force_values(objective_or_fn, p: int, s: int) -> tuple[np.ndarray, np.ndarray]:
    """``(supports, values)`` over all supports; ``objective_or_fn(S) -> float``."""
    sup = all_supports(p, s)
    vals = np.array([objective_or_fn(S) for S in sup])
    return sup, vals


def exponential_mechanism_log_probs(scores: np.ndarray, epsilon: float,
                                    sensitivity: float) -> np.ndarray:
    """Log-probabilities ``∝ -ε score / (2Δ)`` of the exponential mechanism (minimising)."""
    lw = -epsilon * (np.asarray(scores) - np.min(scores)) / (2.0 * sensitivity)
    return lw - logsumexp(lw)



# -- classification / robust regression references (independent of mipdp.losses) -------------
def _cvxpy_ball(objective_fn, s: int, radius: float):
    """Solve ``min objective_fn(β) s.t. ||β|| <= r`` with cvxpy + Clarabel at tight tolerances."""
    import cvxpy as cp

    b = cp.Variable(s)
    prob = cp.Problem(cp.Minimize(objective_fn(b)), [cp.norm(b, 2) <= radius])
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-13, tol_gap_rel=1e-13, tol_feas=1e-13,
               tol_ktratio=1e-10, max_iter=500)
    beta = np.asarray(b.value, float)
    nb = np.linalg.norm(beta)
    if nb > radius:  # interior-point solutions may sit a hair outside the ball
        beta *= radius / nb
    return beta, float(prob.value)


def hinge_value(X: np.ndarray, y: np.ndarray, S, ridge: float, radius: float, *,
                check_gap: float = 1e-8) -> float:
    """``min_{||β|| <= r} (1/n) Σ max(0, 1 - y_k x_{k,S}ᵀβ) + (λ/n)||β||²`` (reference).

    A conic (second-order cone) formulation solved by cvxpy + Clarabel, an interior-point
    method with its own primal-dual certificate (tolerances ``1e-13``); the objective is
    then re-evaluated exactly at the (radially projected) ``β``.  If that value and the
    solver's differ by more than ``check_gap`` (relative) a ``RuntimeError`` is raised.
    """
    import cvxpy as cp

    n = X.shape[0]
    Z = X[:, list(S)] * np.asarray(y, float)[:, None]
    beta, val = _cvxpy_ball(lambda b: cp.sum(cp.pos(1 - Z @ b)) / n
                            + ridge / n * cp.sum_squares(b), Z.shape[1], radius)
    primal = float(np.maximum(0.0, 1.0 - Z @ beta).mean() + ridge / n * (beta @ beta))
    if abs(primal - val) > check_gap * max(1.0, abs(primal)):
        raise RuntimeError(f"hinge_value: solver value {val!r} vs objective {primal!r}")
    return primal


def huber_loss(r: np.ndarray, delta: float) -> np.ndarray:
    """Huber ``ℓ(r) = r²/2`` for ``|r| <= δ``, ``δ(|r| - δ/2)`` otherwise."""
    a = np.abs(r)
    return np.where(a <= delta, 0.5 * r * r, delta * (a - 0.5 * delta))


def huber_value(X: np.ndarray, y: np.ndarray, S, ridge: float, radius: float,
                huber_delta: float = 1.0, *, check_gap: float = 1e-8) -> float:
    """``min_{||β|| <= r} (1/n) Σ ℓ_δ(y_k - x_{k,S}ᵀβ) + (λ/2n)||β||²`` (reference).

    cvxpy's ``huber(r, M) = 2 ℓ_M(r)``, solved by Clarabel at tolerances ``1e-13``; the
    objective is re-evaluated exactly at the projected ``β`` and a Frank–Wolfe gap
    ``∇fᵀβ + r||∇f||`` (a rigorous suboptimality bound over the ball) above
    ``check_gap`` raises ``RuntimeError``.
    """
    import cvxpy as cp

    n = X.shape[0]
    XS = X[:, list(S)]
    def objective(b: Any) -> Any:
        # cvxpy's stubs type huber's threshold M as int; a float is a valid threshold
        h = cp.huber(y - XS @ b, huber_delta)  # type: ignore[arg-type]
        return cp.sum(h) / (2 * n) + ridge / (2 * n) * cp.sum_squares(b)

    beta, _ = _cvxpy_ball(objective, XS.shape[1], radius)
    g = -XS.T @ np.clip(y - XS @ beta, -huber_delta, huber_delta) / n + ridge / n * beta
    val = float(huber_loss(y - XS @ beta, huber_delta).mean() + ridge / (2 * n) * (beta @ beta))
    fw = float(g @ beta + radius * np.linalg.norm(g))
    if fw > check_gap * max(1.0, val):
        raise RuntimeError(f"huber_value: Frank-Wolfe gap {fw:.3g} above {check_gap:g}")
    return val
