"""A scikit-learn feature selector around :func:`mipdp.private_bss`.

Its parameters, their defaults and their documentation are *derived* from
:func:`private_bss`'s signature and docstring (see :data:`SELECTOR_PARAMS`), so the two
cannot drift.
"""

from __future__ import annotations

import inspect

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .selection import PRIVATE_BSS_CONSTRAINTS, private_bss

__all__ = ["PrivateBestSubsetSelector", "SELECTOR_PARAMS"]

#: private_bss parameters the selector does not take: the data, ``n_draws`` (one release
#: per ``fit``), and ``accountant`` (scikit-learn's ``clone`` deep-copies parameters, so an
#: accountant passed as a parameter would be copied for every CV fold and count nothing;
#: use ``with BudgetAccountant(...):`` around the search instead, which every clone sees).
_EXCLUDED = ("X", "y", "n_draws", "accountant")
#: defaults for private_bss's required parameters
_DEFAULTS = {"s": 5, "eps": 1.0}


def _selector_signature() -> inspect.Signature:
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for name, p in inspect.signature(private_bss).parameters.items():
        if name in _EXCLUDED:
            continue
        default = _DEFAULTS.get(name, p.default)
        kind = (inspect.Parameter.POSITIONAL_OR_KEYWORD if name in _DEFAULTS
                else inspect.Parameter.KEYWORD_ONLY)
        params.append(inspect.Parameter(name, kind, default=default, annotation=p.annotation))
    return inspect.Signature(params)


_SIGNATURE = _selector_signature()
#: the selector's parameter names, in order (all of private_bss's but _EXCLUDED)
SELECTOR_PARAMS = tuple(list(_SIGNATURE.parameters)[1:])


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
        i.e. the enumerated top supports and their objective values.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Column names, when ``X`` is a DataFrame with string column names.

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

    _parameter_constraints = {k: v for k, v in PRIVATE_BSS_CONSTRAINTS.items()
                              if k in SELECTOR_PARAMS}

    def __init__(self, *args, **kwargs) -> None:
        bound = _SIGNATURE.bind(self, *args, **kwargs)
        bound.apply_defaults()
        for name in SELECTOR_PARAMS:
            setattr(self, name, bound.arguments[name])

    def fit(self, X, y) -> "PrivateBestSubsetSelector":
        """Release one private support of ``X`` for target ``y``."""
        try:    # scikit-learn's checks and messages; sets n_features_in_, feature_names_in_
            Xa, ya = validate_data(self, X, y, accept_sparse=True, ensure_min_samples=2,
                                   y_numeric=True)
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"fit(X, y): {exc}") from exc
        res = private_bss(Xa, ya, **{name: getattr(self, name) for name in SELECTOR_PARAMS})
        self.result_not_private_ = res
        self.guarantee_ = res.guarantee
        self.support_ = res.support
        return self

    def _get_support_mask(self) -> np.ndarray:
        check_is_fitted(self, "support_")
        mask = np.zeros(self.n_features_in_, dtype=bool)
        mask[self.support_] = True
        return mask

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.sparse = True           # densified by private_bss
        return tags


PrivateBestSubsetSelector.__init__.__signature__ = _SIGNATURE
PrivateBestSubsetSelector.__doc__ = (
    PrivateBestSubsetSelector.__doc__.replace(
        "    Attributes\n", "    Parameters\n    ----------\n"
        + "\n".join("    " + ln if ln else "" for ln in _parameters_doc().splitlines())
        + "\n\n    Attributes\n", 1))
