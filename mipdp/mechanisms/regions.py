"""Regions of supports around a centre: exact counts, uniform draws, membership, splits.

A :class:`Region` is the set of size-``s`` supports ``T`` that make exactly ``k``
mistakes against a centre ``C`` (``|T \\ C| = k``), contain every feature of ``fixed_in``
and none of ``fixed_out``.  With the centre's features split into the free ones ``F_C``
(neither fixed in nor out) and the outside ones into ``F_O``, a member keeps
``s - k - |fixed_in ∩ C|`` features of ``F_C`` and adds ``k - |fixed_in \\ C|`` of ``F_O``,
so

    |region| = C(|F_C|, s - k - |fixed_in ∩ C|) · C(|F_O|, k - |fixed_in \\ C|)

exactly (a Python integer), and a uniform member is two independent uniform subsets.
Splitting a region on a free feature ``j`` gives the members with ``j`` and those
without: a partition, so bounds of the parent stay valid for both children.

A region may have *holes*: a few of its members taken out (the envelope moves members
whose objective is known, e.g. every member below a level found by an explicit search, to
its exactly-weighted singletons).  ``size`` counts the members without the holes, a uniform
draw rejects the holes (uniform over the rest), ``contains`` is false on them, and a
split gives each child the holes it contains.

Nothing here looks at data; the bound a region carries is supplied by the caller.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Region", "random_subsets", "region_members"]


def random_subsets(rng: np.random.Generator, pool: int, q: int, m: int) -> np.ndarray:
    """``m`` independent uniform ``q``-subsets of ``range(pool)``, shape ``(m, q)`` (unsorted).

    Sequential draws without replacement, vectorised over the ``m`` rows: the ``t``-th
    index is uniform over the ``pool - t`` unused ones (a uniform rank among them,
    shifted past the used indices in increasing order), so every ordered ``q``-tuple of
    distinct indices is equally likely.
    """
    out = np.empty((m, q), dtype=np.intp)
    for t in range(q):
        r = rng.integers(0, pool - t, size=m)
        if t:
            used = np.sort(out[:, :t], axis=1)
            for c in range(t):
                r += r >= used[:, c]
        out[:, t] = r
    return out


@dataclass
class Region:
    """Supports with ``k`` mistakes against ``center``, containing ``fixed_in``, avoiding
    ``fixed_out``.

    Parameters
    ----------
    center : ndarray of int, shape (s,)
        Sorted centre support.
    k : int
        Number of mistakes, ``0 <= k <= min(s, p - s)``.
    p : int
        Number of features.
    fixed_in, fixed_out : ndarray of int
        Features every member contains / avoids (disjoint).
    bound : float
        A certified lower bound on the objective over the region (``-inf`` if unknown),
        holes excluded.
    holes : frozenset of tuple, optional
        Members taken out of the region (sorted tuples); each must be a member.  Set at
        construction only (``size`` is computed from it): use :meth:`without`.
    """

    center: np.ndarray
    k: int
    p: int
    fixed_in: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.intp))
    fixed_out: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.intp))
    bound: float = -math.inf
    holes: frozenset = frozenset()

    def __post_init__(self) -> None:
        self.center = np.sort(np.asarray(self.center, dtype=np.intp))
        self.fixed_in = np.sort(np.asarray(self.fixed_in, dtype=np.intp))
        self.fixed_out = np.sort(np.asarray(self.fixed_out, dtype=np.intp))
        s = self.center.size
        in_center = np.zeros(self.p, dtype=bool)
        in_center[self.center] = True
        fixed = np.zeros(self.p, dtype=bool)
        fixed[self.fixed_in] = True
        fixed[self.fixed_out] = True
        self.free_center = np.flatnonzero(in_center & ~fixed)
        self.free_outside = np.flatnonzero(~in_center & ~fixed)
        self._in_center = self.fixed_in[in_center[self.fixed_in]]
        self._in_outside = self.fixed_in[~in_center[self.fixed_in]]
        self.n_keep = s - self.k - self._in_center.size  # still to choose from free_center
        self.n_add = self.k - self._in_outside.size  # still to choose from free_outside
        #: members before the holes are taken out
        self.full_size = (math.comb(self.free_center.size, self.n_keep)
                          * math.comb(self.free_outside.size, self.n_add)
                          if self.n_keep >= 0 and self.n_add >= 0 else 0)
        self.holes = frozenset(tuple(int(i) for i in h) for h in self.holes)
        if self.holes:
            rows = np.array(sorted(self.holes), dtype=np.intp).reshape(-1, s)
            if not (np.all(np.diff(rows, axis=1) > 0) and self._contains_all(rows).all()):
                raise ValueError("holes: every hole must be a member of the region "
                                 "(a sorted support)")
        self.size = self.full_size - len(self.holes)
        self.log_size = math.log(self.size) if self.size else -math.inf

    @property
    def s(self) -> int:
        return self.center.size

    def _sample_full(self, rng: np.random.Generator, m: int) -> np.ndarray:
        keep = self.free_center[random_subsets(rng, self.free_center.size, self.n_keep, m)]
        add = self.free_outside[random_subsets(rng, self.free_outside.size, self.n_add, m)]
        fixed = np.broadcast_to(self.fixed_in, (m, self.fixed_in.size))
        return np.sort(np.concatenate([keep, add, fixed], axis=1), axis=1)

    def _in_holes(self, rows: np.ndarray) -> np.ndarray:
        holes = self.holes
        return np.fromiter((tuple(r) in holes for r in rows.tolist()), bool, rows.shape[0])

    def sample(self, rng: np.random.Generator, m: int) -> np.ndarray:
        """``m`` independent uniform members (holes excluded), shape ``(m, s)``, rows sorted.

        With holes, a draw that falls in a hole is drawn again (rejection: uniform over
        the other members); a region that is mostly holes is listed instead.
        """
        if self.size == 0:
            raise ValueError("sample: the region is empty")
        if not self.holes:
            return self._sample_full(rng, m)
        if 2 * len(self.holes) >= self.full_size:   # mostly holes: list the others (once)
            rows = self.__dict__.get("_listed")
            if rows is None:
                rows = self.__dict__["_listed"] = np.vstack(list(region_members(self)))
            return rows[rng.integers(0, rows.shape[0], size=m)]
        out = self._sample_full(rng, m)
        bad = np.flatnonzero(self._in_holes(out))
        while bad.size:
            out[bad] = self._sample_full(rng, bad.size)
            bad = bad[self._in_holes(out[bad])]
        return out

    def _contains_all(self, T: np.ndarray) -> np.ndarray:
        ok = (T.shape[1] - np.isin(T, self.center).sum(axis=1)) == self.k
        if self.fixed_in.size:
            ok &= np.isin(T, self.fixed_in).sum(axis=1) == self.fixed_in.size
        if self.fixed_out.size:
            ok &= ~np.isin(T, self.fixed_out).any(axis=1)
        return ok

    def contains(self, supports: np.ndarray) -> np.ndarray:
        """Membership of each row of ``supports`` (shape ``(m, s)``, in any order), as a
        bool array; holes are not members."""
        T = np.atleast_2d(np.asarray(supports, dtype=np.intp))
        ok = self._contains_all(T)
        if self.holes and ok.any():
            idx = np.flatnonzero(ok)
            ok[idx[self._in_holes(np.sort(T[idx], axis=1))]] = False
        return ok

    def without(self, supports) -> Region:
        """This region with the members among ``supports`` (sorted rows) made holes too."""
        T = np.sort(np.atleast_2d(np.asarray(supports, dtype=np.intp)), axis=1)
        new = {tuple(r) for r in T[self.contains(T)].tolist()} if T.size else set()
        return Region(self.center, self.k, self.p, self.fixed_in, self.fixed_out, self.bound,
                      self.holes | new)

    def split(self, j: int) -> tuple[Region, Region]:
        """The members containing free feature ``j`` and those avoiding it (bounds inherited)."""
        j = int(j)
        if j in set(self.fixed_in.tolist()) | set(self.fixed_out.tolist()):
            raise ValueError(f"split: feature {j} is already fixed in this region")
        has_j = frozenset(h for h in self.holes if j in h)
        with_j = Region(self.center, self.k, self.p, np.append(self.fixed_in, j), self.fixed_out,
                        self.bound, has_j)
        without_j = Region(self.center, self.k, self.p, self.fixed_in,
                           np.append(self.fixed_out, j), self.bound, self.holes - has_j)
        return with_j, without_j

    def describe(self) -> dict:
        """Description (for statistics); with holes it depends on the data (not private)."""
        out = {"k": self.k, "size": self.size, "fixed_in": self.fixed_in.tolist(),
               "fixed_out": self.fixed_out.tolist()}
        if self.holes:
            out["holes"] = len(self.holes)
        return out


def _combinations(n: int, q: int) -> np.ndarray:
    """All ``q``-subsets of ``range(n)`` in lexicographic order, shape ``(C(n, q), q)``."""
    import itertools
    if q == 0:
        return np.zeros((1, 0), dtype=np.intp)
    flat = np.fromiter(itertools.chain.from_iterable(itertools.combinations(range(n), q)),
                       dtype=np.intp, count=math.comb(n, q) * q)
    return flat.reshape(-1, q)


def region_members(region: Region, chunk: int = 200_000):
    """Yield every member of ``region`` (sorted rows) in chunks of at most ``chunk`` rows."""
    if region.size == 0:
        return
    keep = region.free_center[_combinations(region.free_center.size, region.n_keep)]
    add_all = _combinations(region.free_outside.size, region.n_add)
    step = max(1, chunk // max(1, keep.shape[0]))
    for lo in range(0, add_all.shape[0], step):
        add = region.free_outside[add_all[lo:lo + step]]
        m = keep.shape[0] * add.shape[0]
        rows = np.concatenate([np.repeat(keep, add.shape[0], axis=0),
                               np.tile(add, (keep.shape[0], 1)),
                               np.broadcast_to(region.fixed_in, (m, region.fixed_in.size))], axis=1)
        rows = np.sort(rows, axis=1)
        if region.holes:
            rows = rows[~region._in_holes(rows)]
            if rows.shape[0] == 0:   # a chunk of holes only
                continue
        yield rows
