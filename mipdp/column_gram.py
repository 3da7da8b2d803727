"""Columns of the Gram matrix ``XcᵀXc``, computed a few at a time and kept.

The least-squares objective needs ``Xcᵀρ`` for the residual ``ρ = y - Xc_S β`` of a support
``S`` (its cut, :meth:`~mipdp.losses.least_squares.LeastSquaresObjective.value_and_cut`),
``Xc_SᵀXc`` (its one-swap neighbourhood) and IHT's gradients ``Xcᵀ(Xc β - y)`` with ``β``
on ``s`` features.  With ``Xcᵀy`` known (:class:`mipdp.data.ClippedDesign` computes it in
its first pass), each is a combination of the Gram columns ``Xcᵀx_j`` of the support's
features:

    Xcᵀρ = Xcᵀy - Σ_{j∈S} β_j Xcᵀx_j.

Supports met along a release share most of their features (the centre, its swaps, the
few features the searches bring in), so keeping those columns replaces a pass over ``X``
per cut by one pass per batch of new features — at p = 10⁵ a pass reads 2.4 GB, at
p = 10⁶ (a float32 memmap) 8 GB.  Equal to the direct products up to floating-point
summation order.

Memory: at most ``max(max_bytes, 8 p k)`` bytes, ``k`` the features of one request
(least recently used columns are dropped first).
"""

from __future__ import annotations

import weakref

import numpy as np

__all__ = ["ColumnGram", "GRAM_COLUMNS_BYTES"]

#: bytes of Gram columns kept (8p bytes each: 32 columns at p = 10⁶, 320 at p = 10⁵)
GRAM_COLUMNS_BYTES = 256 * 2 ** 20


class ColumnGram:
    """Columns ``Xcᵀx_j`` of the Gram matrix of a design, computed on demand and kept.

    Parameters
    ----------
    design : mipdp.data.ClippedDesign
        Anything with ``p``, ``columns(idx)`` and ``rmatvec(V)`` (``V`` of shape (n, k)).
    max_bytes : int, optional
        Budget of the columns kept (default :data:`GRAM_COLUMNS_BYTES`).
    """

    def __init__(self, design, max_bytes: int | None = None) -> None:
        self._set_design(design)
        budget = GRAM_COLUMNS_BYTES if max_bytes is None else int(max_bytes)
        self.max_columns = max(1, budget // (8 * max(int(design.p), 1)))
        self._cols: dict[int, np.ndarray] = {}   # insertion order: least recent first
        #: passes over ``X`` made (one per request with a feature not kept)
        self.passes = 0

    def _set_design(self, design) -> None:
        # a weak reference: the design owns this cache, and a cycle design <-> cache kept a
        # released design's clipped copy (2.4 GB at p = 10⁵) alive until the garbage
        # collector's next full pass (the RSS grew by 2.5 GB per release in a loop)
        try:
            ref = weakref.ref(design)
        except TypeError:          # an object without weak references: held directly
            self._ref = lambda: design
        else:
            self._ref = ref

    def __getstate__(self) -> dict:
        # pickled (or deep-copied) with its design: the reference is strong in the state
        state = self.__dict__.copy()
        state["_ref"] = self._d
        return state

    def __setstate__(self, state: dict) -> None:
        design = state.pop("_ref")
        self.__dict__.update(state)
        self._set_design(design)

    @property
    def _d(self):
        d = self._ref()
        if d is None:   # pragma: no cover - the design owns the cache
            raise RuntimeError("ColumnGram: its design was freed")
        return d

    def __len__(self) -> int:
        return len(self._cols)

    def fork(self, design) -> ColumnGram:
        """A cache for one worker of :mod:`mipdp.enumeration.fork`: the columns kept so far
        (shared, read-only), its own additions and evictions (a column computed in a batch
        may differ in its last bits from the same column computed in another batch, so
        workers never see each other's columns: what each computes depends on its own
        history only)."""
        new = ColumnGram.__new__(ColumnGram)
        new._set_design(design)
        new.max_columns = self.max_columns
        new._cols = dict(self._cols)
        new.passes = 0
        return new

    def get(self, idx) -> np.ndarray:
        """``Xcᵀ Xc[:, idx]``, shape ``(p, len(idx))``: the missing columns in one pass."""
        idx = [int(j) for j in np.asarray(idx, dtype=np.intp).ravel()]
        missing = [j for j in dict.fromkeys(idx) if j not in self._cols]
        if missing:
            C = self._d.rmatvec(self._d.columns(np.array(missing, dtype=np.intp)))
            self.passes += 1
            for k, j in enumerate(missing):
                self._cols[j] = np.array(C[:, k])
        out = np.empty((int(self._d.p), len(idx)))
        for k, j in enumerate(idx):
            out[:, k] = col = self._cols.pop(j)
            self._cols[j] = col                      # now the most recent
        keep = max(self.max_columns, len(set(idx)))
        while len(self._cols) > keep:
            del self._cols[next(iter(self._cols))]
        return out

    def product(self, idx, coef) -> np.ndarray:
        """``Xcᵀ Xc[:, idx] coef`` (``coef`` of shape ``(len(idx),)``), shape ``(p,)``."""
        idx = np.asarray(idx, dtype=np.intp).ravel()
        if idx.size == 0:
            return np.zeros(int(self._d.p))
        return self.get(idx) @ np.asarray(coef, dtype=np.float64)
