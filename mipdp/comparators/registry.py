"""Registry of the comparator selection methods and the private pre-screening entry point."""

from __future__ import annotations

import logging
from collections.abc import Callable

from .._neighbours import resolve_renamed
from .._param_validation import validate_params
from ..result import SelectionResult
from ._common import COMMON_CONSTRAINTS, REPLACE_ONE, check_neighbour
from .dp_sis import dp_sis
from .kendall import dp_kendall
from .mcmc import mcmc
from .noisy_iht import noisy_iht
from .two_stage import two_stage

__all__ = ["get_method", "list_methods", "prescreen", "PRESCREENERS"]

logger = logging.getLogger(__name__)

# Every entry is called as ``fn(X, y, k_or_s, eps, random_state=..., **kwargs)``.
_METHODS: dict[str, Callable[..., SelectionResult]] = {
    "dp_sis": dp_sis,
    "kendall": dp_kendall,
    "two_stage": two_stage,
    "mcmc": mcmc,
    "noisy_iht": noisy_iht,
}

#: Methods with a pure-DP guarantee that may choose candidate columns for the MIP methods.
PRESCREENERS = ("dp_sis", "kendall", "two_stage", "noisy_iht")


def list_methods() -> list[str]:
    """Names of the registered comparator methods."""
    return sorted(_METHODS)


def get_method(name: str) -> Callable[..., SelectionResult]:
    """The selection function registered under ``name``.

    Raises
    ------
    ValueError
        Unknown name (the message lists the known ones).
    """
    if not isinstance(name, str):
        raise TypeError(f"name: expected a string, got {type(name).__name__}")
    try:
        return _METHODS[name]
    except KeyError:
        raise ValueError(f"name: unknown method {name!r}; known: {list_methods()}") from None


@validate_params({"name": [str]}, shared=COMMON_CONSTRAINTS)
def prescreen(name: str, X, y, k: int, eps: float, bounds=None, random_state=None,
              accountant=None, **kwargs) -> SelectionResult:
    """Choose ``k`` candidate columns privately with budget ``eps`` (replace-one neighbours).

    The MIP methods (replace-one, ``eps_2``) then run on ``X[:, result.support]``;
    by basic composition the pipeline is ``(eps + eps_2)``-DP. Always run under
    replace-one neighbours so the two stages share one neighbour notion.

    Parameters
    ----------
    name : {"dp_sis", "kendall", "two_stage", "noisy_iht"}
        ``"mcmc"`` is refused: it is only approximately DP.  ``"noisy_iht"`` peels ``k``
        coordinates per iteration (pure ``eps``-DP: ``delta=0``, its default).
    X, y : array_like
    k : int
        Number of candidates, ``1 <= k < p``.
    eps : float
        Pre-screening budget ``eps_1``.
    bounds : (b_x, b_y), optional
        Clipping bounds: ``dp_sis`` and ``noisy_iht`` use the clipped data, ``two_stage``
        fits its blocks on clipped rows (its guarantee does not depend on them); Kendall,
        rank-based, needs none.
    random_state : None, int, SeedSequence or Generator
    accountant : BudgetAccountant, optional
        Passed to the method (checked before the data is read, then recorded).
    **kwargs
        Passed on to the method (e.g. ``topk=``, ``n_blocks=``).

    Returns
    -------
    SelectionResult
        ``info["prescreen"] = True``.
    """
    if name not in PRESCREENERS:
        if name in _METHODS:
            raise ValueError(f"name: {name!r} cannot pre-screen (only approximately DP); "
                             f"use one of {list(PRESCREENERS)}")
        raise ValueError(f"name: unknown pre-screener {name!r}; use one of {list(PRESCREENERS)}")
    resolve_renamed(kwargs, "prescreen")     # the deprecated neighbour= (warns)
    if "neighbours" in kwargs and check_neighbour(kwargs["neighbours"]) != REPLACE_ONE:
        raise ValueError("neighbours: pre-screening always uses 'replace_one' neighbours")
    kwargs["neighbours"] = "replace_one"
    fn = _METHODS[name]
    if kwargs.get("delta", 0.0) != 0.0:
        raise ValueError("delta: pre-screening is pure eps-DP (the pipeline composes pure "
                         "guarantees); drop delta=")
    if name in ("dp_sis", "noisy_iht", "two_stage"):   # two-stage: blocks on clipped rows
        result = fn(X, y, k, eps, bounds=bounds, random_state=random_state,
                    accountant=accountant, **kwargs)
    else:
        if bounds is not None:
            logger.debug("prescreen(%s): bounds are not used by this method", name)
        result = fn(X, y, k, eps, random_state=random_state, accountant=accountant, **kwargs)
    result.info["prescreen"] = True
    return result
