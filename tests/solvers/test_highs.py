"""HiGHS-specific behaviour of :class:`solvers.highs.HighsBackend`."""

from __future__ import annotations

import logging
import time

import highspy
import numpy as np
import pytest

from mipdp.solvers import SolverError, SolverTimeLimitError, get_backend
from mipdp.solvers.highs import DEFAULT_OPTIONS, HighsBackend

INF = np.inf


def master(b, p, s, n_cuts, seed=0):
    """eta >= 0, p binaries, sum(z) = s, and n_cuts dense tangent cuts of (w'(1-z))^2."""
    rng = np.random.default_rng(seed)
    w = rng.random(p) + 0.1
    eta = int(b.add_variables(1, 0.0, INF)[0])
    z = b.add_variables(p, 0, 1, integer=True)
    b.add_rows([(z, np.ones(p), s, s)])
    b.set_objective([eta], [1.0])
    cuts = []
    for _ in range(n_cuts):
        zt = np.zeros(p)
        zt[rng.choice(p, s, replace=False)] = 1.0
        u = w @ (1.0 - zt)
        g = -2.0 * u * w
        cuts.append((np.r_[eta, z], np.r_[1.0, -g], u * u - g @ zt, INF))
    return eta, z, w, cuts


def test_registered_and_emulates_lazy_rows():
    b = get_backend("highs")
    assert isinstance(b, HighsBackend)
    assert b.name == "highs" and b.size_limit is None
    assert HighsBackend.native_lazy is False


def test_highspy_lazy_callback_is_not_invoked():
    """Why ``native_lazy`` is False: highspy's lazy-constraint callback never fires.

    If this starts failing, a newer highspy calls ``cbMipDefineLazyConstraints``;
    then check whether rows can be passed back and reconsider ``native_lazy``.
    """
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    n = 6
    h.addCols(n, -np.arange(1.0, n + 1), np.zeros(n), np.ones(n), 0,
              np.zeros(0, np.int32), np.zeros(0, np.int32), np.zeros(0))
    h.changeColsIntegrality(n, np.arange(n, dtype=np.int32),
                            np.full(n, highspy.HighsVarType.kInteger))
    h.addRow(-INF, 3.0, n, np.arange(n, dtype=np.int32), np.ones(n))
    calls = []
    h.cbMipDefineLazyConstraints.subscribe(lambda e: calls.append(e))
    h.cbMipSolution.subscribe(lambda e: calls.append("sol"))
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    assert not any(c != "sol" for c in calls)
    assert not hasattr(highspy.cb.HighsCallbackInput(), "cutset_num_cut")


def test_dense_rows_added_cheaply():
    """Hundreds of dense rows with 10 000 nonzeros go in with one addRows call."""
    p = 10_000
    b = get_backend("highs")
    eta, z, w, cuts = master(b, p, 5, 300)
    rows = b.add_rows(cuts)   # the time it takes is a benchmark (bench_enumeration.py), not a test
    assert rows[0] == 1 and rows[-1] == 300 and b.n_rows == 301
    assert b._h.getNumNz() == p + 300 * (p + 1)


def test_typical_master_solves_fast_with_default_options():
    p, s = 3000, 4
    b = get_backend("highs")
    eta, z, w, cuts = master(b, p, s, 40)
    b.add_rows(cuts)
    res = b.solve(time_limit=20)
    assert res.status == "optimal" and res.bound <= res.objective
    zz = np.rint(res.x[z])
    assert zz.sum() == s and np.allclose(res.x[z], zz, atol=1e-6)
    # the master is exact once the cut at the current point is in
    u = w @ (1.0 - zz)
    g = -2.0 * u * w
    b.add_rows([(np.r_[eta, z], np.r_[1.0, -g], u * u - g @ zz, INF)])
    res2 = b.solve(time_limit=20)
    assert res2.objective >= res.objective - 1e-6


def test_options_override_and_validation():
    b = get_backend("highs", options={"presolve": "choose",
                                      "mip_heuristic_run_feasibility_jump": True})
    assert b.options["presolve"] == "choose"
    assert b._h.getOptionValue("presolve")[-1] == "choose"
    z = b.add_variables(3, 0, 1, integer=True)
    b.add_rows([(z, np.ones(3), 2, 2)])
    b.set_objective(z, [3.0, 1.0, 2.0])
    assert b.solve().objective == pytest.approx(3.0)
    default = get_backend("highs")._h
    effort = DEFAULT_OPTIONS["mip_heuristic_effort"]
    assert default.getOptionValue("mip_heuristic_effort")[-1] == effort
    with pytest.raises(ValueError, match="no_such_option"):
        get_backend("highs", options={"no_such_option": 1})
    with pytest.raises(ValueError, match="time_limit"):
        get_backend("highs", options={"time_limit": 5})


def test_mip_rel_gap_gives_valid_bound():
    b = get_backend("highs")
    eta, z, w, cuts = master(b, 60, 5, 30, seed=4)
    b.add_rows(cuts)
    exact = b.solve()
    loose = b.solve(mip_rel_gap=0.5)
    assert loose.status == "optimal"
    assert loose.bound <= exact.objective + 1e-6 <= loose.objective + 2e-6
    assert loose.gap <= 0.5 + 1e-9


def test_emulated_lazy_loop_counts_solves():
    b = get_backend("highs")
    z = b.add_variables(5, 0, 1, integer=True)
    b.add_rows([(z, np.ones(5), 2, 2)])
    b.set_objective(z, [1.0, 2.0, 3.5, 4.0, 5.0])
    banned = {(0, 1), (0, 2)}

    def oracle(x):
        s = tuple(np.flatnonzero(np.rint(x[z])).tolist())
        return [(z[list(s)], np.ones(2), -INF, 1)] if s in banned else []

    res = b.solve(lazy=oracle)
    assert np.rint(res.x[z]).tolist() == [1, 0, 0, 1, 0]
    assert res.n_solves == 3 and res.n_lazy_rows == 2 and b.n_rows == 3


