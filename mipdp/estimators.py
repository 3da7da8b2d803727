r"""Private sparse linear models: the support *and* the coefficients released privately.

:class:`PrivateSparseRegression` and :class:`PrivateSparseClassifier` are scikit-learn
estimators whose ``fit`` makes one private release of a whole model:

1. the support ``Ŝ`` (``s`` columns) by :func:`mipdp.private_bss` with
   ``selection_fraction · eps`` (its bounds-free default unless public bounds are
   given);
2. for ``bounds="private"`` only: clipping ranges of the ``s`` selected columns (and of
   ``y`` for regression) with ``bounds.fraction · eps``, by the exponential mechanism for
   quantiles over a public grid (``2(s + 1)`` releases, not ``2(p + 1)``: the support is
   public once released);
3. the coefficients on ``Ŝ`` with the rest:

   ================================  ==============================================  ============
   ``bounds=``                       coefficients                                    guarantee
   ================================  ==============================================  ============
   ``None`` (default, regression)    Tukey mechanism (:func:`mipdp.tukey.             ``(ε, δ)``
                                     tukey_regression`), no data bounds; the
                                     support by the bounds-free default
   ``(b_x, b_y)``, public             objective perturbation
                                     (:func:`mipdp.private_coefficients`;            pure ``ε``
                                     logistic for the classifier) on data clipped
                                     to the bounds
   ``"private"`` / ``PrivateBounds``  objective perturbation on the data mapped by     pure ``ε``
                                     clipping ranges of the *selected* columns and
                                     ``y``, released after the (bounds-free)
                                     selection (:mod:`mipdp.private_ranges`)
   ================================  ==============================================  ============

Guarantee
---------
The model is an adaptive composition of two (or three) releases under one neighbour
notion: the support's (its guarantee from :func:`~mipdp.private_bss`), the ranges' given
the support (pure, :func:`~mipdp.private_ranges.ranges_guarantee`), and the coefficients'
given the support and the ranges (the coefficient mechanism's guarantee holds for every
fixed support and every fixed public bound, and these are the earlier releases' outputs).
By basic composition it is ``(ε_select + ε_ranges + ε_fit, δ_fit)``-DP, the three summing
to ``eps``; ``guarantee_`` states it and
an accountant (``with mipdp.BudgetAccountant(...):``) records it as **one** release.  The
budget is planned from the parameters and checked before the data is read; the nested
releases are not recorded on their own (:data:`mipdp.accounting.NOT_RECORDED`).

A refusal of the Tukey mechanism's propose-test-release check
(:class:`~mipdp.exceptions.PTRRefusedError`) is raised by ``fit`` with nothing released: no
support, no coefficient is set on the estimator.  The refusal itself is an outcome of the
(ε, δ)-DP mechanism (it depends on the data through the noisy test and on the private
support), so the accountant is charged the composed guarantee for it.  A refusal known
from public figures alone (too few rows, under replace-one, for the models the test needs;
or a given ``m`` that is too small) is raised before the selection reads the data, and
nothing is charged.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from types import SimpleNamespace
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ._neighbours import NEIGHBOURS
from ._param_validation import (
    Interval,
    InvalidParameterError,
    StrOptions,
    _Constraint,
    check_less_than,
    validate_parameter_constraints,
)
from ._validation import check_random_state, min_samples
from .accounting import (
    NOT_RECORDED,
    cancels_on_error,
    check_estimator_accountant_visible,
    check_release,
    mark_estimator_state,
    record_release,
)
from .exceptions import PTRRefusedError
from .guarantee import Guarantee, Neighbour, compose
from .private_ranges import MAPPED_BOUNDS, PrivateBounds, as_private_bounds

__all__ = ["PrivateSparseRegression", "PrivateSparseClassifier", "DEFAULT_SELECTION_FRACTION"]

#: Default share of ``eps`` spent on the support (the rest on the coefficients), chosen by
#: the end-to-end benchmark (``python -m mipdp.experiments.model_bench --fractions``;
#: docs/model.md).
DEFAULT_SELECTION_FRACTION = 0.25

#: The ranges of ``bounds="private"``: one per selected column and one for ``y``, from the
#: private ``q``/``(1 − q)``-quantiles (:class:`~mipdp.private_ranges.PrivateBounds`), with
#: ``fraction`` of ``eps`` (chosen by the end-to-end benchmark, docs/model.md).
DEFAULT_SUPPORT_RANGES = PrivateBounds(fraction=0.2, widen=2.0, shared=False)

#: fitted attributes that depend on the data without noise (dropped when pickled unless
#: ``keep_not_private=True``)
_NOT_PRIVATE_ATTRS = ("selection_not_private_", "fit_info_not_private_")
#: the released fitted attributes
_RELEASED_ATTRS = ("coef_", "intercept_", "support_", "guarantee_", "feature_ranges_")


class _PublicPair(_Constraint):
    """A pair ``(b_x, b_y)`` of finite positive numbers (public bounds)."""

    def is_satisfied_by(self, value):
        return (isinstance(value, (tuple, list)) and len(value) == 2
                and all(isinstance(v, Real) and not isinstance(v, bool) and math.isfinite(v)
                        and v > 0 for v in value))

    def __str__(self):
        return "a pair (b_x, b_y) of positive finite numbers chosen without the data"


class _PublicBound(_Constraint):
    """A positive finite number, or a pair whose first entry is one (classifier: ``b_x``)."""

    def is_satisfied_by(self, value):
        if isinstance(value, (tuple, list)) and len(value) == 2:
            value = value[0]
        return (isinstance(value, Real) and not isinstance(value, bool)
                and math.isfinite(value) and value > 0)

    def __str__(self):
        return "a positive finite bound b_x on |x_ij| (or a pair (b_x, anything))"


def _neighbour(neighbours: str) -> Neighbour:
    return Neighbour.ADD_REMOVE if neighbours == "add_remove" else Neighbour.REPLACE_ONE


def _mapped_columns(X: np.ndarray, ranges: np.ndarray) -> np.ndarray:
    """Columns mapped by their released ranges onto ``[−½, ½]`` (post-processing)."""
    lo, hi = ranges[:, 0][None, :], ranges[:, 1][None, :]
    return np.clip((X - 0.5 * (lo + hi)) / (hi - lo), -0.5, 0.5)


class _PrivateSparseModel(BaseEstimator):
    """What the regressor and the classifier share: budget, accounting, pickling."""

    _kind = "regression"

    def _route(self) -> str:
        if self.bounds is None:
            return "tukey"
        if as_private_bounds(self.bounds) is not None:
            return "private"
        return "public"

    def _range_spec(self) -> PrivateBounds | None:
        """The ranges of the support's columns (and ``y``) for ``bounds="private"``."""
        if isinstance(self.bounds, PrivateBounds):
            return self.bounds
        if isinstance(self.bounds, str) and self.bounds == "private":
            return DEFAULT_SUPPORT_RANGES
        return None

    def _split(self) -> tuple[float, float, float]:
        """``(ε_select, ε_ranges, ε_fit)``."""
        eps = float(self.eps)
        f = float(self.selection_fraction)
        spec = self._range_spec()
        r = 0.0 if spec is None else float(spec.fraction)
        if f + r >= 1.0:
            raise InvalidParameterError(
                f"The 'selection_fraction' parameter of {type(self).__name__} plus the "
                f"ranges' fraction (bounds.fraction = {r:g}) must be below 1, leaving a share "
                f"of eps for the coefficients. Got {f:g} + {r:g} instead.")
        return f * eps, r * eps, (1.0 - f - r) * eps

    def _selection_bounds(self):
        if self._route() == "public":
            return self._public_bounds()
        return None                  # bounds-free: private_bss's default rule

    def _public_bounds(self):
        return tuple(float(v) for v in self.bounds)

    def _need_y_range(self) -> bool:
        return self._kind == "regression"

    def _feature_ranges(self, ranges, S: np.ndarray, p: int) -> np.ndarray:
        """``(p, 2)`` ranges the coefficients were fitted on (public or released)."""
        if ranges is not None:
            out = np.tile([-np.inf, np.inf], (p, 1))
            out[S] = ranges.x_range
            return out
        b_x = self._public_bounds()[0]
        return np.tile([-b_x, b_x], (p, 1)).astype(float)

    def _planned(self) -> list[Guarantee]:
        from .plan.plan import planned_guarantee
        from .private_ranges import ranges_guarantee
        eps_sel, eps_r, eps_fit = self._split()
        loss = "hinge" if self._kind == "classification" else "least_squares"
        parts = [planned_guarantee(eps_sel, bounds=self._selection_bounds(), loss=loss,
                                   neighbours=self.neighbours)]
        nb = _neighbour(self.neighbours)
        spec = self._range_spec()
        if spec is not None:
            parts.append(ranges_guarantee(spec, eps_r, self.neighbours, self._need_y_range()))
        if self._route() == "tukey":
            parts.append(Guarantee.approximate(
                eps_fit, float(self.delta), nb, "Tukey mechanism (propose-test-release, "
                "exponential mechanism on approximate Tukey depth), given the support"))
        else:
            parts.append(Guarantee.pure(eps_fit, nb, "objective perturbation, given the "
                                        "support"))
        return parts

    def _check_params(self) -> None:
        validate_parameter_constraints(self._parameter_constraints, self.get_params(deep=False),
                                       type(self).__name__)
        if self._kind == "classification" and self.bounds is None:
            raise InvalidParameterError(
                f"The 'bounds' parameter of {type(self).__name__} is required: a public bound "
                "b_x on |x_ij| chosen without the data (e.g. bounds=0.5 after scaling the "
                "columns by public ranges), or bounds='private' (ranges released privately). "
                "No bounds-free route for classification coefficients is proven.")

    def _select(self, Xa, ya, rng, loss: str):
        from .selection import private_bss
        eps_sel, _, _ = self._split()
        bounds = self._selection_bounds()
        if loss == "hinge" and bounds is not None:
            bounds = (bounds[0], None)
        return private_bss(Xa, ya, int(self.s), eps_sel, bounds=bounds, loss=loss,
                           neighbours=self.neighbours, random_state=rng,
                           accountant=NOT_RECORDED)

    @cancels_on_error
    def _release(self, X, y):
        from .private_ranges import estimate_ranges
        check_estimator_accountant_visible(self)
        self._check_params()
        for name in _RELEASED_ATTRS + _NOT_PRIVATE_ATTRS + ("classes_",):
            self.__dict__.pop(name, None)     # a refused refit leaves no earlier release
        planned = self._planned()
        handle = check_release(None, compose(planned))      # before the data is read
        classification = self._kind == "classification"
        try:    # scikit-learn's checks and messages; sets n_features_in_, feature_names_in_
            Xa, ya = validate_data(self, X, y, dtype=np.float64, y_numeric=not classification,
                                   ensure_min_samples=min_samples(
                                       self.neighbours == "add_remove"))
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"fit(X, y): {exc}") from exc
        check_less_than(int(self.s), Xa.shape[1], "s", "p", type(self).__name__)
        self._refuse_before_selection(Xa.shape[0])    # n, s and the parameters only
        if classification:
            ya = self._encode(ya)
        rng = check_random_state(self.random_state)
        sel = self._select(Xa, ya, rng, "hinge" if classification else "least_squares")
        S = np.asarray(sel.support, dtype=np.intp)
        parts = [sel.guarantee]
        ranges = None
        spec = self._range_spec()
        if spec is not None:         # ranges of the support's columns (and y) only
            _, eps_r, _ = self._split()
            ranges = estimate_ranges(np.ascontiguousarray(Xa[:, S]),
                                     ya if self._need_y_range() else None, spec, eps_r, rng,
                                     neighbours=self.neighbours)
            parts.append(ranges.guarantee)
        try:
            coef, intercept, fit_g, info = self._fit_coefficients(Xa, ya, S, ranges, rng)
        except PTRRefusedError:
            # the refusal is an outcome of the private mechanism: it is charged
            if handle is not None:
                handle.settle(compose(parts + [planned[-1]]))
            raise
        guarantee = compose(parts + [fit_g])
        full = np.zeros(Xa.shape[1])
        full[S] = coef
        self.coef_ = full
        self.intercept_ = float(intercept)
        self.support_ = S
        self.feature_ranges_ = (None if self._route() == "tukey"
                                else self._feature_ranges(ranges, S, Xa.shape[1]))
        self.guarantee_ = guarantee
        self.selection_not_private_ = sel
        self.fit_info_not_private_ = info
        record_release(handle, SimpleNamespace(guarantee=guarantee))
        return self

    def _refuse_before_selection(self, n: int) -> None:
        """Raise a refusal known from public figures before any release reads the data."""

    @property
    def is_private_(self) -> bool:
        """Whether ``guarantee_`` is a proven guarantee (``guarantee_.is_private``)."""
        check_is_fitted(self, "guarantee_")
        return bool(self.guarantee_.is_private)

    def _linear(self, X) -> np.ndarray:
        check_is_fitted(self, "coef_")
        Xa = validate_data(self, X, reset=False, dtype=np.float64)
        ranges = getattr(self, "feature_ranges_", None)
        if ranges is not None:         # the domain the coefficients were fitted on
            Xa = np.clip(Xa, ranges[:, 0], ranges[:, 1])
        return Xa @ self.coef_ + self.intercept_

    def __getstate__(self):
        state = dict(super().__getstate__())
        if not getattr(self, "keep_not_private", False):
            for name in _NOT_PRIVATE_ATTRS + self._extra_not_private():
                state.pop(name, None)
        return mark_estimator_state(state)

    def _extra_not_private(self) -> tuple:
        return ()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.non_deterministic = False
        return tags


