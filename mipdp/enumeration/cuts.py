"""Every outer-approximation cut found so far, as arrays (objective units).

A cut at support ``S`` with certified lower bound ``lower <= L(S)`` and slope ``g`` reads
``L(T) >= lower + gᵀ(1_T - 1_S) = a + Σ_{i∈T} g_i`` for every support ``T``, with
``a = lower - Σ_{i∈S} g_i`` (each loss proves the inequality in its module notes).  The
master problem holds the same cuts as rows (in units of Δ); :class:`CutStore` holds them
as ``a`` (T,) and ``G`` (T, p) so that the bound ``max_t (a_t + Σ_{i∈T} G_{t,i})`` of many
supports is one vectorised computation (:mod:`mipdp.enumeration.explicit`).

Rounding: each bound is a sum of ``s + 1`` floating-point numbers; :meth:`CutStore.slack`
is an upper bound on its rounding error (``(s + 2) u Σ |terms|`` with ``u`` the unit
roundoff, taken with a factor 16), which callers add before they exclude a support.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CutStore", "RowStack", "cut_of"]

_EPS = np.finfo(float).eps


def cut_of(objective, S: np.ndarray) -> tuple[float, float, np.ndarray, list]:
    """``(value, lower, g, extra cuts)`` of the support ``S`` on ``objective`` (a
    :class:`~mipdp.losses.base.SupportObjective`), nothing recorded: its
    ``value_and_cut`` and ``extra_cuts``."""
    out = objective.value_and_cut(S)
    v, lower, g = out if len(out) == 3 else (out[0], out[0], out[1])
    return v, lower, g, objective.extra_cuts(S)


class RowStack:
    """Rows of length ``p`` appended one at a time and read as one ``(T, p)`` array.

    The rows live in one buffer with spare rows (a quarter more, at least 16), so reading
    is a view and appending copies nothing until the buffer is full: one copy of the cuts
    is held (at p = 10⁶ each row is 8 MB), not a list of rows beside its stacked copy.
    A view read earlier stays valid (rows are only ever written past its end).
    """

    def __init__(self, p: int) -> None:
        self.p = int(p)
        self._buf = np.zeros((0, self.p))
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def append(self, row: np.ndarray) -> None:
        """Append a copy of ``row``."""
        if self._n == self._buf.shape[0]:
            grown = np.empty((self._n + max(16, self._n // 4), self.p))
            grown[:self._n] = self._buf[:self._n]
            self._buf = grown
        self._buf[self._n] = row
        self._n += 1

    def extend(self, rows: np.ndarray) -> None:
        """Append copies of the rows of a ``(k, p)`` array (one allocation)."""
        rows = np.asarray(rows, dtype=float).reshape(-1, self.p)
        k = rows.shape[0]
        if self._n + k > self._buf.shape[0]:
            grown = np.empty((self._n + k + max(16, (self._n + k) // 4), self.p))
            grown[:self._n] = self._buf[:self._n]
            self._buf = grown
        self._buf[self._n:self._n + k] = rows
        self._n += k

    @property
    def array(self) -> np.ndarray:
        """The rows so far, shape ``(T, p)`` (a view: do not write to it)."""
        return self._buf[:self._n]

    def __getitem__(self, t: int) -> np.ndarray:
        if not -self._n <= t < self._n:
            raise IndexError(t)
        return self._buf[t % self._n]


class CutStore:
    """Cuts ``L(T) >= a_t + Σ_{i∈T} G[t, i]`` in objective units.

    Parameters
    ----------
    p, s : int
        Number of features and support size.
    """

    def __init__(self, p: int, s: int) -> None:
        self.p, self.s = p, s
        self._a: list[float] = []
        self._G = RowStack(p)
        self._absmax = 0.0
        #: the support of each cut, in order (a support may carry several cuts)
        self.supports: list[tuple] = []

    def __len__(self) -> int:
        return len(self._a)

    def add(self, support: np.ndarray, lower: float, grad: np.ndarray) -> None:
        """Add the cut at ``support`` (``lower <= L(support)`` certified, slope ``grad``)."""
        g = np.asarray(grad, dtype=float)       # copied into the store by append
        a = float(lower) - float(g[np.asarray(support, dtype=np.intp)].sum())
        self._a.append(a)
        self._G.append(g)
        self.supports.append(tuple(int(i) for i in np.asarray(support).ravel()))
        self._absmax = max(self._absmax,
                           abs(a) + abs(float(lower)) + self.s * float(np.max(np.abs(g))))

    def copy(self) -> CutStore:
        """An independent store with the same cuts (the rows are copied once)."""
        new = CutStore(self.p, self.s)
        new._a = list(self._a)
        new._G.extend(self._G.array)
        new._absmax = self._absmax
        new.supports = list(self.supports)
        return new

    @property
    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """``(a, G)``: shapes ``(T,)`` and ``(T, p)``."""
        return np.array(self._a, dtype=float), self._G.array

    def slack(self) -> float:
        """Bound on the rounding error of any computed cut bound (objective units)."""
        return 16.0 * (self.s + 2) * _EPS * self._absmax

    def combination_slack(self) -> float:
        """Bound on the rounding error of a convex combination ``Σ μ_t (a_t + Σ_{i∈T} G_ti)``
        of the cuts computed as ``μᵀa + Σ_{i∈T} (μᵀG)_i`` (objective units): each of the
        ``s + 1`` terms is a ``T``-term dot product, with the same factor 16 as :meth:`slack`."""
        return 16.0 * (len(self) + self.s + 2) * _EPS * self._absmax

    def bounds(self, supports: np.ndarray, start: int = 0) -> np.ndarray:
        """``max_t a_t + Σ_{i∈S} G[t, i]`` over the cuts ``t >= start`` for each row ``S``
        (``-inf`` without cuts)."""
        S = np.atleast_2d(np.asarray(supports, dtype=np.intp))
        a, G = self.arrays
        out = np.full(S.shape[0], -np.inf)
        for t in range(start, a.size):
            np.maximum(out, a[t] + G[t][S].sum(axis=1), out=out)
        return out