def test_time_limit_in_lazy_loop():
    b = get_backend("highs")
    z = b.add_variables(4, 0, 1, integer=True)
    b.set_objective(z, np.ones(4))

    def slow_oracle(x):  # never settles: always returns a harmless row
        time.sleep(0.03)
        return [(z, np.ones(4), -INF, 100.0)]

    with pytest.raises(SolverTimeLimitError, match="lazy"):
        b.solve(lazy=slow_oracle, time_limit=0.15)


def test_empty_model_and_lp():
    b = get_backend("highs")
    res = b.solve()
    assert res.status == "optimal" and res.x.size == 0
    x = b.add_variables(1, 1.5, 4.0)
    b.set_objective(x, [2.0])
    res = b.solve()
    assert res.objective == pytest.approx(3.0) and res.bound == pytest.approx(3.0)


def test_verbose_routes_log_through_logging(caplog):
    b = get_backend("highs", verbose=True)
    z = b.add_variables(3, 0, 1, integer=True)
    b.add_rows([(z, np.ones(3), 1, 1)])
    b.set_objective(z, [1.0, 2.0, 3.0])
    with caplog.at_level(logging.INFO, logger="mipdp.solvers.highs"):
        b.solve()
    assert any("HiGHS" in r.getMessage() for r in caplog.records)


def test_silent_by_default(capfd):
    b = get_backend("highs")
    z = b.add_variables(3, 0, 1, integer=True)
    b.add_rows([(z, np.ones(3), 1, 1)])
    b.set_objective(z, [1.0, 2.0, 3.0])
    b.solve()
    out, err = capfd.readouterr()
    assert "HiGHS" not in out and "HiGHS" not in err


def test_other_statuses_raise(monkeypatch):
    b = get_backend("highs")
    z = b.add_variables(2, 0, 1, integer=True)
    b.set_objective(z, [1.0, 1.0])
    monkeypatch.setattr(b._h, "getModelStatus", lambda: highspy.HighsModelStatus.kInterrupt)
    with pytest.raises(SolverError, match="Interrupt"):
        b.solve()


def test_presolve_off_by_default_because_it_claims_wrong_infeasibility():
    """HiGHS 1.15.1 presolve reports this master (from a hinge-loss top-R search)
    infeasible although it has a feasible point; the default keeps presolve off."""
    import pathlib

    import highspy

    path = pathlib.Path(__file__).parent / "data" / "highs_presolve_wrong_infeasible.mps"
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(path))
    for name, value in DEFAULT_OPTIONS.items():
        h.setOptionValue(name, value)
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    assert DEFAULT_OPTIONS["presolve"] == "off"


def test_solve_without_fixed_columns_matches_full_solve(monkeypatch):
    """Columns fixed by bounds (at 0 or 1) are moved into the row bounds exactly."""
    rng = np.random.default_rng(0)

    def build():
        b = get_backend("highs")
        eta = b.add_variables(1, -50.0, INF)
        z = b.add_variables(300, 0, 1, integer=True)
        b.add_rows([(z, np.ones(300), 6, 6)])
        for _ in range(5):
            g = -rng.random(300)
            b.add_rows([(np.r_[eta, z], np.r_[1.0, -g], -3.0, INF)])
        b.set_objective(np.r_[eta, z[:10]], np.r_[1.0, rng.random(10)])
        b.set_variable_bounds(z[:150], 0.0, 0.0)
        b.set_variable_bounds(z[150:152], 1.0, 1.0)
        return b

    state = rng.bit_generator.state
    reduced = build().solve()
    rng.bit_generator.state = state
    full_backend = build()
    monkeypatch.setattr(full_backend, "_fixed_columns", lambda: np.zeros(301, dtype=bool))
    full = full_backend.solve()
    assert reduced.objective == pytest.approx(full.objective, abs=1e-7)
    assert np.all(reduced.x[1:151] == 0) and np.all(reduced.x[151:153] == 1)
    assert reduced.bound <= reduced.objective + 1e-9


def test_creating_a_backend_prints_nothing():
    """highspy >= 1.16 prints a banner on the first Highs() of a process: silenced."""
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = "from mipdp import solvers; solvers.get_backend('highs')"
    out = subprocess.run([sys.executable, "-c", code],
                         capture_output=True, text=True, cwd=root, check=True)
    assert out.stdout == ""


def test_clone_is_an_independent_copy_that_solves_the_same():
    b = HighsBackend(options={"mip_feasibility_tolerance": 1e-7})
    x = b.add_variables(6, 0.0, 1.0, integer=True)
    eta = b.add_variables(1, -10.0, np.inf)
    b.add_rows([(x, np.ones(6), 3.0, 3.0),
                (np.r_[eta, x], np.r_[1.0, -np.arange(1.0, 7.0)], -5.0, np.inf)])
    b.set_objective(eta, [1.0])
    b.set_variable_bounds(x[:1], 0.0, 0.0)
    c = b.clone()
    assert (c.n_cols, c.n_rows) == (b.n_cols, b.n_rows)
    assert c.options == b.options
    r1, r2 = b.solve(mip_rel_gap=1e-9), c.solve(mip_rel_gap=1e-9)
    assert r1.objective == pytest.approx(r2.objective)
    np.testing.assert_allclose(r1.x, r2.x)
    c.add_rows([(x[1:2], [1.0], 0.0, 0.0)])       # the copy changes alone
    assert (c.n_rows, b.n_rows) == (3, 2)
    assert b._h.getNumRow() == 2
