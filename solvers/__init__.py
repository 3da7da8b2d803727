"""MIP backend adapters for mipdp.

Each backend is a small adapter (see :class:`mipdp.solvers.base.MIPBackend`) around one
solver; the solver's package is imported only when the backend is created, so
``import mipdp`` works with HiGHS alone.

>>> from solvers import available_backends, get_backend
>>> "highs" in available_backends()
True
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect

from .base import (
    BackendUnavailableError,
    InvalidParameterError,
    MIPBackend,
    SizeLimitError,
    SolverError,
    SolveResult,
    SolverTimeLimitError,
)

__all__ = ["MIPBackend", "SolveResult", "SolverError", "BackendUnavailableError",
           "SizeLimitError", "SolverTimeLimitError", "InvalidParameterError", "get_backend",
           "check_backend",
           "available_backends",
           "BACKENDS"]

#: name -> (module holding the adapter, adapter class, Python package it needs, pip extra)
BACKENDS: dict[str, tuple[str, str, str, str]] = {
    "highs": ("mipdp.solvers.highs", "HighsBackend", "highspy", "highspy"),
    "gurobi": ("mipdp.solvers.gurobi", "GurobiBackend", "gurobipy", "mipdp[gurobi]"),
    "pyomo": ("mipdp.solvers.pyomo", "PyomoBackend", "pyomo", "mipdp[pyomo]"),
}


def available_backends() -> list[str]:
    """Names of the backends whose solver package is importable here."""
    return [name for name, (_, _, pkg, _) in BACKENDS.items()
            if importlib.util.find_spec(pkg) is not None]


def get_backend(name: str | MIPBackend = "highs", **options) -> MIPBackend:
    """Create a fresh backend (one empty model) by name.

    Parameters
    ----------
    name : {"highs", "gurobi", "pyomo"} or MIPBackend subclass instance
        Backend name.  An existing instance is returned unchanged only if it holds
        no model yet.
    **options
        Passed to the adapter (``time_limit``, ``threads``, ``verbose``; Pyomo also
        takes ``solver=``).

    Raises
    ------
    ValueError
        ``name`` is not a known backend.
    InvalidParameterError
        An option the adapter does not take (e.g. ``mip_rel_gap``: the enumeration sets the
        gap of every solve itself), or a bad option value.
    BackendUnavailableError
        The backend's solver package is not installed.
    """
    if isinstance(name, MIPBackend):
        if name.n_cols or name.n_rows:
            raise ValueError("backend: pass a backend name or an empty backend instance; "
                             "this instance already holds a model")
        return name
    check_backend(name, options)
    module, cls, _, _ = BACKENDS[name.lower()]
    return getattr(importlib.import_module(module), cls)(**options)


def _check_option_keys(name: str, options: dict) -> None:
    module, cls, _, _ = BACKENDS[name.lower()]
    adapter = getattr(importlib.import_module(module), cls)
    accepted = [p for p in inspect.signature(adapter.__init__).parameters if p != "self"]
    for key in options:
        if key not in accepted:
            why = (" The MIP gap of every solve is set by the enumeration (its certificates "
                   "need it) and cannot be changed." if key.lower() in ("mip_rel_gap", "mipgap",
                                                                         "mip_gap") else "")
            raise InvalidParameterError(
                f"The 'backend_options' parameter has a key {key!r} that backend {name!r} "
                f"does not take; accepted keys: {accepted}.{why}")


def check_backend(name, options: dict | None = None) -> None:
    """Raise the error :func:`get_backend` would raise for ``name`` (and the names of
    ``options``), without building anything."""
    if isinstance(name, MIPBackend):
        return
    if not isinstance(name, str) or name.lower() not in BACKENDS:
        raise ValueError(f"backend: unknown backend {name!r}; choose one of "
                         f"{sorted(BACKENDS)} (installed: {available_backends()})")
    _, _, pkg, extra = BACKENDS[name.lower()]
    if importlib.util.find_spec(pkg) is None:
        raise BackendUnavailableError(
            f"backend={name!r} needs the Python package {pkg!r}, which is not installed; "
            f"install it with `pip install {extra}` or use one of {available_backends()}")
    if options:
        if not isinstance(options, dict):
            raise InvalidParameterError(f"The 'backend_options' parameter must be a dict or None. "
                                        f"Got {options!r} instead.")
        _check_option_keys(name, options)
