"""Issue 30 item 4, the rough edges: ``time_limit=inf`` means no limit; NaN/inf errors name
the column (a NaN is outside the public domain: it raises on every neighbour holding it)."""

import math

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from mipdp import private_bss
from mipdp.datasets import make_bss_regression
from mipdp.deadline import Deadline
from mipdp.solvers import get_backend

B = (3.0, 3.0)


@pytest.fixture(scope="module")
def data():
    X, y, _ = make_bss_regression(n=300, p=8, s=2, random_state=0)
    return X, y


@pytest.mark.parametrize("method", ["exponential", "top_r"])
def test_time_limit_inf_is_no_limit(data, method):
    X, y = data
    a = private_bss(X, y, 2, 1.0, bounds=B, method=method, random_state=0,
                    time_limit=float("inf"), n_draws=3)
    b = private_bss(X, y, 2, 1.0, bounds=B, method=method, random_state=0, n_draws=3)
    np.testing.assert_array_equal(a.supports, b.supports)


def test_time_limit_inf_in_the_clock_and_the_backends():
    clock = Deadline(math.inf)
    assert clock.time_limit is None and clock.remaining("x") is None and not clock.expired()
    b = get_backend("highs", time_limit=math.inf)
    assert b.time_limit is None
    z = b.add_variables(2, 0, 1, integer=True)
    b.set_objective(z, -np.ones(2))
    assert b.solve(time_limit=math.inf).objective == pytest.approx(-2)


@pytest.mark.parametrize("kind", ["dense", "fortran", "csr", "csc", "frame"])
def test_nan_error_names_the_columns(data, kind):
    X, y = data
    X = X.copy()
    X[5, 3], X[7, 6] = np.nan, np.inf
    Xk = {"dense": X, "fortran": np.asfortranarray(X), "csr": sp.csr_matrix(X),
          "csc": sp.csc_matrix(X),
          "frame": pd.DataFrame(X, columns=[f"f{j}" for j in range(8)])}[kind]
    with pytest.raises(ValueError, match="NaN or infinite") as exc:
        private_bss(Xk, y, 2, 1.0, bounds=B, random_state=0)
    msg = str(exc.value)
    if kind == "frame":
        assert "3 ('f3'), 6 ('f6')" in msg
    else:
        assert "column(s) 3, 6;" in msg
