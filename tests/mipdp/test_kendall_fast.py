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


@pytest.mark.parametrize("compiled", [True, False])
def test_counts_are_the_same_for_every_n_jobs(monkeypatch, compiled):
    """The pieces of columns run on the call's workers: the same exact counts (ties, a
    constant and a duplicated column; pieces of 2 columns)."""
    from mipdp._parallel import n_jobs_context
    if not compiled:
        monkeypatch.setattr(fast, "_scipy_dis", None)
    X, y = _data(p=11)
    monkeypatch.setattr(fast, "_PIECE", 2)
    D = DenseRanks(X)
    cols = np.arange(X.shape[1])
    want, *_ = _kendall_counts_cols(X, y)
    for n_jobs in (1, 2, 4):
        with n_jobs_context(n_jobs):
            np.testing.assert_array_equal(D.P(DenseRanks.of_vector(y), cols), want)
            np.testing.assert_array_equal(D.P(D.column(2), cols[::-1]),
                                          _kendall_counts_cols(X[:, ::-1], X[:, 2])[0])
            assert D.P(D.column(0), cols[:0]).shape == (0,)


def test_comparator_counts_with_and_without_the_compiled_kernel(monkeypatch):
    """DPKendall's counts (compiled discordant count) equal the vectorised merge count."""
    rng = np.random.default_rng(3)
    for trial in range(12):
        X, y = _data(n=int(rng.integers(2, 50)), seed=trial)
        if trial % 2:
            y = rng.normal(size=X.shape[0])
        fast_counts = _kendall_counts_cols(X, y)
        with monkeypatch.context() as m:
            m.setattr(fast, "_scipy_dis", None)
            merge_counts = _kendall_counts_cols(X, y)
        for a, b in zip(fast_counts, merge_counts, strict=True):
            np.testing.assert_array_equal(a, b)


def test_comparator_counts_are_the_same_for_every_n_jobs(monkeypatch):
    """DPKendall's counts, batches of 3 columns on the call's workers: the same exact
    integers for every n_jobs, and for a sparse X (read on the calling thread)."""
    import scipy.sparse as sp

    import mipdp.comparators.kendall as kendall_module
    from mipdp._parallel import n_jobs_context
    X, y = _data(p=13)
    monkeypatch.setattr(kendall_module, "_BATCH_ENTRIES", 3 * X.shape[0])
    want = _kendall_counts_cols(X, y)
    for n_jobs in (2, 4):
        with n_jobs_context(n_jobs):
            got = _kendall_counts_cols(X, y)
            assert got[1:2] == want[1:2] and got[3] == want[3]
            np.testing.assert_array_equal(got[0], want[0])
            np.testing.assert_array_equal(got[2], want[2])
            np.testing.assert_array_equal(_kendall_counts_cols(sp.csc_matrix(X), y)[0], want[0])
            np.testing.assert_array_equal(
                _kendall_counts_cols(X, y, cols=np.array([5, 0, 12, 2]))[0], want[0][[5, 0, 12, 2]])
