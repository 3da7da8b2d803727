"""A clipped view of the design matrix that never copies ``X`` whole.

:class:`ClippedDesign` wraps ``X`` (a float32 or float64 numpy array, a
:class:`numpy.memmap`, or a scipy sparse CSR/CSC matrix) and a clipping bound ``b_x``.
It behaves like the clipped float64 matrix ``Xc = clip(X, -b_x, b_x)`` for the products
the support objectives need, computed column chunk by column chunk:

* ``Xcᵀ v`` (:meth:`~ClippedDesign.rmatvec`, also ``design.T @ v``), ``Xc β``
  (:meth:`~ClippedDesign.matvec`, also ``design @ β``),
* columns of supports as dense float64 (:meth:`~ClippedDesign.columns`,
  :meth:`~ClippedDesign.rows_T`, ``design[:, idx]``),
* squared column norms (:meth:`~ClippedDesign.col_sq`) and the Gram matrix
  ``XcᵀXc`` when ``p`` is small (:meth:`~ClippedDesign.gram`).

Memory (docs/design.md, "Memory"): besides ``X`` itself, a dense input keeps at most one
chunk of ``chunk_bytes`` (float64, clipped) at a time: row blocks for a C-ordered input
(contiguous reads of a ``.npy`` memmap), column blocks otherwise; a clipped float64 copy of
the whole matrix is kept only when it is at most ``dense_cache_bytes`` (then every product
is one BLAS call, as before): 6 GiB for an in-memory array, 256 MiB for a memmap.  A float64 array already inside the
bounds is used as it is (no copy).  A sparse input is held as one CSC matrix whose
values are clipped (``clip(0) = 0``: the sparsity is kept), sharing the index arrays of
``X`` when it is CSC already.  ``X`` is never modified.

Clipping is coordinate-wise, so every value this view returns equals the corresponding
entry or product of ``np.clip(np.asarray(X, float64), -b_x, b_x)`` up to floating-point
summation order.
"""

from __future__ import annotations

import logging

import numpy as np

logger = logging.getLogger(__name__)

__all__ = ["ClippedDesign", "as_design", "DENSE_CACHE_BYTES", "MEMMAP_CACHE_BYTES",
           "CHUNK_BYTES", "is_sparse",
           "is_dask"]

#: a clipped float64 copy of an in-memory ``X`` is kept when it takes at most this many
#: bytes: a chunked pass (clip a chunk, then multiply) costs several times a BLAS pass over
#: a copy, so problems that fit twice in memory keep the copy for speed
DENSE_CACHE_BYTES = 6 * 2 ** 30
#: the same for a :class:`numpy.memmap` (kept out of memory on purpose: only small ones)
MEMMAP_CACHE_BYTES = 256 * 2 ** 20
#: bytes of one float64 column chunk of the lazy path
CHUNK_BYTES = 8 * 2 ** 20
#: columns of a dask design kept on the client once fetched (float64 bytes)
DASK_COLUMN_CACHE_BYTES = 256 * 2 ** 20


def is_sparse(X) -> bool:
    """Whether ``X`` is a scipy sparse matrix or array (without importing scipy)."""
    mod = type(X).__module__
    return mod.startswith("scipy.sparse") and hasattr(X, "tocsc")


def is_dask(X) -> bool:
    """Whether ``X`` is a ``dask.array.Array`` (without importing dask)."""
    return type(X).__module__.startswith("dask.array") and hasattr(X, "compute")


class _Transposed:
    """``design.T``: supports ``design.T @ v`` (= :meth:`ClippedDesign.rmatvec`)."""

    def __init__(self, design: "ClippedDesign") -> None:
        self._d = design
        self.shape = design.shape[::-1]

    def __matmul__(self, v):
        return self._d.rmatvec(v)


