"""Pyomo-specific behaviour of :class:`solvers.pyomo.PyomoBackend` (HiGHS through Pyomo)."""

from __future__ import annotations

import importlib.util
import itertools
import logging

import numpy as np
import pytest

pytest.importorskip("pyomo")

from mipdp.solvers import BackendUnavailableError, get_backend  # noqa: E402
from mipdp.solvers.pyomo import PyomoBackend  # noqa: E402

INF = np.inf
HIGHS_SOLVERS = ["appsi_highs", "highs"]


def test_registered_with_appsi_highs_default():
    b = get_backend("pyomo")
    assert isinstance(b, PyomoBackend)
    assert b.name == "pyomo" and b.solver_name == "appsi_highs" and not b.native_lazy


def test_unknown_solver_is_unavailable():
    with pytest.raises(BackendUnavailableError, match="no_such_solver"):
        get_backend("pyomo", solver="no_such_solver")


@pytest.mark.parametrize("solver", HIGHS_SOLVERS)
def test_highs_interfaces_solve_and_update(solver):
    b = get_backend("pyomo", solver=solver)
    z = b.add_variables(4, 0, 1, integer=True)
    b.add_rows([(z, np.array([2.0, 3, 4, 5]), -INF, 7)])
    b.set_objective(z, -np.array([3.0, 4, 5, 7]))
    res = b.solve()
    assert res.objective == pytest.approx(-10) and res.bound <= res.objective
    b.add_rows([(z[[0, 3]], np.ones(2), -INF, 1)])          # rows added between solves
    assert b.solve().objective == pytest.approx(-9)
    b.set_row_bounds([1], -INF, INF)                         # and relaxed again
    assert b.solve().objective == pytest.approx(-10)


@pytest.mark.parametrize("solver", HIGHS_SOLVERS)
def test_lazy_no_good_enumeration(solver):
    p, k = 5, 2
    c = np.array([0.5, -1.0, 2.0, 0.25, -0.75])
    b = get_backend("pyomo", solver=solver)
    z = b.add_variables(p, 0, 1, integer=True)
    b.add_rows([(z, np.ones(p), k, k)])
    b.set_objective(z, c)
    scores = sorted(c[list(s)].sum() for s in itertools.combinations(range(p), k))
    # reject the three best subsets lazily: the answer is the fourth best
    rejected = []

    def oracle(x):
        sup = np.flatnonzero(np.rint(x[z]))
        if len(rejected) < 3:
            rejected.append(sup)
            return [(z[sup], np.ones(k), -INF, k - 1)]
        return []

    res = b.solve(lazy=oracle)
    assert res.objective == pytest.approx(scores[3])
    assert res.n_solves == 4 and res.n_lazy_rows == 3 and b.n_rows == 4


def test_free_row_is_kept_and_can_be_bounded_later():
    b = get_backend("pyomo")
    z = b.add_variables(3, 0, 1, integer=True)
    b.add_rows([(z, np.ones(3), -INF, INF)])
    b.set_objective(z, -np.ones(3))
    assert b.solve().objective == pytest.approx(-3)
    b.set_row_bounds([0], 1, 1)
    assert b.solve().objective == pytest.approx(-1)


def test_unreferenced_columns_get_feasible_values():
    b = get_backend("pyomo")
    x = b.add_variables(3, [-2.0, 1.5, -INF], [3.0, 4.0, -1.0])
    y = b.add_variables(1, 0.5, 2.5, integer=True)
    z = b.add_variables(2, 0, 1, integer=True)
    b.add_rows([(z, np.ones(2), 1, 1)])
    b.set_objective(z, [1.0, 2.0])
    res = b.solve()
    assert res.x[x].tolist() == [0.0, 1.5, -1.0]
    assert res.x[y].tolist() == [1.0]
    assert np.rint(res.x[z]).tolist() == [1, 0]


def test_user_options_are_passed():
    b = get_backend("pyomo", options={"presolve": "choose"})
    opts = b._solver_options(1e-3, 2.0)
    assert opts["presolve"] == "choose" and opts["mip_rel_gap"] == 1e-3
    assert opts["time_limit"] == 2.0
    z = b.add_variables(2, 0, 1, integer=True)
    b.set_objective(z, [1.0, -1.0])
    assert b.solve().objective == pytest.approx(-1)


@pytest.mark.skipif(importlib.util.find_spec("gurobipy") is None, reason="needs gurobipy")
def test_other_solver_through_pyomo():
    b = get_backend("pyomo", solver="gurobi_direct")
    z = b.add_variables(3, 0, 1, integer=True)
    b.add_rows([(z, np.ones(3), 2, 2)])
    b.set_objective(z, [3.0, 1.0, 2.0])
    assert b.solve().objective == pytest.approx(3)
    b.add_rows([(z[1:], np.ones(2), -INF, 1)])
    assert b.solve().objective == pytest.approx(4)


def test_verbose_routes_log_through_logging(caplog):
    b = get_backend("pyomo", verbose=True)
    z = b.add_variables(3, 0, 1, integer=True)
    b.add_rows([(z, np.ones(3), 1, 1)])
    b.set_objective(z, [1.0, 2.0, 3.0])
    with caplog.at_level(logging.INFO, logger="mipdp.solvers.pyomo"):
        b.solve()
    assert any(r.name == "mipdp.solvers.pyomo" for r in caplog.records)


@pytest.mark.parametrize("key", ["mip_rel_gap", "time_limit", "MIPGap"])
def test_gap_and_time_options_are_refused(key):
    """A looser gap set through options would void the enumeration's certificates."""
    from mipdp.solvers import InvalidParameterError
    with pytest.raises(InvalidParameterError, match=f"must not set '{key}'"):
        get_backend("pyomo", options={key: 0.5})


def test_solver_output_goes_to_logging_not_the_terminal(capfd, caplog):
    """Issue 30 item 4: what the solver prints (HiGHS's "WARNING: HighsSparseMatrix ..."
    lines, written to the C-level stdout) goes to the logger at DEBUG, not to the terminal."""
    import os
    b = get_backend("pyomo")
    z = b.add_variables(2, 0, 1, integer=True)
    b.set_objective(z, -np.ones(2))
    real = b._opt.solve

    def noisy(*args, **kwargs):
        os.write(1, b"WARNING: HighsSparseMatrix local_ar_matrix (test)\n")
        return real(*args, **kwargs)

    b._opt.solve = noisy
    with caplog.at_level(logging.DEBUG, logger="mipdp.solvers.pyomo"):
        assert b.solve().objective == pytest.approx(-2)
    out, err = capfd.readouterr()
    assert "HighsSparseMatrix" not in out + err
    assert any("HighsSparseMatrix" in r.getMessage() and r.levelno == logging.DEBUG
               for r in caplog.records)
