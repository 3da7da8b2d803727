"""Bounds-free release with the redundancy-aware Kendall score: ``bounds="kendall"``.

Without public ranges, :func:`mipdp.private_bss` can score a support ``S`` (``|S| = s``) by
Kendall rank correlations alone::

    R(S) = Σ_{j∈S} |T_jy|  −  γ/(s−1) Σ_{j<l ∈ S} |T_jl|,      T_ab = (n/2) τ_a(a, b),

``τ_a = (n_c − n_d)/C(n, 2)`` (tied pairs count as neither concordant nor discordant, the
statistic DPKendall uses).  The first sum rewards features that move with ``y``; the
second charges every pair of selected features for the ranking they share.  ``R`` is
released by the package's exponential mechanism (or any of its methods) through the loss
``L(S) = s/2 − R(S)/n`` (``>= 0``; an additive constant does not change any law).  ``γ``
is a public constant (default :data:`DEFAULT_GAMMA`, chosen on tuning data:
the study ``experiments/studies/rank_redundancy.py`` of the repository).

Sensitivity (docs/privacy.md, "Redundancy-aware Kendall score")
---------------------------------------------------------------
For ``0 <= γ <= 1`` and every support::

    replace-one:   Δ = 2 s                       (the same as Σ_{j∈S} |T_jy| alone)
    add/remove:    Δ = s (3/2 + γ/4)

and for ``γ > 1`` (proven, not tight): ``2 s γ`` and ``s (γ + (1 + γ/2)/2)``.  Ties
included.  ``R`` is not monotone under add/remove, so the samplers use the full ``Δ``.

The enumeration layer (:mod:`mipdp.enumeration`) needs certified lower bounds of ``L``:
every cut of :class:`KendallRedundancyObjective` is a global lower bound over all size-``s``
supports (proof in docs/privacy.md), tight at the support where it is taken.

Pair correlations ``T_jl`` are computed only where needed (a support's pairs, a one-swap
neighbourhood's columns) and cached.
"""

from __future__ import annotations

import logging
import math

import numpy as np

from ._param_validation import InvalidParameterError

logger = logging.getLogger(__name__)

__all__ = ["KENDALL", "DEFAULT_GAMMA", "is_kendall", "check_kendall_options",
           "kendall_score_sensitivity", "KendallRedundancyObjective"]

#: the ``bounds=`` value of the Kendall-score release
KENDALL = "kendall"
#: the redundancy weight γ (chosen on the tuning sets and designs, never on held-out data)
DEFAULT_GAMMA = 0.75


def is_kendall(bounds) -> bool:
    """Whether ``bounds`` asks for the redundancy-aware Kendall score."""
    return isinstance(bounds, str) and bounds == KENDALL


def check_kendall_options(loss_name: str, prescreen, method: str = "exponential",
                          neighbours: str = "replace_one") -> None:
    """Refuse, before the data is read, what the Kendall-score release does not support."""
    if method == "mistakes" and neighbours == "add_remove":
        raise InvalidParameterError(
            "method: method='mistakes' with bounds='kendall' is not available under "
            "add/remove neighbours (the Kendall score is not monotone); use another method "
            "or neighbours='replace_one'")
    if loss_name != "least_squares":
        raise InvalidParameterError(
            f"bounds: bounds='kendall' scores supports by rank correlations with y, for "
            f"regression (loss='least_squares'); got loss={loss_name!r}: pass "
            "bounds='ranks' or public bounds=(b_x, b_y)")
    if prescreen is not None:
        name = prescreen[0] if isinstance(prescreen, (tuple, list)) and prescreen else None
        if name != "kendall":
            raise InvalidParameterError(
                f"prescreen: with bounds='kendall' only the 'kendall' pre-screen is "
                f"available (it depends on ranks only); got prescreen={prescreen!r}")


def check_gamma(gamma) -> float:
    g = float(gamma)
    if not (math.isfinite(g) and g >= 0):
        raise InvalidParameterError(f"gamma: a finite number >= 0, got {gamma!r}")
    return g


