"""Column names of a DataFrame ``X``, carried to the released support.

Column names are public metadata (the schema, not the data): a result keeps them all in
``feature_names_in`` and names its released support in ``feature_names``.  The names are
read exactly as scikit-learn reads them for ``feature_names_in_`` (the selector's
``validate_data``): only when every column name is a string.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable

import numpy as np

__all__ = ["feature_names_of", "keeps_feature_names"]

logger = logging.getLogger(__name__)


def feature_names_of(X) -> np.ndarray | None:
    """The column names of ``X`` (ndarray of str), or ``None`` when it has none.

    ``None`` for arrays, sparse matrices and DataFrames whose column names are not all
    strings (scikit-learn refuses mixed names; here the release goes on, without names).
    """
    if not hasattr(type(X), "columns"):  # arrays, sparse, dask arrays: no names (and no
        return None                     # scikit-learn import on their path)
    from sklearn.utils.validation import _get_feature_names
    try:
        return _get_feature_names(X)
    except TypeError as exc:            # mixed str / non-str column names
        logger.debug("feature names not kept: %s", exc)
        return None


def keeps_feature_names(func: Callable) -> Callable:
    """Decorate a function ``f(..., X, ...) -> SelectionResult`` to record ``X``'s names."""
    sig = inspect.signature(func)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            X = sig.bind_partial(*args, **kwargs).arguments.get("X")
        except TypeError:               # the function reports its own signature errors
            X = None
        names = feature_names_of(X) if X is not None else None
        result = func(*args, **kwargs)
        if names is not None and getattr(result, "feature_names_in", None) is None:
            result.feature_names_in = names
        return result

    return wrapper
