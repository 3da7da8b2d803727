"""Batch machinery shared by the hinge and Huber objectives.

Both solve many supports at once in chunks of an ``(m, s, n)`` block and certify each
value by a dual bound; this mixin holds the chunking and the Gram blocks, the objectives
their own ``_solve_chunk``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..data import ClippedDesign

#: entries of the ``(m, s, n)`` block held at once
CHUNK = 1_000_000
#: cache ``XᵀX`` when it is at most this many columns wide
GRAM_MAX_P = 2048


class BatchedCertifiedSolves:
    """Mixin of a support objective with a batched, certified ``_solve_chunk``.

    Needs ``X``, ``n``, ``p``, ``_gram`` (``None`` until first used), ``n_evaluations``,
    ``max_gap`` and ``_solve_chunk(supports, want_dual) -> (P, D, B, A)``.
    """

    # provided by the objective (annotations only: no class attributes are created)
    X: ClippedDesign
    n: int
    p: int
    _gram: np.ndarray | None
    n_evaluations: int
    max_gap: float
    _solve_chunk: Callable[[np.ndarray, bool], tuple]

    def _grams(self, supports: np.ndarray, Zt: np.ndarray) -> np.ndarray:
        """``X_SᵀX_S`` for each support (``Zt``: the support's rows, shape ``(m, s, n)``;
        for the hinge, whose rows are ``y_k x_k`` with ``y_k = ±1``, the same matrix)."""
        if self.p <= GRAM_MAX_P:
            if self._gram is None:
                self._gram = self.X.gram()
            return self._gram[supports[:, :, None], supports[:, None, :]]
        return np.matmul(Zt, Zt.transpose(0, 2, 1))

    def _solve_batched(self, supports, want_dual: bool):
        """``(P, min(D, P), B, A)`` of every support, in chunks of :data:`CHUNK` entries."""
        supports = np.atleast_2d(np.asarray(supports, dtype=np.intp))
        m, s = supports.shape
        self.n_evaluations += m
        step = max(1, CHUNK // (self.n * s))
        parts = [self._solve_chunk(supports[lo:lo + step], want_dual) for lo in range(0, m, step)]
        P = np.concatenate([q[0] for q in parts])
        D = np.concatenate([q[1] for q in parts])
        B = np.concatenate([q[2] for q in parts])
        A = np.concatenate([q[3] for q in parts]) if want_dual else None
        if m:
            self.max_gap = max(self.max_gap, float(np.max(P - D)))
        return P, np.minimum(D, P), B, A
