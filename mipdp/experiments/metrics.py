"""Metrics of the experiments (docs/experiments.md), one implementation for every method.

* :func:`exact_recovery` — whether a released support equals the true one;
* :func:`support_f1` — F1 of the released support against the true one;
* :func:`utility_loss` — ``L(Ŝ) − L(S*)`` with ``L`` the (clipped) support objective of
  ``private_bss`` and ``S*`` its exact minimiser (:func:`best_support`);
* :func:`test_mse` — mean squared error of a coefficient vector on held-out data;
* wall time is measured by the runner around each method call.

None of these figures is private: they are evaluation quantities computed with the
true support and the non-private optimum.
"""

from __future__ import annotations

import numpy as np

__all__ = ["exact_recovery", "support_f1", "SupportLoss", "best_support", "utility_loss",
           "test_mse"]


def _as_rows(supports) -> np.ndarray:
    return np.sort(np.atleast_2d(np.asarray(supports, dtype=np.intp)), axis=1)


def exact_recovery(supports, truth) -> np.ndarray:
    """Boolean per row of ``supports``: equal (as a set) to ``truth``."""
    S = _as_rows(supports)
    t = np.sort(np.asarray(truth, dtype=np.intp))
    if S.shape[1] != t.size:
        return np.zeros(S.shape[0], dtype=bool)
    return np.all(S == t[None, :], axis=1)


def support_f1(supports, truth) -> np.ndarray:
    """F1 score per row of ``supports``: ``2 |Ŝ ∩ S| / (|Ŝ| + |S|)``."""
    S = _as_rows(supports)
    t = np.asarray(truth, dtype=np.intp)
    hits = np.isin(S, t).sum(axis=1)
    return 2.0 * hits / (S.shape[1] + t.size)


class SupportLoss:
    """The support objective ``L(S)`` of :func:`mipdp.selection.private_bss` on given data.

    The data are clipped to ``bounds`` exactly as ``private_bss`` clips them, so
    ``L`` is the function the samplers rank supports by.
    """

    def __init__(self, X, y, s: int, *, loss: str = "least_squares", bounds=(0.5, 0.5),
                 ridge: float | None = None, radius: float | None = None) -> None:
        from .._validation import clip_data
        from ..losses import get_loss
        b_x, b_y = bounds
        self.loss = get_loss(loss, ridge=ridge, radius=radius).resolve(int(s), b_x, b_y)
        y = self.loss.check_targets(np.asarray(y, dtype=float))
        self.b_x, self.b_y = b_x, b_y
        self.s = int(s)
        self.n = X.shape[0]
        Xc, yc = clip_data(np.asarray(X, dtype=float), y, b_x,
                           b_y if self.loss.needs_y_bound else None)
        self.objective = self.loss.bind(Xc, yc)
        self._best: tuple[np.ndarray, float] | None = None

    def values(self, supports) -> np.ndarray:
        """``L(S)`` for every row of ``supports``."""
        S = _as_rows(supports)
        uniq, inv = np.unique(S, axis=0, return_inverse=True)
        return self.objective.values(uniq)[np.ravel(inv)]

    def best(self) -> tuple[np.ndarray, float]:
        """``(S*, L(S*))``: the exact minimiser, by outer approximation (cached)."""
        if self._best is None:
            from ..enumeration import SupportEnumerator
            scale = self.loss.sensitivity(self.n, self.s, self.b_x, self.b_y)
            S, v = SupportEnumerator(self.objective, self.s, scale=scale).optimum()
            self._best = (np.sort(np.asarray(S, dtype=np.intp)), float(v))
        return self._best


def best_support(X, y, s, **kwargs) -> tuple[np.ndarray, float]:
    """``(S*, L(S*))`` of the support objective on ``(X, y)`` (see :class:`SupportLoss`)."""
    return SupportLoss(X, y, s, **kwargs).best()


def utility_loss(supports, support_loss: SupportLoss) -> np.ndarray:
    """``L(Ŝ) − L(S*)`` per row of ``supports`` (non-negative up to rounding)."""
    _, best = support_loss.best()
    return support_loss.values(supports) - best


def test_mse(X_test, y_test, support, coef) -> float:
    """``mean((y − X_Ŝ β̂)²)`` on held-out data."""
    support = np.asarray(support, dtype=np.intp)
    pred = np.asarray(X_test, dtype=float)[:, support] @ np.asarray(coef, dtype=float)
    r = np.asarray(y_test, dtype=float) - pred
    return float(r @ r / r.size)
