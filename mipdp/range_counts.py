"""Grid counts of the columns of ``X`` without an ``(n, p)`` array (private ranges).

The quantile mechanism of the private ranges (:mod:`mipdp.mechanisms.quantile`) needs,
for every column ``j`` (or for all columns pooled), the counts ``#{i : x_ij <= g}`` at the
grid points ``g``.  :func:`mipdp.mechanisms.quantile.column_grid_counts` places the whole
``(n, p)`` matrix on the grid at once; this module does the same

* tile by tile for a dense array or :class:`numpy.memmap` (2 MiB of float64: blocks of
  :data:`COUNT_ROWS` rows and as many columns for a C-ordered input, full-height column
  blocks otherwise, each converted to float64 on its own), accumulating one histogram per
  column;
* from the stored values for a scipy sparse matrix, the implicit zeros of column ``j``
  (``n − nnz_j`` of them) added at the grid cell of ``0`` analytically.

The counts are integers, identical to those of the dense float64 path (the histogram of a
column is a sum over its rows), so the released ranges are the same draw for the same
random state.  Memory: ``O(p m)`` integers for per-column counts (``O(m)`` pooled) plus one
tile (``O(nnz)`` for sparse input).
"""

from __future__ import annotations

import numpy as np

from .data import TILE_BYTES, TILE_COLS, canonical_sparse, is_sparse

__all__ = ["column_histograms", "lazy_column_grid_counts", "lazy_pooled_grid_counts"]

#: rows of a tile of a C-ordered input, when ``n`` has as many (512 columns of 2 MiB tiles)
COUNT_ROWS = 512


def _tiles(X):
    """``(r0, r1, c0, c1)`` tiles of about :data:`~mipdp.data.TILE_BYTES` float64 bytes."""
    n, p = X.shape
    flags = getattr(X, "flags", None)
    c_order = flags is not None and flags.c_contiguous and not flags.f_contiguous
    if c_order:
        # rows of w columns (contiguous reads), at least COUNT_ROWS rows tall when n allows:
        # a tile's per-column histogram (w (m + 1) integers) stays below its values' size
        w = min(p, TILE_COLS, max(1, TILE_BYTES // (8 * min(n, COUNT_ROWS))))
        r = min(n, max(1, TILE_BYTES // (8 * w)))
    else:
        r, w = n, max(1, min(p, TILE_BYTES // (8 * max(n, 1))))
    for c0 in range(0, p, w):
        for r0 in range(0, n, r):
            yield r0, min(r0 + r, n), c0, min(c0 + w, p)


def column_histograms(X, grid: np.ndarray, *, pooled: bool = False) -> np.ndarray:
    """Histogram of every column of ``X`` over the grid cells, shape ``(p, m + 1)``.

    Entry ``[j, k]`` counts the values ``x`` of column ``j`` whose first grid point
    ``>= x`` is ``g_k`` (``k = m``: beyond the grid), i.e. ``x <= g_k`` iff the cell is
    ``<= k``.  With ``pooled`` the histograms of all columns are summed: shape
    ``(m + 1,)``.

    Parameters
    ----------
    X : ndarray, numpy.memmap, scipy sparse matrix or dask array, shape (n, p)
        Validated (finite) data; never copied whole.
    grid : ndarray, shape (m,)
        Strictly increasing public grid.
    pooled : bool, default False
    """
    grid = np.asarray(grid, dtype=np.float64)
    n, p = X.shape
    m1 = grid.size + 1
    if is_sparse(X):
        csc = canonical_sparse(X.tocsc())
        nnz = np.diff(csc.indptr)
        cells = np.searchsorted(grid, np.asarray(csc.data, dtype=np.float64), side="left")
        zero_cell = int(np.searchsorted(grid, 0.0, side="left"))
        if pooled:
            hist = np.bincount(cells, minlength=m1)
            hist[zero_cell] += n * p - int(nnz.sum())
            return hist
        cols = np.repeat(np.arange(p), nnz)
        hist = np.bincount(cells + m1 * cols, minlength=p * m1).reshape(p, m1)
        hist[:, zero_cell] += n - nnz
        return hist
    hist = np.zeros(m1 if pooled else (p, m1), dtype=np.int64)
    for r0, r1, c0, c1 in _tiles(X):      # a dask array: full-height column blocks
        T = np.asarray(X[r0:r1, c0:c1], dtype=np.float64)
        cells = np.searchsorted(grid, T, side="left")            # (r, k) in [0, m]
        if pooled:
            hist += np.bincount(cells.ravel(), minlength=m1)
        else:
            k = c1 - c0
            flat = cells + m1 * np.arange(k)[None, :]
            hist[c0:c1] += np.bincount(flat.ravel(), minlength=k * m1).reshape(k, m1)
    return hist


def lazy_column_grid_counts(X, grid: np.ndarray) -> np.ndarray:
    """:func:`mipdp.mechanisms.quantile.column_grid_counts` without an ``(n, p)`` array.

    Returns
    -------
    ndarray, shape (p, m)
        ``#{i : x_ij <= g_k}`` as floats, equal to the dense path's.
    """
    hist = column_histograms(X, grid)
    np.cumsum(hist, axis=1, out=hist)                    # in place: one (p, m + 1) array
    return hist[:, :-1].astype(float)


def lazy_pooled_grid_counts(X, grid: np.ndarray) -> np.ndarray:
    """:func:`mipdp.mechanisms.quantile.grid_counts` of all columns pooled, lazily.

    Returns
    -------
    ndarray, shape (m,)
        ``(1/p) Σ_j #{i : x_ij <= g_k}``, equal to the dense path's.
    """
    hist = column_histograms(X, grid, pooled=True)
    return np.cumsum(hist)[:-1].astype(float) / X.shape[1]
