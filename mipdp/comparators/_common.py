"""Small helpers shared by the comparator modules (parameters, top-k dispatch, results)."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from numbers import Real

import numpy as np

from .._neighbours import as_neighbour
from .._param_validation import EPSILON, N_JOBS, NEIGHBOUR, POSITIVE_INT, Interval, StrOptions
from .._validation import bounds_not_private_reason, data_derived_bounds
from ..guarantee import Guarantee, Neighbour
from ..mechanisms.topk import canonical_lipschitz_topk, gumbel_peeling_topk, laplace_topk
from ..result import SelectionResult

__all__ = ["REPLACE_ONE", "ADD_REMOVE", "check_neighbour", "get_topk", "make_result",
           "COMMON_CONSTRAINTS", "TOPK_NAMES", "finalize_guarantee", "support_size_alias"]

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
    "neighbours": NEIGHBOUR,
    "random_state": ["random_state"],
    "n_draws": POSITIVE_INT,
    "gamma": [Interval(Real, 0, 1, closed="both")],
    "accountant": ["accountant"],
    "n_jobs": N_JOBS,
}


def check_neighbour(neighbours) -> Neighbour:
    """The :class:`~mipdp.guarantee.Neighbour` of ``neighbours`` (enum or any spelling)."""
    return as_neighbour(neighbours)


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


def support_size_alias(func: Callable) -> Callable:
    """Accept ``s=`` (the support size's name in :func:`mipdp.private_bss`) for ``k``.

    The comparators call the support size ``k`` (their papers' name, and the number of
    candidate columns of a pre-screen).  ``dp_sis(X, y, s=3, eps=1.0)`` now means
    ``dp_sis(X, y, 3, 1.0)``; giving both ``k`` and ``s`` raises
    :class:`~mipdp.exceptions.InvalidParameterError`.  ``s`` is checked like ``k``
    (before the data is read).
    """
    from .._param_validation import (
        InvalidParameterError,
        make_constraint,
        validate_parameter_constraints,
    )
    sig = inspect.signature(func)
    names = list(sig.parameters)
    k_pos = names.index("k")
    s_constraint = {"s": tuple(make_constraint(c) for c in POSITIVE_INT)}

    @functools.wraps(func)
    def wrapper(*args, s=None, **kwargs):
        if s is not None:
            validate_parameter_constraints(s_constraint, {"s": s}, func.__name__)
            if len(args) > k_pos or kwargs.get("k") is not None:
                raise InvalidParameterError(
                    f"The 's' parameter of {func.__name__} is an alias of 'k' (the support "
                    "size); pass one of them, not both.")
            kwargs["k"] = s
        elif len(args) <= k_pos and kwargs.get("k") is None:
            raise TypeError(f"{func.__name__}: missing the support size: pass k (or its "
                            "alias s=)")
        return func(*args, **kwargs)

    # k stays required in the signature shown (a default on k would have to go on every
    # later positional parameter too); s=, keyword only, stands in for it
    params = list(sig.parameters.values())
    extra = inspect.Parameter("s", inspect.Parameter.KEYWORD_ONLY, default=None,
                              annotation="int | None")
    var_kw = [p for p in params if p.kind is inspect.Parameter.VAR_KEYWORD]
    params = [p for p in params if p.kind is not inspect.Parameter.VAR_KEYWORD] + [extra] + var_kw
    wrapper.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    wrapper._parameter_constraints = {  # type: ignore[attr-defined]
        **getattr(func, "_parameter_constraints", {}), "s": POSITIVE_INT}
    if wrapper.__doc__:
        wrapper.__doc__ = wrapper.__doc__.replace(
            "\n    k : int\n", "\n    k : int\n        (Alias ``s=``, keyword only, the name "
            "used by :func:`mipdp.private_bss`.)\n", 1)
    return wrapper
