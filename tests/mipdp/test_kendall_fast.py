"""Kendall counts from dense ranks (mipdp/_kendall_fast.py) equal the package's merge count."""

import numpy as np
import pytest

import mipdp._kendall_fast as fast
from mipdp._kendall_fast import DenseRanks
from mipdp.comparators.kendall import _kendall_counts_cols


def _data(n=120, p=9, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X[:, 1] = np.round(X[:, 1])                 # ties
    X[:, 2] = rng.integers(0, 3, n)             # heavy ties
    X[:, 3] = 1.0                               # constant
    X[:, 4] = X[:, 0]                           # duplicate column
    y = np.round(X[:, 0] + rng.normal(size=n))
    return X, y


@pytest.mark.parametrize("compiled", [True, False])
def test_counts_equal_the_merge_count_with_ties(monkeypatch, compiled):
    if not compiled:
        monkeypatch.setattr(fast, "_scipy_dis", None)
    X, y = _data()
    monkeypatch.setattr(fast, "_BLOCK", 3 * X.shape[0])      # several blocks
    D = DenseRanks(X)
    cols = np.arange(X.shape[1])
    P, *_ = _kendall_counts_cols(X, y)
    np.testing.assert_array_equal(D.P(DenseRanks.of_vector(y), cols), P)
    for j in cols:
        P, *_ = _kendall_counts_cols(X, X[:, j])
        np.testing.assert_array_equal(D.P(D.column(j), cols), P)
