"""The small interface every MIP backend implements.

The outer-approximation master problem of :mod:`mipdp` is a mixed-integer *linear*
program: one continuous epigraph variable, ``p`` binaries and linear rows (cuts,
cardinality rows, no-good rows) added between solves.  A backend is a thin adapter
around one solver that exposes exactly that and nothing more.

A backend owns one persistent model.  Rows are appended (never rebuilt), so cuts
found in one phase of the enumeration stay in the model for every later phase.
"""

from __future__ import annotations

import logging
import math
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, cast

import numpy as np

logger = logging.getLogger(__name__)

INF = float("inf")

#: A linear row ``lb <= sum(coef[k] * x[idx[k]]) <= ub``.
Row = tuple  # (idx: np.ndarray[int], coef: np.ndarray[float], lb: float, ub: float)

#: A lazy-constraint oracle: called with an integer-feasible point ``x`` (all columns),
#: returns the rows that cut it off (empty list to accept it).
LazyOracle = Callable[[np.ndarray], Sequence[Row]]


# The errors live in the bottom layer :mod:`mipdp.exceptions` (imported by the package and
# the backends alike, importing neither); re-exported here for the adapters.
from mipdp.exceptions import (  # noqa: E402
    BackendUnavailableError,  # noqa: F401  (unused here: re-exported for the adapters)
    InvalidParameterError,
    SizeLimitError,
    SolverError,
    SolverTimeLimitError,
)


@dataclass
class SolveResult:
    """Outcome of one call to :meth:`MIPBackend.solve`.

    Attributes
    ----------
    status : {"optimal", "infeasible"}
        ``"optimal"``: ``x`` is optimal within the requested gap and ``bound`` is a
        valid dual (lower) bound.  ``"infeasible"``: the solver proved that no point
        satisfies the rows (with lazy rows, every point was cut off).  Any other
        outcome raises :class:`SolverError` instead of returning.
    x : ndarray or None
        Values of all columns (``None`` when infeasible).
    objective : float
        Objective of ``x`` (``inf`` when infeasible).
    bound : float
        Dual bound on the optimum (``inf`` when infeasible).
    time : float
        Wall-clock seconds spent in the solver(s).
    n_solves : int
        Number of solver invocations (``> 1`` when lazy rows were emulated by re-solving).
    n_lazy_rows : int
        Lazy rows added during this call.
    """

    status: str
    x: np.ndarray | None
    objective: float
    bound: float
    time: float
    n_solves: int = 1
    n_lazy_rows: int = 0
    info: dict = field(default_factory=dict)

    @property
    def gap(self) -> float:
        """Relative gap ``(objective - bound) / max(1, |objective|)`` (0 when infeasible)."""
        if self.status == "infeasible":
            return 0.0
        return max(0.0, self.objective - self.bound) / max(1.0, abs(self.objective))


