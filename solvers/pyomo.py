"""Pyomo backend: any MILP solver Pyomo can drive (HiGHS through Pyomo by default).

:mod:`pyomo` is imported only when a :class:`PyomoBackend` is created.  The model is
a ``ConcreteModel`` with one ``VarList`` (the columns) and one ``ConstraintList``
(the rows); rows are appended between solves.  With a persistent interface such as
``appsi_highs`` (the default) or ``highs`` (``pyomo.contrib.solver``), Pyomo only
sends the changes to the solver on each solve.

This backend is slower than :class:`solvers.highs.HighsBackend` (every dense row
becomes a Pyomo expression) and exists to let users plug in solvers that only
Pyomo reaches.  Lazy rows are emulated (``native_lazy = False``) by
:meth:`MIPBackend.solve`: solve, ask the oracle, add its rows, re-solve.

Integer columns
---------------
Values of integer columns are returned as the solver reports them (integral only up
to its tolerance); callers should round them (``np.rint``).  Columns that appear in
no active row and not in the objective are never sent to the solver; they are
reported at the feasible value closest to 0.
"""

from __future__ import annotations

import io
import logging
import math
import time
from collections.abc import Sequence

import numpy as np

from .base import (
    INF,
    BackendUnavailableError,
    InvalidParameterError,
    LazyOracle,
    MIPBackend,
    Row,
    SolverError,
    SolveResult,
    check_options,
    column_bounds,
    rows_to_csr,
)
from .highs_options import HIGHS_MASTER_OPTIONS

logger = logging.getLogger(__name__)

#: solver-name fragment -> (relative MIP gap, threads, time limit) option names.  The
#: time limit is passed both as an option and as ``timelimit=`` because some Pyomo
#: interfaces (e.g. ``gurobi_direct``) ignore the keyword.
_OPTION_NAMES: dict[str, tuple[str | None, str | None, str | None]] = {
    "highs": ("mip_rel_gap", "threads", "time_limit"),
    "gurobi": ("MIPGap", "Threads", "TimeLimit"),
    "cplex": ("mipgap", "threads", "timelimit"),
    "cbc": ("ratioGap", "threads", "sec"),
    "glpk": ("mipgap", None, "tmlim"),
    "scip": ("limits/gap", "parallel/maxnthreads", "limits/time"),
    "xpress": ("miprelstop", "threads", "maxtime"),
}


#: Pyomo termination condition (name) -> what the adapter does with it.  Anything not
#: listed is an error.  "decide" re-solves with a zero objective (infeasible or unbounded?).
STATUS_TABLE: dict[str, str] = {
    "optimal": "optimal",
    "globallyOptimal": "optimal",
    "infeasible": "infeasible",
    "infeasibleOrUnbounded": "decide",
    "unbounded": "decide",
    "maxTimeLimit": "time_limit",
}
#: The same for the zero-objective feasibility check.
FEASIBILITY_TABLE: dict[str, object] = {"optimal": True, "globallyOptimal": True,
                                        "locallyOptimal": True, "feasible": True,
                                        "infeasible": False, "maxTimeLimit": "time_limit"}

#: Defaults for HiGHS-based Pyomo solvers, as in :data:`solvers.highs.DEFAULT_OPTIONS`.
_HIGHS_DEFAULTS: dict[str, object] = dict(HIGHS_MASTER_OPTIONS)


def _opt(value: float) -> float | None:
    """Pyomo spells an infinite bound ``None``."""
    return None if math.isinf(value) else float(value)