_COMMON_CONSTRAINTS: dict[str, Any] = {
    "s": [Interval(Integral, 1, None, closed="left")],
    "eps": [Interval(Real, 0, None, closed="neither")],
    "selection_fraction": [Interval(Real, 0, 1, closed="neither")],
    "fit_intercept": ["boolean"],
    "fit_ridge": [Interval(Real, 0, None, closed="left")],
    "neighbours": [StrOptions(set(NEIGHBOURS))],
    "random_state": ["random_state"],
    "keep_not_private": ["boolean"],
}

class PrivateSparseRegression(RegressorMixin, _PrivateSparseModel):
    """A differentially private sparse linear regression: support and coefficients.

    ``fit`` releases a support of ``s`` columns with :func:`mipdp.private_bss` and then
    the coefficients on it, as one private release (module :mod:`mipdp.estimators`).
    Without ``bounds`` nothing about the data's ranges is needed: the support comes from
    private_bss's bounds-free default and the coefficients from the Tukey mechanism (Amin,
    Joseph, Ribero and Vassilvitskii 2023), ``(eps, delta)``-DP.  With public bounds, or
    ``bounds="private"``, the coefficients come from objective perturbation and the model
    is pure ``eps``-DP.

    Parameters
    ----------
    s : int, default 5
    eps : float, default 1.0
    delta : float in (0, 1), default 1e-5
        ``δ`` of the Tukey mechanism, below ``1/2`` (``bounds=None`` only; the other routes
        are pure and ignore it).
    selection_fraction : float, default 0.25
    bounds : None, (float, float), "private" or PrivateBounds, default None
        ``None``: bounds-free, Tukey coefficients.  ``(b_x, b_y)``: public clipping bounds
        ``|x_ij| <= b_x``, ``|y_i| <= b_y`` for the selection and the coefficients.
        ``"private"`` (or :class:`~mipdp.private_ranges.PrivateBounds`): after the
        bounds-free selection, clipping ranges of the selected columns and of ``y`` are
        released with ``fraction · eps`` (``"private"``: :data:`DEFAULT_SUPPORT_RANGES`,
        a fifth of ``eps``, each range twice the interquartile range) and the coefficients
        are fitted on the data mapped by them: pure ``eps``-DP, no bound needed.
    m : int, optional
        Number of models of the Tukey mechanism (``>= 4``); default chosen by it from ``n``
        (:func:`mipdp.tukey.tukey_regression`).  Must not be read off the data.
    m_fraction : float, default 0.05
        Share of the Tukey mechanism's budget spent on a private lower bound on ``n`` to
        choose ``m`` (Dick, Gillenwater and Joseph 2023), under add/remove neighbours only:
        under replace-one ``n`` is public and nothing is spent.
    fit_intercept : bool, default True
    fit_ridge : float, default 0.0
    fit_radius : float, optional
        Radius of ``||β||₂`` for objective perturbation (routes with bounds); default
        ``2 b_y / b_x`` (``2`` on mapped data).
    neighbours : {"replace_one", "add_remove"}, default "replace_one"
    random_state : None, int or numpy.random.Generator
    keep_not_private : bool, default False

    Attributes
    ----------
    coef_ : ndarray of shape (p,)
        The released coefficients, zero off the support (private).
    intercept_ : float
        The released intercept (private; 0 when ``fit_intercept=False``).
    support_ : ndarray of int
        The released support, sorted (private).
    feature_ranges_ : ndarray of shape (p, 2) or None
        Routes with bounds: the ranges the coefficients were fitted on (``±b_x``, or the
        ranges the selection released: private); :meth:`predict` clips to them.  ``None``
        for the Tukey route (fitted on the raw data).
    guarantee_ : Guarantee
        The composed guarantee of the fit (``str(guarantee_)`` in words).
    is_private_ : bool
        ``guarantee_.is_private``.
    selection_not_private_ : PrivateBSSResult
        The selection's full result.  **Not private** (it holds the mechanism); not pickled
        unless ``keep_not_private=True``.
    fit_info_not_private_ : dict
        Details of the coefficient release (route, calibration, the Tukey mechanism's
        ``info``).  **Not private** where it holds data-dependent figures; not pickled unless
        ``keep_not_private=True``.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Column names, when ``X`` is a DataFrame with string column names.

    Raises
    ------
    mipdp.exceptions.PTRRefusedError
        From ``fit`` when the Tukey mechanism's propose-test-release check fails: nothing
        is released (no fitted attribute is set), and the accountant is charged the
        composed guarantee (the refusal is an output of the mechanism).  When the refusal
        follows from public figures alone (``n`` under replace-one, a given ``m``), it is
        raised before the selection runs and nothing is charged.  More rows, a larger
        ``eps``, a smaller ``s`` or ``bounds="private"`` make it rarer.

    Notes
    -----
    Neighbours: ``neighbours`` (replace one row by default).  Sensitivities: those of the
    two mechanisms composed (:func:`mipdp.private_bss`, the Tukey mechanism or
    :func:`mipdp.private_coefficients`).  Guarantee: ``(eps, delta)``-DP without bounds,
    pure ``eps``-DP with bounds, by basic composition of the support's release and the
    coefficients' release given the support.

    ``make_pipeline(PrivateBestSubsetSelector(...), LinearRegression())`` fits its second
    step **without** privacy; this estimator is the private version of that pipeline.

    Examples
    --------
    >>> from mipdp import PrivateSparseRegression
    >>> from mipdp.datasets import make_bss_regression
    >>> X, y, _ = make_bss_regression(n=2000, p=10, s=2, random_state=0)
    >>> model = PrivateSparseRegression(s=2, eps=1.0, bounds=(0.5, 0.5), random_state=0)
    >>> model.fit(X, y).coef_.shape
    (10,)
    >>> model.guarantee_.is_pure
    True
    """

    _kind = "regression"
    _parameter_constraints: dict = {
        **_COMMON_CONSTRAINTS,
        "delta": [Interval(Real, 0, 1, closed="neither")],
        "bounds": [None, _PublicPair(), StrOptions({"private"}), PrivateBounds],
        "m": [None, Interval(Integral, 1, None, closed="left")],
        "m_fraction": [Interval(Real, 0, 1, closed="neither")],
        "fit_radius": [None, Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, s: int = 5, eps: float = 1.0, delta: float = 1e-5, *,
                 selection_fraction: float = DEFAULT_SELECTION_FRACTION, bounds=None,
                 m: int | None = None, m_fraction: float = 0.05, fit_intercept: bool = True,
                 fit_ridge: float = 0.0, fit_radius: float | None = None,
                 neighbours: str = "replace_one", random_state=None,
                 keep_not_private: bool = False) -> None:
        self.s = s
        self.eps = eps
        self.delta = delta
        self.selection_fraction = selection_fraction
        self.bounds = bounds
        self.m = m
        self.m_fraction = m_fraction
        self.fit_intercept = fit_intercept
        self.fit_ridge = fit_ridge
        self.fit_radius = fit_radius
        self.neighbours = neighbours
        self.random_state = random_state
        self.keep_not_private = keep_not_private

    def fit(self, X, y) -> PrivateSparseRegression:
        """Release a private sparse linear model of ``y`` on ``X`` (one release)."""
        return self._release(X, y)

    def score(self, X, y) -> float:
        """R² of :meth:`predict` on ``(X, y)`` (``sklearn.metrics.r2_score``).

        An evaluation figure computed from ``y`` without noise: **not private** when
        ``(X, y)`` is private data (it is meant for held-out test data).
        """
        return float(super().score(X, y))

    def predict(self, X) -> np.ndarray:
        """``X @ coef_ + intercept_``, ``X``'s columns first clipped to ``feature_ranges_``
        when the coefficients were fitted on clipped data (routes with bounds)."""
        return self._linear(X)

    def _check_params(self) -> None:
        super()._check_params()
        if self._route() != "tukey":
            return
        name = type(self).__name__
        if not float(self.delta) < 0.5:
            raise InvalidParameterError(
                f"The 'delta' parameter of {name} must lie in (0, 0.5) with bounds=None (the "
                f"Tukey mechanism needs delta < 1/2). Got {self.delta!r} instead.")
        if self.m is not None and int(self.m) < 4:
            raise InvalidParameterError(
                f"The 'm' parameter of {name} must be an int >= 4 (the Tukey mechanism's "
                f"number of models) or None. Got {self.m!r} instead.")

    def _refuse_before_selection(self, n: int) -> None:
        # the Tukey mechanism's refusal from the public n (replace-one) or a given m: raised
        # before the selection runs, so that nothing is computed and nothing is charged
        if self._route() != "tukey":
            return
        from .tukey import refusal_before_reading
        _, _, eps_fit = self._split()
        early = refusal_before_reading((int(n), int(self.s)), eps_fit, float(self.delta),
                                       m=self.m, fit_intercept=bool(self.fit_intercept),
                                       neighbours=self.neighbours)
        if early is not None:
            raise early

    def _fit_coefficients(self, Xa, ya, S, ranges, rng):
        _, _, eps_fit = self._split()
        route = self._route()
        if route == "tukey":
            from .tukey import tukey_regression
            t = tukey_regression(Xa[:, S], ya, eps_fit, float(self.delta), m=self.m,
                                 m_fraction=float(self.m_fraction),
                                 fit_intercept=bool(self.fit_intercept),
                                 neighbours=self.neighbours, random_state=rng,
                                 accountant=NOT_RECORDED)
            return (np.asarray(t.coef, float), float(t.intercept), t.guarantee,
                    {"route": "tukey", "m": t.m, "info": t.info})
        if ranges is None:
            b_x, b_y = self._public_bounds()
            Xs, ys = Xa[:, S], ya
        else:
            b_x, b_y = MAPPED_BOUNDS
            Xs = _mapped_columns(Xa[:, S], ranges.x_range)
            ys = ranges.transform_y(ya)
        coef, intercept, g, cal = self._objective_perturbation(Xs, ys, eps_fit, b_x, b_y, rng)
        if ranges is not None:          # back to the data's scale (post-processing)
            xr, (ly, hy) = ranges.x_range, ranges.y_range
            cx, wx = 0.5 * (xr[:, 0] + xr[:, 1]), xr[:, 1] - xr[:, 0]
            cy, wy = 0.5 * (ly + hy), hy - ly
            raw = wy * coef / wx
            intercept = cy + wy * intercept - float(raw @ cx)
            coef = raw
        return coef, intercept, g, {"route": route, "calibration": cal}

    def _objective_perturbation(self, Xs, ys, eps_fit, b_x, b_y, rng):
        from .coefficients import private_coefficients
        k = Xs.shape[1]
        if self.fit_intercept:
            Xs = np.column_stack([Xs, np.full(Xs.shape[0], b_x)])
        radius = 2.0 * b_y / b_x if self.fit_radius is None else float(self.fit_radius)
        fit = private_coefficients(Xs, ys, np.arange(Xs.shape[1]), eps_fit, bounds=(b_x, b_y),
                                   ridge=float(self.fit_ridge), radius=radius,
                                   random_state=rng, accountant=NOT_RECORDED,
                                   neighbours=self.neighbours)
        coef = np.asarray(fit.coef, float)
        intercept = float(coef[k] * b_x) if self.fit_intercept else 0.0
        return coef[:k], intercept, fit.guarantee, fit.calibration

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.regressor_tags.poor_score = True   # private: noisy at check_estimator's sizes
        return tags


class PrivateSparseClassifier(ClassifierMixin, _PrivateSparseModel):
    """A differentially private sparse linear classifier (two classes).

    ``fit`` releases a support of ``s`` columns with :func:`mipdp.private_bss`
    (``loss="hinge"``) and then logistic coefficients on it by objective perturbation
    (:mod:`mipdp.logistic_coefficients`), as one pure ``eps``-DP release.  The
    coefficients need a bound on ``|x_ij|``, which ``bounds`` must give: public
    (``bounds=b_x``), or released privately for the selected columns
    (``bounds="private"``).  There is no bounds-free default: objective perturbation needs
    a bound, no bounds-free mechanism for classification coefficients is proven here, and
    the private-ranges route, although proven, predicted no better than the majority class
    on the benchmark's two classification sets (docs/model.md), where public bounds
    matched a non-private linear SVM.

    Parameters
    ----------
    s : int, default 5
    eps : float, default 1.0
    selection_fraction : float, default 0.25
    bounds : float, (float, anything), "private" or PrivateBounds
        Required (the default ``None`` raises in ``fit``, before the data is read).  A
        public bound ``b_x`` on ``|x_ij|`` (rows are clipped to it), or private clipping
        ranges of the selected columns released after the bounds-free selection (with
        ``fraction · eps``; ``"private"``: :data:`DEFAULT_SUPPORT_RANGES`); the
        coefficients are then fitted on the mapped columns.
    classes : array-like of two labels, optional
        The label set, when public (it usually is).  Without it ``classes_`` is read off
        ``y`` (**not private**: a neighbour may have one class fewer).
    fit_intercept : bool, default True
    fit_ridge : float, default 0.0
    neighbours : {"replace_one", "add_remove"}, default "replace_one"
    random_state : None, int or numpy.random.Generator
    keep_not_private : bool, default False

    Attributes
    ----------
    coef_ : ndarray of shape (p,)
        Released coefficients of the decision function, zero off the support (private).
    intercept_ : float
    support_ : ndarray of int
    feature_ranges_ : ndarray of shape (p, 2)
        The ranges the coefficients were fitted on (``±b_x`` or the released ranges);
        :meth:`decision_function` clips to them.
    guarantee_ : Guarantee
        Pure ``eps``-DP, the selection and the coefficients composed.
    is_private_ : bool
    classes_ : ndarray
        ``classes`` when given (public); else read off ``y``: **not private**, not pickled
        unless ``keep_not_private=True`` (an unpickled model then predicts ``-1``/``+1``).
    selection_not_private_, fit_info_not_private_
        As :class:`PrivateSparseRegression` (**not private**).

    Notes
    -----
    Neighbours: ``neighbours``.  Sensitivities: the hinge release's (:func:`mipdp.private_bss`)
    and the logistic gradient's, ``2 b_x √(k)`` (replace-one, ``k`` coefficients with the
    intercept's constant column ``b_x``).  Guarantee: pure ``eps``-DP by basic composition.
    """

    _kind = "classification"
    _parameter_constraints: dict = {
        **_COMMON_CONSTRAINTS,
        "bounds": [None, _PublicBound(), StrOptions({"private"}), PrivateBounds],
        "classes": "no_validation",         # checked in _encode
    }

    def __init__(self, s: int = 5, eps: float = 1.0, *,
                 selection_fraction: float = DEFAULT_SELECTION_FRACTION, bounds=None,
                 classes=None, fit_intercept: bool = True, fit_ridge: float = 0.0,
                 neighbours: str = "replace_one", random_state=None,
                 keep_not_private: bool = False) -> None:
        self.s = s
        self.eps = eps
        self.selection_fraction = selection_fraction
        self.bounds = bounds
        self.classes = classes
        self.fit_intercept = fit_intercept
        self.fit_ridge = fit_ridge
        self.neighbours = neighbours
        self.random_state = random_state
        self.keep_not_private = keep_not_private

    def _public_bounds(self):
        b = self.bounds[0] if isinstance(self.bounds, (tuple, list)) else self.bounds
        return (float(b), None)

    def _encode(self, y) -> np.ndarray:
        from .losses.hinge import encode_labels
        y = np.asarray(y)
        if self.classes is not None:
            classes = np.asarray(self.classes)
            if classes.ndim != 1 or classes.size != 2 or classes[0] == classes[1]:
                raise InvalidParameterError(f"The 'classes' parameter of "
                                            f"{type(self).__name__} must be two distinct "
                                            f"labels. Got {self.classes!r} instead.")
            classes = np.sort(classes)
            if not np.all(np.isin(y, classes)):
                raise ValueError("fit(X, y): y holds a label outside 'classes'; pass the "
                                 "full label set")
            self.classes_ = classes
            return np.where(y == classes[1], 1.0, -1.0)
        from sklearn.utils.multiclass import type_of_target
        kind = type_of_target(y, input_name="y")
        if kind == "continuous":
            raise ValueError("fit(X, y): Unknown label type: continuous; a classifier needs "
                             "two classes (use PrivateSparseRegression for a real target)")
        if kind not in ("binary", "unknown"):
            raise ValueError(f"fit(X, y): Only binary classification is supported. The type "
                             f"of the target is {kind}.")
        try:
            seen, ypm = encode_labels(y)
        except ValueError as exc:
            raise ValueError(f"fit(X, y): {exc}") from None
        self.classes_ = seen if seen is not None else np.array([-1.0, 1.0])
        return ypm

    def _fit_coefficients(self, Xa, ya, S, ranges, rng):
        from .logistic_coefficients import private_logistic_coefficients
        _, _, eps_fit = self._split()
        if ranges is None:
            b_x = self._public_bounds()[0]
            Xs = Xa[:, S]
        else:
            b_x = MAPPED_BOUNDS[0]
            Xs = _mapped_columns(Xa[:, S], ranges.x_range)
        k = Xs.shape[1]
        if self.fit_intercept:
            Xs = np.column_stack([Xs, np.full(Xs.shape[0], b_x)])
        coef, g, cal = private_logistic_coefficients(Xs, ya, eps_fit, b_x=b_x,
                                                     ridge=float(self.fit_ridge),
                                                     neighbours=self.neighbours, rng=rng)
        intercept = float(coef[k] * b_x) if self.fit_intercept else 0.0
        coef = coef[:k]
        if ranges is not None:
            xr = ranges.x_range
            cx, wx = 0.5 * (xr[:, 0] + xr[:, 1]), xr[:, 1] - xr[:, 0]
            coef = coef / wx
            intercept -= float(coef @ cx)
        return coef, intercept, g, {"route": self._route(), "calibration": cal}

    def fit(self, X, y) -> PrivateSparseClassifier:
        """Release a private sparse linear classifier of ``y`` on ``X`` (one release)."""
        return self._release(X, y)

    def score(self, X, y) -> float:
        """Accuracy of :meth:`predict` on ``(X, y)`` (``sklearn.metrics.accuracy_score``).

        An evaluation figure computed from ``y`` without noise: **not private** when
        ``(X, y)`` is private data (it is meant for held-out test data).
        """
        return float(super().score(X, y))

    def decision_function(self, X) -> np.ndarray:
        """``X @ coef_ + intercept_`` (positive: ``classes_[1]``)."""
        return self._linear(X)

    def predict(self, X) -> np.ndarray:
        """The class of the sign of :meth:`decision_function`."""
        d = self.decision_function(X)
        classes = getattr(self, "classes_", None)
        if classes is None:
            return np.where(d > 0, 1.0, -1.0)
        if classes.size == 1:
            return np.full(d.shape, classes[0])
        return classes[(d > 0).astype(int)]

    def _extra_not_private(self) -> tuple:
        return ("classes_",) if self.classes is None else ()

    def _need_y_range(self) -> bool:
        return False

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True
        tags.classifier_tags.multi_class = False
        return tags

