"""HiGHS backend (through :mod:`highspy`).

HiGHS is free, has no size limit and is the default backend of :mod:`mipdp`.

Lazy rows
---------
``native_lazy`` is ``False``: lazy rows are emulated by :meth:`MIPBackend.solve`
(solve, ask the oracle, add the rows it returns, re-solve; the ``Highs`` object keeps
the model so only the new rows are passed).  Native lazy constraints were examined
for highspy 1.15.1 and rejected because they do not work:

* ``cbMipDefineLazyConstraints`` / ``kCallbackMipDefineLazyConstraints`` exists in
  the enum, but the MIP solver never invokes it (a subscribed callback is never
  called during a MIP solve), and
* the callback input struct (``highspy.cb.HighsCallbackInput``) exposes only
  ``user_interrupt`` and user-solution fields, no cut-set arrays through which
  rows could be handed back; upstream issue ERGO-Code/HiGHS#3078 confirms lazy
  constraints / user cuts are not supported by the callback API.

Rejecting an incumbent from ``cbMipSolution`` is not possible either, so any native
scheme could return a point violating an oracle row; the re-solve loop is exact.

Default options
---------------
:data:`DEFAULT_OPTIONS` (from :mod:`mipdp.solvers.highs_options`) switches presolve off — for
correctness: HiGHS 1.15.1's presolve wrongly reports some outer-approximation masters
infeasible, and an infeasibility claim is a privacy certificate here — and the primal
heuristics off for speed.  Pass ``options={...}`` to change any HiGHS option.

Integer columns
---------------
Values of integer columns are returned as HiGHS reports them, i.e. integral only up
to ``mip_feasibility_tolerance`` (1e-6).  Callers should round them
(``np.rint(x[z])`` or ``x[z] > 0.5``) before using them as a support.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import sys
import time
from collections.abc import Sequence

import highspy
import numpy as np
from scipy import sparse

from .base import (
    INF,
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

_MS = highspy.HighsModelStatus

#: HiGHS model status -> what the adapter does with it.  Any status not listed is an
#: error (no certified answer).  "decide" re-solves with a zero objective to tell an
#: infeasible model from an unbounded one.
STATUS_TABLE: dict = {
    _MS.kOptimal: "optimal",
    _MS.kInfeasible: "infeasible",
    _MS.kUnboundedOrInfeasible: "decide",
    _MS.kUnbounded: "decide",
    _MS.kModelEmpty: "empty",
    _MS.kTimeLimit: "time_limit",
}
#: The same for the zero-objective feasibility check: True/False = feasible or not.
FEASIBILITY_TABLE: dict = {_MS.kOptimal: True, _MS.kModelEmpty: True, _MS.kInfeasible: False,
                           _MS.kTimeLimit: "time_limit"}

#: HiGHS options applied to every model (override with ``options=``); see above.
DEFAULT_OPTIONS: dict[str, object] = dict(HIGHS_MASTER_OPTIONS)
_EMPTY_I32 = np.zeros(0, dtype=np.int32)
_EMPTY_F64 = np.zeros(0, dtype=np.float64)


_BANNER_SHOWN = False


@contextlib.contextmanager
def _stdout_fd_silenced():
    """Send the C-level standard output to /dev/null (HiGHS prints there, not to Python)."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError, AttributeError):  # no file descriptor 1 to redirect
        yield
        return
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def _new_highs() -> highspy.Highs:
    """A ``highspy.Highs`` object, without the banner highspy >= 1.16 prints on the first
    construction of a process (before any option, ``output_flag`` included, can be set)."""
    global _BANNER_SHOWN
    if _BANNER_SHOWN:
        return highspy.Highs()
    with _stdout_fd_silenced():
        h = highspy.Highs()
    _BANNER_SHOWN = True
    return h