class PyomoBackend(MIPBackend):
    """A persistent Pyomo ``ConcreteModel`` solved by a Pyomo solver.

    Parameters
    ----------
    solver : str, default "appsi_highs"
        Name passed to ``pyomo.environ.SolverFactory`` (e.g. ``"appsi_highs"``,
        ``"highs"``, ``"gurobi_direct"``, ``"cbc"``).
    time_limit : float, optional
        Default wall-clock limit (seconds) per :meth:`solve` call.
    threads : int, optional
        Solver threads, for solvers whose option name is known.
    verbose : bool, default False
        Stream the solver log into this module's logger at INFO level.  Without it, what
        the solver prints anyway (e.g. HiGHS warnings) goes to that logger at DEBUG.
    options : dict, optional
        Extra solver options passed on every solve (they override, for HiGHS-based
        solvers, the defaults of :data:`solvers.highs_options.HIGHS_MASTER_OPTIONS`).
        Options setting the MIP gap or the time limit are refused: the gap of every solve
        is chosen by the caller (mipdp's enumeration needs its own gaps for its
        certificates), and the time limit is ``time_limit=``.

    Raises
    ------
    BackendUnavailableError
        Pyomo is not installed, or ``solver`` is unknown or not available.
    """

    name = "pyomo"
    size_limit = None
    native_lazy = False

    def __init__(self, *, solver: str = "appsi_highs", time_limit: float | None = None,
                 threads: int | None = None, verbose: bool = False,
                 options: dict | None = None) -> None:
        super().__init__(time_limit=time_limit, threads=threads, verbose=verbose)
        if not isinstance(solver, str):
            raise InvalidParameterError(f"The 'solver' parameter of PyomoBackend must be a str. "
                                        f"Got {solver!r} instead.")
        options = check_options("PyomoBackend", "options", options)
        try:
            import pyomo.environ as pyo
            from pyomo.common.log import LoggingIntercept
            from pyomo.core.expr.numeric_expr import LinearExpression
            from pyomo.opt import TerminationCondition
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise BackendUnavailableError(
                "backend='pyomo' needs the Python package 'pyomo', which is not installed; "
                "install it with `pip install mipdp[pyomo]` or use backend='highs'") from exc
        self._pyo = pyo
        self._LinearExpression = LinearExpression
        self._TC = TerminationCondition
        self.solver_name = str(solver)
        self.options = options
        captured = io.StringIO()
        try:
            with LoggingIntercept(captured, "pyomo"):
                opt = pyo.SolverFactory(self.solver_name)
                ok = opt is not None and bool(opt.available(exception_flag=False))
        except Exception as exc:
            raise BackendUnavailableError(
                f"backend='pyomo': Pyomo solver {self.solver_name!r} could not be created "
                f"({exc}); try solver='appsi_highs' or solver='highs'") from exc
        if not ok:
            detail = " ".join(captured.getvalue().split())[:200]
            raise BackendUnavailableError(
                f"backend='pyomo': Pyomo solver {self.solver_name!r} is not available"
                + (f" ({detail})" if detail else "")
                + "; try solver='appsi_highs' or solver='highs' (needs highspy)")
        self._opt = opt
        try:
            from pyomo.solvers.plugins.solvers.persistent_solver import PersistentSolver
            self._legacy_persistent = isinstance(opt, PersistentSolver)
        except ImportError:  # pragma: no cover - older/newer Pyomo layouts
            self._legacy_persistent = False
        m = pyo.ConcreteModel(name="mipdp")
        m.x = pyo.VarList()
        m.rows = pyo.ConstraintList()
        m.obj = pyo.Objective(expr=LinearExpression(constant=0.0, linear_coefs=[], linear_vars=[]),
                              sense=pyo.minimize)
        self._m = m
        self._vars: list = []
        self._lb = np.zeros(0)
        self._ub = np.zeros(0)
        self._is_int = np.zeros(0, dtype=bool)
        self._cons: list = []
        self._exprs: list = []
        self._obj_terms: tuple[np.ndarray, np.ndarray] = (np.zeros(0, dtype=np.int64), np.zeros(0))
        self._warned_gap = False

    # -- model building -------------------------------------------------------------
    def add_variables(self, n: int, lb: float | np.ndarray, ub: float | np.ndarray, *,
                      integer: bool = False) -> np.ndarray:
        """Append ``n`` columns with bounds ``[lb, ub]`` (integer if ``integer``).

        Returns
        -------
        ndarray of int
            Indices of the new columns.
        """
        n, lo, hi = column_bounds(n, lb, ub)
        first = self.n_cols
        domain = self._pyo.Integers if integer else self._pyo.Reals
        for i in range(n):
            v = self._m.x.add()
            v.domain = domain
            v.setlb(_opt(lo[i]))
            v.setub(_opt(hi[i]))
            self._vars.append(v)
        self._lb = np.concatenate([self._lb, lo])
        self._ub = np.concatenate([self._ub, hi])
        self._is_int = np.concatenate([self._is_int, np.full(n, bool(integer))])
        self.n_cols += n
        return np.arange(first, first + n, dtype=np.int64)

    def _constraint_value(self, expr, lb: float, ub: float):
        if lb == ub:
            return expr == float(lb)
        return (_opt(lb), expr, _opt(ub))

    def add_rows(self, rows: Sequence[Row]) -> np.ndarray:
        """Append rows ``(idx, coef, lb, ub)`` to the ``ConstraintList``.

        Returns
        -------
        ndarray of int
            Indices of the new rows.
        """
        rows = list(rows)
        first = self.n_rows
        if not rows:
            return np.arange(first, first, dtype=np.int64)
        start, index, value, lb, ub = rows_to_csr(rows, self.n_cols)
        V = self._vars
        for r in range(len(rows)):
            sl = slice(start[r], start[r + 1])
            expr = self._LinearExpression(constant=0.0, linear_coefs=value[sl].tolist(),
                                          linear_vars=[V[i] for i in index[sl]])
            self._exprs.append(expr)
            if lb[r] == -INF and ub[r] == INF:
                # Pyomo rejects a constraint without bounds: keep a free row, deactivated.
                con = self._m.rows.add((None, expr, 0.0))
                con.deactivate()
            else:
                con = self._m.rows.add(self._constraint_value(expr, lb[r], ub[r]))
            self._cons.append(con)
        self.n_rows += len(rows)
        return np.arange(first, first + len(rows), dtype=np.int64)

    def set_row_bounds(self, rows: np.ndarray | Sequence[int], lb: np.ndarray | float,
                       ub: np.ndarray | float) -> None:
        """Change the bounds of existing rows (``±inf`` for a free side)."""
        idx, lo, hi = self._row_bound_args(rows, lb, ub)
        for r, a, b in zip(idx, lo, hi, strict=True):
            con = self._cons[r]
            if a == -INF and b == INF:
                con.deactivate()
                continue
            con.set_value(self._constraint_value(self._exprs[r], a, b))
            con.activate()

    def set_variable_bounds(self, cols: np.ndarray | Sequence[int], lb: np.ndarray | float,
                            ub: np.ndarray | float) -> None:
        """Change the bounds of existing columns."""
        idx, lo, hi = self._column_bound_args(cols, lb, ub)
        for i, a, b in zip(idx, lo, hi, strict=True):
            self._vars[i].setlb(_opt(a))
            self._vars[i].setub(_opt(b))
        self._lb[idx] = lo
        self._ub[idx] = hi

    def set_objective(self, cols: np.ndarray | Sequence[int],
                      coef: np.ndarray | Sequence[float]) -> None:
        """Minimise ``sum(coef * x[cols])``; every other cost becomes 0 (duplicates add up)."""
        idx, c = self._objective_args(cols, coef)
        uniq, inv = np.unique(idx, return_inverse=True)
        vals = np.bincount(inv, weights=c, minlength=uniq.size) if idx.size else np.zeros(0)
        self._set_objective_terms(uniq, vals)

    def _set_objective_terms(self, idx: np.ndarray, vals: np.ndarray) -> None:
        self._obj_terms = (idx, vals)
        self._m.obj.expr = self._LinearExpression(
            constant=0.0, linear_coefs=vals.tolist(), linear_vars=[self._vars[i] for i in idx])
        self._m.obj.sense = self._pyo.minimize

    # -- solving --------------------------------------------------------------------
    def _solver_options(self, mip_rel_gap: float, time_limit: float | None) -> dict:
        opts: dict = {}
        low = self.solver_name.lower()
        for key, (gap_name, thr_name, time_name) in _OPTION_NAMES.items():
            if key in low:
                if gap_name:
                    opts[gap_name] = float(mip_rel_gap)
                if thr_name and self.threads is not None:
                    opts[thr_name] = int(self.threads)
                if time_name and time_limit is not None:
                    opts[time_name] = (max(1, math.ceil(time_limit)) if key == "glpk"
                                       else max(1e-3, float(time_limit)))
                break
        else:
            if not self._warned_gap:
                logger.warning("pyomo: do not know the MIP-gap option of solver %r; using its "
                               "default gap (pass options={...} to set it)", self.solver_name)
                self._warned_gap = True
        if "highs" in low:
            opts.update(_HIGHS_DEFAULTS)
        opts.update(self.options)
        return opts

    def _run(self, time_limit: float | None, mip_rel_gap: float):
        kwargs = {"load_solutions": False,
                  "options": self._solver_options(mip_rel_gap, time_limit)}
        if time_limit is not None:
            kwargs["timelimit"] = max(1e-3, float(time_limit))
        try:
            if self._legacy_persistent:
                # Old-style persistent interfaces (gurobi_persistent, ...) do not track
                # model changes: hand them the current model each time (a rebuild).
                self._opt.set_instance(self._m)
            # Everything the solver writes (its log with verbose=True; otherwise what it
            # prints anyway, e.g. HiGHS's "WARNING: HighsSparseMatrix ..." lines, written
            # to the C-level stdout) goes to this module's logger: INFO when verbose,
            # DEBUG otherwise; never to the terminal.
            from pyomo.common.log import LogStream
            from pyomo.common.tee import capture_output
            level = logging.INFO if self.verbose else logging.DEBUG
            with capture_output(LogStream(level, logger), capture_fd=True):
                return self._opt.solve(self._m, tee=self.verbose, **kwargs)
        except (SolverError, KeyboardInterrupt):
            raise
        except Exception as exc:
            raise SolverError(f"pyomo ({self.solver_name}): solve failed: {exc}") from exc

    def _values(self, results) -> np.ndarray:
        self._m.solutions.load_from(results)
        x = np.array([np.nan if v.value is None else float(v.value) for v in self._vars])
        miss = np.isnan(x)
        if miss.any():  # columns the solver never saw: any feasible value is optimal
            x[miss] = np.clip(0.0, self._lb[miss], self._ub[miss])
            x[miss & self._is_int] = np.ceil(x[miss & self._is_int] - 1e-9)
        return x

    def _feasible(self, time_limit: float | None) -> bool:
        """Whether the model is feasible (solved with the objective temporarily zeroed)."""
        terms = self._obj_terms
        self._set_objective_terms(np.zeros(0, dtype=np.int64), np.zeros(0))
        t0 = time.perf_counter()
        try:
            res = self._run(time_limit, 1e-4)
        finally:
            self._set_objective_terms(*terms)
        tc = res.solver.termination_condition
        outcome = FEASIBILITY_TABLE.get(getattr(tc, "name", str(tc)), "error")
        if outcome == "time_limit":
            raise self._time_limit_error(time_limit, time.perf_counter() - t0,
                                         during="while deciding infeasibility")
        if outcome != "error":
            return bool(outcome)  # True or False here
        raise SolverError(f"pyomo ({self.solver_name}): could not decide feasibility "
                          f"(termination condition {tc})")

    def _solve_once(self, time_limit: float | None, mip_rel_gap: float,
                    lazy: LazyOracle | None) -> SolveResult:
        if lazy is not None:  # pragma: no cover - solve() never passes it (native_lazy False)
            raise SolverError("pyomo: native lazy constraints are not supported")
        t0 = time.perf_counter()
        res = self._run(time_limit, mip_rel_gap)
        tc = res.solver.termination_condition
        outcome = STATUS_TABLE.get(getattr(tc, "name", str(tc)), "error")
        if outcome == "decide":
            remaining = None if time_limit is None else time_limit - (time.perf_counter() - t0)
            if remaining is not None and remaining <= 0:
                raise self._time_limit_error(time_limit, time.perf_counter() - t0,
                                             during="while deciding infeasibility")
            if not self._feasible(remaining):
                return SolveResult("infeasible", None, INF, INF, 0.0, n_solves=2)
            raise SolverError(f"pyomo ({self.solver_name}): the model is unbounded; give every "
                              f"column that appears in the objective a finite bound")
        if outcome == "infeasible":
            return SolveResult("infeasible", None, INF, INF, 0.0)
        if outcome == "time_limit":
            try:
                bound = float(res.problem.lower_bound)
            except (TypeError, ValueError):
                bound = None
            raise self._time_limit_error(time_limit, time.perf_counter() - t0, bound=bound)
        if outcome != "optimal":
            raise SolverError(f"pyomo ({self.solver_name}): solve ended with termination "
                              f"condition {tc}; no certified answer")
        x = self._values(res)
        idx, vals = self._obj_terms
        obj = float(vals @ x[idx]) if idx.size else 0.0
        bound = res.problem.lower_bound
        try:
            bound = float(bound)
        except (TypeError, ValueError):
            bound = float("nan")
        if not math.isfinite(bound):
            # The solver certified optimality at the requested gap but exposes no bound.
            bound = obj - mip_rel_gap * max(1.0, abs(obj))
        return SolveResult("optimal", x, obj, min(bound, obj), 0.0,
                           info={"termination_condition": str(tc), "solver": self.solver_name})
