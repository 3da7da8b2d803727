"""Sufficient statistics of the clipped data, computed in one pass on a Dask cluster.

For least squares the support objective ``L(S)`` (:mod:`mipdp.losses.least_squares`), its
cuts, its one-swap neighbourhoods and the IHT warm start need the clipped data only
through

    G = XcᵀXc (p × p),   Xcᵀyc (p,),   ycᵀyc,   n,

with ``Xc = clip(X, -b_x, b_x)`` and ``yc = clip(y, -b_y, b_y)``.  When ``X`` (and ``y``)
are ``dask.array`` arrays with a modest ``p`` (tall data, n ≫ p), :func:`clipped_statistics`
builds the four products as one Dask graph (``da.clip``, ``Xc.T @ Xc``, ``da.dot``,
column sums) and evaluates them with a single ``dask.compute``: each chunk of ``X`` is
generated or read once, on whatever scheduler is active (the user's
``distributed.Client`` when there is one; nothing is scheduled by mipdp).  Only ``O(p²)``
numbers come back.  :class:`GramDesign` then plays the part of the clipped design for
the least-squares objective on the client, where the MIP master and the sampler run.

Privacy: nothing changes.  The statistics are those of the same clipped data, and every
value of ``L(S)`` is the same closed form of them that the in-memory path evaluates (up to
floating-point summation order), so the mechanism, its sensitivity
``Δ = (b_y + b_x r √s)² / (2n)`` and its guarantee are those of the in-memory release.

Also computed in the same pass (not private, for the clipping diagnostic only): the
fraction of each column's entries and of ``y``'s entries that the bounds clip, and the
number of non-finite entries (a ``ValueError`` if any).
"""

from __future__ import annotations

import logging
import time

import numpy as np

__all__ = ["STATISTICS_MAX_P", "GramDesign", "clipped_statistics"]

logger = logging.getLogger(__name__)

#: widest dask design summarised by its Gram matrix (p² float64: 128 MiB at p = 4096);
#: wider ones keep the lazy :class:`mipdp.data.ClippedDesign` (products on the cluster)
STATISTICS_MAX_P = 4096


class _GramColumns:
    """The :class:`mipdp.column_gram.ColumnGram` interface over a Gram matrix held whole."""

    passes = 0

    def __init__(self, gram: np.ndarray) -> None:
        self._g = gram
        self.max_columns = int(gram.shape[0])

    def get(self, idx) -> np.ndarray:
        return self._g[:, np.asarray(idx, dtype=np.intp).ravel()]

    def product(self, idx, coef) -> np.ndarray:
        idx = np.asarray(idx, dtype=np.intp).ravel()
        if idx.size == 0:
            return np.zeros(self._g.shape[0])
        return self._g[:, idx] @ np.asarray(coef, dtype=np.float64)


class GramDesign:
    """The clipped design known through its sufficient statistics only.

    Stands in for :class:`mipdp.data.ClippedDesign` in the least-squares objective
    (:class:`mipdp.losses.least_squares.GramLeastSquaresObjective`) and the IHT warm start:
    ``gram()``, ``col_sq()``, ``gram_blocks``, ``column_gram``, ``gram_matvec`` and
    ``xty``.  There are no rows: products with vectors of length ``n`` are not available.

    Parameters
    ----------
    n : int
        Number of samples.
    gram : ndarray, shape (p, p)
        ``XcᵀXc``.
    xty : ndarray, shape (p,)
        ``Xcᵀyc``.
    yty : float
        ``ycᵀyc``.
    clipped_x : ndarray, shape (p,), optional
        Fraction of each column's entries clipped (**not private**, a diagnostic).
    clipped_y : float, optional
        Fraction of ``y`` clipped (**not private**, a diagnostic).
    """

    kind = "statistics"
    #: :func:`mipdp.enumeration.warm_start.iht_support` uses :meth:`gram_matvec`
    row_major_pass = True
    _mipdp_design = True

    def __init__(self, n: int, gram: np.ndarray, xty: np.ndarray, yty: float,
                 clipped_x: np.ndarray | None = None, clipped_y: float | None = None) -> None:
        self._gram = np.ascontiguousarray(gram, dtype=np.float64)
        p = self._gram.shape[0]
        if self._gram.shape != (p, p):
            raise ValueError("gram: a square (p, p) matrix expected")
        self.n, self.p = int(n), int(p)
        self.shape = (self.n, self.p)
        self.ndim = 2
        self.dtype = np.dtype(np.float64)
        self.xty = np.asarray(xty, dtype=np.float64).reshape(p)
        self.yty = float(yty)
        self._clipped = np.zeros(p) if clipped_x is None else np.asarray(clipped_x, float)
        self.y_clipped_fraction = clipped_y
        self.column_gram = _GramColumns(self._gram)
        #: seconds of the pass on the cluster (set by :func:`clipped_statistics`)
        self.compute_time = 0.0

    def gram(self) -> np.ndarray:
        """``XcᵀXc``."""
        return self._gram

    def col_sq(self) -> np.ndarray:
        """``‖Xc_j‖²``: the Gram diagonal."""
        return np.diag(self._gram).copy()

    def gram_blocks(self, supports) -> np.ndarray:
        """``Xc_SᵀXc_S`` for each row ``S`` of ``supports``: shape ``(m, s, s)``."""
        S = np.atleast_2d(np.asarray(supports, dtype=np.intp))
        return self._gram[S[:, :, None], S[:, None, :]]

    def gram_matvec(self, v, shift=None) -> np.ndarray:
        """``XcᵀXc v + shift``."""
        w = self._gram @ np.asarray(v, dtype=np.float64)
        return w if shift is None else w + shift

    def clipped_per_column(self) -> np.ndarray:
        """Fraction of each column's entries with ``|x_ij| > b_x`` (**not private**)."""
        return self._clipped.copy()

    def __repr__(self) -> str:
        return f"GramDesign(n={self.n}, p={self.p})"


