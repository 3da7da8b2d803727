"""The one list of :func:`mipdp.private_bss`'s selection methods.

As scikit-learn's ``GenericUnivariateSelect._selection_modes`` feeds its ``StrOptions``,
:data:`METHODS` feeds :func:`private_bss`'s parameter table (:class:`MethodOptions`), its
add/remove scale factors, :func:`~mipdp.selection.planned_guarantee`, the run step of
:func:`private_bss`, the command line's ``--methods`` choices, the experiments' method
list and, through the parameter table, the scikit-learn selector.  Adding a method is one
file under ``mipdp/methods/`` and one line here.
"""

from __future__ import annotations

from .._param_validation import InvalidParameterError, StrOptions
from .base import SelectionMethod
from .exponential import EXPONENTIAL
from .mistakes import MISTAKES
from .permute_and_flip import PERMUTE_AND_FLIP
from .top_r import TOP_R

__all__ = ["METHODS", "method_names", "get_method", "register", "unregister",
           "add_remove_scale", "MethodOptions"]

#: ``method=`` name -> :class:`~mipdp.methods.base.SelectionMethod`, in documentation order
METHODS: dict[str, SelectionMethod] = {m.name: m for m in (EXPONENTIAL, TOP_R, MISTAKES,
                                                            PERMUTE_AND_FLIP)}


def method_names() -> tuple[str, ...]:
    """The registered ``method=`` names, in registration order."""
    return tuple(METHODS)


def get_method(name: str) -> SelectionMethod:
    """The method registered as ``name`` (:class:`InvalidParameterError` otherwise)."""
    try:
        return METHODS[name]
    except (KeyError, TypeError):
        raise InvalidParameterError(
            f"The 'method' parameter must be a str among {set(METHODS)}. Got {name!r} "
            "instead.") from None


def register(method: SelectionMethod, *, replace: bool = False) -> SelectionMethod:
    """Add ``method`` to the registry (every consumer sees it from then on)."""
    if not isinstance(method, SelectionMethod):
        raise TypeError("register: expected a mipdp.methods.SelectionMethod")
    if method.name in METHODS and not replace:
        raise ValueError(f"register: method {method.name!r} is already registered")
    METHODS[method.name] = method
    return method


def unregister(name: str) -> None:
    """Remove the method registered as ``name``."""
    del METHODS[name]


def add_remove_scale() -> dict[str, float]:
    """``{name: factor}`` of the methods available under add/remove neighbours."""
    return {name: float(m.add_remove_factor) for name, m in METHODS.items()
            if m.add_remove_factor is not None}


class MethodOptions(StrOptions):
    """``StrOptions`` over the registered method names, read at every check."""

    def __init__(self):
        super().__init__(())

    @property
    def options(self):
        return set(METHODS)

    @options.setter
    def options(self, value):   # StrOptions.__init__ assigns it; the registry is the truth
        pass
