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
  ``XcᵀXc`` when ``p`` is small (:meth:`~ClippedDesign.gram`),
* ``Xcᵀu`` and ``Xc(Xcᵀu + shift)`` in one pass (:meth:`~ClippedDesign.rmatvec_matvec`),
  and Gram columns ``Xcᵀx_j`` kept between calls (:attr:`~ClippedDesign.column_gram`,
  :mod:`mipdp.column_gram`).

Passes over ``X`` are what costs at large ``p`` (2.4 GB at n = 3000, p = 10⁵; 8 GB for a
float32 memmap at n = 2000, p = 10⁶), so the first pass (at construction) computes every
figure that needs no other input at once: the clipped copy when one is kept, the clipped
counts of the diagnostic, ``‖Xc_j‖²`` and ``Xcᵀv`` for the constructor's ``vectors`` (the
clipped ``y``); :meth:`~ClippedDesign.rmatvec` then returns those (and the last two 1-D
products) without another pass.

Memory (docs/design.md, "Memory"): besides ``X`` itself, a dense input keeps at most one
tile of ``min(chunk_bytes, TILE_BYTES)`` (float64, clipped) at a time, small enough to be
converted, clipped and multiplied in cache: rows of ``min(p, TILE_COLS)`` columns for a
C-ordered input (contiguous reads of a ``.npy`` memmap; full rows when ``p`` is at most
``TILE_COLS``), column blocks otherwise; a clipped float64 copy of
the whole matrix is kept only when it is at most ``dense_cache_bytes`` (then every product
is one BLAS call, as before): 6 GiB for an in-memory array, 256 MiB for a memmap.  A float64
array already inside the bounds is used as it is (no copy).  A sparse input is held as one
CSC matrix whose values are clipped (``clip(0) = 0``: the sparsity is kept), sharing the
index arrays of ``X`` when it is CSC already.  ``X`` is never modified.

Clipping is coordinate-wise, so every value this view returns equals the corresponding
entry or product of ``np.clip(np.asarray(X, float64), -b_x, b_x)`` up to floating-point
summation order.

Private clipping ranges (:mod:`mipdp.private_ranges`): built on a
:class:`mipdp.mapped.MappedMatrix`, the view applies the per-column map of the ranges
(``x ↦ clip((x − c_j)/(hi_j − lo_j), −½, ½)``) to each tile, chunk or gathered column before
the clipping, exactly as the dense path computes it; a sparse input is then held as ``S + 1
zᵀ`` (``z_j`` the mapped value of ``0``, ``S`` on the pattern of ``X``) and every product adds
the rank-one term, so the mapped matrix is never dense.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

import numpy as np

from ._kinds import is_dask, is_sparse
from ._parallel import blas_single, parallel_map

logger = logging.getLogger(__name__)

