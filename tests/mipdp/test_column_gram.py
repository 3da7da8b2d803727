"""mipdp.column_gram.ColumnGram and the products built on it (cuts, one-swaps, IHT)."""

from __future__ import annotations

import numpy as np
import pytest

import mipdp.data as data_mod
from mipdp.column_gram import ColumnGram
from mipdp.data import ClippedDesign
from mipdp.enumeration.warm_start import _top_s, iht_support
from mipdp.losses import LeastSquares


def _data(seed=0, n=60, p=30):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    y = X[:, [1, 3, 5]] @ np.array([1.0, -0.7, 0.5]) + 0.3 * rng.standard_normal(n)
    return X, y


def test_columns_equal_gram_and_are_kept():
    X, _ = _data()
    Xc = np.clip(X, -0.8, 0.8)
    D = ClippedDesign(X, 0.8)
    cg = ColumnGram(D, max_bytes=8 * 30 * 4)          # four columns kept
    np.testing.assert_allclose(cg.get([3, 1]), Xc.T @ Xc[:, [3, 1]], rtol=1e-12, atol=1e-12)
    assert cg.passes == 1 and len(cg) == 2
    cg.get([1, 3])
    assert cg.passes == 1                             # both kept: no pass
    cg.get([5, 7, 9])                                 # one pass for the three new ones
    assert cg.passes == 2 and len(cg) == 4            # the least recent (1) dropped
    cg.get([3])
    assert cg.passes == 2
    cg.get([1])
    assert cg.passes == 3
    beta = np.array([0.5, -2.0, 1.0])
    np.testing.assert_allclose(cg.product([2, 9, 4], beta), Xc.T @ (Xc[:, [2, 9, 4]] @ beta),
                               rtol=1e-12, atol=1e-12)
    assert cg.product([], []).shape == (30,) and not np.any(cg.product([], []))
    got = cg.get([6, 6])                              # repeated feature
    np.testing.assert_array_equal(got[:, 0], got[:, 1])


@pytest.mark.parametrize("kind", ["dense", "chunked"])
def test_cut_and_one_swaps_match_direct_products(kind):
    """The cut's slope from kept Gram columns equals the one from Xᵀρ (rounding aside),
    and the one-swap values equal the closed form of each neighbour."""
    X, y = _data(1)
    b = 0.9
    opts = {} if kind == "dense" else dict(dense_cache_bytes=0, chunk_bytes=8 * 7 * 5)
    D = ClippedDesign(X, b, vectors=(y,), **opts)
    obj = LeastSquares(2.0, 1.5).bind(D, y)
    obj.shifted_cuts = False    # the plain cut's slope (shifted ones: test_gram_shift.py)
    Xc = np.clip(X, -b, b)
    S = np.array([1, 3, 8])
    v, lower, g = obj.value_and_cut(S)
    XS = Xc[:, S]
    A = XS.T @ XS + 2.0 * np.eye(3)
    from mipdp.losses.least_squares import ridge_ball_values
    _, beta, nu = ridge_ball_values(A[None], (XS.T @ y)[None], y @ y, 60, 1.5, return_coef=True)
    corr = Xc.T @ (y - XS @ beta[0])
    np.testing.assert_allclose(g, -corr ** 2 / (2 * 60 * (2.0 + nu[0])), rtol=1e-9, atol=1e-13)
    sw = obj.one_swap_values(S)
    for a in range(3):
        for j in (0, 4, 29):
            T = np.sort(np.r_[np.delete(S, a), j])
            assert sw[a, j] == pytest.approx(float(obj.values(T[None])[0]), rel=1e-10)


def _iht_reference(Xc, y, s, ridge, n_iter=30, power_iter=10):
    """IHT as written before the Gram columns (two products with X per step)."""
    n, p = Xc.shape
    v = np.ones(p) / np.sqrt(p)
    lip = 1.0
    for _ in range(power_iter):
        w = Xc.T @ (Xc @ v) + ridge * v
        lip = float(np.linalg.norm(w))
        v = w / lip
    lip = max(lip, 1e-12) / n
    beta = np.zeros(p)
    support = _top_s(Xc.T @ y, s)
    for it in range(n_iter):
        grad = (Xc.T @ (Xc @ beta - y) + ridge * beta) / n
        full = beta - grad / lip
        new = _top_s(full, s)
        beta = np.zeros(p)
        beta[new] = full[new]
        if np.array_equal(new, support) and it >= 2:
            break
        support = new
    return support


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kind", ["dense", "chunked", "fortran"])
def test_iht_support_unchanged(seed, kind, monkeypatch):
    X, y = _data(seed, n=50, p=700)
    b = 1.0
    Xc = np.clip(X, -b, b)
    if kind == "fortran":
        X = np.asfortranarray(X)
    opts = {} if kind == "dense" else dict(dense_cache_bytes=0, chunk_bytes=8 * 50 * 40)
    monkeypatch.setattr(data_mod, "TILE_COLS", 64)     # tiles narrower than p
    D = ClippedDesign(X, b, **opts)
    got = iht_support(D, y, 3, 1.0)
    np.testing.assert_array_equal(got, _iht_reference(Xc, y, 3, 1.0))


def test_one_swap_batches_change_nothing(monkeypatch):
    from mipdp.losses.least_squares import LeastSquaresObjective
    X, y = _data(2, n=50, p=400)
    D = ClippedDesign(X, 0.7, vectors=(np.clip(y, -1, 1),))
    obj = LeastSquares(2.0, 0.3).bind(D, np.clip(y, -1, 1))
    S = np.array([1, 3, 5, 90])
    whole = obj.one_swap_values(S)
    monkeypatch.setattr(LeastSquaresObjective, "_SWAP_BATCH", 16 * 37)   # 37 per batch
    np.testing.assert_array_equal(obj.one_swap_values(S), whole)


def test_design_with_gram_columns_is_freed_without_the_garbage_collector():
    """No cycle design <-> ColumnGram: a released design's clipped copy is freed at once."""
    import gc
    import weakref

    from mipdp.data import ClippedDesign
    X = np.random.default_rng(0).normal(size=(30, 12))
    D = ClippedDesign(X, 0.5)
    D.column_gram.get([1, 3])
    ref = weakref.ref(D)
    gc.disable()
    try:
        del D
        assert ref() is None
    finally:
        gc.enable()


def test_design_with_gram_columns_pickles_and_copies():
    import copy
    import pickle

    from mipdp.data import ClippedDesign
    X = np.random.default_rng(1).normal(size=(20, 8))
    D = ClippedDesign(X, 0.5)
    ref = D.column_gram.get([0, 2])
    for back in (pickle.loads(pickle.dumps(D)), copy.deepcopy(D)):
        assert back.column_gram._d is back
        np.testing.assert_array_equal(back.column_gram.get([0, 2]), ref)
