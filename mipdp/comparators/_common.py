"""Small helpers shared by the comparator modules (argument checks, top-k dispatch, results)."""

from __future__ import annotations

import numbers
from typing import Callable

import numpy as np

from ..mechanisms.topk import canonical_lipschitz_topk, gumbel_peeling_topk, laplace_topk
from ..result import SelectionResult

__all__ = ["REPLACE_ONE", "ADD_REMOVE", "check_neighbour", "check_n_draws", "get_topk",
           "make_result"]

REPLACE_ONE = "replace-one"
ADD_REMOVE = "add/remove-one"

_NEIGHBOUR_ALIASES = {
    "replace-one": REPLACE_ONE, "replace_one": REPLACE_ONE, "replace": REPLACE_ONE,
    "bounded": REPLACE_ONE,
    "add/remove-one": ADD_REMOVE, "add/remove": ADD_REMOVE, "add-remove": ADD_REMOVE,
    "add_remove": ADD_REMOVE, "add-remove-one": ADD_REMOVE, "unbounded": ADD_REMOVE,
}

_TOPK = {
    "canonical_lipschitz": canonical_lipschitz_topk,
    "peeling": gumbel_peeling_topk,
    "gumbel_peeling": gumbel_peeling_topk,
    "laplace": laplace_topk,
}


def check_neighbour(neighbour) -> str:
    """Canonical neighbour name: ``"replace-one"`` or ``"add/remove-one"``."""
    if not isinstance(neighbour, str):
        raise TypeError(f"neighbour: expected a string, got {type(neighbour).__name__}")
    try:
        return _NEIGHBOUR_ALIASES[neighbour.strip().lower()]
    except KeyError:
        raise ValueError("neighbour: expected 'replace-one' or 'add/remove', "
                         f"got {neighbour!r}") from None


def check_n_draws(n_draws) -> int:
    """A positive integer number of independent releases."""
    if isinstance(n_draws, bool) or not isinstance(n_draws, numbers.Integral):
        raise TypeError(f"n_draws: expected a positive integer, got {type(n_draws).__name__}")
    if n_draws < 1:
        raise ValueError(f"n_draws: must be >= 1, got {n_draws}")
    return int(n_draws)


def get_topk(name) -> Callable:
    """Private top-k function by name."""
    if not isinstance(name, str) or name not in _TOPK:
        raise ValueError(f"topk: expected one of {sorted(set(_TOPK))}, got {name!r}")
    return _TOPK[name]


def make_result(supports: list, *, method: str, eps: float, delta: float, neighbour: str,
                guarantee: str, timings: dict, info: dict) -> SelectionResult:
    """Build a :class:`SelectionResult` from one sorted support per draw.

    ``eps`` is the per-draw budget; the reported ``epsilon`` is the total
    ``n_draws * eps`` (basic composition of independent releases).
    """
    arr = np.array([np.sort(np.asarray(s, dtype=np.intp)) for s in supports], dtype=np.intp)
    n_draws = arr.shape[0]
    info = dict(info)
    info.setdefault("epsilon_per_draw", eps)
    return SelectionResult(support=arr[0].copy(), supports=arr, method=method,
                           epsilon=float(n_draws * eps), delta=float(n_draws * delta)
                           if np.isfinite(delta) else float(delta),
                           neighbour=neighbour, guarantee=guarantee, timings=dict(timings),
                           info=info)
