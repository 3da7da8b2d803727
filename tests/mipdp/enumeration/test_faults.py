"""Solver faults: every failure gives a clear error and never a released support."""

import warnings

import numpy as np
import pytest

from mipdp import (
    CertificationError,
    ConditionalPrivacyWarning,
    TimeLimitError,
    private_bss,
    solvers,
)
from mipdp.datasets import make_bss_regression
from mipdp.exceptions import BackendUnavailableError, SizeLimitError, SolverError
from mipdp.solvers.base import SolveResult, SolverTimeLimitError
from mipdp.solvers.highs import HighsBackend

B = 0.5


def data(seed=0, n=60, p=8):
    rng = np.random.default_rng(seed)
    X = np.clip(rng.normal(size=(n, p)) * 0.4, -B, B)
    y = np.clip(X[:, :2] @ np.array([1.0, -1.0]) * 0.5 + 0.2 * rng.normal(size=n), -B, B)
    return X, y


def run(backend, **kw):
    """A release on the MIP backend.  Faults of the optimum phase use ``method="top_r"``:
    the exponential mechanism needs no optimum phase, and at this size no solve at all."""
    X, y = data()
    kw.setdefault("enumeration_options", {"exhaustive_max": 0, "explicit_max": 0})  # the backend
    return private_bss(X, y, 2, 1.0, bounds=(B, B), backend=backend, random_state=0, **kw)


class FaultyHighs(HighsBackend):
    """HiGHS that misbehaves from its ``fail_at``-th solve on (0-based)."""

    fail_at = 0

    def __init__(self, **kw):
        super().__init__(**kw)
        self.calls = 0

    def fault(self, res):  # pragma: no cover - overridden
        return res

    def _solve_once(self, time_limit, mip_rel_gap, lazy):
        res = super()._solve_once(time_limit, mip_rel_gap, lazy)
        self.calls += 1
        return self.fault(res) if self.calls > self.fail_at else res


class TimeLimitBackend(FaultyHighs):
    def fault(self, res):
        raise SolverTimeLimitError("highs: time limit of 1 s reached")


class TimeLimitLater(TimeLimitBackend):
    fail_at = 1      # the optimum solve succeeds; the top-R search phase fails


class InfeasibleAtOptimum(FaultyHighs):
    def fault(self, res):
        return SolveResult("infeasible", None, float("inf"), float("inf"), 0.0)


class FractionalEverywhere(FaultyHighs):
    def fault(self, res):
        if res.x is not None:
            res.x = res.x.copy()
            res.x[1:] = 0.5                      # z = 1/2: rounds to no support at all
        return res


class FractionalRoundable(FaultyHighs):
    def fault(self, res):
        if res.x is not None:
            x = res.x.copy()
            z = x[1:]
            z[:] = np.where(z > 0.5, 0.7, 0.3 * 2 / (z.size - 2))   # Σz = s, far from integral
            res.x = x
        return res


class CrashOnStart(HighsBackend):
    def _solve_once(self, time_limit, mip_rel_gap, lazy):
        raise SolverError("highs: the solver process died")


class TinyLicence(HighsBackend):
    size_limit = 5


@pytest.mark.parametrize("backend", [TimeLimitBackend, TimeLimitLater])
@pytest.mark.parametrize("method", ["top_r", "mistakes"])
def test_time_limit_becomes_certification_error(backend, method):
    kw = {"delta": 1e-3} if method == "mistakes" else {}
    with pytest.raises(CertificationError, match="time limit"):
        run(backend(), method=method, **kw)


def test_tiny_time_limit_raises_certification_error():
    with pytest.raises(CertificationError, match="nothing was released"):
        run("highs", time_limit=1e-9)


def test_missing_package_is_backend_unavailable(monkeypatch):
    monkeypatch.setitem(solvers.BACKENDS, "gurobi",
                        ("mipdp.solvers.gurobi", "GurobiBackend", "no_such_solver_pkg_xyz",
                         "mipdp[gurobi]"))
    with pytest.raises(BackendUnavailableError, match="not installed"):
        run("gurobi")
    assert issubclass(BackendUnavailableError, ImportError)


def test_licence_size_limit(monkeypatch):
    with pytest.raises(SizeLimitError, match="licence"):
        run(TinyLicence())


def test_gurobi_size_limit_error_from_solver(monkeypatch):
    """A size-limit error raised by the adapter while building rows propagates unchanged.
    (The warm start's rows: the class cuts' rows are deferred until a master solve needs
    them, MasterProblem.defer_rows, and the forks' masters are copies.)"""

    class RowsTooMany(HighsBackend):
        def add_rows(self, rows):
            if self.n_rows >= 1:
                raise SizeLimitError("backend 'gurobi': model too large for size-limited licence")
            return super().add_rows(rows)

    with pytest.raises(SizeLimitError, match="licence"):
        run(RowsTooMany())


def test_crash_on_first_solve():
    with pytest.raises(SolverError, match="died"):
        run(CrashOnStart(), method="top_r")


def test_unknown_backend_name():
    with pytest.raises(ValueError, match="backend"):
        run("cplex_that_is_not_there")


def test_non_integral_point_that_rounds_to_nothing():
    with pytest.raises((SolverError, RuntimeError), match="non-integral|selected features"):
        run(FractionalEverywhere(), method="top_r")


def test_infeasible_at_optimum_phase_is_an_error():
    with pytest.raises((CertificationError, SolverError)):
        run(InfeasibleAtOptimum(), method="top_r")


def test_non_integral_point_that_rounds_to_a_support_is_an_error():
    with pytest.raises((CertificationError, SolverError, RuntimeError)):
        run(FractionalRoundable(), method="top_r")


def test_faulty_backends_release_nothing_on_later_phase():
    """A fault in the top-R phase (after a certified optimum) still releases nothing."""
    backend = TimeLimitLater()
    with pytest.raises(CertificationError):
        run(backend, method="top_r")
    assert backend.calls > 1


@pytest.mark.parametrize("method", ["top_r", "mistakes", "exponential"])
def test_time_limit_holds_on_the_exhaustive_path(method):
    """A problem small enough to evaluate every support still honours time_limit."""
    X, y, _ = make_bss_regression(n=300, p=10, s=3, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConditionalPrivacyWarning)
        with pytest.raises(TimeLimitError, match="time_limit"):  # a CertificationError
            private_bss(X, y, 3, 1.0, bounds=(0.5, 0.5), method=method, time_limit=1e-6,
                        random_state=0)
