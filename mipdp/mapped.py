"""The per-column affine map of private clipping ranges, applied lazily.

With private ranges (:mod:`mipdp.private_ranges`) every column ``j`` of ``X`` is mapped by

    x ↦ clip((x − c_j) / (hi_j − lo_j), −½, ½),     c_j = (lo_j + hi_j) / 2,

which equals ``(clip(x, lo_j, hi_j) − c_j) / (hi_j − lo_j)``: a per-column clip, a rank-one
centring and a diagonal scaling.  :class:`ColumnMap` holds the ranges and applies the map
to blocks of columns; :class:`MappedMatrix` pairs it with ``X`` (an array, a memmap, a
scipy sparse matrix or a dask array) without forming the mapped matrix.  A
:class:`mipdp.data.ClippedDesign` built on a :class:`MappedMatrix` computes every product
of the mapped matrix chunk by chunk (dense, memmap), as a sparse matrix plus a rank-one
term (sparse: ``clip(0)`` is a constant per column) or as a lazy graph (dask).

Entry by entry the map is computed exactly as the dense path does it (the same float64
operations in the same order), so a mapped block equals the same block of the dense mapped
matrix bit for bit.
"""

from __future__ import annotations

import numpy as np

from ._kinds import is_sparse

__all__ = ["ColumnMap", "MappedMatrix", "MAPPED_HALF_WIDTH"]

#: the mapped values lie in ``[−MAPPED_HALF_WIDTH, MAPPED_HALF_WIDTH]``
MAPPED_HALF_WIDTH = 0.5


class ColumnMap:
    """The affine map of each column onto ``[−½, ½]`` given its range ``[lo_j, hi_j]``.

    Parameters
    ----------
    lo, hi : ndarray, shape (p,)
        The ranges (``hi_j > lo_j``), public (released privately) numbers.
    """

    def __init__(self, lo: np.ndarray, hi: np.ndarray) -> None:
        self.lo = np.asarray(lo, dtype=np.float64).ravel()
        self.hi = np.asarray(hi, dtype=np.float64).ravel()
        if self.lo.shape != self.hi.shape:
            raise ValueError("ColumnMap: lo and hi must have the same length")
        self.centre = 0.5 * (self.lo + self.hi)
        self.width = self.hi - self.lo
        # public numbers (released ranges, at least MIN_RANGE_WIDTH wide): a collapsed or
        # non-finite range would make the map divide by zero
        if not (np.all(np.isfinite(self.centre)) and np.all(np.isfinite(self.width))
                and np.all(self.width > 0)):
            raise ValueError("ColumnMap: every range must be finite with hi > lo")

    @property
    def p(self) -> int:
        """Number of columns."""
        return int(self.lo.size)

    def apply(self, A: np.ndarray, cols=slice(None)) -> np.ndarray:
        """Map a float64 block ``A`` (columns ``cols`` of ``X``, shape ``(r, k)``) in place.

        ``cols`` is a slice or an index array (one per column of ``A``); a 1-D ``A`` holds
        stored values with ``cols`` their column indices (a sparse matrix's data).
        Returns ``A``.
        """
        np.subtract(A, self.centre[cols], out=A)
        np.divide(A, self.width[cols], out=A)
        np.clip(A, -MAPPED_HALF_WIDTH, MAPPED_HALF_WIDTH, out=A)
        return A

    def zero_values(self) -> np.ndarray:
        """The mapped value of ``0`` in each column, shape ``(p,)``."""
        return self.apply(np.zeros(self.p))

    def subset(self, cols) -> ColumnMap:
        """The map of the columns ``cols``."""
        return ColumnMap(self.lo[cols], self.hi[cols])


class MappedMatrix:
    """``X`` mapped column by column by a :class:`ColumnMap`, never formed whole.

    What :func:`mipdp.private_bss` receives as ``X`` on the private-ranges path.  A
    :class:`mipdp.data.ClippedDesign` built on it takes ``raw`` and ``column_map`` and
    computes the products of the mapped matrix lazily; the pre-screens read its columns
    (``M[:, cols]``) or rows (``M[rows]``) as small dense float64 blocks.

    Parameters
    ----------
    raw : ndarray, numpy.memmap, scipy sparse matrix or dask array, shape (n, p)
        The validated data (``check_X_y(..., lazy=True)``); never modified.
    column_map : ColumnMap
        One range per column of ``raw``.
    """

    def __init__(self, raw, column_map: ColumnMap) -> None:
        if column_map.p != raw.shape[1]:
            raise ValueError(f"MappedMatrix: {column_map.p} ranges for {raw.shape[1]} columns")
        self.raw = raw
        self.column_map = column_map
        self._formats: dict = {}     # a sparse raw in CSC (columns) or CSR (rows), converted once
        self.shape = tuple(int(d) for d in raw.shape)
        self.ndim = 2
        self.dtype = np.dtype(np.float64)

    def _as_format(self, fmt: str):
        """A sparse ``raw`` as ``"csc"`` or ``"csr"`` (one ``O(nnz)`` conversion, kept)."""
        if self.raw.format == fmt:
            return self.raw
        if fmt not in self._formats:
            self._formats[fmt] = self.raw.asformat(fmt)
        return self._formats[fmt]

    def columns(self, cols) -> np.ndarray:
        """Mapped float64 columns ``cols`` (an index array or a slice): shape ``(n, k)``."""
        if isinstance(cols, slice):
            cols = np.arange(self.shape[1])[cols]
        cols = np.asarray(cols, dtype=np.intp)
        if is_sparse(self.raw):
            B = self._as_format("csc")[:, cols].toarray()
        else:
            B = self.raw[:, cols]
        B = np.array(B, dtype=np.float64, copy=True)
        return self.column_map.apply(B, cols)

    def rows(self, rows) -> np.ndarray:
        """Mapped float64 rows ``rows``: shape ``(len(rows), p)``, C-ordered."""
        if is_sparse(self.raw):
            B = self._as_format("csr")[rows].toarray()
        else:
            B = np.asarray(self.raw[rows])
        B = np.array(B, dtype=np.float64, order="C", copy=True)
        return self.column_map.apply(np.atleast_2d(B))

    def __getitem__(self, key):
        if isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], slice) \
                and key[0] == slice(None):
            cols = key[1]
            if isinstance(cols, (int, np.integer)):
                return self.columns([int(cols)])[:, 0]
            return self.columns(cols)
        if not isinstance(key, tuple):
            return self.rows(key)
        raise TypeError("MappedMatrix supports M[:, columns] and M[rows] only")

    def take_columns(self, cols) -> MappedMatrix:
        """The mapped matrix of the columns ``cols`` (a sparse ``raw`` stays sparse)."""
        cols = np.asarray(cols, dtype=np.intp)
        sub = (self._as_format("csc")[:, cols] if is_sparse(self.raw)
               else np.asarray(self.raw[:, cols]))
        return MappedMatrix(sub, self.column_map.subset(cols))

    def toarray(self) -> np.ndarray:
        """The whole mapped matrix as a dense float64 array (``n p`` floats: avoid)."""
        return self.columns(slice(None))

    def __array__(self, dtype=None, copy=None):
        A = self.toarray()
        return A if dtype is None else A.astype(dtype)

    def __repr__(self) -> str:
        return (f"MappedMatrix(shape={self.shape}, input={type(self.raw).__name__}/"
                f"{getattr(self.raw, 'dtype', None)})")
