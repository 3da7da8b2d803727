"""Exhaustive reference computations for small problems (the correctness oracle).

Everything here enumerates all ``C(p, s)`` supports, so it is only for small ``p``.
The least-squares objective is computed by a code path independent of
:mod:`mipdp.losses.least_squares` (SVD of ``X_S``, bracketing root finder, residual
formed explicitly) so that tests comparing the two are meaningful.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import logsumexp

__all__ = ["all_supports", "least_squares_value", "brute_force_values", "exponential_mechanism_log_probs"]

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


def exponential_mechanism_log_probs(scores: np.ndarray, epsilon: float, sensitivity: float) -> np.ndarray:
    """Log-probabilities ``∝ -ε score / (2Δ)`` of the exponential mechanism (minimising)."""
    lw = -epsilon * (np.asarray(scores) - np.min(scores)) / (2.0 * sensitivity)
    return lw - logsumexp(lw)
