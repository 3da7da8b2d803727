"""The mistakes sampler (Prastakos et al., 2025, §2.1.2) and its propose-test-release guard.

Privacy
-------
Neighbours: replace one row.  With ``S*`` the optimum, class ``k`` holds the
``m_k = C(s,k) C(p-s,k)`` supports with ``|S \\ S*| = k``; its score
``M_k = min(L_k, L_0 + θ_k)`` (``L_k`` the class minimum, ``θ_k`` a data-independent
level, see :func:`mipdp.selection.mistakes_theta`) is Δ-sensitive *when S\\* is the same
on both neighbours*.  The class is
drawn with log-weight ``log m_k - ε M_k / (2Δ)`` and the output is a **uniform member
of the class**, so the output law depends on the data only through the class law:
**ε-DP conditionally on** ``L(S_(2)) - L(S_(1)) > 2Δ`` (Prastakos et al., 2025, Theorem 2).  That
condition is data-dependent; :func:`ptr_test` makes the whole unconditionally
``(ε + ε₀, δ)``-DP.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .exponential import gumbel_argmax, log_comb, log_normalize, uniform_subset

__all__ = ["MistakesMechanism", "ptr_distance", "ptr_test"]


@dataclass
class MistakesMechanism:
    """Exponential mechanism over mistake classes, uniform within the class.

    Parameters
    ----------
    center : ndarray, shape (s,)
        The optimum ``S*``.
    scores : ndarray, shape (K + 1,)
        ``M_0 = L(S*)``, ``M_k = min(L_k, L_0 + θ_k)`` for ``k = 1..K``, ``K = min(s, p - s)``.
    p : int
    epsilon : float
    sensitivity : float
    """

    center: np.ndarray
    scores: np.ndarray
    p: int
    epsilon: float
    sensitivity: float

    def __post_init__(self) -> None:
        self.center = np.sort(np.asarray(self.center, dtype=np.intp))
        self.scores = np.asarray(self.scores, dtype=float)
        self.s = self.center.size
        K = min(self.s, self.p - self.s)
        if self.scores.size != K + 1:
            raise ValueError(f"scores: expected {K + 1} class scores, got {self.scores.size}")
        self.log_class_sizes = np.array([log_comb(self.s, k) + log_comb(self.p - self.s, k)
                                         for k in range(K + 1)])
        coef = self.epsilon / (2.0 * self.sensitivity)
        self.log_class = log_normalize(self.log_class_sizes - coef * (self.scores - self.scores[0]))
        self._center_set = set(self.center.tolist())
        self._complement = np.setdiff1d(np.arange(self.p), self.center)

    def log_probability(self, support) -> float:
        """Exact log-probability that one draw outputs ``support``."""
        S = sorted(int(i) for i in support)
        if len(S) != self.s or len(set(S)) != self.s or not all(0 <= i < self.p for i in S):
            return -math.inf
        k = self.s - len(self._center_set.intersection(S))
        return float(self.log_class[k] - self.log_class_sizes[k])

    def log_probability_bounds(self, support) -> tuple[float, float]:
        """``(lp, lp)``: this mechanism's law is known exactly."""
        lp = self.log_probability(support)
        return lp, lp

    def sample(self, rng: np.random.Generator, size: int = 1) -> np.ndarray:
        """``size`` independent draws, shape ``(size, s)``."""
        ks = gumbel_argmax(self.log_class, rng, size=size)
        out = np.empty((size, self.s), dtype=np.intp)
        for d, k in enumerate(ks):
            keep = np.setdiff1d(self.center, uniform_subset(self.center, int(k), rng))
            add = uniform_subset(self._complement, int(k), rng)
            out[d] = np.sort(np.concatenate([keep, add]))
        return out


def ptr_distance(gap: float, sensitivity: float) -> float:
    """``d = max(0, (G - 2Δ) / (2Δ))``: a 1-sensitive lower bound on the distance to instability.

    ``G = L(S_(2)) - L(S_(1))`` changes by at most ``2Δ`` when one row is replaced, and
    ``G > 2Δ`` implies every neighbour has the same optimum; so ``d`` has sensitivity 1
    and ``d > 0`` only where the mistakes sampler is ε-DP.
    """
    return max(0.0, (gap - 2.0 * sensitivity) / (2.0 * sensitivity))


def ptr_test(gap: float, sensitivity: float, epsilon_test: float, delta: float,
             rng: np.random.Generator) -> bool:
    """Propose-test-release: pass iff ``d + Laplace(1/ε₀) > log(1/δ)/ε₀``.

    ε₀-DP (Laplace mechanism on a 1-sensitive statistic); on a dataset where the
    mistakes sampler is not stable (``d = 0``) it passes with probability
    ``exp(-log(1/δ))/2 = δ/2 <= δ``.  Passing then running the ε-DP mistakes sampler,
    and otherwise an ε-DP fallback, is ``(ε + ε₀, δ)``-DP for every dataset.
    """
    d = ptr_distance(gap, sensitivity)
    return bool(d + rng.laplace(scale=1.0 / epsilon_test) > math.log(1.0 / delta) / epsilon_test)