def kendall_score_sensitivity(s: int, gamma: float = DEFAULT_GAMMA,
                              neighbours: str = "replace_one") -> float:
    """Sensitivity ``Δ`` of ``R(S)`` (module docstring), for every support of size ``s``.

    Parameters
    ----------
    s : int
    gamma : float, default :data:`DEFAULT_GAMMA`
    neighbours : {"replace_one", "add_remove"}

    Returns
    -------
    float
        ``|R_D(S) − R_D'(S)| <= Δ`` for neighbours ``D, D'`` (docs/privacy.md,
        "Redundancy-aware Kendall score"): ``2 s max(1, γ)`` under replace-one,
        ``s (max(1, γ) + (1 + γ/2)/2)`` under add/remove (``s (3/2 + γ/4)`` for
        ``γ <= 1``).  ``s = 1`` has no pair term: ``2`` and ``3/2``.
    """
    g = check_gamma(gamma) if s > 1 else 0.0
    if neighbours == "add_remove":
        return s * (max(1.0, g) + 0.5 * (1.0 + 0.5 * g))
    return 2.0 * s * max(1.0, g)


# ------------------------------------------------------------------------------ pairs
class _PairCache:
    """``|T_jl|`` computed on demand, kept in a sorted key table (vectorised lookups).

    The counts come from the columns' dense ranks (:class:`mipdp._kendall_fast.DenseRanks`,
    computed once): exact integers, whichever column a pair is computed from.
    """

    def __init__(self, ranks) -> None:
        self.ranks = ranks
        self.p = ranks.p
        self.keys = np.zeros(0, dtype=np.int64)
        self.vals = np.zeros(0)
        self.n_computed = 0

    def _find(self, key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if self.keys.size == 0:
            return np.zeros(key.shape, dtype=np.intp), np.zeros(key.shape, dtype=bool)
        pos = np.minimum(np.searchsorted(self.keys, key), self.keys.size - 1)
        return pos, self.keys[pos] == key

    def get(self, J: np.ndarray, L: np.ndarray) -> np.ndarray:
        """``|T|`` at the pairs ``(J[i], L[i])`` (``J != L``), any shape."""
        J = np.asarray(J, dtype=np.int64)
        L = np.asarray(L, dtype=np.int64)
        shape = J.shape
        a, b = np.minimum(J, L).ravel(), np.maximum(J, L).ravel()
        key = a * self.p + b
        pos, hit = self._find(key)
        if not hit.all():
            self._compute(np.unique(key[~hit]))
            pos, hit = self._find(key)
        return self.vals[pos].reshape(shape)

    def _compute(self, keys: np.ndarray) -> None:
        a, b = keys // self.p, keys % self.p
        new_vals = np.empty(keys.size)
        # group by the index that occurs most, so each group is one vectorised call
        for first, other, idx in _groups(a, b):
            P = self.ranks.P(self.ranks.column(first), other)
            new_vals[idx] = np.abs(P) / max(self.ranks.n - 1, 1)
        self.n_computed += keys.size
        allk = np.concatenate([self.keys, keys])
        allv = np.concatenate([self.vals, new_vals])
        order = np.argsort(allk, kind="stable")
        self.keys, self.vals = allk[order], allv[order]

    def column(self, j: int, cols: np.ndarray) -> np.ndarray:
        """``|T_{j, cols}|`` (``j`` not in ``cols``)."""
        return self.get(np.full(cols.shape, j), cols)


def _groups(a: np.ndarray, b: np.ndarray):
    """Split pairs ``(a, b)`` into groups sharing one index: ``(shared, others, positions)``."""
    left = np.ones(a.size, dtype=bool)
    while left.any():
        ids = np.concatenate([a[left], b[left]])
        shared = int(np.bincount(ids).argmax())
        take = left & ((a == shared) | (b == shared))
        pos = np.flatnonzero(take)
        other = np.where(a[pos] == shared, b[pos], a[pos])
        yield shared, other, pos
        left &= ~take


# ------------------------------------------------------------------------------ objective
class _ScoreLoss:
    """What the enumerator reads off ``objective.loss`` (a name, no ridge)."""

    name = "kendall_redundancy"
    ridge = 1.0
    radius = None


class KendallRedundancyObjective:
    """``L(S) = s/2 − R(S)/n`` on fixed data, with certified cuts (a support objective).

    Implements the interface of :class:`mipdp.losses.base.SupportObjective`: ``values``,
    ``value_bounds``, ``value_and_cut``, ``extra_cuts``, ``one_swap_values`` and a warm
    start ``warm_support``.  The columns of ``X`` are ranked once
    (:class:`mipdp._kendall_fast.DenseRanks`, ``8 n p`` bytes; a sparse ``X`` is densified
    first): the Kendall statistics depend on ranks only.

    Parameters
    ----------
    X : array_like, shape (n, p)
    y : array_like, shape (n,)
    s : int
    gamma : float, default :data:`DEFAULT_GAMMA`
    """

    cheap_values = False
    shifted_cuts = False

    def __init__(self, X, y, s: int, gamma: float = DEFAULT_GAMMA) -> None:
        from ._kendall_fast import DenseRanks
        from .data import is_sparse
        X = X.toarray() if is_sparse(X) else X
        self.X = X                                     # not copied: the ranks are kept
        self.y = np.asarray(y, dtype=np.float64).ravel()
        self.n, self.p = X.shape
        self.s = int(s)
        self.gamma = check_gamma(gamma)
        self.gp = self.gamma / max(self.s - 1, 1)      # γ' = γ/(s−1): weight of one pair
        self.loss = _ScoreLoss()
        self.n_evaluations = 0
        self._fork_base = 0                            # n_evaluations when forked
        #: |T_jy| for every column (DPKendall's scale (n/2)|τ_a|)
        self.ranks = DenseRanks(np.asarray(X, dtype=np.float64))
        self.t = (np.abs(self.ranks.P(DenseRanks.of_vector(self.y), np.arange(self.p)))
                  / max(self.n - 1, 1))
        self.pairs = _PairCache(self.ranks)
        # rounding: R is a sum of s + C(s,2) terms each <= n/2; L = s/2 − R/n
        self._round = 64.0 * np.finfo(float).eps * (self.s + self.s ** 2) * (1.0 + self.gp)

    # -- forks (mipdp.enumeration.fork) -------------------------------------------------------
    def fork(self) -> KendallRedundancyObjective:
        """A copy for one worker: the same ranks and statistics (read-only), its own pair
        cache (a copy: the counts are exact integers, so a pair has the same value whichever
        worker computes it) and its own counter."""
        import copy
        new = copy.copy(self)
        pairs = copy.copy(self.pairs)
        pairs.keys, pairs.vals = self.pairs.keys.copy(), self.pairs.vals.copy()
        new.pairs = pairs
        new._fork_base = self.n_evaluations
        return new

    def merge_fork(self, child: KendallRedundancyObjective) -> None:
        """Add a fork's evaluations to this objective's count (statistics only)."""
        self.n_evaluations += child.n_evaluations - child._fork_base

    # -- values -----------------------------------------------------------------------------
    def _penalty(self, sup: np.ndarray) -> np.ndarray:
        s = sup.shape[1]
        pen = np.zeros(sup.shape[0])
        for a in range(s):
            for b in range(a + 1, s):
                pen += self.pairs.get(sup[:, a], sup[:, b])
        return pen

    def scores(self, supports: np.ndarray) -> np.ndarray:
        """``R(S)`` for each row of ``supports``."""
        sup = np.atleast_2d(np.asarray(supports, dtype=np.intp))
        return self.t[sup].sum(axis=1) - self.gp * self._penalty(sup)

    def values(self, supports: np.ndarray) -> np.ndarray:
        """``L(S) = s/2 − R(S)/n`` for each row of ``supports`` (shape ``(m, s)``)."""
        sup = np.atleast_2d(np.asarray(supports, dtype=np.intp))
        self.n_evaluations += sup.shape[0]
        return 0.5 * sup.shape[1] - self.scores(sup) / self.n

    def value_bounds(self, supports):
        v = self.values(supports)
        return v, v - self._round

    def value_and_cut(self, support: np.ndarray) -> tuple[float, float, np.ndarray]:
        """``(L(S), lower, g)``: the cut ``L(S') >= lower + gᵀ(1_S' − 1_S)`` for every ``S'``.

        ``g_a = −t_a/n`` outside ``S`` and ``g_d = (−t_d + γ' c_d)/n`` inside, with
        ``c_d = Σ_{l∈S, l≠d} |T_dl|`` (docs/privacy.md: the added features' pair terms
        are dropped, ``>= 0``; a dropped feature frees at most ``c_d``).
        """
        S = np.sort(np.asarray(support, dtype=np.intp))
        v = float(self.values(S[None])[0])
        g = -self.t / self.n
        g[S] += self.gp * self._inner(S) / self.n
        return v, v - self._round, g

    def _inner(self, S: np.ndarray) -> np.ndarray:
        """``c_d = Σ_{l∈S, l≠d} |T_dl|`` for ``d`` in ``S``."""
        s = S.size
        if s < 2:
            return np.zeros(s)
        A, B = np.meshgrid(S, S, indexing="ij")
        off = A != B
        M = np.zeros((s, s))
        M[off] = self.pairs.get(A[off], B[off])
        return M.sum(axis=1)

    def extra_cuts(self, support: np.ndarray) -> list[tuple[float, np.ndarray]]:
        """A second cut at ``S`` that charges the ``2s`` outside features with the largest
        ``|T_ay|`` for their pairs with ``S`` (and each dropped ``d`` for those pairs)."""
        S = np.sort(np.asarray(support, dtype=np.intp))
        s = S.size
        if s < 2:
            return []
        out = np.ones(self.p, dtype=bool)
        out[S] = False
        outside = np.flatnonzero(out)
        m = min(2 * s, outside.size)
        if m == 0:
            return []
        C = outside[np.argpartition(-self.t[outside], m - 1)[:m]]
        TC = self.pairs.get(np.repeat(C, s), np.tile(S, m)).reshape(m, s)
        v = float(self.values(S[None])[0])
        g = -self.t / self.n
        g[S] += self.gp * (self._inner(S) + TC.sum(axis=0)) / self.n
        g[C] += self.gp * TC.sum(axis=1) / self.n
        return [(v - self._round, g)]

    def one_swap_values(self, support: np.ndarray) -> np.ndarray:
        """``L(S − S[a] + j)`` for every ``a`` and ``j`` (``inf`` where ``j ∈ S``), exact."""
        S = np.sort(np.asarray(support, dtype=np.intp))
        s = S.size
        out = np.full((s, self.p), np.inf)
        mask = np.ones(self.p, dtype=bool)
        mask[S] = False
        outside = np.flatnonzero(mask)
        if outside.size == 0:
            return out
        R = float(self.scores(S[None])[0])
        c = self._inner(S)
        cols = np.stack([self.pairs.column(int(m), outside) for m in S])    # (s, |out|)
        tot = cols.sum(axis=0)
        for a in range(s):
            # R(S − a + j) = R − t_a + γ' c_a + t_j − γ' (Σ_{l∈S} T_jl − T_ja)
            r = R - self.t[S[a]] + self.gp * c[a] + self.t[outside] - self.gp * (tot - cols[a])
            out[a, outside] = 0.5 * s - r / self.n
        self.n_evaluations += s * outside.size
        return out

    def warm_support(self, s: int) -> np.ndarray:
        """Greedy on the ``4s + 10`` columns with the largest ``|T_jy|`` (deterministic)."""
        m = min(self.p, 4 * s + 10)
        cand = np.sort(np.argsort(-self.t, kind="stable")[:m])
        chosen: list[int] = []
        gain = self.t[cand].copy()
        for _ in range(s):
            k = int(np.argmax(np.where(np.isin(cand, chosen), -np.inf, gain)))
            j = int(cand[k])
            chosen.append(j)
            rest = cand[cand != j]
            gain[np.isin(cand, rest)] -= self.gp * self.pairs.column(j, rest)
        return np.sort(np.array(chosen, dtype=np.intp))
