"""A scikit-learn feature selector around :func:`mipdp.private_bss`."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.validation import check_is_fitted

from .selection import private_bss

__all__ = ["PrivateBestSubsetSelector"]


class PrivateBestSubsetSelector(SelectorMixin, BaseEstimator):
    """Select ``s`` features with differentially private best subset selection.

    Parameters are those of :func:`mipdp.private_bss` (one release per ``fit``).

    Attributes
    ----------
    support_ : ndarray of int
        The released support (sorted indices).
    result_ : PrivateBSSResult
        Everything :func:`private_bss` returned (guarantee, timings, statistics).
    n_features_in_ : int

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.linear_model import LinearRegression
    >>> from mipdp.datasets import make_bss_regression
    >>> X, y, _ = make_bss_regression(n=400, p=15, s=2, random_state=0)
    >>> pipe = make_pipeline(PrivateBestSubsetSelector(s=2, eps=1.0, bounds=(0.5, 0.5),
    ...                                                random_state=0), LinearRegression())
    >>> pipe.fit(X, y).predict(X[:2]).shape
    (2,)
    """

    def __init__(self, s: int = 5, eps: float = 1.0, *, bounds=None, ridge: float | None = None,
                 radius: float | None = None, loss="least_squares", method: str = "top_r", R=None,
                 delta=None, eps_test=None, backend="highs", backend_options=None,
                 prescreen=None, time_limit=None, random_state=None) -> None:
        self.s = s
        self.eps = eps
        self.bounds = bounds
        self.ridge = ridge
        self.radius = radius
        self.loss = loss
        self.method = method
        self.R = R
        self.delta = delta
        self.eps_test = eps_test
        self.backend = backend
        self.backend_options = backend_options
        self.prescreen = prescreen
        self.time_limit = time_limit
        self.random_state = random_state

    def fit(self, X, y) -> "PrivateBestSubsetSelector":
        """Release one private support of ``X`` for target ``y``."""
        res = private_bss(X, y, self.s, self.eps, bounds=self.bounds, ridge=self.ridge,
                          radius=self.radius, loss=self.loss, method=self.method, R=self.R,
                          delta=self.delta, eps_test=self.eps_test, backend=self.backend,
                          backend_options=self.backend_options, prescreen=self.prescreen,
                          time_limit=self.time_limit, random_state=self.random_state)
        self.result_ = res
        self.support_ = res.support
        self.n_features_in_ = np.asarray(X).shape[1] if not hasattr(X, "shape") else X.shape[1]
        return self

    def _get_support_mask(self) -> np.ndarray:
        check_is_fitted(self, "support_")
        mask = np.zeros(self.n_features_in_, dtype=bool)
        mask[self.support_] = True
        return mask