class HighsBackend(MIPBackend):
    """A persistent MILP inside one ``highspy.Highs`` object.

    Parameters
    ----------
    time_limit : float, optional
        Default wall-clock limit (seconds) per :meth:`solve` call.
    threads : int, optional
        HiGHS ``threads`` option.  HiGHS uses one global thread scheduler per
        process, so this only takes effect before the first HiGHS solve of the
        process (HiGHS warns and keeps the old value otherwise).
    verbose : bool, default False
        Forward the HiGHS log to this module's logger at INFO level.
    options : dict, optional
        HiGHS options (name -> value) applied on top of :data:`DEFAULT_OPTIONS`.
        ``time_limit`` and ``mip_rel_gap`` are set per solve (the enumeration chooses the
        gap its certificates need) and are refused here.

    Raises
    ------
    InvalidParameterError
        A bad argument, an option name or value HiGHS does not accept, or a reserved
        option (``time_limit``, ``mip_rel_gap``).
    """

    name = "highs"
    size_limit = None
    native_lazy = False
    #: one ``highspy.Highs`` per instance; ``run`` releases the GIL
    thread_safe = True

    def __init__(self, *, time_limit: float | None = None, threads: int | None = None,
                 verbose: bool = False, options: dict | None = None) -> None:
        super().__init__(time_limit=time_limit, threads=threads, verbose=verbose)
        self._h = _new_highs()
        self.options = {**DEFAULT_OPTIONS, **check_options("HighsBackend", "options", options)}
        for key, value in self.options.items():
            if self._h.setOptionValue(key, value) == highspy.HighsStatus.kError:
                from .base import InvalidParameterError
                raise InvalidParameterError(f"The 'options' parameter of HighsBackend has an "
                                            f"option HiGHS rejects: {key}={value!r}.")
        self._n_int = 0
        # column bounds, integrality and costs mirrored here, so that a reduced solve
        # reads only the columns it keeps (getLp would copy the whole dense-cut matrix)
        self._col_lo = np.zeros(0)
        self._col_hi = np.zeros(0)
        self._col_int = np.zeros(0, dtype=bool)
        self._col_cost = np.zeros(0)
        if verbose:
            self._set_option("output_flag", True)
            self._set_option("log_to_console", False)
            self._h.cbLogging.subscribe(self._forward_log)
        else:
            self._set_option("output_flag", False)
        if threads is not None:
            self._set_option("threads", int(threads))

    # -- helpers --------------------------------------------------------------------
    @staticmethod
    def _forward_log(event) -> None:
        msg = str(event.message).rstrip()
        if msg:
            logger.info("HiGHS: %s", msg)

    def _set_option(self, option: str, value) -> None:
        status = self._h.setOptionValue(option, value)
        if status == highspy.HighsStatus.kError:
            raise SolverError(f"highs: could not set option {option}={value!r}")

    def _check(self, status, what: str) -> None:
        if status == highspy.HighsStatus.kError:
            raise SolverError(f"highs: {what} failed")

    def clone(self) -> HighsBackend:
        """An independent backend holding a copy of this model (columns, rows, bounds,
        integrality, costs) with the same options; the two can solve at the same time in
        two threads (:mod:`mipdp.enumeration.fork`).  Copying the model costs far less
        than adding its rows again (0.2 s against 1.1 s for 70 dense rows at p = 10⁵)."""
        other = HighsBackend(time_limit=self.time_limit, verbose=self.verbose,
                             options={k: v for k, v in self.options.items()
                                      if k not in DEFAULT_OPTIONS or DEFAULT_OPTIONS[k] != v})
        self._check(other._h.passModel(self._h.getModel()), "passModel")
        other.n_cols, other.n_rows, other._n_int = self.n_cols, self.n_rows, self._n_int
        other._col_lo, other._col_hi = self._col_lo.copy(), self._col_hi.copy()
        other._col_int, other._col_cost = self._col_int.copy(), self._col_cost.copy()
        return other

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
        if n == 0:
            return np.arange(first, first, dtype=np.int64)
        self._check(self._h.addCols(n, np.zeros(n), lo, hi, 0, _EMPTY_I32, _EMPTY_I32,
                                    _EMPTY_F64), "addCols")
        new = np.arange(first, first + n, dtype=np.int64)
        self._col_lo = np.r_[self._col_lo, lo]
        self._col_hi = np.r_[self._col_hi, hi]
        self._col_int = np.r_[self._col_int, np.full(n, bool(integer))]
        self._col_cost = np.r_[self._col_cost, np.zeros(n)]
        if integer:
            self._check(self._h.changeColsIntegrality(
                n, new.astype(np.int32), np.full(n, highspy.HighsVarType.kInteger)),
                "changeColsIntegrality")
            self._n_int += n
        self.n_cols += n
        return new

    def add_rows(self, rows: Sequence[Row]) -> np.ndarray:
        """Append rows ``(idx, coef, lb, ub)`` in one ``addRows`` call.

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
        m = len(rows)
        self._check(self._h.addRows(m, lb, ub, int(index.size), start[:-1].astype(np.int32),
                                    index.astype(np.int32), value), "addRows")
        self.n_rows += m
        return np.arange(first, first + m, dtype=np.int64)

    def set_row_bounds(self, rows: np.ndarray | Sequence[int], lb: np.ndarray | float,
                       ub: np.ndarray | float) -> None:
        """Change the bounds of existing rows (``±inf`` for a free side)."""
        idx, lo, hi = self._row_bound_args(rows, lb, ub)
        if idx.size:
            # changeRowsBounds exists at runtime but is missing from highspy's stubs
            self._check(self._h.changeRowsBounds(  # type: ignore[attr-defined]
                idx.size, idx.astype(np.int32), lo, hi),
                        "changeRowsBounds")

    def set_variable_bounds(self, cols: np.ndarray | Sequence[int], lb: np.ndarray | float,
                            ub: np.ndarray | float) -> None:
        """Change the bounds of existing columns."""
        idx, lo, hi = self._column_bound_args(cols, lb, ub)
        if idx.size:
            self._check(self._h.changeColsBounds(idx.size, idx.astype(np.int32), lo, hi),
                        "changeColsBounds")
            self._col_lo[idx] = lo
            self._col_hi[idx] = hi

    def set_objective(self, cols: np.ndarray | Sequence[int],
                      coef: np.ndarray | Sequence[float]) -> None:
        """Minimise ``sum(coef * x[cols])``; every other cost becomes 0 (duplicates add up)."""
        idx, c = self._objective_args(cols, coef)
        cost = np.zeros(self.n_cols)
        np.add.at(cost, idx, c)
        self._check(self._h.changeObjectiveSense(highspy.ObjSense.kMinimize),
                    "changeObjectiveSense")
        if self.n_cols:
            self._check(self._h.changeColsCost(self.n_cols, np.arange(self.n_cols, dtype=np.int32),
                                               cost), "changeColsCost")
            self._col_cost = cost.copy()

    # -- solving --------------------------------------------------------------------
    def _run(self, time_limit: float | None, mip_rel_gap: float):
        self._set_option("time_limit", INF if time_limit is None else max(0.0, float(time_limit)))
        self._set_option("mip_rel_gap", float(mip_rel_gap))
        status = self._h.run()
        model_status = self._h.getModelStatus()
        if status == highspy.HighsStatus.kError and model_status in (_MS.kOptimal, _MS.kInfeasible):
            logger.warning("highs: run() returned an error with model status %s",
                           self._h.modelStatusToString(model_status))
        return model_status

    def _infeasible(self, n_solves: int = 1) -> SolveResult:
        return SolveResult("infeasible", None, INF, INF, 0.0, n_solves=n_solves)

    def _feasibility_check(self, time_limit: float | None) -> bool:
        """Whether the model has a feasible point (objective temporarily zeroed).

        A zero objective cannot be unbounded, so this settles HiGHS's
        "unbounded or infeasible" answers.
        """
        lp = self._h.getLp()
        cost = np.asarray(lp.col_cost_, dtype=np.float64).copy()
        idx = np.arange(self.n_cols, dtype=np.int32)
        self._check(self._h.changeColsCost(self.n_cols, idx, np.zeros(self.n_cols)),
                    "changeColsCost")
        t0 = time.perf_counter()
        try:
            ms = self._run(time_limit, 1e-4)
        finally:
            self._check(self._h.changeColsCost(self.n_cols, idx, cost), "changeColsCost")
        outcome = FEASIBILITY_TABLE.get(ms, "error")
        if outcome == "time_limit":
            raise self._time_limit_error(time_limit, time.perf_counter() - t0,
                                         during="while deciding infeasibility")
        if outcome == "error":
            raise SolverError(f"highs: could not decide feasibility (model status "
                              f"{self._h.modelStatusToString(ms)!r})")
        return outcome

    def _fixed_columns(self) -> np.ndarray:
        return self._col_lo == self._col_hi

    def _solve_reduced(self, fixed: np.ndarray, time_limit: float | None,
                       mip_rel_gap: float) -> SolveResult:
        """Solve a copy without the fixed columns (their row contributions moved to the bounds).

        This is the one reduction of presolve that the enumeration needs (columns fixed
        by dominance), done exactly; HiGHS's own presolve is off (see the module notes).
        """
        n_row = self.n_rows
        lo, up, cost = self._col_lo, self._col_hi, self._col_cost
        free = np.flatnonzero(~fixed).astype(np.int32)
        rows = np.arange(n_row, dtype=np.int32)
        if n_row:
            st, _, row_lo, row_up, _ = self._h.getRows(n_row, rows)
            self._check(st, "getRows")
            row_lo, row_up = np.asarray(row_lo, dtype=float), np.asarray(row_up, dtype=float)
        else:
            row_lo = row_up = np.zeros(0)
        shift = np.zeros(n_row)
        moved = np.flatnonzero(fixed & (lo != 0.0)).astype(np.int32)  # fixed at a nonzero value
        if n_row and moved.size:
            st, mst, midx, mval = self._h.getColsEntries(moved.size, moved)
            self._check(st, "getColsEntries")
            M = sparse.csc_matrix((np.asarray(mval), np.asarray(midx),
                                   np.r_[np.asarray(mst), len(midx)]), shape=(n_row, moved.size))
            shift = M @ lo[moved]
        if free.size:
            st, fst, fidx, fval = self._h.getColsEntries(free.size, free)
            self._check(st, "getColsEntries")
            fst = np.r_[np.asarray(fst, dtype=np.int32), np.int32(len(fidx))]
        else:
            fst, fidx, fval = np.zeros(1, dtype=np.int32), np.zeros(0, np.int32), np.zeros(0)
        red = highspy.HighsLp()
        red.num_col_, red.num_row_ = int(free.size), int(n_row)
        red.col_cost_, red.col_lower_, red.col_upper_ = cost[free], lo[free], up[free]
        red.row_lower_ = row_lo - shift
        red.row_upper_ = row_up - shift
        red.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        red.a_matrix_.start_ = np.asarray(fst, dtype=np.int32)
        red.a_matrix_.index_ = np.asarray(fidx, dtype=np.int32)
        red.a_matrix_.value_ = np.asarray(fval, dtype=np.float64)
        integrality = self._col_int[free]
        if integrality.any():
            red.integrality_ = [highspy.HighsVarType.kInteger if b else
                                highspy.HighsVarType.kContinuous for b in integrality]
        other = HighsBackend(threads=None, verbose=self.verbose, options=self.options)
        self._check(other._h.passModel(red), "passModel")
        other.n_cols, other.n_rows = int(free.size), int(n_row)
        other._n_int = int(integrality.sum())
        other._col_lo, other._col_hi = lo[free].copy(), up[free].copy()
        other._col_int, other._col_cost = integrality.copy(), cost[free].copy()
        res = other._solve_once(time_limit, mip_rel_gap, None)
        if res.status == "optimal":
            x = lo.astype(np.float64).copy()
            x[free] = res.x
            offset = float(cost[fixed] @ lo[fixed])
            res = SolveResult("optimal", x, res.objective + offset, res.bound + offset, 0.0,
                              n_solves=res.n_solves, info=res.info)
        return res

    def _solve_once(self, time_limit: float | None, mip_rel_gap: float,
                    lazy: LazyOracle | None) -> SolveResult:
        if lazy is not None:  # pragma: no cover - solve() never passes it (native_lazy False)
            raise SolverError("highs: native lazy constraints are not supported")
        if self.n_cols >= 200:
            fixed = self._fixed_columns()
            if fixed.sum() >= self.n_cols // 2:
                return self._solve_reduced(fixed, time_limit, mip_rel_gap)
        t0 = time.perf_counter()
        ms = self._run(time_limit, mip_rel_gap)
        n_solves = 1
        outcome = STATUS_TABLE.get(ms, "error")
        if outcome == "decide":
            remaining = None if time_limit is None else time_limit - (time.perf_counter() - t0)
            n_solves += 1
            if not self._feasibility_check(remaining):
                return self._infeasible(n_solves)
            raise SolverError("highs: the model is unbounded; give every column that appears "
                              "in the objective a finite bound (e.g. eta >= a lower bound)")
        if outcome == "infeasible":
            return self._infeasible(n_solves)
        if outcome == "empty":
            return SolveResult("optimal", np.zeros(self.n_cols), 0.0, 0.0, 0.0, n_solves=n_solves)
        if outcome == "time_limit":
            info = self._h.getInfo()
            raise self._time_limit_error(time_limit, time.perf_counter() - t0,
                                         incumbent=float(info.objective_function_value),
                                         bound=float(info.mip_dual_bound))
        if outcome == "error":
            raise SolverError(f"highs: solve ended with model status "
                              f"{self._h.modelStatusToString(ms)!r}; no certified answer")
        info = self._h.getInfo()
        x = np.asarray(self._h.getSolution().col_value, dtype=np.float64)
        obj = float(info.objective_function_value)
        if self._n_int:
            bound = float(info.mip_dual_bound)
            if not math.isfinite(bound):
                raise SolverError("highs: reported optimal without a finite dual bound")
            bound = min(bound, obj)
        else:
            bound = obj
        return SolveResult("optimal", x, obj, bound, 0.0, n_solves=n_solves,
                           info={"mip_gap": float(info.mip_gap) if self._n_int else 0.0,
                                 "mip_node_count": int(info.mip_node_count) if self._n_int else 0})
