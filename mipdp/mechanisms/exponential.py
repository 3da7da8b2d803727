"""Log-space building blocks of the exponential mechanism.

Nothing here exponentiates a large number: weights live as logarithms, draws use the
Gumbel-max trick, normalisation uses log-sum-exp, and binomial coefficients are exact
integers turned into logarithms (``math.log`` of a Python int is exact to rounding
for any size).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp

__all__ = ["log_comb", "log_normalize", "gumbel_argmax", "uniform_subset"]


def log_comb(n: int, k: int) -> float:
    """``log C(n, k)`` exactly rounded (``-inf`` when the coefficient is 0)."""
    if k < 0 or k > n:
        return -math.inf
    return math.log(math.comb(int(n), int(k)))


def log_normalize(log_weights: np.ndarray) -> np.ndarray:
    """Log-probabilities ``log w_j - logsumexp(log w)`` (``-inf`` weights stay ``-inf``)."""
    lw = np.asarray(log_weights, dtype=float)
    return lw - logsumexp(lw)


def gumbel_argmax(log_weights: np.ndarray, rng: np.random.Generator, size: int | None = None):
    """Draw index ``j`` with probability ``∝ exp(log_weights[j])`` by the Gumbel-max trick."""
    lw = np.asarray(log_weights, dtype=float)
    if size is None:
        return int(np.argmax(lw + rng.gumbel(size=lw.shape)))
    return np.argmax(lw[None, :] + rng.gumbel(size=(size, lw.size)), axis=1)


def uniform_subset(pool: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random ``k``-subset of ``pool`` (sorted)."""
    if k == 0:
        return np.empty(0, dtype=np.intp)
    return np.sort(rng.choice(pool, size=k, replace=False))
