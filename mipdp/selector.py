"""A scikit-learn feature selector around :func:`mipdp.private_bss`.

Its parameters, their defaults and their documentation are *derived* from
:func:`private_bss`'s signature and docstring (see :data:`SELECTOR_PARAMS`), so the two
cannot drift.
"""

from __future__ import annotations

import inspect
import logging
from numbers import Integral
from typing import cast

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from ._param_validation import check_less_than, validate_parameter_constraints
from ._validation import _prefix, check_input, interface, min_samples
from .accounting import (
    BudgetAccountant,
    check_estimator_accountant_visible,
    mark_estimator_state,
)
from .losses.hinge import encode_labels
from .selection import PRIVATE_BSS_CONSTRAINTS, private_bss

__all__ = ["PrivateBestSubsetSelector", "SELECTOR_PARAMS"]

logger = logging.getLogger(__name__)

#: private_bss parameters the selector does not take: the data, ``n_draws`` (one release
#: per ``fit``), and ``accountant`` (scikit-learn's ``clone`` deep-copies parameters, so an
#: accountant passed as a parameter would be copied for every CV fold and count nothing;
#: use ``with BudgetAccountant(...):`` around the search instead, which every clone sees).
_EXCLUDED = ("X", "y", "n_draws", "accountant")
#: defaults for private_bss's required parameters
_DEFAULTS = {"s": 5, "eps": 1.0}
#: the selector's own parameters (not passed to private_bss), with their defaults
_OWN = {"keep_not_private": False}
#: fitted attributes that depend on the data without noise (dropped when pickled unless
#: ``keep_not_private=True``)
_NOT_PRIVATE_ATTRS = ("result_not_private_", "classes_")


def _selector_signature() -> inspect.Signature:
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for name, p in inspect.signature(private_bss).parameters.items():
        if name in _EXCLUDED:
            continue
        default = _DEFAULTS.get(name, p.default)
        kind = (inspect.Parameter.POSITIONAL_OR_KEYWORD if name in _DEFAULTS
                else inspect.Parameter.KEYWORD_ONLY)
        params.append(inspect.Parameter(name, kind, default=default, annotation=p.annotation))
    for name, default in _OWN.items():
        params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                        annotation=type(default).__name__))
    return inspect.Signature(params)


_SIGNATURE = _selector_signature()
#: the selector's parameters passed on to private_bss, in order (all of private_bss's but
#: _EXCLUDED)
SELECTOR_PARAMS = tuple(name for name in list(_SIGNATURE.parameters)[1:] if name not in _OWN)
#: every parameter of the selector (SELECTOR_PARAMS and the selector's own)
ALL_PARAMS = SELECTOR_PARAMS + tuple(_OWN)

_OWN_DOC = """keep_not_private : bool, default False
    Whether pickling a fitted selector (``pickle``, ``joblib.dump``, a Pipeline holding
    it) keeps the fitted attributes marked **Not private** below (the full result, with
    the enumerated supports and their objective values, and the labels seen by a hinge
    fit).  By default they are dropped from the
    pickle, which then carries only the release (``support_``, ``guarantee_``) and the
    parameters; an unpickled selector still transforms.  The live object keeps them
    either way."""


#: parameters private_bss's own decorators read first (old spellings with a warning):
#: checked there, not before
_CHECKED_BY_PRIVATE_BSS = ("neighbours",)


def _log_spend(name: str, guarantee) -> None:
    """One INFO line per fit: the ε spent, and the default accountant's running total."""
    spend = f"eps = {guarantee.epsilon:g}" + (f", delta = {guarantee.delta:g}"
                                              if guarantee.delta else "")
    acc = BudgetAccountant.load_default()
    total = ""
    if acc is not None:
        t = acc.total()
        budget = f" of its budget eps = {acc.epsilon:g}" if acc.finite else ""
        total = f"; the accountant has spent eps = {t.epsilon:g}{budget} in all"
    logger.info("%s.fit: one release, spends %s (k fits, e.g. k-fold cross-validation, "
                "spend k times this)%s", name, spend, total)


