"""Look-up of supports among many sorted rows, in 16 bytes per row.

The samplers look up whether a support is one of the envelope's singletons (``S*`` and its
``s(p - s)`` one-swaps: 5·10⁶ rows at p = 10⁶).  A Python dictionary of tuples takes about
280 bytes per row there (1.4 GB); :class:`SupportIndex` keeps a 64-bit hash per row, sorted,
and the sorting permutation, and confirms a hit against the row itself, so collisions
only cost a comparison.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SupportIndex"]

# odd 64-bit multipliers, one per position (fixed: the index is deterministic)
_MULT = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9,
                  0xD6E8FEB86659FD93, 0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53,
                  0x94D049BB133111EB, 0xBF58476D1CE4E5B9], dtype=np.uint64)


def _hash(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.int64).astype(np.uint64)
    s = rows.shape[1]
    mult = _MULT[np.arange(s) % _MULT.size] + np.uint64(2) * (np.arange(s, dtype=np.uint64)
                                                              // np.uint64(_MULT.size))
    with np.errstate(over="ignore"):
        h = (rows * mult[None, :]).sum(axis=1, dtype=np.uint64)
        h ^= h >> np.uint64(29)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(32)
    return h


class SupportIndex:
    """Position of each of ``rows`` (sorted supports, shape ``(m, s)``) by its tuple.

    ``index.get(key)`` is the row number of the sorted tuple ``key`` (the first, if rows
    repeat) or ``None``; ``key in index`` tests membership.
    """

    def __init__(self, rows: np.ndarray) -> None:
        self.rows = np.atleast_2d(np.asarray(rows, dtype=np.intp))
        h = _hash(self.rows) if self.rows.size else np.zeros(self.rows.shape[0], np.uint64)
        self._order = np.argsort(h, kind="stable")
        self._keys = h[self._order]

    def __len__(self) -> int:
        return self.rows.shape[0]

    def get(self, key) -> int | None:
        if len(key) != self.rows.shape[1] or self.rows.shape[0] == 0:
            return None
        q = np.asarray(key, dtype=np.intp)[None, :]
        h = _hash(q)[0]
        lo = int(np.searchsorted(self._keys, h, side="left"))
        hi = int(np.searchsorted(self._keys, h, side="right"))
        for i in self._order[lo:hi]:
            if np.array_equal(self.rows[i], q[0]):
                return int(i)
        return None

    def __contains__(self, key) -> bool:
        return self.get(key) is not None