class MIPBackend(ABC):
    """One persistent MILP model inside one solver.

    Subclasses implement the ``_``-prefixed primitives; :meth:`solve` adds lazy-row
    handling on top (native callbacks where the solver has them, otherwise the
    solve / add rows / re-solve loop, keeping the model and its basis warm).

    Parameters
    ----------
    time_limit : float, optional
        Default wall-clock limit in seconds for each :meth:`solve` call.
    threads : int, optional
        Solver threads (``None``: the solver's default).
    verbose : bool, default False
        Let the solver write its log (through :mod:`logging` where possible).  **Not
        private**: the log holds objective values and bounds computed from the data.
    """

    name: ClassVar[str] = "abstract"
    #: Largest number of columns (or rows) the installed licence allows, if limited.
    size_limit: int | None = None
    #: Whether :meth:`solve` handles ``lazy=`` with a native solver callback.
    native_lazy: bool = False
    #: Whether two instances may solve at the same time in two threads of one process
    #: (:mod:`mipdp.enumeration.fork` runs independent searches on the workers then)
    thread_safe: ClassVar[bool] = False

    def __init__(self, *, time_limit: float | None = None, threads: int | None = None,
                 verbose: bool = False) -> None:
        check_common_args(type(self).__name__, time_limit=time_limit, threads=threads,
                          verbose=verbose)
        # float("inf") means no limit, as None
        self.time_limit = (None if time_limit is None or math.isinf(time_limit)
                           else float(time_limit))
        self.threads = None if threads is None else int(threads)
        self.verbose = bool(verbose)
        self.n_cols = 0
        self.n_rows = 0

    # -- argument checks shared by every adapter (one place) ----------------------------
    def _row_bound_args(self, rows, lb, ub) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Validated ``(rows, lb, ub)`` of :meth:`set_row_bounds`."""
        idx = as_index_array(rows, self.n_rows, "set_row_bounds")
        lo = as_bound_array(lb, idx.size, "set_row_bounds lb")
        hi = as_bound_array(ub, idx.size, "set_row_bounds ub")
        if (lo > hi).any() or (lo == INF).any() or (hi == -INF).any():
            raise ValueError("set_row_bounds: invalid bounds "
                             "(lb > ub, or infinite on the wrong side)")
        return idx, lo, hi

    def _column_bound_args(self, cols, lb, ub) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Validated ``(cols, lb, ub)`` of :meth:`set_variable_bounds`."""
        idx = as_index_array(cols, self.n_cols, "set_variable_bounds")
        lo = as_bound_array(lb, idx.size, "set_variable_bounds lb")
        hi = as_bound_array(ub, idx.size, "set_variable_bounds ub")
        if (lo > hi).any():
            raise ValueError("set_variable_bounds: lb > ub")
        return idx, lo, hi

    def _objective_args(self, cols, coef) -> tuple[np.ndarray, np.ndarray]:
        """Validated ``(cols, coef)`` of :meth:`set_objective`."""
        idx = as_index_array(cols, self.n_cols, "set_objective")
        c = as_bound_array(coef, idx.size, "set_objective coef")
        if not np.isfinite(c).all():
            raise ValueError("set_objective: non-finite coefficient")
        return idx, c

    def _time_limit_error(self, limit: float | None, elapsed: float, *,
                          incumbent: float | None = None, bound: float | None = None,
                          during: str = "before optimality was proved") -> SolverTimeLimitError:
        """The one time-limit error of every adapter (see :class:`SolverTimeLimitError`)."""
        lim = "no" if limit is None else f"{limit:.3g} s"
        found = []
        if incumbent is not None:
            found.append(f"incumbent {incumbent:.6g}")
        if bound is not None:
            found.append(f"bound {bound:.6g}")
        return SolverTimeLimitError(
            f"{self.name}: this solve call stopped at its time limit ({lim}, after "
            f"{elapsed:.3g} s) {during}" + (f" ({', '.join(found)})" if found else "")
            + "; nothing was certified. The limit is the time_limit of this solve() call; "
            "when mipdp's enumeration calls it, that is what remained of the caller's "
            "time_limit.", backend=self.name, limit=limit, elapsed=elapsed,
            incumbent=incumbent, bound=bound)

    # -- model building -------------------------------------------------------------
    @abstractmethod
    def add_variables(self, n: int, lb: float | np.ndarray, ub: float | np.ndarray, *,
                      integer: bool = False) -> np.ndarray:
        """Append ``n`` columns; return their indices (``integer=True`` with bounds 0/1 are
        binaries)."""

    @abstractmethod
    def add_rows(self, rows: Sequence[Row]) -> np.ndarray:
        """Append linear rows ``(idx, coef, lb, ub)``; return their indices."""

    @abstractmethod
    def set_row_bounds(self, rows: np.ndarray | Sequence[int], lb: np.ndarray | float,
                       ub: np.ndarray | float) -> None:
        """Change the bounds of existing rows (use ``±inf`` for a free side)."""

    @abstractmethod
    def set_variable_bounds(self, cols: np.ndarray | Sequence[int], lb: np.ndarray | float,
                            ub: np.ndarray | float) -> None:
        """Change the bounds of existing columns."""

    @abstractmethod
    def set_objective(self, cols: np.ndarray | Sequence[int],
                      coef: np.ndarray | Sequence[float]) -> None:
        """Minimise ``sum(coef * x[cols])`` (all other objective coefficients become 0)."""

    @abstractmethod
    def _solve_once(self, time_limit: float | None, mip_rel_gap: float,
                    lazy: LazyOracle | None) -> SolveResult:
        """Solve the current model once.  ``lazy`` is only passed when ``native_lazy``."""

    # -- solving --------------------------------------------------------------------
    def solve(self, *, time_limit: float | None = None, mip_rel_gap: float = 1e-9,
              lazy: LazyOracle | None = None, max_rounds: int = 100_000) -> SolveResult:
        """Minimise the objective over the model, with optional lazy rows.

        Parameters
        ----------
        time_limit : float, optional
            Wall-clock limit for the whole call (all re-solves); defaults to the
            backend's ``time_limit``.  Hitting it raises :class:`SolverTimeLimitError`.
        mip_rel_gap : float, default 1e-9
            Relative optimality gap at which the solver may stop.
        lazy : callable, optional
            Lazy-row oracle.  The returned result satisfies every row the oracle
            ever returned and was accepted by the oracle (or is ``"infeasible"``).
            The oracle is only shown points that satisfy the model's rows and every
            row it returned earlier in this call (up to the solver's feasibility
            tolerance), so it may accept a point it has already cut at.  With
            native callbacks it can be called several times per solve.
        max_rounds : int
            Safety cap on emulated re-solves.

        Returns
        -------
        SolveResult
        """
        check_common_args(f"{type(self).__name__}.solve", time_limit=time_limit,
                          mip_rel_gap=mip_rel_gap)
        limit = self.time_limit if time_limit is None else float(time_limit)
        if limit is not None and math.isinf(limit):      # inf: no limit
            limit = None
        start = time.perf_counter()
        if lazy is None or self.native_lazy:
            res = self._solve_once(limit, mip_rel_gap, lazy)
            res.time = time.perf_counter() - start
            return res
        n_solves = n_lazy = 0
        for _ in range(max_rounds):
            remaining = None if limit is None else limit - (time.perf_counter() - start)
            if remaining is not None and remaining <= 0:
                raise self._time_limit_error(limit, time.perf_counter() - start,
                                             during=f"while adding lazy rows ({n_solves} solves)")
            res = self._solve_once(remaining, mip_rel_gap, None)
            n_solves += 1
            if res.status == "infeasible":
                break
            new_rows = list(lazy(cast(np.ndarray, res.x)))  # feasible: a solution
            if not new_rows:
                break
            self.add_rows(new_rows)
            n_lazy += len(new_rows)
        else:  # pragma: no cover - safety net
            raise SolverError(f"{self.name}: lazy-row loop did not settle in {max_rounds} rounds")
        res.time = time.perf_counter() - start
        res.n_solves = n_solves
        res.n_lazy_rows = n_lazy
        return res

    def check_size(self, n_cols: int, n_rows: int) -> None:
        """Raise :class:`SizeLimitError` early if the licence cannot hold the model."""
        lim = self.size_limit
        if lim is not None and (n_cols > lim or n_rows > lim):
            raise SizeLimitError(size_limit_message(self.name, lim, n_cols, n_rows))


