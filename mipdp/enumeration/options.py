"""The ``enumeration_options`` a public function may pass to :class:`SupportEnumerator`.

One parameter table (:data:`ENUMERATION_OPTIONS`) in the style of
:mod:`mipdp._param_validation`, checked by :func:`check_enumeration_options` *before the
data is read*.  Only the options that keep every certificate of the enumeration are
offered, and only in the range where they do:

* ``exhaustive_max``, ``explicit_max``, ``full_class_max`` (ints ``>= 0``), ``dominance``,
  ``screening``, ``reduced_search``, ``envelope_split``, ``shifted_cuts``,
  ``linear_envelopes`` (bools),
  ``n_warm_cuts`` (int ``>= 0``) choose *how* the exact answer or a certified bound is
  found, or how the exponential mechanism samples it; every choice is exact.
* ``search_gap`` (``[0, 1)``): the gap of the search solves; their certificates are
  infeasibility proofs and dual bounds, valid whatever the gap.
* ``progress`` (callable or :class:`~mipdp.enumeration.progress.Progress`): observation only.
* ``cutoff_margin`` may only be *raised* (``>= 1e-5``, its default): the margin must exceed
  the solvers' feasibility tolerance for an infeasible master to be a proof, and a larger
  margin only admits more supports into each search.
* ``tol`` (the optimum's relative tolerance) may only be *lowered* (``(0, 1e-9]``): the
  top-R set and the mistake classes are exact only around an exact optimum, so a looser
  tolerance would let a release claim a guarantee it does not have.

Refused with :class:`~mipdp.exceptions.InvalidParameterError`: any other key (the
enumerator's ``time_limit``, ``backend``, ``backend_options`` are the calling function's
own arguments; ``scale`` is the mechanism's sensitivity), and a value outside its range.
"""

from __future__ import annotations

from numbers import Integral, Real

from .._param_validation import (
    Interval,
    InvalidParameterError,
    make_constraint,
    validate_parameter_constraints,
)
from .progress import Progress

__all__ = ["ENUMERATION_OPTIONS", "check_enumeration_options"]

#: Default ``cutoff_margin`` of :class:`SupportEnumerator` (the least that certifies).
MIN_CUTOFF_MARGIN = 1e-5
#: Default ``tol`` of :class:`SupportEnumerator` (the loosest that certifies).
MAX_TOL = 1e-9

_NONNEG_INT = [Interval(Integral, 0, None, closed="left")]

#: ``{option: [constraint, ...]}``: the options a user may set, in the range where every
#: certificate holds.
ENUMERATION_OPTIONS: dict[str, list] = {
    "exhaustive_max": _NONNEG_INT,
    "explicit_max": _NONNEG_INT,
    "full_class_max": _NONNEG_INT,
    "n_warm_cuts": [None] + _NONNEG_INT,
    "dominance": ["boolean"],
    "screening": ["boolean"],
    "reduced_search": ["boolean"],
    "envelope_split": ["boolean"],
    "shifted_cuts": ["boolean"],
    "linear_envelopes": ["boolean"],
    "search_gap": [Interval(Real, 0, 1, closed="left")],
    "cutoff_margin": [Interval(Real, MIN_CUTOFF_MARGIN, 1.0, closed="both")],
    "tol": [Interval(Real, 0, MAX_TOL, closed="right")],
    "progress": [None, callable, Progress],
}

#: Keys that are the enumerator's but not the user's to set here, and where they belong.
_ELSEWHERE = {
    "time_limit": "pass time_limit= to {caller} itself",
    "backend": "pass backend= to {caller} itself",
    "backend_options": "pass backend_options= to {caller} itself",
    "scale": "it is the mechanism's sensitivity, set from bounds, loss and n",
}

_WHY = {
    "cutoff_margin": (f"a margin below {MIN_CUTOFF_MARGIN:g} (the default) is within the "
                      "solvers' feasibility tolerance, so an infeasible search would no "
                      "longer prove its bound"),
    "tol": (f"an optimum tolerance above {MAX_TOL:g} (the default) leaves the optimum, and "
            "with it the top-R set and the mistake classes, uncertified"),
}


def check_enumeration_options(options: dict | None, caller: str = "private_bss") -> dict:
    """Validate ``enumeration_options`` against :data:`ENUMERATION_OPTIONS`.

    Parameters
    ----------
    options : dict or None
        The user's options (``None``: none).
    caller : str
        Name of the public function, for the messages.

    Returns
    -------
    dict
        A copy of ``options`` (empty for ``None``).

    Raises
    ------
    InvalidParameterError
        For an unknown key, a key that belongs elsewhere, or a value outside the range
        where the enumeration's certificates hold (the message names the option and why).
    """
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise InvalidParameterError(f"The 'enumeration_options' parameter of {caller} must be "
                                    f"a dict or None. Got {options!r} instead.")
    for key in options:
        if key in _ELSEWHERE:
            raise InvalidParameterError(
                f"enumeration_options[{key!r}] of {caller} cannot be set here: "
                f"{_ELSEWHERE[key].format(caller=caller)}.")
        if key not in ENUMERATION_OPTIONS:
            raise InvalidParameterError(
                f"enumeration_options of {caller}: unknown option {key!r}; the options are "
                f"{sorted(ENUMERATION_OPTIONS)}.")
    for key, value in options.items():
        cons = [make_constraint(c) for c in ENUMERATION_OPTIONS[key]]
        try:
            validate_parameter_constraints({key: cons}, {key: value}, caller)
        except InvalidParameterError as exc:
            msg = str(exc).replace(f"The {key!r} parameter", f"enumeration_options[{key!r}]", 1)
            if key in _WHY:
                msg += f" ({_WHY[key]}; the release would not be certified)"
            raise InvalidParameterError(msg) from None
    return dict(options)
