"""The outer-approximation master problem, held in one persistent backend model.

    min η   s.t.   η >= cut_t(z)  for every cut t,   Σ z = s,   z ∈ {0,1}^p,
                   (optional) region rows on Σ_{i∈S*} z_i,   no-good rows,   η <= cutoff.

``η`` is stored in *privacy units*: ``η = (L - offset) / scale`` with ``scale`` the
sensitivity Δ, so the solver's absolute feasibility tolerances (≈1e-6) translate into a
log-probability error of at most ≈1e-6·ε in the samplers.  Rows are only ever
appended; a cut found in one phase serves every later phase.
"""

from __future__ import annotations

import logging
from typing import cast

import numpy as np

from mipdp.solvers import get_backend
from mipdp.solvers.base import MIPBackend, SolverError, SolveResult

from .cuts import RowStack

logger = logging.getLogger(__name__)

__all__ = ["MasterProblem"]


def capped_cut(value: float, grad, support, floor: float) -> tuple[float, np.ndarray]:
    """The cut ``c(T) = value + gᵀ(1_T - 1_S)`` with its entering coefficients capped.

    ``U = value + Σ_{i∈S} max(-g_i, 0) + Σ_{i∉S} max(g_i, 0)`` bounds the cut over every
    support.  An entering coefficient ``g_i < -(U - floor)`` (``i ∉ S``) is raised to
    ``-(U - floor)``: a support ``T`` containing such an ``i`` then gets a cut of at most
    ``U - (U - floor) = floor <= L(T)``, and one containing none keeps ``c(T) <= L(T)``, so
    the capped cut is still a global lower bound (``floor`` certified for every support).
    It is exact where it matters (it only drops promises below the floor), and it keeps
    the master's coefficients within ``(U - floor)/scale``: a tiny ridge gives entering
    coefficients ``w_i²/(4nλ')`` of 10⁶ and more, against which an integrality
    tolerance of 10⁻⁶ on ``z_i`` is worth a whole unit of ``η``.  A cut with a non-finite
    constant or coefficient on ``S`` becomes the floor (valid, vacuous); non-finite
    entering coefficients (overflow) are capped like the others.
    """
    g = np.array(grad, dtype=float)
    S = np.asarray(support, dtype=np.intp)
    inS = np.zeros(g.size, dtype=bool)
    inS[S] = True
    if not (np.isfinite(value) and np.all(np.isfinite(g[inS]))):
        return float(floor), np.zeros(g.size)
    g[~inS & np.isnan(g)] = -np.inf
    with np.errstate(invalid="ignore", over="ignore"):
        U = (float(value) + float(np.sum(np.maximum(-g[inS], 0.0)))
             + float(np.sum(np.maximum(g[~inS], 0.0))))
    if not np.isfinite(U):
        return float(floor), np.zeros(g.size)
    cap = max(U - float(floor), 0.0)
    g[~inS & (g < -cap)] = -cap
    return float(value), g


