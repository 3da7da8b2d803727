"""Status tables, one argument check, and the time-limit error of every adapter
(issue 10 item 7)."""

import importlib.util

import numpy as np
import pytest

from mipdp.solvers import (
    InvalidParameterError,
    SolverTimeLimitError,
    available_backends,
    get_backend,
)

BACKENDS = [b for b in ("highs", "gurobi", "pyomo") if b in available_backends()]


def _hard_model(b, n=60, seed=0):
    rng = np.random.default_rng(seed)
    z = b.add_variables(n, 0, 1, integer=True)
    w = rng.integers(50, 100, size=n).astype(float)
    b.add_rows([(z, w, -np.inf, w.sum() / 2 + 0.5)])
    b.set_objective(z, -(w + rng.integers(0, 5, size=n)))
    return b


@pytest.mark.parametrize("name", BACKENDS)
def test_time_limit_error_reports_the_limit_and_suggests_nothing_that_does_not_exist(name):
    b = _hard_model(get_backend(name))
    with pytest.raises(SolverTimeLimitError) as info:
        b.solve(time_limit=0.0)
    exc = info.value
    assert exc.backend == name and exc.limit == 0.0 and exc.elapsed >= 0.0
    assert "mip_rel_gap" not in str(exc) and "nothing was certified" in str(exc)
    assert "time_limit" in str(exc)


@pytest.mark.parametrize("name", BACKENDS)
def test_arguments_are_checked_once_with_the_same_error(name):
    for bad in ({"time_limit": -1.0}, {"threads": 0}, {"verbose": "yes"}):
        with pytest.raises(InvalidParameterError, match=repr(next(iter(bad)))):
            get_backend(name, **bad)
    b = get_backend(name)
    with pytest.raises(InvalidParameterError, match="'mip_rel_gap'"):
        b.solve(mip_rel_gap=-0.1)
    with pytest.raises(InvalidParameterError, match="'time_limit'"):
        b.solve(time_limit="soon")


@pytest.mark.parametrize("name", BACKENDS)
def test_mip_rel_gap_is_not_a_backend_option(name):
    with pytest.raises(InvalidParameterError, match="set by the enumeration"):
        get_backend(name, mip_rel_gap=1e-3)


def test_highs_options_refuse_gap_and_time():
    for key in ("mip_rel_gap", "time_limit"):
        with pytest.raises(InvalidParameterError, match=f"must not set '{key}'"):
            get_backend("highs", options={key: 1.0})
    with pytest.raises(InvalidParameterError, match="HiGHS rejects"):
        get_backend("highs", options={"no_such_option": 1})


def test_status_tables_are_declared():
    from mipdp.solvers import highs, pyomo
    assert set(highs.STATUS_TABLE.values()) <= {"optimal", "infeasible", "decide", "empty",
                                                 "time_limit"}
    assert pyomo.STATUS_TABLE["maxTimeLimit"] == "time_limit"
    if importlib.util.find_spec("gurobipy") is not None:
        from mipdp.solvers import gurobi
        assert gurobi.STATUS_TABLE["INF_OR_UNBD"] == "retry"


def test_private_bss_refuses_mip_rel_gap_before_reading_data():
    from mipdp import private_bss

    class Untouchable:
        def __getattr__(self, name):
            raise AssertionError("data read")

    with pytest.raises(InvalidParameterError, match="set by the enumeration"):
        private_bss(Untouchable(), Untouchable(), 2, 1.0, bounds=(0.5, 0.5),
                    backend_options={"mip_rel_gap": 1e-3})
