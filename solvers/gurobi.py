"""Gurobi backend (through :mod:`gurobipy`), with native lazy constraints.

:mod:`gurobipy` is imported only when a :class:`GurobiBackend` is created, so this
module imports without it.  The pip wheel of gurobipy ships a size-limited licence
(2000 variables and 2000 linear constraints); models beyond that raise
:class:`~mipdp.solvers.base.SizeLimitError` as early as possible.

Row representation
------------------
A logical row ``lb <= a'x <= ub`` is stored as one Gurobi constraint (``=``, ``>=``
or ``<=``), plus a second ``<=`` constraint only while the row is a proper range
with both sides finite.  A side that becomes infinite is kept as a redundant
constraint with right-hand side ``±GRB.INFINITY``, so :meth:`set_row_bounds` never
deletes constraints.

Lazy rows
---------
By default (``lazy="resolve"``) lazy rows are emulated as on HiGHS: the persistent model
is re-solved after each batch of oracle rows (:meth:`MIPBackend.solve`), so the
enumeration can tighten the model between solves (new cutoff, column fixing by the cut
screening and by dominance), which a native callback cannot do.  On the enumeration's
masters this is several times faster (docs/design.md, "Why the Gurobi backend re-solves").
With ``lazy="native"``, ``solve(lazy=oracle)`` sets ``LazyConstraints=1`` and installs a ``MIPSOL``
callback that passes each new incumbent candidate (all columns) to the oracle and
``cbLazy``-s every row it returns (two calls for a range).  After ``optimize`` the
returned rows are also added to the model permanently (``cbLazy`` rows do not
survive the solve), so they hold for every later solve.

Gurobi may offer ``MIPSOL`` candidates that violate rows already passed to
``cbLazy`` (its documentation warns about this; it happens e.g. with heuristic
solutions).  Such a candidate is cut off again by re-sending the violated rows,
without calling the oracle, so the oracle only ever sees points satisfying every
row it returned (an oracle that accepts a support "because it already has a cut
there" is therefore safe).  As further safeguards, the final point is checked
against all returned rows, and a final point the oracle never accepted is offered
to it once more, re-solving if it returns new rows.  The oracle may be called
several times per solve (once per candidate incumbent), so accepting a point
should have no side effects that a later rejection would contradict.

Integer columns
---------------
Values of integer columns are integral up to Gurobi's ``IntFeasTol`` (1e-5 by
default); callers should round them (``np.rint``) before using them.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections.abc import Sequence

import numpy as np

from .base import (
    INF,
    BackendUnavailableError,
    LazyOracle,
    MIPBackend,
    Row,
    SizeLimitError,
    SolverError,
    SolveResult,
    check_options,
    column_bounds,
    rows_to_csr,
    size_limit_message,
)

logger = logging.getLogger(__name__)

#: Gurobi error code for "Model too large for size-limited license".
_ERR_SIZE_LIMIT = 10010

#: Gurobi status name (``GRB.Status``) -> what the adapter does with it.  Any status not
#: listed is an error (no certified answer).  "retry" re-solves once with
#: ``DualReductions = 0`` to settle "infeasible or unbounded".
STATUS_TABLE: dict[str, str] = {
    "OPTIMAL": "optimal",
    "INFEASIBLE": "infeasible",
    "INF_OR_UNBD": "retry",
    "UNBOUNDED": "unbounded",
    "TIME_LIMIT": "time_limit",
}


class GurobiBackend(MIPBackend):
    """A persistent MILP inside one ``gurobipy.Model``.

    Parameters
    ----------
    time_limit : float, optional
        Default wall-clock limit (seconds) per :meth:`solve` call.
    threads : int, optional
        Gurobi ``Threads`` parameter (``None``: Gurobi's default).
    verbose : bool, default False
        Forward the Gurobi log to this module's logger at INFO level.
    size_limit : int or None, default 2000
        Variables / constraints the licence allows (``None`` for a full licence);
        used to fail early with :class:`SizeLimitError`.
    env_params : dict, optional
        Extra parameters for the Gurobi environment (e.g. WLS licence keys).  ``MIPGap``
        and ``TimeLimit`` are refused (set per solve).
    lazy : {"resolve", "native"}, default "resolve"
        How lazy rows are added: ``"resolve"`` re-solves the persistent model after each
        batch of rows (as the HiGHS backend; the enumeration tightens the model between
        solves), ``"native"`` uses Gurobi's lazy-constraint callback in one
        branch-and-bound tree.  Both give the same certified answers.

    Raises
    ------
    BackendUnavailableError
        gurobipy is not installed or no licence could be started.
    """

    name = "gurobi"
    size_limit: int | None = 2000
    #: per instance, from ``lazy=`` (the class default is the default ``"resolve"``)
    native_lazy = False

    def __init__(self, *, time_limit: float | None = None, threads: int | None = None,
                 verbose: bool = False, size_limit: int | None = 2000,
                 env_params: dict | None = None, lazy: str = "resolve") -> None:
        super().__init__(time_limit=time_limit, threads=threads, verbose=verbose)
        env_params = check_options("GurobiBackend", "env_params", env_params)
        if lazy not in ("resolve", "native"):
            from mipdp._param_validation import InvalidParameterError  # bottom layer
            raise InvalidParameterError(
                "The 'lazy' parameter of GurobiBackend must be a str among {'resolve', "
                f"'native'}}. Got {lazy!r} instead.")
        self.lazy = lazy
        self.native_lazy = lazy == "native"
        try:
            import gurobipy as gp
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise BackendUnavailableError(
                "backend='gurobi' needs the Python package 'gurobipy', which is not "
                "installed; install it with `pip install mipdp[gurobi]` or use backend='highs'"
            ) from exc
        self._gp = gp
        self._GRB = gp.GRB
        self._status = {getattr(gp.GRB.Status, name): outcome
                        for name, outcome in STATUS_TABLE.items()}
        self.size_limit = size_limit
        try:
            env = gp.Env(empty=True)
            env.setParam("OutputFlag", 1 if verbose else 0)
            if verbose:
                env.setParam("LogToConsole", 0)
            for key, value in (env_params or {}).items():
                env.setParam(key, value)
            env.start()
        except gp.GurobiError as exc:
            raise BackendUnavailableError(
                f"backend='gurobi': could not start a Gurobi environment ({exc}); check the "
                f"licence or use backend='highs'") from exc
        self._env = env
        self._model = gp.Model(env=env)
        self._model.ModelSense = gp.GRB.MINIMIZE
        self._vars: list = []
        self._n_int = 0
        self._primary: list = []      # one Gurobi constraint per logical row
        self._secondary: list = []    # the "<= ub" half of a range row, or None
        self._n_constrs = 0           # Gurobi constraints (primary + secondary)

    # -- helpers --------------------------------------------------------------------
    def _size_error(self, exc) -> SizeLimitError:
        lim = self.size_limit if self.size_limit is not None else 2000
        return SizeLimitError(size_limit_message(self.name, lim, self.n_cols, self._n_constrs))

    def _call(self, fn, *args, **kwargs):
        """Run a gurobipy call, translating its errors."""
        try:
            return fn(*args, **kwargs)
        except self._gp.GurobiError as exc:
            if getattr(exc, "errno", None) == _ERR_SIZE_LIMIT:
                raise self._size_error(exc) from exc
            raise SolverError(f"gurobi: {exc}") from exc

    @staticmethod
    def _split(lb: float, ub: float, big: float) -> tuple[str, float, float | None]:
        """Primary sense / rhs of a logical row and the rhs of its ``<=`` half (or None)."""
        if lb == ub:
            return "=", lb, None
        if lb > -INF and ub < INF:
            return ">", lb, ub
        if lb > -INF:
            return ">", lb, None
        if ub < INF:
            return "<", ub, None
        return ">", -big, None

    def _all_vars(self):
        return self._gp.MVar.fromlist(self._vars)

    # -- model building -------------------------------------------------------------
    def add_variables(self, n: int, lb: float | np.ndarray, ub: float | np.ndarray, *,
                      integer: bool = False) -> np.ndarray:
        """Append ``n`` columns (binary when ``integer`` and bounds within [0, 1]).

        Returns
        -------
        ndarray of int
            Indices of the new columns.
        """
        n, lo, hi = column_bounds(n, lb, ub)
        first = self.n_cols
        if n == 0:
            return np.arange(first, first, dtype=np.int64)
        self.check_size(self.n_cols + n, self._n_constrs)
        GRB = self._GRB
        if integer:
            vtype = GRB.BINARY if (lo >= 0).all() and (hi <= 1).all() else GRB.INTEGER
        else:
            vtype = GRB.CONTINUOUS
        mv = self._call(self._model.addMVar, n, lb=lo, ub=hi, vtype=vtype)
        self._vars.extend(mv.tolist())
        if integer:
            self._n_int += n
        self.n_cols += n
        return np.arange(first, first + n, dtype=np.int64)

    def add_rows(self, rows: Sequence[Row]) -> np.ndarray:
        """Append rows ``(idx, coef, lb, ub)`` with one matrix call (two for ranges).

        Returns
        -------
        ndarray of int
            Indices of the new (logical) rows.
        """
        import scipy.sparse as sp

        rows = list(rows)
        first = self.n_rows
        if not rows:
            return np.arange(first, first, dtype=np.int64)
        start, index, value, lb, ub = rows_to_csr(rows, self.n_cols)
        m = len(rows)
        big = self._GRB.INFINITY
        split = [self._split(lb[r], ub[r], big) for r in range(m)]
        need2 = np.array([s[2] is not None for s in split], dtype=bool)
        self.check_size(self.n_cols, self._n_constrs + m + int(need2.sum()))
        A = sp.csr_matrix((value, index, start), shape=(m, self.n_cols))
        X = self._all_vars()
        prim = self._call(self._model.addMConstr, A, X, np.array([s[0] for s in split]),
                          np.array([s[1] for s in split], dtype=np.float64)).tolist()
        sec: list = [None] * m
        if need2.any():
            rr = np.flatnonzero(need2)
            cons = self._call(self._model.addMConstr, A[rr], X, np.full(rr.size, "<"),
                              np.array([split[r][2] for r in rr], dtype=np.float64)).tolist()
            for r, c in zip(rr, cons, strict=True):
                sec[r] = c
        self._primary.extend(prim)
        self._secondary.extend(sec)
        self._n_constrs += m + int(need2.sum())
        self.n_rows += m
        return np.arange(first, first + m, dtype=np.int64)

    def set_row_bounds(self, rows: np.ndarray | Sequence[int], lb: np.ndarray | float,
                       ub: np.ndarray | float) -> None:
        """Change the bounds of existing rows (``±inf`` for a free side)."""
        idx, lo, hi = self._row_bound_args(rows, lb, ub)
        if not idx.size:
            return
        big = self._GRB.INFINITY
        self._call(self._model.update)
        n_new = sum(1 for r, a, b in zip(idx, lo, hi, strict=True)
                    if self._split(a, b, big)[2] is not None and self._secondary[r] is None)
        self.check_size(self.n_cols, self._n_constrs + n_new)
        prim, senses, rhs, sec, sec_rhs = [], [], [], [], []
        for r, a, b in zip(idx, lo, hi, strict=True):
            sense, r1, r2 = self._split(float(a), float(b), big)
            prim.append(self._primary[r])
            senses.append(sense)
            rhs.append(r1)
            if r2 is not None and self._secondary[r] is None:
                expr = self._model.getRow(self._primary[r])
                self._secondary[r] = self._call(self._model.addLConstr, expr, "<", r2)
                self._n_constrs += 1
            elif self._secondary[r] is not None:
                sec.append(self._secondary[r])
                sec_rhs.append(big if r2 is None else r2)
        self._call(self._model.setAttr, "Sense", prim, senses)
        self._call(self._model.setAttr, "RHS", prim, rhs)
        if sec:
            self._call(self._model.setAttr, "RHS", sec, sec_rhs)

    def set_variable_bounds(self, cols: np.ndarray | Sequence[int], lb: np.ndarray | float,
                            ub: np.ndarray | float) -> None:
        """Change the bounds of existing columns."""
        idx, lo, hi = self._column_bound_args(cols, lb, ub)
        if not idx.size:
            return
        self._call(self._model.update)
        v = [self._vars[i] for i in idx]
        self._call(self._model.setAttr, "LB", v, lo.tolist())
        self._call(self._model.setAttr, "UB", v, hi.tolist())

    def set_objective(self, cols: np.ndarray | Sequence[int],
                      coef: np.ndarray | Sequence[float]) -> None:
        """Minimise ``sum(coef * x[cols])``; every other cost becomes 0 (duplicates add up)."""
        idx, c = self._objective_args(cols, coef)
        cost = np.zeros(self.n_cols)
        np.add.at(cost, idx, c)
        self._call(self._model.update)
        self._model.ModelSense = self._GRB.MINIMIZE
        if self.n_cols:
            self._call(self._model.setAttr, "Obj", self._vars, cost.tolist())

    # -- solving --------------------------------------------------------------------
    def _lin(self, idx: np.ndarray, coef: np.ndarray):
        return self._gp.LinExpr(coef.tolist(), [self._vars[i] for i in idx])

    def _solve_once(self, time_limit: float | None, mip_rel_gap: float,
                    lazy: LazyOracle | None) -> SolveResult:
        GRB = self._GRB
        model = self._model
        t0 = time.perf_counter()
        n_solves = n_lazy = 0
        seen: set[bytes] = set()
        dual_reductions_off = False
        while True:
            remaining = None if time_limit is None else time_limit - (time.perf_counter() - t0)
            if remaining is not None and remaining <= 0:
                raise self._time_limit_error(time_limit, time.perf_counter() - t0,
                                             during="while adding lazy rows")
            try:
                status, new_rows, accepted, checker = self._optimize(remaining, mip_rel_gap,
                                                                     lazy)
            finally:
                if dual_reductions_off:
                    model.Params.DualReductions = 1
            n_solves += 1
            # Rows from the oracle are valid cuts whatever the outcome: keep them.
            fresh = []
            for row in new_rows:
                key = _row_key(row)
                if key not in seen:
                    seen.add(key)
                    fresh.append(row)
            if fresh:
                self.add_rows(fresh)
                n_lazy += len(fresh)
            outcome = self._status.get(status, "error")
            if outcome == "retry" and not dual_reductions_off:
                # Settle "infeasible or unbounded" by re-solving without dual reductions.
                self._call(setattr, model.Params, "DualReductions", 0)
                dual_reductions_off = True
                continue
            dual_reductions_off = False
            if outcome == "infeasible":
                return SolveResult("infeasible", None, INF, INF, 0.0, n_solves=n_solves,
                                   n_lazy_rows=n_lazy)
            if outcome == "time_limit":
                try:
                    bound = float(model.ObjBound)
                except self._gp.GurobiError:  # e.g. an LP stopped early
                    bound = None
                inc = float(model.ObjVal) if model.SolCount else None
                raise self._time_limit_error(time_limit, time.perf_counter() - t0,
                                             incumbent=inc, bound=bound)
            if outcome == "unbounded":
                raise SolverError("gurobi: the model is unbounded; give every column that "
                                  "appears in the objective a finite bound")
            if outcome != "optimal":
                raise SolverError(f"gurobi: solve ended with status {_status_name(GRB, status)} "
                                  f"(code {status}); no certified answer")
            x = np.asarray(model.getAttr("X", self._vars), dtype=np.float64)
            if lazy is not None and checker.violated(x).size:  # pragma: no cover - safeguard
                # The rows are permanent now, so the next round respects them.
                logger.warning("gurobi: final point violates an oracle row; re-solving")
                continue
            if lazy is not None and not any(np.allclose(x, a, rtol=0, atol=1e-9)
                                            for a in reversed(accepted)):
                # Safeguard: the final point was never accepted by the oracle.
                rows = list(lazy(x))
                extra = [r for r in rows if _row_key(r) not in seen]
                if extra:
                    for r in extra:
                        seen.add(_row_key(r))
                    self.add_rows(extra)
                    n_lazy += len(extra)
                    continue
                if rows:
                    raise SolverError("gurobi: the lazy oracle rejected the optimal point but "
                                      "only returned rows it had returned before, which this "
                                      "point satisfies; the oracle must return a violated row")
            obj = float(model.ObjVal)
            bound = float(model.ObjBound) if model.IsMIP else obj
            if not math.isfinite(bound):
                raise SolverError("gurobi: reported optimal without a finite dual bound")
            return SolveResult("optimal", x, obj, min(bound, obj), 0.0, n_solves=n_solves,
                               n_lazy_rows=n_lazy,
                               info={"mip_gap": float(model.MIPGap) if model.IsMIP else 0.0,
                                     "mip_node_count": int(model.NodeCount) if model.IsMIP else 0})

    def _optimize(self, time_limit: float | None, mip_rel_gap: float,
                  lazy: LazyOracle | None) -> tuple[int, list, list, _RowChecker]:
        """One ``optimize`` call.

        Returns the status, the rows the oracle returned (normalised), the points it
        accepted, and a checker holding those rows.
        """
        GRB = self._GRB
        model = self._model
        params = model.Params
        self._call(setattr, params, "MIPGap", float(mip_rel_gap))
        self._call(setattr, params, "TimeLimit",
                   GRB.INFINITY if time_limit is None else max(0.0, float(time_limit)))
        self._call(setattr, params, "Threads", 0 if self.threads is None else int(self.threads))
        self._call(setattr, params, "LazyConstraints", 1 if lazy is not None else 0)
        new_rows: list = []
        accepted: list = []
        failure: list = []
        verbose = self.verbose
        n_cols = self.n_cols
        checker = _RowChecker(n_cols)

        def send(m, row) -> None:
            idx, coef, lb, ub = row
            if lb == ub:
                m.cbLazy(self._lin(idx, coef), GRB.EQUAL, float(lb))
                return
            if lb > -INF:
                m.cbLazy(self._lin(idx, coef), GRB.GREATER_EQUAL, float(lb))
            if ub < INF:
                m.cbLazy(self._lin(idx, coef), GRB.LESS_EQUAL, float(ub))

        def callback(m, where):
            if where == GRB.Callback.MESSAGE:
                if verbose:
                    msg = m.cbGet(GRB.Callback.MSG_STRING).rstrip()
                    if msg:
                        logger.info("Gurobi: %s", msg)
                return
            if where != GRB.Callback.MIPSOL or lazy is None or failure:
                return
            try:
                x = np.asarray(m.cbGetSolution(self._vars), dtype=np.float64)
                # Gurobi may offer candidates violating rows already passed to cbLazy
                # (heuristics, other threads).  Cut them off again without asking the
                # oracle, which therefore only sees points satisfying all its rows.
                bad = checker.violated(x)
                if bad.size:
                    for r in bad:
                        send(m, new_rows[r])
                    return
                rows = list(lazy(x))
                if not rows:
                    accepted.append(x)
                    return
                start, index, value, lbs, ubs = rows_to_csr(rows, n_cols)
                normal = [(index[start[r]:start[r + 1]], value[start[r]:start[r + 1]],
                           float(lbs[r]), float(ubs[r])) for r in range(len(rows))]
                for row in normal:
                    send(m, row)
                new_rows.extend(normal)
                checker.add(start, index, value, lbs, ubs)
            except BaseException as exc:  # re-raised after optimize returns
                failure.append(exc)
                m.terminate()

        self.check_size(self.n_cols, self._n_constrs)
        use_cb = verbose or lazy is not None
        self._call(model.optimize, callback if use_cb else None)
        if failure:
            raise failure[0]
        return model.Status, new_rows, accepted, checker


class _RowChecker:
    """Activities of the rows an oracle returned, to spot candidates that violate them."""

    #: Absolute slack (relative for large right-hand sides); not below Gurobi's
    #: default FeasibilityTol, so points Gurobi deems feasible are never re-cut forever.
    TOL = 1e-6

    def __init__(self, n_cols: int) -> None:
        self.n_cols = n_cols
        self.blocks: list = []
        self.lb = np.zeros(0)
        self.ub = np.zeros(0)

    def add(self, start, index, value, lb, ub) -> None:
        import scipy.sparse as sp

        self.blocks.append(sp.csr_matrix((value, index, start), shape=(len(lb), self.n_cols)))
        if len(self.blocks) > 16:  # keep the number of mat-vecs small
            self.blocks = [sp.vstack(self.blocks, format="csr")]
        self.lb = np.concatenate([self.lb, lb])
        self.ub = np.concatenate([self.ub, ub])

    def violated(self, x: np.ndarray) -> np.ndarray:
        """Indices of rows violated by ``x`` beyond the tolerance."""
        if not self.blocks:
            return np.zeros(0, dtype=np.int64)
        act = np.concatenate([B @ x for B in self.blocks])
        with np.errstate(invalid="ignore"):
            tol_lb = self.TOL * np.maximum(1.0, np.abs(np.where(np.isfinite(self.lb), self.lb, 0)))
            tol_ub = self.TOL * np.maximum(1.0, np.abs(np.where(np.isfinite(self.ub), self.ub, 0)))
        return np.flatnonzero((act < self.lb - tol_lb) | (act > self.ub + tol_ub))


def _row_key(row: Row) -> bytes:
    """A hash identifying a row (to add each oracle row to the model once)."""
    h = hashlib.blake2b(digest_size=16)
    h.update(np.asarray(row[0], dtype=np.int64).tobytes())
    h.update(np.asarray(row[1], dtype=np.float64).tobytes())
    h.update(np.asarray([row[2], row[3]], dtype=np.float64).tobytes())
    return h.digest()


def _status_name(GRB, status: int) -> str:
    for name in dir(GRB.Status):
        if not name.startswith("_") and getattr(GRB.Status, name) == status:
            return name
    return "UNKNOWN"