def _as_dask_vector(y, chunks):
    import dask.array as da

    from .data import is_dask
    if is_dask(y):
        return y.rechunk((chunks,)) if y.chunks[0] != chunks else y
    return da.from_array(np.asarray(y, dtype=np.float64), chunks=(chunks,))


def _partial_statistics(Xb, yb, b_x, b_y, centre, width, count_x):
    """One row block's share of every statistic, flattened: ``[G (p²), Xᵀy (p), yᵀy,
    clipped counts of the columns (p), clipped count of y]``.  The block is clipped
    once, in a copy of its own (the input block may be shared with other tasks), with
    the float64 operations of :class:`mipdp.data.ClippedDesign` in the same order."""
    B = np.array(Xb, dtype=np.float64, copy=True)
    p = B.shape[1]
    counts = np.zeros(p)
    if centre is not None:            # private ranges: the column map, then the bound
        np.subtract(B, centre, out=B)
        np.divide(B, width, out=B)
        np.clip(B, -0.5, 0.5, out=B)
    elif count_x:                     # clipped iff |x| > b_x (a diagnostic, not private)
        counts = np.count_nonzero(np.abs(B) > b_x, axis=0).astype(np.float64)
    if b_x is not None:
        np.clip(B, -b_x, b_x, out=B)
    yv = np.asarray(yb, dtype=np.float64).reshape(-1)
    yc = yv if b_y is None else np.clip(yv, -b_y, b_y)
    cy = 0.0 if b_y is None else float(np.count_nonzero(np.abs(yv) > b_y))
    out = np.concatenate([(B.T @ B).ravel(), B.T @ yc, [yc @ yc], counts, [cy]])
    return out[None, :]


def clipped_statistics(X, y, b_x: float | None, b_y: float | None) -> GramDesign:
    """``XcᵀXc``, ``Xcᵀyc``, ``ycᵀyc`` of a dask ``X`` in one ``dask.compute``.

    Each row block of ``X`` (with its block of ``y``) gives its share of every statistic
    in one task (``da.map_blocks``: clipped once, then ``BᵀB``, ``Bᵀy_B``, ``y_Bᵀy_B``
    and the clipped counts), and Dask's tree reduction (``.sum(axis=0)``) adds the
    shares: each chunk is generated or read once, on the active scheduler (the user's
    ``distributed.Client`` if any), and only ``p² + 2p + 2`` numbers reach the client.

    Parameters
    ----------
    X : dask.array.Array or mipdp.mapped.MappedMatrix over one, shape (n, p)
        Validated by :func:`mipdp._validation.check_X_y` (``lazy=True``, which adds the
        lazy finiteness check).  Best chunked by rows with every column in one chunk
        (tall data); other chunkings are rechunked to that.
    y : dask.array.Array or ndarray, shape (n,)
    b_x, b_y : float or None
        Clipping bounds (``None``: no clipping).

    Returns
    -------
    GramDesign

    Raises
    ------
    ValueError
        ``X`` or ``y`` holds NaN or infinite values.
    """
    import dask
    import dask.array as da

    from .mapped import MappedMatrix
    cmap = None
    if isinstance(X, MappedMatrix):
        cmap, X = X.column_map, X.raw
    if len(X.chunks[1]) > 1:   # one column chunk: each row block gives its Gram term alone
        X = X.rechunk({1: -1})
    n, p = (int(d) for d in X.shape)
    yd = _as_dask_vector(y, X.chunks[0])
    count_x = cmap is None and b_x is not None
    length = p * p + 2 * p + 2
    parts = da.map_blocks(
        _partial_statistics, X, yd[:, None], b_x, b_y,
        None if cmap is None else cmap.centre, None if cmap is None else cmap.width,
        count_x, chunks=((1,) * X.numblocks[0], (length,)), dtype=np.float64,
        meta=np.empty((0, 0)))
    t0 = time.perf_counter()
    (total,) = dask.compute(parts.sum(axis=0))   # one graph: each chunk of X read once
    elapsed = time.perf_counter() - t0
    total = np.asarray(total, dtype=np.float64)
    if not np.all(np.isfinite(total)):
        raise ValueError("X and y: contain NaN or infinite values")
    gram = total[:p * p].reshape(p, p)
    gram = 0.5 * (gram + gram.T)     # exactly symmetric (each block's BᵀB is, up to BLAS)
    xty, yty = total[p * p:p * p + p], float(total[p * p + p])
    cx, cy = total[p * p + p + 1:p * p + 2 * p + 1], float(total[-1])
    design = GramDesign(n, gram, xty, yty, cx / n if count_x else None,
                        None if b_y is None else cy / n)
    design.compute_time = elapsed
    logger.debug("clipped_statistics: n=%d, p=%d in one pass, %.2f s (not private)", n, p, elapsed)
    return design
