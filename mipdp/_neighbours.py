"""The ``neighbours=`` argument: one spelling everywhere, the old ones deprecated.

Every function and class of mipdp takes ``neighbours="replace_one"`` (default) or
``neighbours="add_remove"`` (a :class:`~mipdp.guarantee.Neighbour` member is accepted too).
The comparators and :class:`~mipdp.accounting.BudgetAccountant` used to take
``neighbour="replace-one" | "add/remove"``: both the old argument name and the old values
still work, with a :class:`FutureWarning` saying what to write instead; passing both
``neighbour=`` and ``neighbours=`` raises.  The choice is a parameter (public), so every
check here runs before the data is read.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable

from ._param_validation import InvalidParameterError
from ._warnings import warn
from .guarantee import Neighbour

__all__ = ["NEIGHBOURS", "canonical_neighbours", "neighbours_argument", "as_neighbour"]

#: the spellings of ``neighbours=``
NEIGHBOURS = ("replace_one", "add_remove")

_OLD_VALUES = {"replace-one": "replace_one", "add/remove": "add_remove",
               "add/remove-one": "add_remove"}


def _translate(value) -> str | None:
    """The new spelling of ``value`` (``None`` if it is not one), without a warning."""
    if isinstance(value, Neighbour):
        return "add_remove" if value is Neighbour.ADD_REMOVE else "replace_one"
    if isinstance(value, str):
        if value in NEIGHBOURS:
            return value
        return _OLD_VALUES.get(value.strip().lower())
    return None


def _refuse(value, caller: str):
    where = f" of {caller}" if caller else ""
    return InvalidParameterError(
        f"The 'neighbours' parameter{where} must be a str among {{'replace_one', "
        f"'add_remove'}} or a mipdp.Neighbour. Got {value!r} instead.")


def canonical_neighbours(value, caller: str = "") -> str:
    """``"replace_one"`` or ``"add_remove"`` for any accepted spelling of ``value``.

    A :class:`~mipdp.guarantee.Neighbour` member maps silently; an old spelling
    (``"replace-one"``, ``"add/remove"``, ``"add/remove-one"``) maps with a
    :class:`FutureWarning`; anything else raises :class:`InvalidParameterError`.
    """
    new = _translate(value)
    if new is None:
        raise _refuse(value, caller)
    if not isinstance(value, Neighbour) and value != new:
        warn(f"{caller + ': ' if caller else ''}neighbours={value!r} is deprecated and "
             f"will be removed; write neighbours={new!r}.", FutureWarning)
    return new


def as_neighbour(value, caller: str = "") -> Neighbour:
    """The :class:`~mipdp.guarantee.Neighbour` record of any accepted spelling."""
    new = canonical_neighbours(value, caller)
    return Neighbour.ADD_REMOVE if new == "add_remove" else Neighbour.REPLACE_ONE


def resolve_renamed(kwargs: dict, caller: str) -> None:
    """Move a deprecated ``neighbour=`` in ``kwargs`` to ``neighbours=`` (warns; in place).

    The old value is translated too (one warning for both); an unknown value raises.
    Raises :class:`InvalidParameterError` when both names are given.
    """
    if "neighbour" not in kwargs:
        return
    old = kwargs.pop("neighbour")
    if "neighbours" in kwargs:
        raise InvalidParameterError(
            f"{caller}: got both neighbour= and neighbours=; neighbour= is the deprecated "
            "name of neighbours=: pass neighbours= only.")
    new = _translate(old)
    if new is None:
        raise _refuse(old, caller)
    warn(f"{caller}: the argument neighbour= is deprecated and will be removed; write "
         f"neighbours={new!r}.", FutureWarning)
    kwargs["neighbours"] = new


def neighbours_argument(func: Callable) -> Callable:
    """Decorate a function whose ``neighbours`` parameter replaced ``neighbour``.

    The wrapper accepts the old keyword ``neighbour=`` and the old values (each with a
    :class:`FutureWarning`), refuses both names at once, and passes the canonical string
    (``"replace_one"`` or ``"add_remove"``) on, before any other check.
    """
    sig = inspect.signature(func)
    pos = list(sig.parameters).index("neighbours")
    positional = sig.parameters["neighbours"].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    name = func.__name__

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        resolve_renamed(kwargs, name)
        if positional and len(args) > pos:
            args = list(args)
            args[pos] = canonical_neighbours(args[pos], name)
        elif "neighbours" in kwargs:
            kwargs["neighbours"] = canonical_neighbours(kwargs["neighbours"], name)
        return func(*args, **kwargs)

    return wrapper
