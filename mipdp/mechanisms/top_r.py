"""The top-R sampler (Prastakos et al., 2025, Algorithm 1; SPEC §2.1).

Privacy
-------
Neighbours: replace one row.  Score: the truncated objective
``L̃(S) = min(L(S), L(S_(R)))`` with ``S_(1..R)`` the exact ``R`` best supports for a
**data-independent** ``R``.  ``L`` has sensitivity ``Δ``; the ``R``-th order statistic
of Δ-sensitive values is Δ-sensitive; the minimum of two Δ-sensitive functions is
Δ-sensitive.  Sampling ``S`` with probability ``∝ exp(-ε L̃(S) / (2Δ))`` is therefore
exactly the exponential mechanism: **pure ε-DP for every fixed R**.  The outside
bucket is drawn by uncapped rejection from uniform supports, so no extra privacy
cost arises (unlike the capped loop of Prastakos et al.'s (2025) Theorem 1).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from .exponential import gumbel_argmax, log_normalize

__all__ = ["TopRMechanism"]

_ENUMERATE_COMPLEMENT_MAX = 200_000


@dataclass
class TopRMechanism:
    """Exponential mechanism on the truncated score, from the exact top-R set.

    Parameters
    ----------
    supports : ndarray, shape (R, s)
        The exact ``R`` best supports, best first (sorted indices in each row).
    values : ndarray, shape (R,)
        Their objectives, ascending.
    p : int
        Number of features.
    epsilon : float
        Privacy parameter of one draw.
    sensitivity : float
        ``Δ`` of ``L`` under replace-one neighbours.
    """

    supports: np.ndarray
    values: np.ndarray
    p: int
    epsilon: float
    sensitivity: float
    _index: dict = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.supports = np.asarray(self.supports, dtype=np.intp)
        self.values = np.asarray(self.values, dtype=float)
        self.R, self.s = self.supports.shape
        self.n_supports = math.comb(self.p, self.s)
        if self.R > self.n_supports:
            raise ValueError("supports: more rows than there are supports")
        self._index = {tuple(r): i for i, r in enumerate(self.supports.tolist())}
        ref = self.values[0]
        coef = self.epsilon / (2.0 * self.sensitivity)
        inside = -coef * (self.values - ref)
        n_out = self.n_supports - self.R
        out = -math.inf if n_out == 0 else math.log(n_out) - coef * (self.values[-1] - ref)
        self.log_bucket = log_normalize(np.append(inside, out))

    @property
    def log_prob_outside_each(self) -> float:
        """Log-probability of one particular support outside the top-R."""
        n_out = self.n_supports - self.R
        return -math.inf if n_out == 0 else float(self.log_bucket[-1] - math.log(n_out))

    def log_probability(self, support) -> float:
        """Exact log-probability that one draw outputs ``support``."""
        key = tuple(sorted(int(i) for i in support))
        if len(key) != self.s or len(set(key)) != self.s or not all(0 <= i < self.p for i in key):
            return -math.inf
        i = self._index.get(key)
        return float(self.log_bucket[i]) if i is not None else self.log_prob_outside_each

    def log_probability_bounds(self, support) -> tuple[float, float]:
        """``(lp, lp)``: this mechanism's law is known exactly."""
        lp = self.log_probability(support)
        return lp, lp

    def sample(self, rng: np.random.Generator, size: int = 1) -> np.ndarray:
        """``size`` independent draws, shape ``(size, s)``."""
        buckets = gumbel_argmax(self.log_bucket, rng, size=size)
        out = np.empty((size, self.s), dtype=np.intp)
        for d, j in enumerate(buckets):
            out[d] = self.supports[j] if j < self.R else self._sample_outside(rng)
        return out

    def _sample_outside(self, rng: np.random.Generator) -> np.ndarray:
        n_out = self.n_supports - self.R
        if self.n_supports <= _ENUMERATE_COMPLEMENT_MAX and 2 * n_out < self.n_supports:
            pick = int(rng.integers(n_out))
            for comb in itertools.combinations(range(self.p), self.s):
                if comb not in self._index:
                    if pick == 0:
                        return np.array(comb, dtype=np.intp)
                    pick -= 1
        while True:  # uncapped rejection: expected N / (N - R) <= 2 tries
            S = np.sort(rng.choice(self.p, size=self.s, replace=False))
            if tuple(S.tolist()) not in self._index:
                return S
