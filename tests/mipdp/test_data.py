"""mipdp.data.ClippedDesign and private_bss on float32, memmap and sparse inputs."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import mipdp.data as data_mod
from mipdp import private_bss
from mipdp.data import ClippedDesign


def _data(seed=0, n=40, p=9, s=2, sparse_frac=None):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    if sparse_frac is not None:
        X[rng.random((n, p)) > sparse_frac] = 0.0
    beta = np.zeros(p)
    beta[:s] = 1.0
    y = X @ beta + 0.3 * rng.standard_normal(n)
    return X, y


@pytest.mark.parametrize("kind", ["cached", "chunked", "fortran", "float32", "csr", "csc",
                                  "memmap"])
def test_design_matches_clipped_copy(kind, tmp_path):
    X, y = _data(sparse_frac=0.3)
    b = 0.7
    X32 = X.astype(np.float32)
    ref_in = X32.astype(np.float64) if kind in ("float32", "memmap") else X
    Xc = np.clip(ref_in, -b, b)
    before = X.copy()
    opts = dict(dense_cache_bytes=0, chunk_bytes=8 * 40 * 2)     # 2 columns per chunk
    if kind == "cached":
        D = ClippedDesign(X, b)
    elif kind == "chunked":
        D = ClippedDesign(X, b, **opts)
        assert D.kind == "chunked" and D._row_major            # contiguous row blocks
    elif kind == "fortran":
        D = ClippedDesign(np.asfortranarray(X), b, **opts)
        assert D.kind == "chunked" and not D._row_major        # column blocks
    elif kind == "float32":
        D = ClippedDesign(X32, b, **opts)
    elif kind == "memmap":
        mm = np.memmap(tmp_path / "x.f32", dtype=np.float32, mode="w+", shape=X.shape)
        mm[:] = X32
        mm.flush()
        D = ClippedDesign(np.memmap(tmp_path / "x.f32", dtype=np.float32, mode="r",
                                    shape=X.shape), b, **opts)
    else:
        M = getattr(sp, f"{kind}_matrix")(X)
        D = ClippedDesign(M, b, **opts)
        assert D._sp.nnz == M.nnz                   # clipping keeps zeros zero
    v = np.random.default_rng(1).standard_normal(40)
    w = np.random.default_rng(2).standard_normal(9)
    np.testing.assert_allclose(D.rmatvec(v), Xc.T @ v, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(D.T @ v[:, None], Xc.T @ v[:, None], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(D @ w, Xc @ w, rtol=1e-12, atol=1e-12)
    w[[1, 3, 4, 6]] = 0.0
    np.testing.assert_allclose(D.matvec(w), Xc @ w, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(D.col_sq(), (Xc * Xc).sum(0), rtol=1e-12)
    np.testing.assert_allclose(D.gram(), Xc.T @ Xc, rtol=1e-12, atol=1e-12)
    S = np.array([[0, 3], [2, 8]])
    np.testing.assert_array_equal(D.columns(S), Xc[:, S])
    np.testing.assert_array_equal(D.rows_T(S), Xc.T[S])
    np.testing.assert_array_equal(D[:, [1, 5]], Xc[:, [1, 5]])
    raw = ref_in
    np.testing.assert_allclose(D.clipped_per_column(), (np.abs(raw) > b).mean(axis=0))
    np.testing.assert_array_equal(X, before)                   # X is not modified


def test_float64_inside_bounds_is_not_copied():
    X, _ = _data()
    D = ClippedDesign(X, 10.0)
    assert D._dense is X and D.nbytes_held == 0


SMALL = dict(bounds=(0.7, 2.0), random_state=7, n_draws=3)


def _inputs(X, tmp_path):
    mm = np.memmap(tmp_path / "x.f64", dtype=np.float64, mode="w+", shape=X.shape)
    mm[:] = X
    mm.flush()
    return {"float32": X.astype(np.float32).astype(np.float64),   # same values as float64
            "memmap": np.memmap(tmp_path / "x.f64", dtype=np.float64, mode="r", shape=X.shape),
            "csr": sp.csr_matrix(X), "csc": sp.csc_matrix(X), "coo": sp.coo_matrix(X)}


@pytest.mark.parametrize("chunked", [False, True])
@pytest.mark.parametrize("loss", ["least_squares", "huber", "hinge"])
def test_release_same_for_every_input_type(loss, chunked, tmp_path, monkeypatch):
    X, y = _data(3, n=50, p=8, sparse_frac=0.4)
    if loss == "hinge":
        y = np.where(y > 0, 1.0, -1.0)
    X32 = X.astype(np.float32)
    ref = private_bss(X32.astype(np.float64), y, 2, 1.0, loss=loss, **SMALL)
    if chunked:
        monkeypatch.setattr(data_mod, "DENSE_CACHE_BYTES", 0)
        monkeypatch.setattr(data_mod, "CHUNK_BYTES", 8 * 50 * 3)
    inputs = _inputs(X32.astype(np.float64), tmp_path)
    inputs["float32_array"] = X32
    for name, Xi in inputs.items():
        before = Xi.copy()
        res = private_bss(Xi, y, 2, 1.0, loss=loss, **SMALL)
        np.testing.assert_array_equal(res.supports, ref.supports, err_msg=name)
        after = Xi.toarray() if sp.issparse(Xi) else np.asarray(Xi)
        np.testing.assert_array_equal(after, before.toarray() if sp.issparse(before) else before)


@pytest.mark.parametrize("backend", ["highs", "gurobi", "pyomo"])
def test_chunked_sparse_exact_against_brute_force(backend, monkeypatch):
    """The MIP path on a chunked sparse design certifies the same optimum as brute force."""
    pytest.importorskip({"highs": "highspy", "gurobi": "gurobipy", "pyomo": "pyomo"}[backend])
    from mipdp.brute_force import brute_force_values, least_squares_value
    from mipdp.enumeration import SupportEnumerator
    from mipdp.losses import LeastSquares
    monkeypatch.setattr(data_mod, "DENSE_CACHE_BYTES", 0)
    X, y = _data(5, n=60, p=10, s=3, sparse_frac=0.5)
    b = 0.8
    D = ClippedDesign(sp.csr_matrix(X), b, chunk_bytes=8 * 60 * 3)
    yc = np.clip(y, -2, 2)
    loss = LeastSquares(1.0, 3.0)
    obj = loss.bind(D, yc)
    enum = SupportEnumerator(obj, 3, scale=0.05, backend=backend,
                             exhaustive_max=0, explicit_max=0)
    S, L = enum.optimum()
    Xc = np.clip(X, -b, b)
    sup, vals = brute_force_values(lambda T: least_squares_value(Xc, yc, T, 1.0, 3.0), 10, 3)
    assert L == pytest.approx(vals.min(), rel=1e-10)
    assert tuple(S) == tuple(sup[np.argmin(vals)])


def test_dask_array_on_a_local_cluster_gives_the_same_release():
    """X as a dask array (columns in chunks): the column products run on a LocalCluster."""
    pytest.importorskip("distributed")
    import dask.array as da
    from distributed import Client, LocalCluster
    X, y = _data(4, n=60, p=10, sparse_frac=None)
    ref = private_bss(X, y, 2, 1.0, **SMALL)
    ref_screen = private_bss(X, y, 2, 1.0, prescreen=("dp_sis", 6, 0.3), **SMALL)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=None) as cluster, Client(cluster):
        Xd = da.from_array(X, chunks=(60, 3))
        D = ClippedDesign(Xd, 0.7)
        Xc = np.clip(X, -0.7, 0.7)
        v = np.arange(60.0)
        np.testing.assert_allclose(D.T @ v, Xc.T @ v, rtol=1e-12)
        np.testing.assert_array_equal(D.columns(np.array([[3, 1], [3, 9]])),
                                      Xc[:, np.array([[3, 1], [3, 9]])])
        # X is persisted on the cluster, and fetched columns are kept on the client
        assert D._da_raw is not Xd and sorted(D._col_cache) == [1, 3, 9]
        np.testing.assert_array_equal(D.columns(np.array([9, 0, 3])), Xc[:, [9, 0, 3]])
        assert sorted(D._col_cache) == [0, 1, 3, 9]
        res = private_bss(Xd, y, 2, 1.0, **SMALL)
        res_screen = private_bss(Xd, y, 2, 1.0, prescreen=("dp_sis", 6, 0.3), **SMALL)
    np.testing.assert_array_equal(res.supports, ref.supports)
    np.testing.assert_array_equal(res_screen.supports, ref_screen.supports)


def test_sparse_duplicate_entries_are_summed_before_clipping():
    """A CSR/CSC matrix may store (i, j) several times (its value is the sum): clipping the
    stored entries one by one would let a row exceed the public bound (review finding)."""
    import scipy.sparse as sp

    from mipdp._validation import clip_design
    from mipdp.data import max_abs

    n, p = 30, 5
    rng = np.random.default_rng(0)
    y = rng.uniform(-0.5, 0.5, n)
    # column 0 stores row 0 forty times (0.4 each, value 16) and row 1 once; other columns
    # one entry each
    indices = np.r_[np.zeros(40, int), 1, 2, 3, 4, 5]
    data = np.r_[np.full(40, 0.4), 0.3, -0.2, 0.1, 0.25, -0.45]
    indptr = np.array([0, 41, 42, 43, 44, 45])
    for fmt in ("csc", "csr"):
        X = sp.csc_matrix((data.copy(), indices.copy(), indptr.copy()), shape=(n, p))
        if fmt == "csr":
            X = X.tocsr()            # keeps the duplicates (non-canonical CSR)
        assert X.nnz == 45 and not X.has_canonical_format
        assert X.toarray()[0, 0] == pytest.approx(16.0)
        data_before = X.data.copy()
        Xc, _ = clip_design(X, y, 0.5, 0.5)
        assert Xc.columns([0])[0, 0] == pytest.approx(0.5)
        assert np.max(np.abs(Xc.columns(np.arange(p)))) <= 0.5 + 1e-12
        assert max_abs(X) == pytest.approx(16.0)
        np.testing.assert_array_equal(X.data, data_before)     # X itself untouched


@pytest.mark.parametrize("kind", ["c_tiles", "fortran", "float32_memmap", "cached",
                                  "inside_bounds"])
def test_tiles_and_fused_products_match_clipped_copy(kind, tmp_path, monkeypatch):
    """Tiles narrower than p and shorter than n (C order), column blocks (F order), the
    fused ``Xcᵀu`` / ``Xc w`` pass and the products kept from the first pass."""
    monkeypatch.setattr(data_mod, "TILE_COLS", 4)
    X, y = _data(4, n=40, p=11)
    b = 10.0 if kind == "inside_bounds" else 0.6
    X32 = X.astype(np.float32)
    ref_in = X32.astype(np.float64) if kind == "float32_memmap" else X
    Xc = np.clip(ref_in, -b, b)
    opts = dict(dense_cache_bytes=0, chunk_bytes=8 * 4 * 3)   # tiles of 3 rows × 4 columns
    if kind == "c_tiles":
        D = ClippedDesign(X, b, vectors=(y,), **opts)
        assert D.kind == "chunked" and D._tile == (3, 4) and not D._row_major
    elif kind == "fortran":
        D = ClippedDesign(np.asfortranarray(X), b, vectors=(y,), **opts)
        assert D.kind == "chunked" and D._tile[0] == 40
    elif kind == "float32_memmap":
        path = tmp_path / "x.npy"
        np.save(path, X32)
        D = ClippedDesign(np.load(path, mmap_mode="r"), b, vectors=(y,), **opts)
        assert D.kind == "chunked"
    elif kind == "cached":
        D = ClippedDesign(X, b, vectors=(y,))
        assert D._dense is not X
    else:
        D = ClippedDesign(X, b, vectors=(y,))
        assert D._dense is X
    np.testing.assert_allclose(D.rmatvec(y), Xc.T @ y, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(D.col_sq(), (Xc * Xc).sum(0), rtol=1e-12)
    np.testing.assert_allclose(D.clipped_per_column(), (np.abs(ref_in) > b).mean(axis=0))
    u = np.random.default_rng(3).standard_normal(40)
    shift = np.random.default_rng(4).standard_normal(11)
    w, z = D.rmatvec_matvec(u, shift)
    np.testing.assert_allclose(w, Xc.T @ u + shift, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(z, Xc @ (Xc.T @ u + shift), rtol=1e-12, atol=1e-12)
    w2, z2 = D.rmatvec_matvec(u, matvec=False)
    np.testing.assert_allclose(w2, Xc.T @ u, rtol=1e-12, atol=1e-12)
    assert z2 is None
    V = np.random.default_rng(5).standard_normal((40, 3))
    np.testing.assert_allclose(D.rmatvec(V), Xc.T @ V, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(D.matvec(shift), Xc @ shift, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(D.gram(), Xc.T @ Xc, rtol=1e-12, atol=1e-12)


def test_rmatvec_keeps_products_without_sharing_them():
    X, y = _data(5)
    D = ClippedDesign(X, 0.5, vectors=(y,))
    first = D.rmatvec(y)
    first[:] = 0.0                                   # the caller's copy
    np.testing.assert_allclose(D.rmatvec(y), np.clip(X, -0.5, 0.5).T @ y, rtol=1e-12)
    v = y + 1.0
    a = D.rmatvec(v)
    a[0] = np.nan
    assert np.isfinite(D.rmatvec(v)).all()
    assert not np.array_equal(D.rmatvec(v + 1e-9), D.rmatvec(v))   # values, not identity


@pytest.mark.parametrize("order", ["C", "F"])
def test_finite_check_of_blocks(order):
    from mipdp._validation import _all_finite
    X = np.asarray(np.ones((30, 20)), order=order)
    assert _all_finite(X)
    big = np.full((30, 20), 1e308, order=order)        # finite, but its sum overflows
    assert _all_finite(big) and _all_finite(np.full((30, 20), 3e38, np.float32, order=order))
    for bad in (np.nan, np.inf, -np.inf):
        Y = X.copy(order=order)
        Y[17, 13] = bad
        assert not _all_finite(Y)
        assert not _all_finite(Y.astype(np.float32))


@pytest.mark.parametrize("loss", ["least_squares", "hinge"])
def test_release_same_on_tiles_memmap_and_float32_mip_path(loss, tmp_path, monkeypatch):
    """The MIP path (cuts from kept Gram columns, dominance, fixing) releases the same
    supports on a float64 array (clipped copy), a float32 array, a Fortran-ordered array
    and a float32 ``.npy`` memmap read in tiles; and, with tiles narrower than p (the
    layout of p = 10⁶), on the memmap and on an in-memory array.

    Identical draws need identical products, bit for bit: the master's bounds after a
    fixed number of solves depend on the last bits of the cuts.  Paths that sum in another
    order (a BLAS pass over the copy against narrow tiles over many row blocks) release
    from the same law but may draw other supports."""
    rng = np.random.default_rng(11)
    n, p = 100, 300          # classes above the envelope's full-evaluation size: master solves
    X = rng.standard_normal((n, p)).astype(np.float32).astype(np.float64)
    y = X[:, [2, 5, 11]] @ np.array([1.0, -1.0, 0.8]) + 0.4 * rng.standard_normal(n)
    if loss == "hinge":
        y = np.where(y > 0, 1.0, -1.0)
    kw = dict(loss=loss, bounds=(1.0, 2.0), random_state=3, n_draws=4,
              enumeration_options={"exhaustive_max": 0, "explicit_max": 0})
    ref = private_bss(X, y, 3, 1.0, **kw)
    if loss == "least_squares":
        assert sum(ph.get("solves", 0) for ph in ref.stats["phases"].values()) > 0
    path = tmp_path / "x.npy"
    np.save(path, X.astype(np.float32))
    got = {"float32": private_bss(X.astype(np.float32), y, 3, 1.0, **kw),
           "fortran": private_bss(np.asfortranarray(X), y, 3, 1.0, **kw)}
    monkeypatch.setattr(data_mod, "MEMMAP_CACHE_BYTES", 0)
    got["memmap"] = private_bss(np.load(path, mmap_mode="r"), y, 3, 1.0, **kw)
    for name, res in got.items():
        np.testing.assert_array_equal(res.supports, ref.supports, err_msg=name)
    monkeypatch.setattr(data_mod, "DENSE_CACHE_BYTES", 0)
    monkeypatch.setattr(data_mod, "CHUNK_BYTES", 8 * 16 * 64)
    monkeypatch.setattr(data_mod, "TILE_COLS", 64)         # tiles of 16 rows × 64 columns
    narrow = private_bss(np.load(path, mmap_mode="r"), y, 3, 1.0, **kw)
    res = private_bss(X, y, 3, 1.0, **kw)
    np.testing.assert_array_equal(res.supports, narrow.supports)


@pytest.mark.parametrize("layout", ["c_copy", "inside_bounds", "fortran", "chunked"])
def test_gram_matvec(layout, monkeypatch):
    monkeypatch.setattr(data_mod, "FUSED_BLOCK_BYTES", 16 * 11 * 3)   # 3-row blocks
    X, _ = _data(6, n=40, p=11)
    b = 10.0 if layout == "inside_bounds" else 0.6
    Xc = np.clip(X, -b, b)
    if layout == "fortran":
        D = ClippedDesign(np.asfortranarray(X), b)
    elif layout == "chunked":
        D = ClippedDesign(X, b, dense_cache_bytes=0)
    else:
        D = ClippedDesign(X, b)
    assert D.row_major_pass == (layout in ("c_copy", "inside_bounds"))
    v, shift = np.arange(11.0) - 5, np.ones(11)
    np.testing.assert_allclose(D.gram_matvec(v, shift), Xc.T @ (Xc @ v) + shift,
                               rtol=1e-12, atol=1e-12)


def test_large_clipped_copy_in_small_pages_is_the_same(monkeypatch):
    """Above LARGE_ALLOC_BYTES the clipped copy lives in an anonymous mmap (small pages):
    the same values, writable, in the input's memory order, freed with the array."""
    import mipdp.data as data
    rng = np.random.default_rng(1)
    for order in ("C", "F"):
        X = np.asarray(rng.normal(size=(40, 30)), order=order)
        ref = data.ClippedDesign(X, 0.7)
        monkeypatch.setattr(data, "LARGE_ALLOC_BYTES", 1)
        big = data.ClippedDesign(X, 0.7)
        monkeypatch.undo()
        assert big._dense.base is not None and big._dense.flags.writeable
        assert big._dense.flags.c_contiguous == (order == "C")
        np.testing.assert_array_equal(big._dense, ref._dense)
        np.testing.assert_array_equal(big._dense, np.clip(X, -0.7, 0.7))
        np.testing.assert_array_equal(big.col_sq(), ref.col_sq())
