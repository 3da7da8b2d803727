"""Small helpers shared by the comparator modules (parameters, top-k dispatch, results)."""

from __future__ import annotations

from numbers import Real
from typing import Callable

import numpy as np

from .._param_validation import (EPSILON, NEIGHBOUR, POSITIVE_INT, Interval, StrOptions)
from .._validation import bounds_not_private_reason, data_derived_bounds
from ..guarantee import Guarantee, Neighbour
from ..mechanisms.topk import canonical_lipschitz_topk, gumbel_peeling_topk, laplace_topk
from ..result import SelectionResult

__all__ = ["REPLACE_ONE", "ADD_REMOVE", "check_neighbour", "get_topk", "make_result",
           "COMMON_CONSTRAINTS", "TOPK_NAMES", "finalize_guarantee"]

REPLACE_ONE = Neighbour.REPLACE_ONE
ADD_REMOVE = Neighbour.ADD_REMOVE

_TOPK = {
    "canonical_lipschitz": canonical_lipschitz_topk,
    "peeling": gumbel_peeling_topk,
    "gumbel_peeling": gumbel_peeling_topk,
    "laplace": laplace_topk,
}
TOPK_NAMES = frozenset(_TOPK)

#: Constraints of the parameters every comparator shares (same meaning, same checks).
COMMON_CONSTRAINTS = {
    "X": "no_validation",
    "y": "no_validation",
    "k": POSITIVE_INT,
    "s": POSITIVE_INT,
    "eps": EPSILON,
    "bounds": ["bounds"],
    "topk": [StrOptions(TOPK_NAMES)],
    "neighbour": NEIGHBOUR,
    "random_state": ["random_state"],
    "n_draws": POSITIVE_INT,
    "gamma": [Interval(Real, 0, 1, closed="both")],
    "accountant": ["accountant"],
}


def check_neighbour(neighbour) -> Neighbour:
    """The :class:`~mipdp.guarantee.Neighbour` of ``neighbour`` (enum or documented spelling)."""
    return Neighbour.parse(neighbour)


def get_topk(name) -> Callable:
    """Private top-k function by name."""
    if not isinstance(name, str) or name not in _TOPK:
        raise ValueError(f"topk: expected one of {sorted(set(_TOPK))}, got {name!r}")
    return _TOPK[name]


def finalize_guarantee(per_draw: Guarantee, n_draws: int, bounds=None, *,
                       need_bounds: bool = False, need_y: bool = True) -> Guarantee:
    """The guarantee of ``n_draws`` draws, voided if the clipping bounds come from the data.

    Used twice by every comparator: before the data is read (the planned guarantee the
    accountant checks) and after (the result's).
    """
    g = per_draw.repeat(n_draws)
    if need_bounds:
        derived = data_derived_bounds(bounds, need_y=need_y)
        if derived:
            g = g.not_private(bounds_not_private_reason(derived))
    return g


def make_result(supports: list, *, method: str, guarantee: Guarantee, timings: dict,
                info: dict, epsilon_per_draw: float) -> SelectionResult:
    """Build a :class:`SelectionResult` from one sorted support per draw."""
    arr = np.array([np.sort(np.asarray(s, dtype=np.intp)) for s in supports], dtype=np.intp)
    info = dict(info)
    info.setdefault("epsilon_per_draw", epsilon_per_draw)
    return SelectionResult(support=arr[0].copy(), supports=arr, method=method,
                           guarantee=guarantee, timings=dict(timings), info=info)
