"""The explicit region search's building blocks against itertools, and its bookkeeping."""

import itertools
import tracemalloc

import numpy as np
import pytest

import mipdp.enumeration.enumerator as E
from mipdp.enumeration.explicit import combinations, subset_sums, unrank_combinations
from mipdp.losses import LeastSquares


@pytest.mark.parametrize("n", range(1, 10))
def test_combinations_subset_sums_and_unranking_match_itertools(n):
    g = np.random.default_rng(n).normal(size=n)
    for q in range(1, n + 1):
        ref = np.array(list(itertools.combinations(range(n), q)), dtype=np.int64)
        np.testing.assert_array_equal(combinations(n, q), ref)
        np.testing.assert_allclose(subset_sums(g, q), g[ref].sum(axis=1))
        np.testing.assert_array_equal(unrank_combinations(n, q, np.arange(ref.shape[0])), ref)


def test_large_q_builds_no_level_larger_than_the_answer():
    """q > n/2 (the kept centre features of class 2 at large s): memory stays at C(n, q)."""
    tracemalloc.start()
    c = combinations(26, 24)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert c.shape == (325, 24) and peak < 1e6  # the old level-by-level build took ~300 MB
    np.testing.assert_array_equal(unrank_combinations(80, 78, np.arange(3160)),
                                  combinations(80, 78))
    g = np.arange(30, dtype=float)
    np.testing.assert_allclose(subset_sums(g, 28), combinations(30, 28).sum(axis=1))


def test_explicit_optimum_records_its_centre(monkeypatch):
    """A better support found by the explicit optimum search is recorded before the centre
    moves to it, so top-R contains it (found by an independent review)."""
    import warnings
    n, p, s = 60, 8, 2
    rng = np.random.default_rng(4)
    Z = rng.normal(size=(n, p))
    Z[:, 1::2] = 0.9 * Z[:, ::2] + 0.4 * Z[:, 1::2]
    X = np.clip(0.3 * Z, -.5, .5)
    y = np.clip(0.5 * (X[:, 0] - X[:, 1]) + 0.1 * rng.normal(size=n), -.5, .5)
    loss = LeastSquares(ridge=0.01, radius=1.1)
    obj = loss.bind(X, y)
    all_s = np.array(list(itertools.combinations(range(p), s)))
    vals = obj.values(all_s)
    W = np.array([3, 5])
    Lw = float(obj.values(W[None])[0])
    assert obj.one_swap_values(W).min() > Lw > vals.min()  # a one-swap local optimum
    monkeypatch.setattr(E, "local_search", lambda o, S0: (W.copy(), Lw, o.one_swap_values(W)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        enum = E.SupportEnumerator(obj, s, scale=loss.sensitivity(n, s, .5, .5),
                                   exhaustive_max=0, tol=1.001 * (Lw - vals.min()) / Lw)
        top = enum.top_supports(3)
    order = np.lexsort((np.arange(vals.size), vals))[:3]
    np.testing.assert_allclose(top.values, vals[order])
    enum.optimum()  # a second call finds its centre in the record