class ClippedDesign:
    """The clipped design ``clip(X, -bound, bound)`` as a lazily computed float64 matrix.

    Parameters
    ----------
    X : ndarray, numpy.memmap or scipy sparse matrix, shape (n, p)
        Numeric (float32, float64, integer or bool), finite; validated by the caller
        (:func:`mipdp._validation.check_X_y` with ``lazy=True``).  Never modified.
    bound : float or None
        ``b_x``; ``None``: no clipping.
    dense_cache_bytes : int, optional
        Keep a clipped float64 copy of ``X`` when it takes at most this many bytes
        (default :data:`DENSE_CACHE_BYTES`, 6 GiB, for an in-memory array;
        :data:`MEMMAP_CACHE_BYTES`, 256 MiB, for a memmap); ``0`` forces the chunked path.
    chunk_bytes : int, optional
        Size of one float64 column chunk of the chunked path (default :data:`CHUNK_BYTES`).
    """

    def __init__(self, X, bound: float | None = None, *, dense_cache_bytes: int | None = None,
                 chunk_bytes: int | None = None) -> None:
        self.raw = X
        self.bound = None if bound is None else float(bound)
        self.shape = tuple(int(d) for d in X.shape)
        self.n, self.p = self.shape
        self.ndim = 2
        self.dtype = np.dtype(np.float64)
        if dense_cache_bytes is None:
            cache = MEMMAP_CACHE_BYTES if isinstance(X, np.memmap) else DENSE_CACHE_BYTES
            cache = min(cache, DENSE_CACHE_BYTES)
        else:
            cache = int(dense_cache_bytes)
        chunk = CHUNK_BYTES if chunk_bytes is None else int(chunk_bytes)
        self.chunk_cols = max(1, chunk // (8 * max(self.n, 1)))
        self._dense = None     # clipped float64 (n, p) array, when held
        self._dense_T = None   # its transpose, C-contiguous (small problems, for rows_T)
        self._cache_bytes = cache
        self._sp = None        # clipped float64 CSC matrix, for sparse input
        self._col_sq = None
        self._gram = None
        self._clean = {}       # chunk key -> whether the raw float64 chunk needs no clipping
        self._row_major = False
        self.chunk_rows = 0
        self._da = None        # clipped float64 dask array (lazy graph), for dask input
        self._clipped_frac = None   # clipped_per_column(), once computed
        if is_sparse(X):
            self.kind = "sparse"
            self._sp = self._clipped_csc(X)
        elif is_dask(X):
            # products run where the dask array lives (its scheduler / cluster); only
            # length-n or length-p vectors and the supports' columns come back
            import dask.array as da
            self.kind = "dask"
            # On a distributed cluster X is persisted in the workers' memory (as given: no
            # float64 or clipped copy): every product would otherwise re-read X from its
            # source (a file, a generating graph), 10x slower per call in
            # experiments/bench_dask.py
            client = _distributed_client()
            self._da_raw = client.persist(X) if client is not None else X
            Xd = self._da_raw.astype(np.float64)
            self._da = Xd if self.bound is None else da.clip(Xd, -self.bound, self.bound)
            self._col_cache: dict[int, np.ndarray] = {}   # columns fetched from the cluster
        else:
            self.kind = "dense"
            X = self.raw
            # one pass counts the entries beyond the bound per column: it decides whether
            # X can be used as it is and is kept for the clipping diagnostic
            if X.dtype == np.float64 and not np.any(self.clipped_per_column()):
                self._dense = X                          # used as it is: no copy
            elif 8 * self.n * self.p <= cache:
                # one clipped copy in the input's own memory order: converting a C-ordered
                # array to column-major cost 4 s more than the copy at n = 3000, p = 10^5
                # (the products are BLAS calls either way; a support's columns are s gathers)
                if X.dtype == np.float64 and self.bound is not None:
                    self._dense = np.clip(X, -self.bound, self.bound)
                else:
                    self._dense = self._clip(np.array(X, dtype=np.float64, order="K"))
            else:
                self.kind = "chunked"
                # a C-ordered input (e.g. a .npy memmap) is read in contiguous row blocks
                self._row_major = bool(getattr(X, "flags", None) is not None
                                       and X.flags.c_contiguous and not X.flags.f_contiguous)
                self.chunk_rows = max(1, chunk // (8 * max(self.p, 1)))
        logger.debug("ClippedDesign: %s, shape %s, dtype %s, bound %s, chunk %d columns",
                     self.kind, self.shape, getattr(X, "dtype", None), self.bound,
                     self.chunk_cols)

    # -- construction helpers ------------------------------------------------------------
    def _clip(self, A: np.ndarray) -> np.ndarray:
        """Clip a float64 array that this object owns, in place."""
        if self.bound is not None:
            np.clip(A, -self.bound, self.bound, out=A)
        return A

    def _clipped_csc(self, X):
        import scipy.sparse as sp
        csc = canonical_sparse(X.tocsc())   # no copy when X is canonical CSC already
        data = csc.data
        if data.dtype != np.float64:
            data = self._clip(data.astype(np.float64))
        elif self.bound is not None and data.size and np.max(np.abs(data)) > self.bound:
            data = np.clip(data, -self.bound, self.bound)
        return sp.csc_matrix((data, csc.indices, csc.indptr), shape=self.shape)

    # -- chunks --------------------------------------------------------------------------
    def _block(self, lo: int, hi: int) -> np.ndarray:
        """Clipped float64 columns ``lo:hi`` of the chunked path."""
        B = self.raw[:, lo:hi]
        if B.dtype != np.float64:
            return self._clip(B.astype(np.float64))
        if self.bound is None:
            return np.asarray(B)
        clean = self._clean.get(lo)
        if clean is None:
            clean = self._clean[lo] = bool(np.max(np.abs(B), initial=0.0) <= self.bound)
        return np.asarray(B) if clean else np.clip(B, -self.bound, self.bound)

    def _rows(self, lo: int, hi: int) -> np.ndarray:
        """Clipped float64 rows ``lo:hi`` of a row-major chunked input."""
        B = self.raw[lo:hi]
        if B.dtype != np.float64:
            return self._clip(B.astype(np.float64))
        if self.bound is None:
            return np.asarray(B)
        key = ("rows", lo)
        clean = self._clean.get(key)
        if clean is None:
            clean = self._clean[key] = bool(np.max(np.abs(B), initial=0.0) <= self.bound)
        return np.asarray(B) if clean else np.clip(B, -self.bound, self.bound)

    def row_blocks(self):
        """Yield ``(lo, hi, rows)``: clipped float64 row chunks (row-major chunked input)."""
        for lo in range(0, self.n, self.chunk_rows):
            hi = min(lo + self.chunk_rows, self.n)
            yield lo, hi, self._rows(lo, hi)

    def blocks(self):
        """Yield ``(lo, hi, block)``: clipped float64 column chunks covering ``X``."""
        w = self.chunk_cols
        for lo in range(0, self.p, w):
            hi = min(lo + w, self.p)
            if self._dense is not None:
                yield lo, hi, self._dense[:, lo:hi]
            elif self._da is not None:
                yield lo, hi, np.asarray(self._da[:, lo:hi].compute())
            elif self._sp is not None:
                yield lo, hi, self._sp[:, lo:hi].toarray()
            else:
                yield lo, hi, self._block(lo, hi)

    # -- products ------------------------------------------------------------------------
    def rmatvec(self, v) -> np.ndarray:
        """``Xcᵀ v`` for ``v`` of shape ``(n,)`` or ``(n, k)``."""
        v = np.asarray(v, dtype=np.float64)
        if self._dense is not None:
            return self._dense.T @ v
        if self._sp is not None:
            return np.asarray(self._sp.T @ v)
        if self._da is not None:
            return np.asarray((self._da.T @ v).compute())
        if self._row_major:
            out = np.zeros((self.p,) + v.shape[1:])
            for lo, hi, B in self.row_blocks():
                out += B.T @ v[lo:hi]
            return out
        out = np.empty((self.p,) + v.shape[1:])
        for lo, hi, B in self.blocks():
            out[lo:hi] = B.T @ v
        return out

    def matvec(self, beta) -> np.ndarray:
        """``Xc β`` for ``β`` of shape ``(p,)`` or ``(p, k)``; a sparse ``β`` (few
        non-zeros) reads only its columns."""
        beta = np.asarray(beta, dtype=np.float64)
        if self._dense is not None:
            return self._dense @ beta
        if self._sp is not None:
            return np.asarray(self._sp @ beta)
        if beta.ndim == 1 and self._da is not None:
            nz = np.flatnonzero(beta)
            if nz.size <= 64:
                return self.columns(nz) @ beta[nz]
            return np.asarray((self._da @ beta).compute())
        if beta.ndim == 1:
            nz = np.flatnonzero(beta)
            if nz.size <= self.chunk_cols:
                return self.columns(nz) @ beta[nz]
        if self._row_major:
            out = np.empty((self.n,) + beta.shape[1:])
            for lo, hi, B in self.row_blocks():
                out[lo:hi] = B @ beta
            return out
        out = np.zeros((self.n,) + beta.shape[1:])
        for lo, hi, B in self.blocks():
            out += B @ beta[lo:hi]
        return out

    def __matmul__(self, beta):
        return self.matvec(beta)

    @property
    def T(self) -> _Transposed:
        return _Transposed(self)

    # -- columns -------------------------------------------------------------------------
    def columns(self, idx) -> np.ndarray:
        """Clipped float64 columns: shape ``(n,) + idx.shape`` (``Xc[:, idx]``)."""
        idx = np.asarray(idx, dtype=np.intp)
        flat = idx.reshape(-1)
        if self._dense is not None:
            out = self._dense[:, flat]
        elif self._sp is not None:
            out = self._sp[:, flat].toarray()
        elif self._da is not None:
            out = self._dask_columns(flat)
        else:
            out = self.raw[:, flat]
            out = self._clip(np.array(out, dtype=np.float64))
        return out.reshape((self.n,) + idx.shape)

    def _dask_columns(self, flat: np.ndarray) -> np.ndarray:
        """Columns of a dask design: those not fetched before come back in one compute
        and are kept (up to :data:`DASK_COLUMN_CACHE_BYTES`): the searches ask for the
        same few hundred columns many times, and each compute costs a round trip."""
        cache = self._col_cache
        uniq, inv = np.unique(flat, return_inverse=True)
        missing = np.array([j for j in uniq.tolist() if j not in cache], dtype=np.intp)
        got = {}
        if missing.size:
            block = np.asarray(self._da[:, missing].compute())
            room = DASK_COLUMN_CACHE_BYTES // (8 * max(self.n, 1)) - len(cache)
            for i, j in enumerate(missing.tolist()):
                got[j] = block[:, i]
                if i < room:
                    cache[j] = got[j]
        cols = np.column_stack([cache[j] if j in cache else got[j] for j in uniq.tolist()]) \
            if uniq.size else np.empty((self.n, 0))
        return cols[:, inv.reshape(-1)]

    def rows_T(self, idx) -> np.ndarray:
        """The columns ``idx`` as rows: shape ``idx.shape + (n,)`` (``Xcᵀ[idx]``), C-contiguous."""
        idx = np.asarray(idx, dtype=np.intp)
        flat = idx.reshape(-1)
        if self._dense is not None:
            DT = self._dense.T
            if not DT.flags.c_contiguous and 8 * self.n * self.p <= self._cache_bytes:
                if self._dense_T is None:   # rows gathered many times (Huber, hinge batches)
                    self._dense_T = np.ascontiguousarray(DT)
                DT = self._dense_T
            out = DT[flat]
        else:
            out = self.columns(flat).T
        return np.ascontiguousarray(out).reshape(idx.shape + (self.n,))

    def __getitem__(self, key):
        if isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], slice) \
                and key[0] == slice(None):
            cols = key[1]
            if isinstance(cols, slice):
                cols = np.arange(self.p)[cols]
            return self.columns(cols)
        raise TypeError("ClippedDesign supports X[:, columns] only")

    def gram_blocks(self, supports, chunk_entries: int = 4_000_000) -> np.ndarray:
        """``Xc_SᵀXc_S`` for each row ``S`` of ``supports`` (shape ``(m, s)``): ``(m, s, s)``.

        Dense designs gather the supports' columns ``chunk_entries`` values at a time;
        sparse ones take the ``s(s+1)/2`` column products of the supports pairwise from
        the sparse matrix (memory ``O(m s² + nnz)``, no dense column is formed).
        """
        supports = np.atleast_2d(np.asarray(supports, dtype=np.intp))
        m, s = supports.shape
        A = np.empty((m, s, s))
        if self._sp is not None:
            for a in range(s):
                Ca = self._sp[:, supports[:, a]]
                for b in range(a, s):
                    v = np.asarray(Ca.multiply(self._sp[:, supports[:, b]]).sum(axis=0)).ravel()
                    A[:, a, b] = v
                    A[:, b, a] = v
            return A
        step = max(1, int(chunk_entries // (self.n * s)))
        for lo in range(0, m, step):
            Xs = self.columns(supports[lo:lo + step])  # (n, c, s)
            A[lo:lo + step] = np.einsum("nci,ncj->cij", Xs, Xs)
        return A

    def col_sq(self) -> np.ndarray:
        """Squared column norms ``||Xc_j||²`` (cached)."""
        if self._col_sq is None:
            if self._dense is not None:
                self._col_sq = np.einsum("ij,ij->j", self._dense, self._dense)
            elif self._sp is not None:
                self._col_sq = np.asarray(self._sp.multiply(self._sp).sum(axis=0)).ravel()
            elif self._da is not None:
                self._col_sq = np.asarray((self._da * self._da).sum(axis=0).compute())
            elif self._row_major:
                out = np.zeros(self.p)
                for lo, hi, B in self.row_blocks():
                    out += np.einsum("ij,ij->j", B, B)
                self._col_sq = out
            else:
                out = np.empty(self.p)
                for lo, hi, B in self.blocks():
                    out[lo:hi] = np.einsum("ij,ij->j", B, B)
                self._col_sq = out
        return self._col_sq

    def gram(self) -> np.ndarray:
        """``XcᵀXc`` (p × p, cached): for small ``p`` only (the losses ask for it when
        ``p <= 2048``)."""
        if self._gram is None:
            if self._dense is not None:
                self._gram = self._dense.T @ self._dense
            elif self._sp is not None:
                self._gram = np.asarray((self._sp.T @ self._sp).toarray())
            elif self._da is not None:
                self._gram = np.asarray((self._da.T @ self._da).compute())
            elif self._row_major:
                G = np.zeros((self.p, self.p))
                for lo, hi, B in self.row_blocks():
                    G += B.T @ B
                self._gram = G
            else:
                G = np.empty((self.p, self.p))
                for lo, hi, B in self.blocks():
                    G[:, lo:hi] = self.rmatvec(B)
                self._gram = G
        return self._gram

    def clipped_per_column(self) -> np.ndarray:
        """Fraction of each column's entries with ``|x_ij| > bound``, chunk by chunk.

        For diagnostics only (**not private**): a clipping report can use it on memmaps,
        sparse and dask inputs without a boolean temporary of the whole matrix.
        """
        if self._clipped_frac is None:
            self._clipped_frac = self._count_clipped()
        return self._clipped_frac.copy()

    def _count_clipped(self) -> np.ndarray:
        if self.bound is None:
            return np.zeros(self.p)
        b, n = self.bound, max(self.n, 1)
        raw = self.raw
        if is_sparse(raw):
            csc = canonical_sparse(raw.tocsc())
            cols = np.repeat(np.arange(self.p), np.diff(csc.indptr))
            return np.bincount(cols, weights=np.abs(csc.data) > b, minlength=self.p) / n
        if is_dask(raw):
            import dask.array as da
            raw = getattr(self, "_da_raw", raw)
            return np.asarray((da.abs(raw) > b).sum(axis=0).compute()) / n
        counts = np.zeros(self.p)
        if self._row_major:
            for lo in range(0, self.n, self.chunk_rows):
                counts += np.count_nonzero(np.abs(raw[lo:lo + self.chunk_rows]) > b, axis=0)
        else:
            for lo in range(0, self.p, self.chunk_cols):
                counts[lo:lo + self.chunk_cols] = np.count_nonzero(
                    np.abs(raw[:, lo:lo + self.chunk_cols]) > b, axis=0)
        return counts / n

    def subset(self, columns) -> "ClippedDesign":
        """The design on the columns ``columns`` (same bound and settings)."""
        cols = np.asarray(columns, dtype=np.intp)
        if self._sp is not None:
            sub = self._sp[:, cols]
            out = ClippedDesign(sub, None)
            out.bound = self.bound
            return out
        return ClippedDesign(self.columns(cols), None)

    @property
    def nbytes_held(self) -> int:
        """Bytes this view holds besides ``X`` (the clipped copy or the clipped values)."""
        if self._dense is not None and self._dense is not self.raw:
            return int(self._dense.nbytes)
        if self._sp is not None:
            held = self._sp.data.nbytes
            if not is_sparse(self.raw) or self._sp.indices is not getattr(self.raw, "indices", None):
                held += self._sp.indices.nbytes + self._sp.indptr.nbytes
            return int(held)
        return 0

    def __repr__(self) -> str:
        return (f"ClippedDesign(shape={self.shape}, bound={self.bound}, kind={self.kind!r}, "
                f"input={type(self.raw).__name__}/{getattr(self.raw, 'dtype', None)})")


def _distributed_client():
    """The active ``distributed.Client``, or ``None`` (``distributed`` not imported by the
    caller, or no client)."""
    import sys
    dist = sys.modules.get("distributed")
    if dist is None:
        return None
    try:
        return dist.default_client()
    except ValueError:   # no client
        return None


def canonical_sparse(X):
    """``X`` (CSR or CSC) with duplicate entries summed and indices sorted.

    scipy allows a CSR/CSC matrix to store the same ``(i, j)`` several times, the matrix
    value being their sum: clipping the stored entries one by one would leave a sum above
    the bound (a sensitivity, hence privacy, bug).  The input is never modified: a
    non-canonical matrix is copied first.
    """
    if getattr(X, "has_canonical_format", True):
        return X
    X = X.copy()
    X.sum_duplicates()
    return X


def max_abs(X, chunk_cols: int | None = None) -> float:
    """``max |x_ij|`` of an array, memmap or sparse matrix, column chunk by column chunk."""
    if isinstance(X, ClippedDesign):
        X = X.raw
    if is_sparse(X):
        data = canonical_sparse(X.tocsc()).data
        return float(np.max(np.abs(data))) if data.size else 0.0
    if is_dask(X):
        import dask.array as da
        return float(da.abs(X).max().compute())
    n, p = X.shape
    w = chunk_cols or max(1, CHUNK_BYTES // (8 * max(n, 1)))
    best = 0.0
    for lo in range(0, p, w):
        best = max(best, float(np.max(np.abs(X[:, lo:lo + w]), initial=0.0)))
    return best


def as_design(X) -> ClippedDesign:
    """``X`` as a :class:`ClippedDesign` (no clipping when it is not one already)."""
    if isinstance(X, ClippedDesign):
        return X
    if not is_sparse(X) and not is_dask(X):
        X = np.asarray(X)
        if not (np.issubdtype(X.dtype, np.number) or X.dtype == bool):
            X = X.astype(np.float64)
    return ClippedDesign(X, None)
