"""mipdp.range_counts: grid counts of the columns of X without an (n, p) array."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from mipdp.mechanisms.quantile import column_grid_counts, grid_counts
from mipdp.private_ranges import default_grid
from mipdp.range_counts import lazy_column_grid_counts, lazy_pooled_grid_counts

GRID = np.array([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0])


def _X(seed=0, n=37, p=11):
    rng = np.random.default_rng(seed)
    X = np.round(2 * rng.standard_normal((n, p)), 1)   # many values on the grid (ties)
    X[rng.random((n, p)) < 0.6] = 0.0
    X[:, 3] = 0.0                                       # an all-zero column
    X[:, 4] = 7.0                                       # beyond the grid
    return X


def _inputs(X, tmp_path):
    path = tmp_path / "X.npy"
    np.save(path, X.astype(np.float32))
    coo = sp.coo_matrix(X)
    csr = sp.csr_matrix(X)
    csr_explicit = csr.copy()
    csr_explicit.data[::3] = 0.0            # stored zeros count as zeros
    X_exp = csr_explicit.toarray()
    return {
        "float64": (X, X), "float32": (X.astype(np.float32), X.astype(np.float32)),
        "fortran": (np.asfortranarray(X), X), "memmap": (np.load(path, mmap_mode="r"),
                                                      X.astype(np.float32)),
        "csr": (csr, X), "csc": (sp.csc_matrix(X), X), "coo_as_csc": (coo.tocsc(), X),
        "explicit_zeros": (csr_explicit, X_exp),
    }


@pytest.mark.parametrize("grid", [GRID, default_grid(), np.array([0.5, 1.0, 2.0])])
def test_counts_equal_the_dense_path(grid, tmp_path, monkeypatch):
    X = _X()
    import mipdp.range_counts as rc
    monkeypatch.setattr(rc, "TILE_BYTES", 8 * 37 * 2)        # several tiles per input
    monkeypatch.setattr(rc, "TILE_COLS", 4)
    monkeypatch.setattr(rc, "COUNT_ROWS", 8)               # C-ordered: 3 row blocks
    assert len({(t[0], t[2]) for t in rc._tiles(X)}) == 9     # 3 rows × 3 column blocks
    for name, (Xin, dense) in _inputs(X, tmp_path).items():
        ref_cols = column_grid_counts(np.asarray(dense, float), grid)
        ref_pool = grid_counts(np.asarray(dense, float), grid)
        got_cols = lazy_column_grid_counts(Xin, grid)
        got_pool = lazy_pooled_grid_counts(Xin, grid)
        assert got_cols.dtype == ref_cols.dtype and got_pool.dtype == ref_pool.dtype
        np.testing.assert_array_equal(got_cols, ref_cols, err_msg=name)
        np.testing.assert_array_equal(got_pool, ref_pool, err_msg=name)


def test_counts_of_a_dask_array():
    da = pytest.importorskip("dask.array")
    X = _X(1)
    Xd = da.from_array(X, chunks=(10, 4))
    np.testing.assert_array_equal(lazy_column_grid_counts(Xd, GRID),
                                  column_grid_counts(X, GRID))
    np.testing.assert_array_equal(lazy_pooled_grid_counts(Xd, GRID), grid_counts(X, GRID))


def test_sparse_counts_read_only_the_stored_values(monkeypatch):
    """A sparse input is never densified to be counted."""
    X = sp.random(500, 2000, density=0.002, format="csr", random_state=0)

    def fail(*a, **k):
        raise AssertionError("densified")

    monkeypatch.setattr(sp.csr_matrix, "toarray", fail)
    monkeypatch.setattr(sp.csc_matrix, "toarray", fail)
    counts = lazy_column_grid_counts(X, GRID)
    assert counts.shape == (2000, GRID.size)
    # at 0 every column counts its zeros and its values <= 0 (sp.random draws in [0, 1))
    assert np.all(counts[:, 3] == 500 - np.diff(X.tocsc().indptr))


def test_duplicate_sparse_entries_are_summed_before_counting():
    """A CSR matrix storing (i, j) twice has the sum as its value: counted once, summed."""
    from mipdp._validation import check_X_y
    n, p = 6, 3
    X = sp.csr_matrix((np.array([1.0, 2.5, -0.5]), np.array([0, 0, 2]),
                       np.array([0, 2, 3, 3, 3, 3, 3])), shape=(n, p))
    assert not X.has_canonical_format
    dense = X.toarray()                          # [0, 0] = 3.5
    Xv, _ = check_X_y(X, np.zeros(n), lazy=True)
    np.testing.assert_array_equal(lazy_column_grid_counts(Xv, GRID),
                                  column_grid_counts(dense, GRID))
    np.testing.assert_array_equal(lazy_column_grid_counts(X, GRID),
                                  column_grid_counts(dense, GRID))


def test_ranges_law_is_the_same_on_sparse_input():
    """ranges_log_probabilities (the stage's exact law) counts lazily: equal on CSR and dense."""
    from mipdp.private_ranges import PrivateBounds, ranges_log_probabilities
    X = _X(4)
    y = np.linspace(-1.0, 2.0, X.shape[0])
    for shared in (True, False):
        spec = PrivateBounds(grid=tuple(GRID), shared=shared)
        a = ranges_log_probabilities(X, y, spec, 0.7)
        b = ranges_log_probabilities(sp.csr_matrix(X), y, spec, 0.7)
        for u, v in zip(a, b, strict=True):
            np.testing.assert_array_equal(u, v)
