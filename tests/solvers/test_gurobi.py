"""Gurobi-specific behaviour of :class:`solvers.gurobi.GurobiBackend`.

The pip wheel of gurobipy carries a size-limited licence (2000 variables and 2000
constraints); these tests rely on that limit.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import sys

import numpy as np
import pytest

from mipdp.solvers import BackendUnavailableError, SizeLimitError, get_backend

INF = np.inf
needs_gurobi = pytest.mark.skipif(importlib.util.find_spec("gurobipy") is None,
                                  reason="gurobipy is not installed")


def test_module_imports_without_gurobipy(monkeypatch):
    monkeypatch.setitem(sys.modules, "gurobipy", None)      # `import gurobipy` now fails
    monkeypatch.delitem(sys.modules, "mipdp.solvers.gurobi", raising=False)
    mod = importlib.import_module("mipdp.solvers.gurobi")
    assert mod.GurobiBackend.name == "gurobi"
    assert mod.GurobiBackend.native_lazy is False and mod.GurobiBackend.size_limit == 2000
    with pytest.raises(BackendUnavailableError, match="gurobipy"):
        mod.GurobiBackend()


@needs_gurobi
def test_too_many_binaries_fails_early_with_advice():
    b = get_backend("gurobi")
    b.add_variables(1, 0, INF)
    with pytest.raises(SizeLimitError) as err:
        b.add_variables(2100, 0, 1, integer=True)
    msg = str(err.value)
    assert "highs" in msg and "prescreen" in msg and "2000" in msg
    assert b.n_cols == 1                                     # nothing was added


@needs_gurobi
def test_too_many_rows_fails_early():
    b = get_backend("gurobi")
    z = b.add_variables(10, 0, 1, integer=True)
    b.add_rows([(z, np.ones(10), 0, 5)] * 999)                # ranges: 2 constraints each
    with pytest.raises(SizeLimitError, match="prescreen"):
        b.add_rows([(z, np.ones(10), 1, 5)] * 2)


@needs_gurobi
def test_licence_error_10010_is_translated():
    """With the early check off, Gurobi's own error 10010 becomes a SizeLimitError."""
    b = get_backend("gurobi", size_limit=None)
    z = b.add_variables(2100, 0, 1, integer=True)
    b.set_objective(z, np.ones(2100))
    with pytest.raises(SizeLimitError) as err:
        b.solve()
    assert "highs" in str(err.value) and "prescreen" in str(err.value)


@needs_gurobi
def test_native_lazy_single_solve_and_rows_persist():
    p, k = 8, 3
    c = -np.arange(p, 0, -1, dtype=float)
    b = get_backend("gurobi", lazy="native")
    assert b.native_lazy
    z = b.add_variables(p, 0, 1, integer=True)
    b.add_rows([(z, np.ones(p), k, k)])
    b.set_objective(z, c)
    banned = [(0, 1), (0, 2), (1, 2)]
    calls = []

    def oracle(x):
        sup = set(np.flatnonzero(np.rint(x[z])).tolist())
        calls.append(sup)
        return [(z[list(pr)], np.ones(2), -INF, 1) for pr in banned if set(pr) <= sup]

    res = b.solve(lazy=oracle)
    assert res.n_solves == 1                                  # one optimize, callbacks inside
    assert np.rint(res.x[z]).tolist() == [1, 0, 0, 1, 1, 0, 0, 0]
    assert res.n_lazy_rows >= 1 and b.n_rows == 1 + res.n_lazy_rows
    b._model.update()
    assert b._model.NumConstrs == b.n_rows                    # cbLazy rows made permanent
    again = b.solve()
    assert np.rint(again.x[z]).tolist() == [1, 0, 0, 1, 1, 0, 0, 0]


@needs_gurobi
def test_ranged_rows_use_two_constraints():
    b = get_backend("gurobi")
    z = b.add_variables(4, 0, 1, integer=True)
    b.add_rows([(z, np.ones(4), 1, 2), (z[:2], np.ones(2), 1, 1), (z, np.ones(4), -INF, 3)])
    assert b._n_constrs == 4
    b.set_row_bounds([1, 2], [0, 1], [1, 2])                  # both become ranges
    assert b._n_constrs == 6
    b.set_objective(z, -np.ones(4))
    assert b.solve().objective == pytest.approx(-2)
    b.set_row_bounds([0, 1, 2], -INF, INF)                    # all free again
    assert b.solve().objective == pytest.approx(-4)


@needs_gurobi
@pytest.mark.parametrize("lazy", ["resolve", "native"])
def test_oracle_exception_propagates(lazy):
    b = get_backend("gurobi", lazy=lazy)
    z = b.add_variables(3, 0, 1, integer=True)
    b.add_rows([(z, np.ones(3), 1, 1)])
    b.set_objective(z, [1.0, 2.0, 3.0])

    def broken(x):
        raise KeyError("oracle failed")

    with pytest.raises(KeyError, match="oracle failed"):
        b.solve(lazy=broken)


@needs_gurobi
@pytest.mark.parametrize("lazy", ["resolve", "native"])
def test_malformed_oracle_row_is_reported(lazy):
    b = get_backend("gurobi", lazy=lazy)
    z = b.add_variables(3, 0, 1, integer=True)
    b.add_rows([(z, np.ones(3), 1, 1)])
    b.set_objective(z, [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="out of range"):
        b.solve(lazy=lambda x: [(np.array([7]), np.ones(1), 0, 0)])


@needs_gurobi
def test_verbose_routes_log_through_logging(caplog):
    b = get_backend("gurobi", verbose=True)
    z = b.add_variables(3, 0, 1, integer=True)
    b.add_rows([(z, np.ones(3), 1, 1)])
    b.set_objective(z, [1.0, 2.0, 3.0])
    with caplog.at_level(logging.INFO, logger="mipdp.solvers.gurobi"):
        b.solve()
    assert any("Gurobi" in r.getMessage() for r in caplog.records)


@needs_gurobi
def test_threads_parameter_is_set():
    b = get_backend("gurobi", threads=1)
    z = b.add_variables(2, 0, 1, integer=True)
    b.set_objective(z, [1.0, -1.0])
    assert b.solve().objective == pytest.approx(-1)
    assert b._model.Params.Threads == 1


@needs_gurobi
def test_lazy_modes_same_answers_resolve_is_the_default():
    """Issue 30 item 4: lazy rows are re-solved by default (the enumeration tightens the
    model between solves, several times faster at p = 1000: docs/design.md); the native
    callback stays available and both give the same certified answers."""
    from mipdp import InvalidParameterError, private_bss
    from mipdp.datasets import make_bss_regression
    assert not get_backend("gurobi").native_lazy and get_backend("gurobi").lazy == "resolve"
    with pytest.raises(InvalidParameterError, match="'lazy' parameter"):
        get_backend("gurobi", lazy="callback")
    X, y, _ = make_bss_regression(n=800, p=60, s=3, random_state=1)
    kw = dict(bounds=(0.5, 0.5), backend="gurobi", random_state=7, n_draws=20,
              enumeration_options={"exhaustive_max": 0, "explicit_max": 0})
    for method in ("top_r", "exponential"):
        a = private_bss(X, y, 3, 1.0, method=method, **kw)
        b = private_bss(X, y, 3, 1.0, method=method, backend_options={"lazy": "native"}, **kw)
        h = private_bss(X, y, 3, 1.0, method=method, **{**kw, "backend": "highs"})
        np.testing.assert_allclose(a.candidate_values, b.candidate_values, rtol=1e-9)
        np.testing.assert_array_equal(a.supports, h.supports)
