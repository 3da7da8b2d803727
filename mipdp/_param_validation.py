"""Declarative parameter checks for the public functions (one table per function).

In the style of scikit-learn's ``_parameter_constraints`` (``sklearn/utils/_param_validation.py``),
written small and locally because that module is private to scikit-learn.  A public
function declares a table ``{parameter name: [constraint, ...]}``; a value is valid if it
satisfies *one* of the constraints of its parameter.  Every violation raises
:class:`InvalidParameterError` (a subclass of both ``ValueError`` and ``TypeError``) with
one message shape::

    The 'n_draws' parameter of private_bss must be an int in the range [1, inf). Got 1.5 instead.

Constraints
-----------
``Interval(Integral | Real, left, right, closed=...)``, ``StrOptions({...})``,
``Options(type, {...})``, a type (instances of it), ``None``, ``"boolean"``,
``"random_state"`` (None, int >= 0, SeedSequence, Generator, RandomState),
``"bounds"`` (clipping bounds), ``"accountant"``, ``callable``, ``"no_validation"``.

Only the *arguments* are checked here, never the data: a check that needs the data (e.g.
``s < p``) stays in the function, after the privacy budget has been checked.
"""

from __future__ import annotations

import functools
import inspect
import math
import sys
from collections.abc import Callable
from numbers import Integral, Real
from typing import Any

import numpy as np

from .exceptions import InvalidParameterError

__all__ = ["InvalidParameterError", "Interval", "StrOptions", "Options", "validate_params",
           "validate_parameter_constraints", "make_constraint"]


class _Constraint:
    """Base class: ``is_satisfied_by(value)`` and a description for the message."""

    def is_satisfied_by(self, value: Any) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def __str__(self) -> str:  # pragma: no cover - interface
        raise NotImplementedError


class _InstancesOf(_Constraint):
    def __init__(self, type_):
        self.type = type_

    def is_satisfied_by(self, value):
        return isinstance(value, self.type)

    def __str__(self):
        names = {int: "int", float: "float", str: "str", dict: "dict", bool: "bool",
                 list: "list", tuple: "tuple"}
        name = names.get(self.type, getattr(self.type, "__qualname__", self.type))
        return f"an instance of {name!s}"


class _NoneConstraint(_Constraint):
    def is_satisfied_by(self, value):
        return value is None

    def __str__(self):
        return "None"


class _Booleans(_Constraint):
    def is_satisfied_by(self, value):
        return isinstance(value, (bool, np.bool_))

    def __str__(self):
        return "a bool"


class _Callables(_Constraint):
    def is_satisfied_by(self, value):
        return callable(value)

    def __str__(self):
        return "a callable"


class _RandomStates(_Constraint):
    def is_satisfied_by(self, value):
        if value is None or isinstance(value, (np.random.Generator, np.random.RandomState,
                                               np.random.SeedSequence)):
            return True
        return (isinstance(value, Integral) and not isinstance(value, (bool, np.bool_))
                and value >= 0)

    def __str__(self):
        return ("None, an int >= 0, a numpy.random.SeedSequence, a numpy.random.Generator or a "
                "numpy.random.RandomState")


class _Bounds(_Constraint):
    """Clipping bounds: None, a positive number, or a pair of positive numbers / None."""

    @staticmethod
    def _ok(v) -> bool:
        return v is None or (isinstance(v, Real) and not isinstance(v, (bool, np.bool_))
                             and math.isfinite(v) and float(v) > 0)

    def is_satisfied_by(self, value):
        if value is None:
            return True
        if isinstance(value, Real) and not isinstance(value, (bool, np.bool_)):
            return self._ok(value)
        if isinstance(value, (tuple, list)) and len(value) == 2:
            return all(self._ok(v) for v in value)
        return False

    def __str__(self):
        return ("None, a positive number, or a pair (bound_x, bound_y) of positive numbers "
                "or None")