def check_common_args(caller: str, **params) -> None:
    """Validate ``time_limit``, ``threads``, ``verbose``, ``mip_rel_gap`` (one table for all
    adapters; :class:`InvalidParameterError` naming the argument)."""
    from numbers import Integral, Real

    from mipdp._param_validation import Interval, validate_parameter_constraints  # bottom layer
    table = {"time_limit": [None, Interval(Real, 0, None, closed="left", allow_inf=True)],
             "threads": [None, Interval(Integral, 1, None, closed="left")],
             "verbose": ["boolean"],
             "mip_rel_gap": [Interval(Real, 0, 1, closed="both")]}
    validate_parameter_constraints(table, params, caller)


#: Option names that set the MIP gap or the time limit.  They are refused inside
#: ``options`` / ``env_params``: the enumeration sets the gap of every solve itself (its
#: certificates depend on it) and the time limit is the ``time_limit`` argument.
RESERVED_OPTIONS = {"mip_rel_gap": "gap", "mipgap": "gap", "ratiogap": "gap",
                    "limits/gap": "gap", "miprelstop": "gap", "mip_gap": "gap",
                    "time_limit": "time", "timelimit": "time", "sec": "time",
                    "tmlim": "time", "limits/time": "time", "maxtime": "time"}


def check_options(caller: str, argument: str, options: dict | None) -> dict:
    """Refuse gap / time-limit settings inside a backend's free-form solver options."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise InvalidParameterError(f"The {argument!r} parameter of {caller} must be a dict or "
                                    f"None. Got {options!r} instead.")
    for key in options:
        kind = RESERVED_OPTIONS.get(str(key).lower())
        if kind == "gap":
            raise InvalidParameterError(
                f"The {argument!r} parameter of {caller} must not set {key!r}: the MIP gap of "
                "every solve is set by the caller (mipdp's enumeration needs its own gaps to "
                "certify the top supports), so it cannot be changed through options.")
        if kind == "time":
            raise InvalidParameterError(
                f"The {argument!r} parameter of {caller} must not set {key!r}: pass "
                "time_limit= instead (to the backend, to solve(), or to private_bss).")
    return dict(options)


def size_limit_message(name: str, limit: int, n_cols: int, n_rows: int) -> str:
    """The error text for a model too large for a size-limited licence."""
    return (f"backend {name!r}: the model has {n_cols} variables and {n_rows} constraints, "
            f"but the installed licence is limited to {limit} of each (the pip wheel of "
            f"gurobipy ships such a licence). Use backend='highs' (free, no limit), "
            f"pre-screen to fewer features with prescreen=..., or install a full licence.")


def as_bound_array(values: float | np.ndarray | Sequence[float], n: int, what: str) -> np.ndarray:
    """Broadcast a scalar or length-``n`` array of bounds/coefficients to ``float64[n]``.

    Raises
    ------
    ValueError
        ``values`` has the wrong length or contains NaN.
    """
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    arr = arr.reshape(-1)
    if arr.shape[0] != n:
        raise ValueError(f"{what}: expected a scalar or {n} values, got {arr.shape[0]}")
    if np.isnan(arr).any():
        raise ValueError(f"{what}: contains NaN")
    return arr


def as_index_array(cols: np.ndarray | Sequence[int], n_max: int, what: str) -> np.ndarray:
    """Validate indices ``0 <= i < n_max`` and return them as ``int64[k]``."""
    idx = np.asarray(cols, dtype=np.int64).reshape(-1)
    if idx.size and (idx.min() < 0 or idx.max() >= n_max):
        raise ValueError(f"{what}: index out of range [0, {n_max})")
    return idx


def rows_to_csr(rows: Sequence[Row], n_cols: int) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                           np.ndarray, np.ndarray]:
    """Validate rows ``(idx, coef, lb, ub)`` and pack them as CSR arrays.

    Duplicate column indices inside a row are summed.  Shared by the backends so
    that they all accept and reject exactly the same rows.

    Returns
    -------
    start : int64[m + 1]
    index : int64[nnz]
    value : float64[nnz]
    lb, ub : float64[m]

    Raises
    ------
    ValueError
        A row is malformed (lengths differ, index out of range, non-finite
        coefficient, ``lb > ub``, ``lb == +inf`` or ``ub == -inf``, NaN bound).
    """
    m = len(rows)
    start = np.zeros(m + 1, dtype=np.int64)
    lbs = np.empty(m)
    ubs = np.empty(m)
    idx_parts: list[np.ndarray] = []
    val_parts: list[np.ndarray] = []
    for r, row in enumerate(rows):
        if len(row) != 4:
            raise ValueError(f"row {r}: expected (idx, coef, lb, ub), got {len(row)} items")
        idx = np.asarray(row[0], dtype=np.int64).reshape(-1)
        val = np.asarray(row[1], dtype=np.float64).reshape(-1)
        lb, ub = float(row[2]), float(row[3])
        if idx.shape != val.shape:
            raise ValueError(f"row {r}: {idx.size} indices but {val.size} coefficients")
        if idx.size and (idx.min() < 0 or idx.max() >= n_cols):
            raise ValueError(f"row {r}: column index out of range [0, {n_cols})")
        if not np.isfinite(val).all():
            raise ValueError(f"row {r}: non-finite coefficient")
        if np.isnan(lb) or np.isnan(ub) or lb > ub or lb == INF or ub == -INF:
            raise ValueError(f"row {r}: invalid bounds lb={lb!r}, ub={ub!r}")
        if idx.size > 1 and not np.all(idx[1:] > idx[:-1]) and np.unique(idx).size != idx.size:
            uniq, inv = np.unique(idx, return_inverse=True)
            # (float64 with weights; numpy's stubs say intp)
            idx, val = uniq, cast(np.ndarray, np.bincount(inv, weights=val, minlength=uniq.size))
        idx_parts.append(idx)
        val_parts.append(val)
        start[r + 1] = start[r] + idx.size
        lbs[r], ubs[r] = lb, ub
    index = np.concatenate(idx_parts) if idx_parts else np.zeros(0, dtype=np.int64)
    value = np.concatenate(val_parts) if val_parts else np.zeros(0)
    return start, index, value, lbs, ubs


def column_bounds(n, lb, ub) -> tuple[int, np.ndarray, np.ndarray]:
    """Validate the arguments of :meth:`MIPBackend.add_variables`: ``(n, lo, hi)``."""
    n = int(n)
    if n < 0:
        raise ValueError(f"add_variables: n must be >= 0, got {n}")
    lo = as_bound_array(lb, n, "add_variables lb")
    hi = as_bound_array(ub, n, "add_variables ub")
    if (lo > hi).any():
        raise ValueError("add_variables: lb > ub")
    return n, lo, hi