def _is_hinge(loss) -> bool:
    name = loss if isinstance(loss, str) else getattr(loss, "name", "")
    return str(name).lower() in ("hinge", "svm")


def _hinge_labels(y) -> tuple[np.ndarray | None, np.ndarray]:
    """``(classes, y_pm1)``: :func:`mipdp.losses.hinge.encode_labels` on a 1-D ``y``."""
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    try:
        return encode_labels(y)
    except ValueError as exc:
        raise ValueError(_prefix(str(exc))) from None


def _parameters_doc() -> str:
    """private_bss's ``Parameters`` section, without the excluded entries."""
    doc = inspect.getdoc(private_bss) or ""
    try:
        body = doc.split("Parameters\n----------\n", 1)[1].split("\nReturns\n", 1)[0]
    except IndexError:  # pragma: no cover - docstring layout changed
        return ""
    out, keep = [], True
    for line in body.splitlines():
        if line and not line.startswith(" "):
            names = [n.strip() for n in line.split(":")[0].split(",")]
            keep = not all(n in _EXCLUDED for n in names)
        if keep:
            out.append(line)
    return "\n".join(out).rstrip()


class PrivateBestSubsetSelector(SelectorMixin, BaseEstimator):
    """Select ``s`` features with differentially private best subset selection.

    Each ``fit`` is one release of :func:`mipdp.private_bss` (``n_draws=1``).  Wrap a
    search in ``with mipdp.BudgetAccountant(epsilon=...):`` to account for every fit.

    Attributes
    ----------
    support_ : ndarray of int
        The released support (sorted indices).
    guarantee_ : Guarantee
        The privacy guarantee of this fit (``str(guarantee_)`` in words).
    result_not_private_ : PrivateBSSResult
        Everything :func:`private_bss` returned.  **Not private**: it holds the mechanism,
        i.e. the enumerated top supports and their objective values.  Not pickled unless
        ``keep_not_private=True``.
    classes_ : ndarray
        ``loss="hinge"`` only: the labels seen in ``y`` (as scikit-learn classifiers);
        ``classes_[0]`` is mapped to ``-1`` and ``classes_[1]`` to ``+1``.  **Not
        private** (read off ``y``); not pickled unless ``keep_not_private=True``.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Column names, when ``X`` is a DataFrame with string column names.

    Notes
    -----
    ``s`` must be smaller than the number of features of the ``X`` passed to ``fit``
    (checked there, naming this selector).  For ``loss="hinge"`` any two-class labels
    are accepted (0/1, ±1, strings); ``bounds``' ``b_y`` is ignored (the hinge loss needs
    no bound on the labels: its sensitivity is ``(1 + b_x r √s)/n``).

    **The second step of a pipeline is not private.**
    ``make_pipeline(PrivateBestSubsetSelector(...), LinearRegression())`` releases the
    support privately and then fits the second step WITHOUT privacy on the released
    columns: its coefficients (and predictions) carry no guarantee, whatever ``eps``.  For
    a private model, support and coefficients, use :class:`mipdp.PrivateSparseRegression`
    (or :class:`mipdp.PrivateSparseClassifier`), whose ``fit`` releases both with one
    composed guarantee (docs/model.md).

    Model selection in parallel: the default accountant of a ``with BudgetAccountant():``
    block is visible only in the thread that entered it.  A selector fitted in another
    process or thread while one is active (``GridSearchCV(..., n_jobs=2)``) raises
    :class:`~mipdp.exceptions.AccountantNotVisibleError` rather than spend ε that the
    accountant would never see; run the search with ``n_jobs=1`` (docs/privacy.md,
    "Accounting and parallel model selection").

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.linear_model import LinearRegression
    >>> from mipdp.datasets import make_bss_regression
    >>> X, y, _ = make_bss_regression(n=400, p=15, s=2, random_state=0)
    >>> pipe = make_pipeline(PrivateBestSubsetSelector(s=2, eps=1.0, bounds=(0.5, 0.5),
    ...                                                random_state=0), LinearRegression())
    >>> pipe.fit(X, y).predict(X[:2]).shape     # the LinearRegression step is NOT private
    (2,)
    """

    _parameter_constraints = {**{k: v for k, v in PRIVATE_BSS_CONSTRAINTS.items()
                                 if k in SELECTOR_PARAMS},
                              "keep_not_private": ["boolean"]}

    def __init__(self, *args, **kwargs) -> None:
        bound = _SIGNATURE.bind(self, *args, **kwargs)
        bound.apply_defaults()
        for name in ALL_PARAMS:
            setattr(self, name, bound.arguments[name])

    def fit(self, X, y) -> PrivateBestSubsetSelector:
        """Release one private support of ``X`` for target ``y``.

        Logs at INFO, once per fit, the ε the release spends (and the accountant's running
        total when one records it): model selection (``cross_val_score``, a grid search)
        makes one release per fit.
        """
        name = type(self).__name__
        with interface(f"{name}.fit"):
            # the parameters first (no data read), named as the selector's, then the one
            # input check of every interface (mipdp._validation.check_input)
            params = {k: v for k, v in self.get_params(deep=False).items()
                      if k not in _CHECKED_BY_PRIVATE_BSS}
            validate_parameter_constraints(self._parameter_constraints, params, name)
            check_estimator_accountant_visible(self)
            hinge = _is_hinge(self.loss)
            check_input(X, y, labels=hinge, finite_X=True)
            try:    # scikit-learn's checks; sets n_features_in_, feature_names_in_
                # n >= 1 under add/remove (n private), >= 2 under replace-one (n public)
                Xa, ya = validate_data(self, X, y, accept_sparse=True,
                                       ensure_min_samples=min_samples(
                                           self.neighbours == "add_remove"),
                                       y_numeric=not hinge)
            except (ValueError, TypeError) as exc:
                raise type(exc)(_prefix(str(exc))) from exc
            if isinstance(self.s, Integral) and not isinstance(self.s, bool) and int(self.s) >= 1:
                check_less_than(cast(int, self.s), Xa.shape[1], "s", "p", name)
            if hinge:
                self.classes_, ya = _hinge_labels(ya)
            res = private_bss(Xa, ya, **{k: getattr(self, k) for k in SELECTOR_PARAMS})
        res.feature_names_in = getattr(self, "feature_names_in_", None)
        self.result_not_private_ = res
        self.guarantee_ = res.guarantee
        self.support_ = res.support
        _log_spend(name, res.guarantee)
        return self

    def __getstate__(self):
        state = super().__getstate__()
        state = dict(state)
        if not getattr(self, "keep_not_private", False):
            for name in _NOT_PRIVATE_ATTRS:
                state.pop(name, None)
        return mark_estimator_state(state)

    def _get_support_mask(self) -> np.ndarray:
        check_is_fitted(self, "support_")
        mask = np.zeros(self.n_features_in_, dtype=bool)
        mask[self.support_] = True
        return mask

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.sparse = True           # read lazily by private_bss (never densified)
        return tags


PrivateBestSubsetSelector.__init__.__signature__ = _SIGNATURE  # type: ignore[attr-defined]
assert PrivateBestSubsetSelector.__doc__ is not None
PrivateBestSubsetSelector.__doc__ = (
    PrivateBestSubsetSelector.__doc__.replace(
        "    Attributes\n", "    Parameters\n    ----------\n"
        + "\n".join("    " + ln if ln else ""
                     for ln in (_parameters_doc() + "\n" + _OWN_DOC).splitlines())
        + "\n\n    Attributes\n", 1))