class _Accountants(_Constraint):
    def is_satisfied_by(self, value):
        # no import of mipdp.accounting (which validates its own parameters here): an
        # accountant exists only once that module is loaded
        accounting = sys.modules.get("mipdp.accounting")
        return value is None or (accounting is not None
                                 and isinstance(value, accounting.BudgetAccountant))

    def __str__(self):
        return "None or a mipdp.accounting.BudgetAccountant"


class _NoValidation(_Constraint):
    def is_satisfied_by(self, value):
        return True

    def __str__(self):  # pragma: no cover - never reported
        return "anything"


class Interval(_Constraint):
    """Numbers of type ``Integral`` or ``Real`` in ``[left, right]``.

    Parameters
    ----------
    type : {numbers.Integral, numbers.Real}
        ``Integral`` accepts Python and NumPy integers (not bools); ``Real`` accepts any
        real number (including integers, not bools) and rejects NaN.
    left, right : float or None
        Ends (``None``: unbounded).
    closed : {"left", "right", "both", "neither"}
    allow_inf : bool, default False
        For ``Real``: whether ``inf`` is accepted at an open right end.
    """

    def __init__(self, type, left, right, *, closed: str = "both", allow_inf: bool = False):
        if type not in (Integral, Real):
            raise ValueError("Interval: type must be numbers.Integral or numbers.Real")
        if closed not in ("left", "right", "both", "neither"):
            raise ValueError(f"Interval: bad closed={closed!r}")
        self.type, self.left, self.right, self.closed = type, left, right, closed
        self.allow_inf = allow_inf

    def is_satisfied_by(self, value):
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, self.type):
            return False
        v = float(value)
        if math.isnan(v):
            return False
        if math.isinf(v) and not (self.allow_inf and v > 0 and self.right is None):
            return False
        if self.left is not None:
            if v < self.left or (v == self.left and self.closed in ("right", "neither")):
                return False
        if self.right is not None:
            if v > self.right or (v == self.right and self.closed in ("left", "neither")):
                return False
        return True

    def __str__(self):
        kind = "an int" if self.type is Integral else "a float"
        lo = "-inf" if self.left is None else f"{self.left:g}"
        hi = "inf" if self.right is None else f"{self.right:g}"
        lb = "[" if self.closed in ("left", "both") and self.left is not None else "("
        rb = "]" if (self.closed in ("right", "both") and self.right is not None) or \
            (self.right is None and self.allow_inf) else ")"
        return f"{kind} in the range {lb}{lo}, {hi}{rb}"


class Options(_Constraint):
    """One of a finite set of values of a given type."""

    def __init__(self, type_, options):
        self.type, self.options = type_, set(options)

    def is_satisfied_by(self, value):
        return isinstance(value, self.type) and value in self.options

    def _names(self):
        return ", ".join(repr(o) for o in sorted(self.options, key=str))

    def __str__(self):
        return f"a {getattr(self.type, '__name__', self.type)} among {{{self._names()}}}"


class StrOptions(Options):
    """One of a finite set of strings."""

    def __init__(self, options):
        super().__init__(str, options)

    def __str__(self):
        return f"a str among {{{self._names()}}}"


_STRINGS = {"boolean": _Booleans, "random_state": _RandomStates, "bounds": _Bounds,
            "accountant": _Accountants, "no_validation": _NoValidation}


def make_constraint(constraint) -> _Constraint:
    """Turn one declared constraint into a :class:`_Constraint`."""
    if isinstance(constraint, _Constraint):
        return constraint
    if constraint is None:
        return _NoneConstraint()
    if constraint is callable:
        return _Callables()
    if isinstance(constraint, str) and constraint in _STRINGS:
        return _STRINGS[constraint]()
    if isinstance(constraint, type):
        return _InstancesOf(constraint)
    raise ValueError(f"unknown constraint {constraint!r}")


def _describe(constraints: list[_Constraint]) -> str:
    parts = [str(c) for c in constraints if not isinstance(c, _NoneConstraint)]
    if any(isinstance(c, _NoneConstraint) for c in constraints):
        parts.append("None")
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " or " + parts[-1]