__all__ = ["ClippedDesign", "as_design", "DENSE_CACHE_BYTES", "MEMMAP_CACHE_BYTES",
           "CHUNK_BYTES", "TILE_BYTES", "is_sparse",
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
#: bytes of one float64 tile of the chunked path: a tile is converted, clipped and
#: multiplied while it is in the cache (2 MiB tiles made a pass over a 2000 × 10⁶ float32
#: memmap 1.5–3 times faster than full-height column blocks of 2–32 MiB)
TILE_BYTES = 2 * 2 ** 20
#: widest tile of a C-ordered input (columns): 16 KiB of float32 per row and tile
TILE_COLS = 4096
#: bytes of the float64 column block kept while :meth:`ClippedDesign.rmatvec_matvec` uses it
#: twice (``Xcᵀu`` then ``Xc w``): about a share of the L3 cache
FUSED_BLOCK_BYTES = 8 * 2 ** 20


#: fixed number of row-block groups of :meth:`ClippedDesign.gram_matvec` (pieces of the
#: call's parallel work; independent of ``n_jobs`` so that the sums are too)
_GRAM_GROUPS = 8


#: arrays of at least this many bytes are allocated by :func:`_large_empty`
LARGE_ALLOC_BYTES = 64 * 2 ** 20


def _large_empty(shape: tuple[int, ...], order: Literal["C", "F"] = "C") -> np.ndarray:
    """An uninitialised float64 array, in small pages when it is large.

    NumPy asks the kernel for transparent huge pages on large arrays (``madvise``); where
    the kernel then compacts memory on the first write of each 2 MiB page
    (``/sys/kernel/mm/transparent_hugepage/defrag`` = ``madvise``), filling a fresh
    2.4 GB clipped copy (n = 3000, p = 10⁵) took 5.3 s of system time against 1.1 s in
    4 KiB pages, and every later pass over it ran at the same speed (measured on the
    project's 2-core VM).  An anonymous :mod:`mmap` is not advised, so it gets small
    pages; it is unmapped when the array is freed.  Small arrays use ``np.empty``.
    """
    nbytes = 8 * int(np.prod(shape))
    if nbytes < LARGE_ALLOC_BYTES:
        return np.empty(shape, order=order)
    import mmap
    buf = mmap.mmap(-1, nbytes, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    flat = np.frombuffer(buf, dtype=np.float64)
    return flat.reshape(shape, order=order)


def _one_blas_thread():
    """Limit BLAS to one thread for a loop over tiles: their products are small, and
    OpenBLAS's threads on small products cost more than they save (8 times slower on a
    pass of 2 MiB tiles at p = 10⁵ on a loaded 2-core machine)."""
    return blas_single()


class _Transposed:
    """``design.T``: supports ``design.T @ v`` (= :meth:`ClippedDesign.rmatvec`)."""

    def __init__(self, design: ClippedDesign) -> None:
        self._d = design
        self.shape = design.shape[::-1]

    def __matmul__(self, v):
        return self._d.rmatvec(v)


class ClippedDesign:
    """The clipped design ``clip(X, -bound, bound)`` as a lazily computed float64 matrix.

    Parameters
    ----------
    X : ndarray, numpy.memmap, scipy sparse matrix, dask array or MappedMatrix, shape (n, p)
        Numeric (float32, float64, integer or bool), finite; validated by the caller
        (:func:`mipdp._validation.check_X_y` with ``lazy=True``).  Never modified.  A
        :class:`mipdp.mapped.MappedMatrix` (private ranges) is the view of its ``raw``
        input mapped by its ``column_map``, then clipped to ``bound``.
    bound : float or None
        ``b_x``; ``None``: no clipping.
    dense_cache_bytes : int, optional
        Keep a clipped float64 copy of ``X`` when it takes at most this many bytes
        (default :data:`DENSE_CACHE_BYTES`, 6 GiB, for an in-memory array;
        :data:`MEMMAP_CACHE_BYTES`, 256 MiB, for a memmap); ``0`` forces the chunked path.
    chunk_bytes : int, optional
        Size of one float64 column chunk of the chunked path (default :data:`CHUNK_BYTES`);
        its tiles take at most ``min(chunk_bytes, TILE_BYTES)``.
    vectors : sequence of ndarray (n,), optional
        Vectors ``v`` whose products ``Xcᵀv`` are computed in the first pass over a dense
        or chunked ``X`` (with the squared column norms and the clipped counts), so that
        :meth:`rmatvec` returns them without another pass (e.g. the clipped ``y``).
    """

    def __init__(self, X, bound: float | None = None, *, dense_cache_bytes: int | None = None,
                 chunk_bytes: int | None = None, vectors=()) -> None:
        from .mapped import MappedMatrix
        self._map = None       # ColumnMap applied before the clipping (private ranges)
        if isinstance(X, MappedMatrix):
            self._map, X = X.column_map, X.raw
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
        self._dense: np.ndarray | None = None     # clipped float64 (n, p) array, when held
        self._dense_T: np.ndarray | None = None   # its transpose, C-contiguous (for rows_T)
        self._cache_bytes = cache
        self._sp: Any = None   # clipped float64 CSC matrix, for sparse input
        self._shift: np.ndarray | None = None  # (p,): the design is _sp + 1 shiftᵀ (mapped)
        self._col_sq: np.ndarray | None = None
        self._gram: np.ndarray | None = None
        self._clean: dict = {}  # chunk key -> whether the raw float64 chunk needs no clipping
        self._row_major = False
        self.chunk_rows = 0
        self._da: Any = None   # clipped float64 dask array (lazy graph), for dask input
        self._clipped_frac: np.ndarray | None = None   # clipped_per_column(), once computed
        # [(v, Xcᵀv)]: the two most recent 1-D products (rmatvec)
        self._memo: list[tuple[np.ndarray, np.ndarray]] = []
        self._known: list[tuple[np.ndarray, np.ndarray]] = []  # of the constructor's vectors
        self._tile = (0, 0)    # tile shape (rows, columns) of the chunked path
        self._gram_cols = None  # ColumnGram (columns of XcᵀXc), created on first use
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
            # experiments/studies/bench_dask.py
            client = _distributed_client()
            persist = client is not None and _fits_cluster(client, X.nbytes)
            self._da_raw = client.persist(X) if persist else X
            Xd = self._da_raw.astype(np.float64)
            if self._map is not None:
                m = self._map
                Xd = da.clip((Xd - m.centre) / m.width, -0.5, 0.5)
            self._da = Xd if self.bound is None else da.clip(Xd, -self.bound, self.bound)
            self._col_cache: dict[int, np.ndarray] = {}   # columns fetched from the cluster
        else:
            self.kind = "dense"
            X = self.raw
            c_order = bool(getattr(X, "flags", None) is not None
                           and X.flags.c_contiguous and not X.flags.f_contiguous)
            self._tile = self._tile_shape(c_order, min(chunk, TILE_BYTES))
            # a float64 X inside the bounds is used as it is (one read pass: max and min);
            # otherwise one pass makes the clipped copy and counts the clipped entries
            if X.dtype == np.float64 and self._map is None and self._inside_bounds():
                self._dense = X                          # used as it is: no copy
                self._clipped_frac = np.zeros(self.p)
            elif 8 * self.n * self.p <= cache:
                # one clipped copy in the input's own memory order: converting a C-ordered
                # array to column-major cost 4 s more than the copy at n = 3000, p = 10^5
                # (the products are BLAS calls either way; a support's columns are s gathers)
                order: Literal["C", "F"] = ("F" if (not c_order and X.flags.f_contiguous)
                                            else "C")
                self._dense = _large_empty(self.shape, order)
            else:
                self.kind = "chunked"
                # tiles: contiguous row blocks when p is at most TILE_COLS and X is
                # C-ordered (e.g. a .npy memmap), column blocks when X is F-ordered
                self._row_major = c_order and self._tile[1] == self.p
                self.chunk_rows = self._tile[0] if self._row_major else 0
            self._first_pass(vectors)
        logger.debug("ClippedDesign: %s, %d columns, dtype %s, bound %s, chunk %d columns; "
                     "not private: %d rows (n is private under add/remove)", self.kind,
                     self.p, getattr(X, "dtype", None), self.bound, self.chunk_cols, self.n)

    def fork(self) -> ClippedDesign:
        """A view for one worker of :mod:`mipdp.enumeration.fork`: the same data (nothing
        copied), its own memo of products and its own Gram columns, so that what a worker
        computes never depends on another worker's schedule."""
        import copy
        new = copy.copy(self)
        new._memo = list(self._memo)
        if self._gram_cols is not None:
            new._gram_cols = self._gram_cols.fork(new)
        if self._da is not None:
            new._col_cache = dict(self._col_cache)
        return new

    # -- construction helpers ------------------------------------------------------------
    def _clip(self, A: np.ndarray, cols=slice(None)) -> np.ndarray:
        """Clip a float64 array that this object owns, in place (columns ``cols`` of
        ``X``: a slice or indices, for the column map of private ranges)."""
        if self._map is not None:
            self._map.apply(A, cols)
        if self.bound is not None:
            np.clip(A, -self.bound, self.bound, out=A)
        return A

    def _clipped_csc(self, X):
        import scipy.sparse as sp
        csc = canonical_sparse(X.tocsc())   # no copy when X is canonical CSC already
        data = csc.data
        if self._map is not None:
            return self._mapped_csc(csc)
        if data.dtype != np.float64:
            data = self._clip(data.astype(np.float64))
        elif self.bound is not None and data.size and np.max(np.abs(data)) > self.bound:
            data = np.clip(data, -self.bound, self.bound)
        return sp.csc_matrix((data, csc.indices, csc.indptr), shape=self.shape)

    def _mapped_csc(self, csc):
        """The mapped sparse input as ``S + 1 zᵀ``: ``z_j`` the mapped (and clipped) value
        of ``0`` in column ``j`` (kept in :attr:`_shift`), ``S`` on the pattern of ``X``
        with the stored values mapped minus ``z_j`` (never dense)."""
        import scipy.sparse as sp
        cols = np.repeat(np.arange(self.p), np.diff(csc.indptr))
        data = self._clip(np.array(csc.data, dtype=np.float64, copy=True), cols)
        z = self._clip(np.zeros(self.p))
        data -= z[cols]
        self._shift = z
        return sp.csc_matrix((data, csc.indices, csc.indptr), shape=self.shape)

    # -- tiles (dense and chunked inputs) ---------------------------------------------------
    def _tile_shape(self, c_order: bool, nbytes: int) -> tuple[int, int]:
        """``(rows, columns)`` of a float64 tile of at most ``nbytes``: wide and short for a
        C-ordered input (rows of ``min(p, TILE_COLS)`` columns are contiguous reads), full
        height for any other (contiguous columns of an F-ordered input)."""
        n, p = max(self.n, 1), max(self.p, 1)
        if c_order:
            w = min(p, TILE_COLS, max(1, nbytes // 8))
            return min(n, max(1, nbytes // (8 * w))), w
        return n, max(1, min(p, nbytes // (8 * n)))

    def _inside_bounds(self) -> bool:
        """Whether every ``|x_ij| <= bound`` (one read pass, tile by tile; no bound: yes)."""
        if self.bound is None:
            return True
        b = self.bound
        for r0, r1, c0, c1 in self._tile_ranges():
            T = self.raw[r0:r1, c0:c1]
            if T.size and (T.max() > b or T.min() < -b):
                return False
        return True

    def _tile_ranges(self, tile: tuple[int, int] | None = None):
        """``(r0, r1, c0, c1)`` of the tiles, column block by column block."""
        r, w = self._tile if tile is None else tile
        for c0 in range(0, self.p, w):
            c1 = min(c0 + w, self.p)
            for r0 in range(0, self.n, r):
                yield r0, min(r0 + r, self.n), c0, c1

    def _load_tile(self, buf: np.ndarray, r0: int, r1: int, c0: int, c1: int) -> np.ndarray:
        """The clipped float64 tile ``X[r0:r1, c0:c1]`` written into ``buf`` (reused)."""
        T = buf[:r1 - r0, :c1 - c0]
        src = self.raw[r0:r1, c0:c1]
        if self.bound is not None and src.dtype == np.float64 and self._map is None:
            np.clip(src, -self.bound, self.bound, out=T)
        else:   # convert first: a bound is clipped in float64, not in the input's precision
            np.copyto(T, src, casting="unsafe")
            self._clip(T, slice(c0, c1))
        return T

    def tiles(self, tile: tuple[int, int] | None = None):
        """Yield ``(r0, r1, c0, c1, T)``: the clipped float64 tiles covering ``X`` (dense and
        chunked inputs), column block by column block.  ``T`` is a buffer reused for the
        next tile: use it before asking for the next one."""
        r, w = self._tile if tile is None else tile
        if self._dense is not None:
            for r0, r1, c0, c1 in self._tile_ranges((r, w)):
                yield r0, r1, c0, c1, self._dense[r0:r1, c0:c1]
            return
        buf = np.empty((min(r, self.n), min(w, self.p)))
        for r0, r1, c0, c1 in self._tile_ranges((r, w)):
            yield r0, r1, c0, c1, self._load_tile(buf, r0, r1, c0, c1)

    def _first_pass(self, vectors) -> None:
        """One pass over ``X`` (dense and chunked inputs): the clipped copy (when one is
        held and not filled yet), the clipped counts (when unknown), ``‖Xc_j‖²`` and
        ``Xcᵀv`` for each of ``vectors`` — every figure from the tile while it is in cache."""
        V = [np.asarray(v, dtype=np.float64) for v in vectors if v is not None]
        V = [v for v in V if v.shape == (self.n,)]
        copy = self._dense is not None and self._dense is not self.raw
        # with a map (private ranges) the clipped entries are counted on the raw data by
        # clipped_per_column (the mapped tile differs from the raw one everywhere)
        need_count = self._clipped_frac is None and self.bound is not None and self._map is None
        if not (copy or need_count or V):
            return
        Vm = np.stack(V, axis=1) if V else None
        counts = np.zeros(self.p, dtype=np.intp) if need_count else None
        col_sq = np.zeros(self.p)
        prod = np.zeros((self.p, len(V))) if V else None
        # column blocks are independent (each column's figures come from its own tiles,
        # in row order): one piece per block, run on the call's workers (mipdp._parallel)
        blocks: dict[int, list] = {}
        for r0, r1, c0, c1 in self._tile_ranges():
            blocks.setdefault(c0, []).append((r0, r1, c0, c1))

        def piece(ranges):
            buf = None if copy else np.empty((min(self._tile[0], self.n),
                                              min(self._tile[1], self.p)))
            self._first_pass_tiles(copy, buf, counts, col_sq, Vm, prod, ranges)

        parallel_map(piece, blocks.values())
        if counts is not None:
            self._clipped_frac = counts / max(self.n, 1)
        elif self._clipped_frac is None and self._map is None:
            self._clipped_frac = np.zeros(self.p)
        self._col_sq = col_sq
        self._known = ([(v.copy(), prod[:, k].copy()) for k, v in enumerate(V)]
                       if prod is not None else [])

    def _first_pass_tiles(self, copy, buf, counts, col_sq, Vm, prod, ranges=None) -> None:
        b = self.bound
        for r0, r1, c0, c1 in (self._tile_ranges() if ranges is None else ranges):
            src = self.raw[r0:r1, c0:c1]
            if copy:
                assert self._dense is not None  # copy: the clipped copy is held
                T = self._dense[r0:r1, c0:c1]
                if b is not None and src.dtype == np.float64 and self._map is None:
                    np.clip(src, -b, b, out=T)
                else:
                    np.copyto(T, src, casting="unsafe")
                    self._clip(T, slice(c0, c1))
            else:
                T = self._load_tile(buf, r0, r1, c0, c1)
            if counts is not None:   # clipped iff changed (compared in float64)
                counts[c0:c1] += np.count_nonzero(T != src, axis=0)
            col_sq[c0:c1] += np.einsum("ij,ij->j", T, T)
            if Vm is not None:
                prod[c0:c1] += T.T @ Vm[r0:r1]

    def _recall(self, v: np.ndarray) -> np.ndarray | None:
        """A copy of ``Xcᵀv`` if it was computed for this very ``v`` (same values)."""
        for u, out in self._known + self._memo:
            if u.shape == v.shape and np.array_equal(u, v):
                return out.copy()
        return None

    # -- chunks --------------------------------------------------------------------------
    def _block(self, lo: int, hi: int) -> np.ndarray:
        """Clipped float64 columns ``lo:hi`` of the chunked path."""
        B = self.raw[:, lo:hi]
        if B.dtype != np.float64 or self._map is not None:
            return self._clip(np.array(B, dtype=np.float64, copy=True), slice(lo, hi))
        if self.bound is None:
            return np.asarray(B)
        clean = self._clean.get(lo)
        if clean is None:
            clean = self._clean[lo] = bool(np.max(np.abs(B), initial=0.0) <= self.bound)
        return np.asarray(B) if clean else np.clip(B, -self.bound, self.bound)

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
                B = self._sp[:, lo:hi].toarray()
                yield lo, hi, B if self._shift is None else B + self._shift[lo:hi]
            else:
                yield lo, hi, self._block(lo, hi)

    # -- products ------------------------------------------------------------------------
    def rmatvec(self, v) -> np.ndarray:
        """``Xcᵀ v`` for ``v`` of shape ``(n,)`` or ``(n, k)``.

        The products of the constructor's ``vectors`` and of the last two 1-D ``v`` are
        kept: asked again for the same values, they are returned without a pass over ``X``.
        """
        v = np.asarray(v, dtype=np.float64)
        if v.ndim == 1:
            out = self._recall(v)
            if out is not None:
                return out
        out = self._rmatvec(v)
        if v.ndim == 1:
            self._memo.insert(0, (v.copy(), out.copy()))
            del self._memo[2:]
        return out

    def _rmatvec(self, v: np.ndarray) -> np.ndarray:
        if self._dense is not None:
            return self._dense.T @ v
        if self._sp is not None:
            out = np.asarray(self._sp.T @ v)
            if self._shift is not None:    # (S + 1 zᵀ)ᵀ v = Sᵀv + z (1ᵀv)
                out = out + np.multiply.outer(self._shift, v.sum(axis=0))
            return out
        if self._da is not None:
            return np.asarray((self._da.T @ v).compute())
        out = np.zeros((self.p,) + v.shape[1:])
        with _one_blas_thread():
            for r0, r1, c0, c1, T in self.tiles():
                out[c0:c1] += T.T @ v[r0:r1]
        return out

    @property
    def row_major_pass(self) -> bool:
        """Whether :meth:`gram_matvec` reads ``X`` once (a C-ordered array held in memory:
        the clipped copy, or a float64 ``X`` inside the bounds)."""
        D = self._dense
        return D is not None and D.flags.c_contiguous and not D.flags.f_contiguous

    def gram_matvec(self, v, shift=None) -> np.ndarray:
        """``Xcᵀ(Xc v) + shift``: in one pass over row blocks of a C-ordered array held in
        memory (:attr:`row_major_pass`: a block gives ``u_B = B v`` and ``Bᵀu_B`` while it
        is in cache), else :meth:`matvec` then :meth:`rmatvec`.  Equal to the two products
        up to floating-point summation order."""
        v = np.asarray(v, dtype=np.float64)
        if not self.row_major_pass:
            w = self.rmatvec(self.matvec(v))
        else:
            D = self._dense
            assert D is not None  # row_major_pass: an array is held
            # ~4 MB blocks (4 rows at p = 10⁵: 20 % faster than two BLAS passes at n = 6000)
            rows = max(1, min(self.n, FUSED_BLOCK_BYTES // (16 * max(self.p, 1))))
            starts = list(range(0, self.n, rows))
            # _GRAM_GROUPS fixed groups of row blocks, summed in order: the same sums for
            # every n_jobs (the groups run on the call's workers, mipdp._parallel)
            k = max(1, -(-len(starts) // _GRAM_GROUPS))

            def piece(group):
                w_g = np.zeros(self.p)
                for r0 in group:
                    B = D[r0:r0 + rows]
                    w_g += B.T @ (B @ v)
                return w_g

            w = np.zeros(self.p)
            for w_g in parallel_map(piece, [starts[i:i + k] for i in range(0, len(starts), k)]):
                w += w_g
        if shift is not None:
            w += shift
        return w

    def rmatvec_matvec(self, u, shift=None, *, matvec: bool = True):
        """``w = Xcᵀu + shift`` and ``z = Xc w`` (``None`` without ``matvec``), in one pass.

        A column block ``B`` of ``Xc`` gives its entries of ``w`` (``Bᵀu``) and at once its
        share ``B w_B`` of ``z`` while it is still in cache: one pass over ``X`` instead of
        two (e.g. the power iteration of IHT).  Equal to ``rmatvec`` then ``matvec`` up to
        floating-point summation order.
        """
        u = np.asarray(u, dtype=np.float64)
        shift = None if shift is None else np.asarray(shift, dtype=np.float64)
        if self.kind not in ("dense", "chunked") or not matvec:
            w = self.rmatvec(u)
            if shift is not None:
                w = w + shift
            return w, (self.matvec(w) if matvec else None)
        if self._dense is not None and not self._dense.flags.f_contiguous:
            # a C-ordered array: its column blocks are strided (one page per row); two BLAS
            # passes are faster than one over blocks
            w = self._dense.T @ u
            if shift is not None:
                w += shift
            return w, self._dense @ w
        wcols = max(1, min(self.p, FUSED_BLOCK_BYTES // (8 * max(self.n, 1))))
        w = np.empty(self.p)
        z = np.zeros(self.n)
        if self._dense is not None:
            for c0 in range(0, self.p, wcols):
                B = self._dense[:, c0:c0 + wcols]
                wb = B.T @ u
                if shift is not None:
                    wb += shift[c0:c0 + wcols]
                w[c0:c0 + wcols] = wb
                z += B @ wb
            return w, z
        # chunked: the block is filled tile by tile (contiguous reads of a C-ordered
        # input), then used a second time from this buffer
        r = min(self.n, max(1, self._tile[0] * self._tile[1] // wcols))
        buf = np.empty((self.n, wcols))
        with _one_blas_thread():
            for c0 in range(0, self.p, wcols):
                c1 = min(c0 + wcols, self.p)
                B = buf[:, :c1 - c0]
                for r0 in range(0, self.n, r):
                    r1 = min(r0 + r, self.n)
                    self._load_tile(B[r0:r1], r0, r1, c0, c1)
                wb = B.T @ u
                if shift is not None:
                    wb += shift[c0:c1]
                w[c0:c1] = wb
                z += B @ wb
        return w, z

    def matvec(self, beta) -> np.ndarray:
        """``Xc β`` for ``β`` of shape ``(p,)`` or ``(p, k)``; a sparse ``β`` (few
        non-zeros) reads only its columns."""
        beta = np.asarray(beta, dtype=np.float64)
        if self._dense is not None:
            if beta.ndim == 1 and self.p >= 512:
                nz = np.flatnonzero(beta)
                if nz.size <= 64:     # e.g. the iterates of IHT: s columns, not a pass
                    return self._dense[:, nz] @ beta[nz]
            return self._dense @ beta
        if self._sp is not None:
            out = np.asarray(self._sp @ beta)
            if self._shift is not None:    # (S + 1 zᵀ) β = S β + 1 (zᵀβ)
                out = out + self._shift @ beta
            return out
        if beta.ndim == 1 and self._da is not None:
            nz = np.flatnonzero(beta)
            if nz.size <= 64:
                return self.columns(nz) @ beta[nz]
            return np.asarray((self._da @ beta).compute())
        if beta.ndim == 1:
            nz = np.flatnonzero(beta)
            if nz.size <= self.chunk_cols:
                return self.columns(nz) @ beta[nz]
        out = np.zeros((self.n,) + beta.shape[1:])
        with _one_blas_thread():
            for r0, r1, c0, c1, T in self.tiles():
                out[r0:r1] += T @ beta[c0:c1]
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
            if self._shift is not None:
                out += self._shift[flat]
        elif self._da is not None:
            out = self._dask_columns(flat)
        else:
            out = self.raw[:, flat]
            out = self._clip(np.array(out, dtype=np.float64), flat)
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

    @property
    def column_gram(self):
        """The Gram columns ``Xcᵀx_j`` kept for this design
        (:class:`mipdp.column_gram.ColumnGram`: ``get(idx)``, ``product(idx, coef)``)."""
        if self._gram_cols is None:
            from .column_gram import ColumnGram
            self._gram_cols = ColumnGram(self)
        return self._gram_cols

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
            if self._shift is not None:   # + z_a 1ᵀS_b + z_b 1ᵀS_a + n z_a z_b
                zs, cs = self._shift[supports], self._sp_colsum()[supports]
                A += (zs[:, :, None] * cs[:, None, :] + cs[:, :, None] * zs[:, None, :]
                      + self.n * zs[:, :, None] * zs[:, None, :])
            return A
        step = max(1, int(chunk_entries // (self.n * s)))
        for lo in range(0, m, step):
            Xs = self.columns(supports[lo:lo + step])  # (n, c, s)
            A[lo:lo + step] = np.einsum("nci,ncj->cij", Xs, Xs)
        return A

    def _sp_colsum(self) -> np.ndarray:
        """``1ᵀS``: the column sums of the sparse part (mapped sparse input)."""
        return np.asarray(self._sp.sum(axis=0)).ravel()

    def col_sq(self) -> np.ndarray:
        """Squared column norms ``||Xc_j||²`` (cached)."""
        if self._col_sq is None:
            if self._dense is not None:
                self._col_sq = np.einsum("ij,ij->j", self._dense, self._dense)
            elif self._sp is not None and self._shift is not None:
                # Σ over stored (s_ij + z_j)² + (n − nnz_j) z_j²: no cancellation
                sp_, z = self._sp, self._shift
                nnz = np.diff(sp_.indptr)
                cols = np.repeat(np.arange(self.p), nnz)
                stored = np.bincount(cols, weights=(sp_.data + z[cols]) ** 2, minlength=self.p)
                self._col_sq = stored + (self.n - nnz) * z * z
            elif self._sp is not None:
                self._col_sq = np.asarray(self._sp.multiply(self._sp).sum(axis=0)).ravel()
            elif self._da is not None:
                self._col_sq = np.asarray((self._da * self._da).sum(axis=0).compute())
            else:
                out = np.zeros(self.p)
                with _one_blas_thread():
                    for _r0, _r1, c0, c1, T in self.tiles():
                        out[c0:c1] += np.einsum("ij,ij->j", T, T)
                self._col_sq = out
        return self._col_sq

    def gram(self) -> np.ndarray:
        """``XcᵀXc`` (p × p, cached): for small ``p`` only (the losses ask for it when
        ``p <= 2048``)."""
        if self._gram is None:
            if self._dense is not None:
                self._gram = self._dense.T @ self._dense
            elif self._sp is not None:
                G = np.asarray((self._sp.T @ self._sp).toarray())
                if self._shift is not None:
                    z, cs = self._shift, self._sp_colsum()
                    G += np.outer(z, cs) + np.outer(cs, z) + self.n * np.outer(z, z)
                self._gram = G
            elif self._da is not None:
                self._gram = np.asarray((self._da.T @ self._da).compute())
            elif self._tile[1] == self.p:   # full-width tiles: row blocks
                G = np.zeros((self.p, self.p))
                with _one_blas_thread():
                    for _r0, _r1, _c0, _c1, T in self.tiles():
                        G += T.T @ T
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
        if self._map is not None:     # private ranges: the entries the map clips
            return clipped_fraction_per_column(self.raw, self._map)
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
        counts = np.zeros(self.p, dtype=np.intp)
        for r0, r1, c0, c1 in self._tile_ranges():
            counts[c0:c1] += np.count_nonzero(np.abs(raw[r0:r1, c0:c1]) > np.float64(b), axis=0)
        return counts / n

    def subset(self, columns) -> ClippedDesign:
        """The design on the columns ``columns`` (same bound and settings)."""
        cols = np.asarray(columns, dtype=np.intp)
        if self._sp is not None:
            sub = self._sp[:, cols]
            out = ClippedDesign(sub, None)
            out.bound = self.bound
            if self._shift is not None:
                out._shift = self._shift[cols]
            return out
        return ClippedDesign(self.columns(cols), None)

    @property
    def nbytes_held(self) -> int:
        """Bytes this view holds besides ``X`` (the clipped copy or the clipped values)."""
        if self._dense is not None and self._dense is not self.raw:
            return int(self._dense.nbytes)
        if self._sp is not None:
            held = self._sp.data.nbytes
            shares_index = (is_sparse(self.raw)
                            and self._sp.indices is getattr(self.raw, "indices", None))
            if not shares_index:
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


#: a dask X is persisted on a distributed cluster only when it takes at most this share of
#: the workers' summed memory limits (a larger one is read from its source at every pass)
PERSIST_MEMORY_SHARE = 0.5


def _fits_cluster(client, nbytes: int) -> bool:
    """Whether ``nbytes`` fit in :data:`PERSIST_MEMORY_SHARE` of the cluster's workers'
    memory limits (no limit reported: yes)."""
    try:
        workers = client.scheduler_info().get("workers", {})
        limits = [w.get("memory_limit") or 0 for w in workers.values()]
    except (AttributeError, KeyError, TypeError, OSError):   # an unusual client: persist
        return True
    if not limits or min(limits) <= 0:
        return True
    return nbytes <= PERSIST_MEMORY_SHARE * sum(limits)


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
    if isinstance(X, ClippedDesign) or getattr(X, "_mipdp_design", False):
        return X   # a ClippedDesign, or a mipdp.statistics.GramDesign
    if not is_sparse(X) and not is_dask(X):
        X = np.asarray(X)
        if not (np.issubdtype(X.dtype, np.number) or X.dtype == bool):
            X = X.astype(np.float64)
    return ClippedDesign(X, None)


def clipped_fraction_per_column(raw, column_map) -> np.ndarray:
    """Fraction of each column's entries the map clips (``x_ij`` outside ``[lo_j, hi_j]``).

    ``column_map`` is a :class:`mipdp.mapped.ColumnMap` (here, beside the data layer's
    readers, so that :mod:`mipdp.mapped` does not import :mod:`mipdp.data`).

    ``raw`` is the unmapped data (an array, memmap, scipy sparse matrix or dask array),
    read in column blocks (a sparse matrix: its stored values, the implicit zeros counted
    per column).  For diagnostics only (**not private**: it depends on the data without
    noise): what ``result.info["clipped_fraction_not_private"]`` reports with private
    ranges.
    """
    n, p = raw.shape
    lo, hi = column_map.lo, column_map.hi
    if n == 0:
        return np.zeros(p)
    if is_sparse(raw):
        csc = canonical_sparse(raw.tocsc())
        nnz = np.diff(csc.indptr)
        cols = np.repeat(np.arange(p), nnz)
        out = np.bincount(cols, weights=(csc.data < lo[cols]) | (csc.data > hi[cols]),
                          minlength=p)
        zero_out = (0.0 < lo) | (0.0 > hi)
        return (out + np.where(zero_out, n - nnz, 0)) / n
    if is_dask(raw):
        return np.asarray(((raw < lo) | (raw > hi)).sum(axis=0).compute()) / n
    step = max(1, CHUNK_BYTES // (8 * n))
    counts = np.zeros(p, dtype=np.intp)
    for c0 in range(0, p, step):
        B = np.asarray(raw[:, c0:c0 + step], dtype=np.float64)
        counts[c0:c0 + step] = (np.count_nonzero(B < lo[c0:c0 + step], axis=0)
                                + np.count_nonzero(B > hi[c0:c0 + step], axis=0))
    return counts / n
