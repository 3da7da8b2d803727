"""``private_bss`` as an OpenDP ``Measurement``, to compose with other OpenDP releases.

OpenDP (https://opendp.org) describes a private release by a *measurement*: an input
domain (the datasets), an input metric (the neighbour notion, as a distance between
datasets), an output measure (here ``max_divergence``: pure ε-DP) and a *privacy map*
``d_in -> d_out``.  :func:`make_private_bss` builds one with OpenDP's
``make_user_measurement``:

* **input domain**: a user domain of pairs ``(X, y)`` (2-d array with ``p`` columns, 1-d
  array with as many rows), identified by ``p`` so that two measurements on the same data
  compose;
* **input metric**: ``change_one_distance`` for ``neighbours="replace_one"`` (datasets of
  the same size; ``d_in`` rows changed) or ``symmetric_distance`` for
  ``neighbours="add_remove"`` (``d_in`` rows added or removed);
* **output measure**: ``max_divergence`` (pure DP);
* **privacy map**: ``d_in ↦ d_in · ε`` with ``ε`` the planned guarantee of the call
  (:func:`mipdp.planned_guarantee`: every draw, composed), by group privacy for pure DP.
  An add/remove guarantee may also be stated on ``change_one_distance``
  (``input_metric="change_one"``): one changed row is one removal and one addition, so the
  map is ``d_in ↦ 2 d_in ε`` (:meth:`mipdp.Guarantee.as_replace_one`).

Only configurations whose planned guarantee is **proven pure DP** are accepted: the
propose-test-release mistakes sampler (``delta=``) is approximate DP, the unguarded
mistakes sampler is only conditionally private, and bounds left to the data are not
private; each raises :class:`~mipdp.exceptions.InvalidParameterError` when the
measurement is built (before any data).

OpenDP's ``make_user_measurement`` and ``user_domain`` need the features ``"contrib"``
and ``"honest-but-curious"`` (:func:`make_private_bss` enables them, as OpenDP requires
for any user-defined measurement: OpenDP cannot check a privacy map written outside it;
this one is the package's proven guarantee, tested in
``tests/mipdp/interop/test_opendp.py``).
"""

from __future__ import annotations

import math

import numpy as np

from .._neighbours import neighbours_argument
from .._param_validation import InvalidParameterError, validate_parameter_constraints

__all__ = ["make_private_bss", "xy_domain"]

_METRICS = ("change_one", "symmetric")


def _import_opendp():
    try:
        import opendp.prelude as dp
    except ImportError as exc:  # pragma: no cover - exercised only without opendp
        raise ImportError("mipdp.interop.opendp needs OpenDP: pip install 'mipdp[opendp]' "
                          "(or pip install opendp)") from exc
    dp.enable_features("contrib", "honest-but-curious")
    return dp


def _member(p: int):
    def member(xy) -> bool:
        try:
            X, y = xy
            X, y = np.asarray(X), np.asarray(y)
        except (TypeError, ValueError):
            return False
        return bool(X.ndim == 2 and X.shape[1] == p and y.ndim == 1
                    and y.shape[0] == X.shape[0])
    return member


def xy_domain(p: int):
    """OpenDP user domain of the datasets ``(X, y)`` with ``p`` columns."""
    dp = _import_opendp()
    return dp.user_domain(f"mipdp.XyDomain(p={int(p)})", _member(p))