class MasterProblem:
    """Cuts, cardinality and region rows over one backend.

    Parameters
    ----------
    p, s : int
        Number of features and support size.
    offset, scale : float
        ``η = (L - offset) / scale``; ``L >= floor`` gives ``η >= (floor - offset) / scale``.
    floor : float, default 0.0
        A certified lower bound of the objective over *every* support (every loss of the
        package is ``>= 0``).  A cutoff below it leaves no support to find
        (:meth:`set_cutoff`, :meth:`below_floor`).
    backend : str or MIPBackend
        Backend name (see :func:`solvers.get_backend`).
    backend_options : dict, optional
        Passed to the backend constructor.
    """

    def __init__(self, p: int, s: int, offset: float, scale: float,
                 backend: str | MIPBackend = "highs", backend_options: dict | None = None,
                 floor: float = 0.0) -> None:
        self.p, self.s = p, s
        self.offset, self.scale = float(offset), float(scale)
        self.floor = float(floor)
        self._clone_of: tuple | None = None
        self._backend: MIPBackend | None = None
        self._pending: list = []   # rows deferred (defer_rows)
        self.backend = get_backend(backend, **(backend_options or {}))
        self.backend.check_size(p + 1, 1)
        self.eta = int(self.backend.add_variables(1, self.to_eta(self.floor), np.inf)[0])
        self.z = self.backend.add_variables(p, 0.0, 1.0, integer=True)
        self.backend.add_rows([(self.z, np.ones(p), float(s), float(s))])
        self.backend.set_objective([self.eta], [1.0])
        self.n_cuts = 0
        self.n_nogoods = 0
        self._region_rows: dict[tuple, int] = {}
        self._cut_supports: set[tuple] = set()
        self._cut_grads = RowStack(p)      # the cuts' coefficients of z (master units)
        self._fixed = np.zeros(p, dtype=bool)  # dominance fixing (to zero)
        self.region_center = np.zeros(0, dtype=np.intp)  # centre of the active region row
        self.region_count: tuple[float, float] | None = None  # its bounds (None: no row active)
        self.cutoff_value: float | None = None  # the active cutoff (objective units)
        self.cutoff_margin = 0.0  # its margin (units of scale)
        self._one = np.zeros(p, dtype=bool)  # region fixings
        self._zero = np.zeros(p, dtype=bool)
        self._lo, self._hi = np.zeros(p), np.ones(p)

    @property
    def backend(self) -> MIPBackend:
        """The backend holding the model, with every row given to :meth:`defer_rows`
        added (a lazy clone's copy is made here, when first used)."""
        if self._backend is None:
            assert self._clone_of is not None   # set with _backend = None by clone()
            parent, n_rows, n_cols = self._clone_of
            if (parent.n_rows, parent.n_cols) != (n_rows, n_cols):
                raise RuntimeError("MasterProblem.clone: the original's model changed before "
                                   "the copy was first used")
            self._backend = parent.clone()
            self._clone_of = None
        if self._pending:
            rows, self._pending = self._pending, []
            self._backend.add_rows(rows)
        return self._backend

    @backend.setter
    def backend(self, value: MIPBackend) -> None:
        self._backend = value

    @property
    def backend_ready(self) -> bool:
        """Whether the backend exists (``False``: a lazy clone whose copy is not made yet)."""
        return self._backend is not None

    @property
    def backend_kind(self) -> MIPBackend:
        """The backend object for questions about it (its name, ``clone``, ``thread_safe``,
        ``native_lazy``), without making a lazy clone's copy or adding deferred rows."""
        if self._backend is not None:
            return self._backend
        assert self._clone_of is not None
        return self._clone_of[0]

    def defer_rows(self, rows: list) -> None:
        """Rows for the model, added to the backend when it is next used (:attr:`backend`),
        before anything else: the same model, row order and row indices as adding them now.
        A release whose searches need no master solve never adds them (at p = 10⁵, 0.5 s
        of dense rows after the warm class cuts and the forks' merges)."""
        self._pending.extend(rows)

    def clone(self, *, lazy: bool = False) -> MasterProblem | None:
        """An independent master with the same rows and state, or ``None`` when the
        backend cannot copy its model (``clone``).

        ``lazy``: the backend's copy is made when the clone first uses it
        (:attr:`backend`), so a fork whose searches need no master solve never pays for it
        (0.02 s at ``p = 10⁴``, 0.2 s at ``10⁵``, per fork).  The original must then stay
        unchanged until the copy is made (:mod:`.fork`: the enumerator is only changed
        after every fork has finished); its row and column counts are checked.  Rows the
        original deferred (:meth:`defer_rows`) are deferred in the clone too."""
        if getattr(self.backend_kind, "clone", None) is None:
            return None
        import copy
        if self._backend is None:   # a lazy clone of a lazy clone: make the first copy
            self.backend  # noqa: B018
        new = copy.copy(self)
        new._backend = None
        assert self._backend is not None
        new._clone_of = (self._backend, self._backend.n_rows, self._backend.n_cols)
        new._pending = list(self._pending)
        if not lazy:
            new.backend  # noqa: B018 - the copy, now
        new._region_rows = dict(self._region_rows)
        new._cut_supports = set(self._cut_supports)
        new._cut_grads = RowStack(self.p)
        new._cut_grads.extend(self._cut_grads.array)
        return new

    # -- scaling ------------------------------------------------------------------------
    def to_eta(self, value: float) -> float:
        """Objective value ``L`` in master units."""
        return (value - self.offset) / self.scale

    def to_value(self, eta: float) -> float:
        """Master units back to an objective value ``L``."""
        return self.offset + self.scale * eta

    # -- rows -----------------------------------------------------------------------------
    def has_cut(self, support: np.ndarray) -> bool:
        """Whether a cut at this support is already in the model."""
        return tuple(int(i) for i in support) in self._cut_supports

    def cut_row(self, support: np.ndarray, value: float, grad: np.ndarray) -> tuple:
        """Register the cut ``η >= (value + gᵀ(z - 1_S) - offset) / scale`` and return its row.

        ``value`` must be a certified *lower* bound on ``L(S)`` (the ``lower`` of
        :meth:`~mipdp.losses.base.SupportObjective.value_and_cut`), so that the cut is a
        global lower bound.  The caller adds the row (directly, or as a lazy row through
        the backend).
        """
        self._cut_supports.add(tuple(int(i) for i in support))
        self.n_cuts += 1
        value, g = capped_cut(value, grad, support, self.floor)
        g = g / self.scale
        rhs = self.to_eta(value) - float(g[np.asarray(support)].sum())
        self._cut_grads.append(g)
        idx = np.concatenate(([self.eta], self.z))
        coef = np.concatenate(([1.0], -g))
        return (idx, coef, rhs, np.inf)

    def store_cut_rows(self, a: np.ndarray, G: np.ndarray, supports) -> list:
        """Register the cuts ``L(T) >= a_t + Σ_{i∈T} G[t, i]`` of a
        :class:`~mipdp.enumeration.cuts.CutStore` (objective units) and return their rows
        (the same rows as :meth:`cut_row`: ``η >= (a_t - offset + G_t z) / scale``)."""
        idx = np.concatenate(([self.eta], self.z))
        rows = []
        for t in range(len(a)):
            g = np.asarray(G[t], dtype=float) / self.scale
            self._cut_supports.add(tuple(int(i) for i in supports[t]))
            self.n_cuts += 1
            self._cut_grads.append(g)
            rows.append((idx, np.concatenate(([1.0], -g)), self.to_eta(float(a[t])), np.inf))
        return rows

    def cut_gradients(self) -> np.ndarray:
        """Coefficients of ``z`` in every cut, shape ``(T, p)`` (``η >= c_t + G_t z``)."""
        return self._cut_grads.array

    def set_fixed_zero(self, mask: np.ndarray) -> None:
        """Fix ``z_j = 0`` exactly where ``mask`` (dominance fixing; freed where it no
        longer is)."""
        self._fixed = np.asarray(mask, dtype=bool).copy()
        self._apply_bounds()

    def set_region_fixings(self, ones=(), zeros=()) -> None:
        """Fix ``z_j = 1`` for ``j`` in ``ones`` and ``z_j = 0`` for ``j`` in ``zeros``
        (a region of the search; ``()`` for both frees them)."""
        self._one = np.zeros(self.p, dtype=bool)
        self._one[np.asarray(ones, dtype=np.intp)] = True
        self._zero = np.zeros(self.p, dtype=bool)
        self._zero[np.asarray(zeros, dtype=np.intp)] = True
        self._apply_bounds()

    def _apply_bounds(self) -> None:
        lo = self._one.astype(float)
        hi = np.where(self._one, 1.0, np.where(self._zero | self._fixed, 0.0, 1.0))
        changed = (lo != self._lo) | (hi != self._hi)
        if np.any(changed):
            self.backend.set_variable_bounds(self.z[changed], lo[changed], hi[changed])
            self._lo, self._hi = lo, hi

    @property
    def fixed_columns(self) -> tuple[np.ndarray, np.ndarray]:
        """Masks of the columns fixed to one and to zero by the current region."""
        return self._one.copy(), self._zero.copy()

    @property
    def n_fixed(self) -> int:
        """Columns currently fixed to zero."""
        return int(self._fixed.sum())

    def nogood_row(self, support: np.ndarray, *, new: bool = True) -> tuple:
        """The no-good row ``Σ_{i∈S} z_i <= s - 1`` excluding one support.

        ``new=False`` returns the row again without counting it (to re-send it to a
        solver that offered an excluded point).
        """
        S = np.asarray(support)
        self.n_nogoods += int(new)
        return (self.z[S], np.ones(S.size), -np.inf, self.s - 1.0)

    def set_region(self, center: np.ndarray, lo: float, hi: float) -> None:
        """Restrict ``Σ_{i∈center} z_i`` to ``[lo, hi]`` (one persistent row per center)."""
        key = tuple(int(i) for i in center)
        row = self._region_rows.get(key)
        if row is None:
            C = np.asarray(center)
            row = int(self.backend.add_rows(
                [(self.z[C], np.ones(C.size), float(lo), float(hi))])[0])
            self._region_rows[key] = row
        else:
            self.backend.set_row_bounds([row], lo, hi)
        for other, r in self._region_rows.items():
            if other != key:
                self.backend.set_row_bounds([r], -np.inf, np.inf)
        self.region_center = np.asarray(center, dtype=np.intp)
        self.region_count = (float(lo), float(hi))

    def clear_region(self) -> None:
        """Drop every region restriction."""
        self.region_count = None
        for r in self._region_rows.values():
            self.backend.set_row_bounds([r], -np.inf, np.inf)

    def below_floor(self, value: float | None) -> bool:
        """Whether ``value`` is at or below the objective's floor: no support has ``L < value``
        (a search for one is answered without a solve)."""
        return value is not None and value <= self.floor

    def set_cutoff(self, value: float | None, margin: float = 1e-5) -> None:
        """Only look for supports with ``L < value`` (``η <= to_eta(value) + margin``).

        ``margin`` (in units of Δ) exceeds the solver's feasibility tolerance, so an
        *infeasible* master proves ``L(S) > value`` for every support it still allows.

        A cutoff below the floor (``value + margin·scale < floor``: possible when Δ is large
        against the objective, e.g. ``n ≪ p``) is held at the floor, ``η <= to_eta(floor)``,
        so the bounds stay consistent (``lb <= ub``).  That master is a relaxation of the
        empty one asked for: its infeasibility still proves ``L(S) > value`` for every
        allowed support (every ``L(S) >= floor > value`` anyway).  Callers test
        :meth:`below_floor` first and skip such a search.
        """
        lb = self.to_eta(self.floor)
        ub = np.inf if value is None or not np.isfinite(value) else self.to_eta(value) + margin
        self.cutoff_value = None if value is None or not np.isfinite(ub) else float(value)
        self.cutoff_margin = float(margin)
        self.backend.set_variable_bounds([self.eta], lb, max(ub, lb))

    def cutoff_row(self, value: float, margin: float = 1e-5) -> tuple:
        """The row ``η <= to_eta(value) + margin`` (a cutoff handed to a native lazy callback)."""
        return (np.array([self.eta]), np.ones(1), -np.inf, self.to_eta(value) + margin)

    # -- solving ----------------------------------------------------------------------------
    def solve(self, *, mip_rel_gap: float = 1e-9, time_limit: float | None = None,
              lazy=None) -> tuple[SolveResult, np.ndarray | None]:
        """Solve; return the result and the support of ``z`` (``None`` if infeasible)."""
        res = self.backend.solve(mip_rel_gap=mip_rel_gap, time_limit=time_limit, lazy=lazy)
        logger.debug("master solve on %s: status %s, bound %.10g (not private)",
                     self.backend.name, res.status, res.bound)
        if res.status == "infeasible":
            return res, None
        return res, self.support_of(cast(np.ndarray, res.x))

    def support_of(self, x: np.ndarray) -> np.ndarray:
        """The support encoded by a solution vector (binaries rounded)."""
        zval = np.asarray(x)[self.z]
        if np.max(np.abs(zval - np.rint(zval))) > 1e-5:
            raise SolverError(f"{self.backend.name}: the solver returned a non-integral point "
                              f"(max violation {np.max(np.abs(zval - np.rint(zval))):.2g}); "
                              "nothing was released")
        S = np.flatnonzero(zval > 0.5)
        if S.size != self.s:  # pragma: no cover - solver returned a non-integral point
            raise RuntimeError(f"master returned {S.size} selected features, expected {self.s}")
        return S
