"""mipdp.mapped: the lazy mapped design of private ranges equals the dense mapped matrix."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from mipdp.data import ClippedDesign
from mipdp.mapped import ColumnMap, MappedMatrix

N, P = 50, 13


def _data(seed=0):
    rng = np.random.default_rng(seed)
    X = 2.0 * rng.standard_normal((N, P)) + 0.5
    X[rng.random((N, P)) < 0.7] = 0.0
    lo = rng.uniform(-2.0, 0.5, P)
    hi = lo + rng.uniform(0.3, 3.0, P)
    lo[0], hi[0] = 0.2, 1.5          # 0 below the range: clip(0) = lo, mapped to −½
    lo[1], hi[1] = -3.0, -0.1        # 0 above the range: mapped to ½
    return X, ColumnMap(lo, hi)


def _dense_mapped(X, cmap):
    """Today's dense transform (PrivateRanges.transform)."""
    c = 0.5 * (cmap.lo + cmap.hi)
    return np.clip((np.asarray(X, float) - c[None, :]) / (cmap.hi - cmap.lo)[None, :],
                   -0.5, 0.5)


def _input(kind, X, tmp_path):
    if kind == "float64":
        return X
    if kind == "float32":
        return X.astype(np.float32)
    if kind == "fortran":
        return np.asfortranarray(X)
    if kind in ("memmap", "memmap_chunked"):
        np.save(tmp_path / "X.npy", X.astype(np.float32))
        return np.load(tmp_path / "X.npy", mmap_mode="r")
    if kind == "chunked":
        return X
    if kind == "csr":
        return sp.csr_matrix(X)
    if kind == "csc":
        return sp.csc_matrix(X)
    raise AssertionError(kind)


KINDS = ["float64", "float32", "fortran", "memmap", "memmap_chunked", "chunked", "csr", "csc"]


def _close(a, b, rtol=1e-12):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape
    scale = max(1.0, float(np.max(np.abs(b), initial=0.0)))
    assert float(np.max(np.abs(a - b), initial=0.0)) <= rtol * scale


@pytest.mark.parametrize("kind", KINDS)
def test_products_equal_the_dense_mapped_matrix(kind, tmp_path):
    X, cmap = _data()
    Xin = _input(kind, X, tmp_path)
    ref_in = X.astype(np.float32) if kind in ("float32", "memmap", "memmap_chunked") else X
    M = _dense_mapped(ref_in, cmap)
    rng = np.random.default_rng(1)
    v, V = rng.standard_normal(N), rng.standard_normal((N, 3))
    opts = dict(dense_cache_bytes=0, chunk_bytes=8 * N * 3) if "chunked" in kind else {}
    D = ClippedDesign(MappedMatrix(Xin, cmap), 0.5, vectors=(v,), **opts)
    if "chunked" in kind:
        assert D.kind == "chunked"
    if kind in ("csr", "csc"):
        assert D.kind == "sparse" and D._shift is not None
    beta = rng.standard_normal(P)
    beta_sparse = np.zeros(P)
    beta_sparse[[2, 7]] = [1.5, -0.5]
    B = rng.standard_normal((P, 2))
    _close(D.rmatvec(v), M.T @ v)
    _close(D.T @ V, M.T @ V)
    _close(D.matvec(beta), M @ beta)
    _close(D @ beta_sparse, M @ beta_sparse)
    _close(D.matvec(B), M @ B)
    _close(D.col_sq(), np.einsum("ij,ij->j", M, M))
    _close(D.gram(), M.T @ M)
    supports = np.array([[0, 1, 5], [2, 3, 4], [1, 7, 12]])
    G = D.gram_blocks(supports)
    for k, S in enumerate(supports):
        _close(G[k], M[:, S].T @ M[:, S])
    idx = np.array([[0, 4], [1, 12]])
    _close(D.columns(idx), M[:, idx])
    _close(D[:, 3:6], M[:, 3:6])
    _close(D.rows_T([1, 0, 9]), M[:, [1, 0, 9]].T)
    w, z = D.rmatvec_matvec(v, shift=beta)
    _close(w, M.T @ v + beta)
    _close(z, M @ (M.T @ v + beta))
    _close(D.gram_matvec(beta), M.T @ (M @ beta))
    for lo, hi, Bk in D.blocks():
        _close(Bk, M[:, lo:hi])
    sub = D.subset([1, 5, 8])
    _close(sub.columns(np.arange(3)), M[:, [1, 5, 8]])
    _close(sub.rmatvec(v), M[:, [1, 5, 8]].T @ v)
    # the fraction of each column the map clips (issue 28: it was always reported 0)
    raw = np.asarray(ref_in, dtype=np.float64)
    np.testing.assert_allclose(D.clipped_per_column(),
                               np.mean((raw < cmap.lo) | (raw > cmap.hi), axis=0))
    if kind not in ("csr", "csc"):       # dense entries are computed as the dense path does
        np.testing.assert_array_equal(D.columns(np.arange(P)), M)