def validate_parameter_constraints(constraints: dict, params: dict, caller_name: str) -> None:
    """Check ``params`` against ``constraints``; raise :class:`InvalidParameterError`.

    Parameters absent from ``constraints`` are not checked.
    """
    for name, value in params.items():
        declared = constraints.get(name)
        if declared is None or (isinstance(declared, str) and declared == "no_validation"):
            continue
        cons = [make_constraint(c) for c in declared] if isinstance(declared, list) else declared
        if any(c.is_satisfied_by(value) for c in cons):
            continue
        raise InvalidParameterError(f"The {name!r} parameter of {caller_name} must be "
                                    f"{_describe(cons)}. Got {value!r} instead.")


def validate_params(constraints: dict | None = None, *, shared: dict | None = None) -> Callable:
    """Decorator: validate the arguments of a public function against a table.

    Parameters
    ----------
    constraints : dict
        ``{parameter: [constraint, ...]}``; every key must be a parameter of the function.
    shared : dict, optional
        A table shared by several functions; only the entries naming a parameter of this
        function are used (``constraints`` overrides them).

    The table is kept on the function as ``fn._parameter_constraints`` (the selector and
    the tests read it).
    """
    def decorator(func):
        sig = inspect.signature(func)
        table = {k: v for k, v in (shared or {}).items() if k in sig.parameters}
        table.update(constraints or {})
        unknown = set(constraints or {}) - set(sig.parameters)
        compiled = {k: (v if v == "no_validation" else tuple(make_constraint(c) for c in v))
                    for k, v in table.items()}
        if unknown:
            raise ValueError(f"{func.__name__}: constraints for unknown parameters {unknown}")

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as exc:
                raise TypeError(f"{func.__name__}: {exc}") from None
            bound.apply_defaults()
            validate_parameter_constraints(compiled, bound.arguments, func.__name__)
            return func(*args, **kwargs)

        wrapper._parameter_constraints = table
        return wrapper
    return decorator


def check_less_than(value: int, limit: int, name: str, limit_name: str, caller: str) -> int:
    """``1 <= value < limit`` for a size that needs the data's shape (``s < p``, ``k < p``)."""
    if not value < limit:
        what = (f"the number of features (n_features = {limit})" if limit_name == "p"
                else f"{limit_name} = {limit}")
        raise InvalidParameterError(f"The {name!r} parameter of {caller} must be smaller than "
                                    f"{what}. Got {value!r} instead.")
    return int(value)


# Shared constraints, so a parameter means the same everywhere -----------------------
POSITIVE_INT = [Interval(Integral, 1, None, closed="left")]
EPSILON = [Interval(Real, 0, None, closed="neither")]
EPSILON_OR_INF = [Interval(Real, 0, None, closed="neither", allow_inf=True)]
PROBABILITY_OPEN = [Interval(Real, 0, 1, closed="neither")]
POSITIVE_REAL = [Interval(Real, 0, None, closed="neither")]
#: scikit-learn's ``n_jobs``: ``None`` (one worker), a positive count, or ``-k`` (all cores
#: but ``k - 1``); ``0`` is refused
N_JOBS = [None, Interval(Integral, 1, None, closed="left"),
          Interval(Integral, None, -1, closed="right")]
NEIGHBOUR = [StrOptions({"replace-one", "add/remove", "add/remove-one"}), "neighbour"]


class _Neighbours(_Constraint):
    def is_satisfied_by(self, value):
        from .guarantee import Neighbour
        if isinstance(value, Neighbour):
            return True
        # the old spellings reach here only through a deprecation path that warned
        return isinstance(value, str) and value.strip().lower() in (
            "replace_one", "add_remove", "replace-one", "add/remove", "add/remove-one")

    def __str__(self):
        return "a str among {'replace_one', 'add_remove'} or a mipdp.Neighbour"


_STRINGS["neighbour"] = _Neighbours
NEIGHBOUR = ["neighbour"]