@neighbours_argument
def make_private_bss(p: int, s: int, eps: float, *, neighbours: str = "replace_one",
                     input_metric: str | None = None, **kwargs):
    """An OpenDP ``Measurement`` releasing :func:`mipdp.private_bss` on ``(X, y)``.

    Parameters
    ----------
    p : int
        Number of columns of ``X`` (fixes the input domain).
    s, eps : int, float
        As in :func:`mipdp.private_bss`.
    neighbours : {"replace_one", "add_remove"}, default "replace_one"
        The guarantee's neighbour notion (:func:`mipdp.private_bss`).
    input_metric : {"change_one", "symmetric"}, optional
        OpenDP input metric.  Default: ``"change_one"`` for replace-one,
        ``"symmetric"`` for add/remove.  ``"symmetric"`` with replace-one is refused
        (a replace-one guarantee says nothing about a change of ``n``);
        ``"change_one"`` with add/remove uses the converted guarantee (``2ε`` per row).
    **kwargs
        Further arguments of :func:`mipdp.private_bss` (``bounds``: data-free clipping
        bounds, ``"private"``, or ``"ranks"``, which is what leaving it out means;
        ``bounds="data"`` is refused, it is not private; ``random_state`` is refused: every
        invocation draws fresh randomness, as a measurement must).

    Returns
    -------
    opendp.mod.Measurement
        Called on ``(X, y)`` it returns the released support as a tuple of column indices
        (the first draw; ``n_draws`` draws as a tuple of tuples).  ``measurement.map(d_in)``
        is the ε of the release for datasets ``d_in`` apart.

    Raises
    ------
    InvalidParameterError
        A bad argument, or a configuration that is not proven pure DP (raised here, before
        any data).
    ImportError
        OpenDP is not installed.
    """
    from ..accounting import NOT_RECORDED
    from ..selection import (
        PRIVATE_BSS_CONSTRAINTS,
        _check_method_args,
        neighbour_scale_factor,
        planned_guarantee,
        private_bss,
    )
    if "random_state" in kwargs:
        raise InvalidParameterError("random_state: an OpenDP measurement must draw fresh "
                                    "randomness at every invocation; do not pass random_state")
    for name in ("X", "y", "accountant"):
        if name in kwargs:
            raise InvalidParameterError(f"{name}: not an argument of make_private_bss")
    params = dict(kwargs, s=s, eps=eps, neighbours=neighbours)
    unknown = set(params) - set(PRIVATE_BSS_CONSTRAINTS)
    if unknown:
        raise InvalidParameterError(f"make_private_bss: unknown argument(s) {sorted(unknown)} "
                                    "(not parameters of private_bss)")
    validate_parameter_constraints(PRIVATE_BSS_CONSTRAINTS, params, "make_private_bss")
    if not (isinstance(p, int) and not isinstance(p, bool) and p > s):
        raise InvalidParameterError(f"The 'p' parameter of make_private_bss must be an int "
                                    f"larger than s = {s}. Got {p!r} instead.")
    method = kwargs.get("method", "exponential")
    neighbour_scale_factor(method, neighbours)
    if input_metric is None:
        input_metric = "symmetric" if neighbours == "add_remove" else "change_one"
    if input_metric not in _METRICS:
        raise InvalidParameterError(f"The 'input_metric' parameter of make_private_bss must be "
                                    f"a str among {set(_METRICS)}. Got {input_metric!r} instead.")
    if input_metric == "symmetric" and neighbours != "add_remove":
        raise InvalidParameterError(
            "input_metric: 'symmetric' (rows added or removed) needs neighbours='add_remove'; "
            "a replace-one guarantee says nothing about a change of n")
    delta, eps_test = _check_method_args(method, kwargs.get("R"), kwargs.get("delta"),
                                         kwargs.get("eps_test"), kwargs.get("n_draws", 1))
    plan = {k: kwargs[k] for k in ("n_draws", "prescreen", "method", "bounds", "loss", "R")
            if k in kwargs}
    g = planned_guarantee(float(eps), **plan, delta=delta, eps_test=eps_test,
                          neighbours=neighbours)
    if not g.is_pure:
        from ..methods.registry import METHODS
        pure = " or ".join(repr(name) for name, m in METHODS.items() if m.guarantee(1.0).is_pure)
        raise InvalidParameterError(
            "make_private_bss: OpenDP's max_divergence needs a proven pure-DP release, but "
            f"this configuration's guarantee is: {g}. Give data-free bounds and use "
            f"method={pure} (mistakes only without delta= is conditional, "
            "with delta= approximate)")
    if input_metric == "change_one":
        g = g.as_replace_one()
    eps_total = g.epsilon
    dp = _import_opendp()
    metric = dp.change_one_distance() if input_metric == "change_one" else dp.symmetric_distance()
    n_draws = int(kwargs.get("n_draws", 1))

    member = _member(p)

    def function(xy):
        if not member(xy):      # OpenDP does not check a user domain's membership itself
            raise ValueError(f"the input is not in the measurement's domain: a pair (X, y) "
                             f"with X of shape (n, {p}) and y of shape (n,)")
        X, y = xy
        res = private_bss(X, y, s, eps, accountant=NOT_RECORDED, neighbours=neighbours,
                          **kwargs)
        if n_draws == 1:
            return tuple(int(i) for i in res.support)
        return tuple(tuple(int(i) for i in row) for row in res.supports)

    def privacy_map(d_in):
        d = int(d_in)
        if d < 0:
            raise ValueError("d_in must be non-negative")
        return float(d) * eps_total if d else 0.0

    m = dp.m.make_user_measurement(xy_domain(p), metric, dp.max_divergence(),
                                   function=function, privacy_map=privacy_map)
    if not math.isclose(float(m.map(1)), eps_total):  # pragma: no cover - sanity
        raise RuntimeError("internal error: the OpenDP privacy map disagrees with the guarantee")
    return m