@pytest.mark.parametrize("kind", KINDS)
def test_mapped_matrix_columns_rows_and_subsets(kind, tmp_path):
    X, cmap = _data(2)
    Xin = _input(kind, X, tmp_path)
    ref_in = X.astype(np.float32) if kind in ("float32", "memmap", "memmap_chunked") else X
    M = _dense_mapped(ref_in, cmap)
    Mm = MappedMatrix(Xin, cmap)
    assert Mm.shape == (N, P) and Mm.dtype == np.float64
    np.testing.assert_array_equal(Mm[:, [3, 0]], M[:, [3, 0]])
    np.testing.assert_array_equal(Mm[:, 4], M[:, 4])
    np.testing.assert_array_equal(Mm[np.array([5, 1])], M[[5, 1]])
    np.testing.assert_array_equal(np.asarray(Mm), M)
    sub = Mm.take_columns(np.array([2, 9]))
    if kind in ("csr", "csc"):
        assert sp.issparse(sub.raw)
    np.testing.assert_array_equal(np.asarray(sub), M[:, [2, 9]])
    before = X.copy()
    ClippedDesign(Mm, 0.5).rmatvec(np.ones(N))
    np.testing.assert_array_equal(X, before)          # X is never modified


def test_dask_mapped_design():
    da = pytest.importorskip("dask.array")
    X, cmap = _data(3)
    M = _dense_mapped(X, cmap)
    D = ClippedDesign(MappedMatrix(da.from_array(X, chunks=(N, 4)), cmap), 0.5)
    v = np.arange(N, dtype=float)
    _close(D.rmatvec(v), M.T @ v)
    _close(D.columns(np.array([0, 1])), M[:, [0, 1]])
    _close(D.col_sq(), np.einsum("ij,ij->j", M, M))


def test_sparse_mapped_design_is_never_dense(monkeypatch):
    """The mapped design of a sparse input holds O(nnz) values: S on X's pattern plus z."""
    n, p = 400, 3000
    X = sp.random(n, p, density=0.003, format="csc", random_state=0)
    rng = np.random.default_rng(0)
    lo = rng.uniform(-1.0, 0.5, p)
    cmap = ColumnMap(lo, lo + 1.0)
    calls = []
    orig = sp.csc_matrix.toarray

    def guarded(self, *a, **k):
        calls.append(self.shape)
        assert self.shape[1] <= 16, f"densified {self.shape}"
        return orig(self, *a, **k)

    monkeypatch.setattr(sp.csc_matrix, "toarray", guarded)
    D = ClippedDesign(MappedMatrix(X, cmap), 0.5)
    assert D.kind == "sparse"
    assert D.nbytes_held <= 2 * X.data.nbytes + 8     # the mapped values only
    v = rng.standard_normal(n)
    D.rmatvec(v), D.col_sq(), D.matvec(rng.standard_normal(p))
    D.gram_blocks(np.array([[0, 1], [5, 9]])), D.columns(np.array([3, 4]))
