"""Vectorised kernels of the pre-screeners: batched Kendall counts and DPKendall's lazy rounds."""

import numpy as np
import pytest
from scipy import stats

from mipdp.comparators.kendall import (
    _kendall_counts_cols,
    _noisy_argmax,
    dp_kendall,
    scaled_kendall,
)


def brute_P(x, y):
    i, j = np.triu_indices(x.size, 1)
    return int(np.sum(np.sign(x[i] - x[j]) * np.sign(y[i] - y[j])))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_batched_counts_equal_per_column_with_ties(seed):
    rng = np.random.default_rng(seed)
    n, p = 60, 40
    X = rng.normal(size=(n, p))
    X[:, ::3] = np.round(X[:, ::3])                  # some columns with ties
    X[:, 5] = 2.0                                    # a constant column
    y = np.round(rng.normal(size=n), 1)              # ties in y
    cols = rng.permutation(p)[:25]
    P, n0, tx, ty = _kendall_counts_cols(X, y, cols)
    assert n0 == n * (n - 1) // 2
    np.testing.assert_array_equal(P, [brute_P(X[:, c], y) for c in cols])
    ref_b = [stats.kendalltau(X[:, c], y).statistic for c in cols]
    with np.errstate(invalid="ignore", divide="ignore"):
        tau_b = P / np.sqrt((n0 - tx).astype(float) * (n0 - ty))
    np.testing.assert_allclose(tau_b, ref_b, rtol=1e-12, equal_nan=True)
    P_all, *_ = _kendall_counts_cols(X, y)
    np.testing.assert_array_equal(P_all[cols], P)


def reference_dp_kendall(X, y, k, eps, seed):
    """The unpruned algorithm: every score of every round, one noisy argmax each."""
    rng = np.random.default_rng(seed)
    n, p = X.shape
    tau_y = np.abs(scaled_kendall(X, y))
    available = np.ones(p, dtype=bool)
    redundancy = np.zeros(p)
    for rnd in range(k):
        score, sens = (tau_y, 2.0) if rnd == 0 else (tau_y - redundancy / rnd, 4.0)
        j = _noisy_argmax(score, available, 2.0 * sens * k / eps, rng)
        available[j] = False
        redundancy += np.abs(scaled_kendall(X, X[:, j]))
    return np.flatnonzero(~available)


@pytest.mark.parametrize("eps", [0.5, 20.0, 500.0])
def test_lazy_rounds_give_the_unpruned_output(eps):
    rng = np.random.default_rng(7)
    n, p = 80, 30
    X = rng.normal(size=(n, p))
    X[:, 1] = X[:, 0] + 0.2 * rng.normal(size=n)
    y = X[:, 0] + X[:, 4] - X[:, 9] + 0.5 * rng.normal(size=n)
    for seed in range(5):
        res = dp_kendall(X, y, 4, eps, random_state=seed)
        np.testing.assert_array_equal(res.support, reference_dp_kendall(X, y, 4, eps, seed))
        assert res.info["exact_scores_not_private"] >= 0
