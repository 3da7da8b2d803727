"""What a loss must provide to the enumeration and the samplers.

A :class:`Loss` is a small, data-free object (its ridge ``λ``, its radius ``r``, its
sensitivity formula).  :meth:`Loss.bind` attaches data and returns a
:class:`SupportObjective`, which computes the support objective

    L(S) = min_{||β||_2 <= r}  (1/n) Σ_i ℓ(y_i, x_{i,S}ᵀβ)  +  (λ / (c n)) ||β||²

for given supports, the outer-approximation cut of its perspective relaxation at a
support, and the objective of every one-swap neighbour of a support.  A new convex loss
is one new pair of classes; the enumeration never changes.

Certification contract.  Every value a sampler or a cut uses carries a certified bound:
:meth:`SupportObjective.value_bounds` returns ``(value, lower)`` with
``lower <= L(S) <= value`` and ``value - lower <= 1e-12 · max(1, |value|)`` (closed forms:
``lower = value``, exact up to floating-point rounding), or, where an iterative solver's
exact fallback cannot reach that, ``1e-12`` of the support's loss scale (the largest loss
of one sample at a feasible ``β``, at most the public per-sample bound ``B``); an
objective that cannot reach this accuracy for some support raises
:class:`~mipdp.exceptions.CertificationError` (whose message carries no data) instead of
returning a value.  Cuts use the certified *lower* bound as their constant.
"""

from __future__ import annotations

import copy
import math
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar

import numpy as np

if TYPE_CHECKING:
    from ..data import ClippedDesign


__all__ = ["Loss", "SupportObjective"]


class Loss(ABC):
    """A convex per-sample loss with a ridge term and an ℓ2-ball constraint.

    Parameters
    ----------
    ridge : float, optional
        Ridge parameter ``λ > 0`` (the exact OA cuts need ``λ > 0``).  ``None``: the
        default rule (:func:`mipdp.losses.default_score`), resolved by :meth:`resolve`
        once the support size and the clipping bounds are known.
    radius : float, optional
        Radius ``r`` of the ℓ2 ball on the coefficients.  ``None``: the default rule,
        as for ``ridge``.
    """

    #: Registry name.
    name: ClassVar[str] = "abstract"
    #: Whether the sensitivity uses a bound on ``|y_i|`` (regression) or not (±1 labels).
    needs_y_bound: ClassVar[bool] = True
    #: Whether the objective needs the clipped data only through ``XcᵀXc``, ``Xcᵀyc`` and
    #: ``ycᵀyc`` (then a tall dask ``X`` is summarised in one pass: :mod:`mipdp.statistics`).
    sufficient_statistics: ClassVar[bool] = False

    def __init__(self, ridge: float | None = None, radius: float | None = None) -> None:
        from .._validation import check_positive
        self.ridge = None if ridge is None else check_positive(ridge, "ridge")
        self.radius = None if radius is None else check_positive(radius, "radius",
                                                                 allow_inf=True)
        if self.radius is not None and not np.isfinite(self.radius):
            raise ValueError("radius: must be finite (the sensitivity of L(S) depends on it)")

    @property
    def resolved(self) -> bool:
        """Whether ``ridge`` and ``radius`` are both set (not left to the default rule)."""
        return self.ridge is not None and self.radius is not None

    @classmethod
    def default_radius(cls, s: int, b_x: float, b_y: float | None) -> float:
        """The default rule's radius: the prediction range ``b_x r √s`` equals the label
        range ``b_y`` (:func:`mipdp.losses.default_score`)."""
        if b_y is None:
            raise ValueError(f"bounds: the default radius of loss={cls.name!r} is "
                             "b_y / (b_x √s) and needs a bound b_y > 0 on |y|; pass "
                             "bounds=(b_x, b_y) or radius=")
        return float(b_y) / (float(b_x) * math.sqrt(s))

    def resolve(self, s: int, b_x: float, b_y: float | None) -> Loss:
        """This loss with ``ridge`` / ``radius`` left to the default rule filled in.

        A pure function of the public inputs ``(s, b_x, b_y)`` and the loss (never of the
        data): :func:`mipdp.losses.default_score`.  Returns ``self`` when both are set.
        """
        if self.resolved:
            return self
        from .score_rule import default_score
        ridge, radius = default_score(self, s, b_x, b_y)
        out = copy.copy(self)
        out.ridge = ridge if self.ridge is None else self.ridge
        out.radius = radius if self.radius is None else self.radius
        return out

    def _check_resolved(self, what: str) -> None:
        if not self.resolved:
            raise ValueError(f"{type(self).__name__}: {what} needs ridge and radius; they were "
                             "left to the default rule, which needs the support size and the "
                             "bounds: call loss.resolve(s, b_x, b_y) first (private_bss does) "
                             "or pass ridge= and radius=")

    @abstractmethod
    def sample_bound(self, s: int, b_x: float, b_y: float | None) -> float:
        """Upper bound ``B`` on one sample's loss over the feasible set (after clipping)."""

    def sensitivity(self, n: int, s: int, b_x: float, b_y: float | None) -> float:
        """Replace-one sensitivity ``Δ = B / n`` of ``L(S)`` (the ridge term is data-free)."""
        self._check_resolved("the sensitivity")
        return self.sample_bound(s, b_x, b_y) / n

    def encode_targets(self, y):
        """``y`` as the loss reads it, before the data checks (regression: unchanged)."""
        return y

    def check_targets(self, y: np.ndarray) -> np.ndarray:
        """Validate ``y`` for this loss (regression: anything finite)."""
        return y

    @abstractmethod
    def bind(self, X, y: np.ndarray) -> SupportObjective:
        """Attach (clipped) data and return the objective over supports.

        ``X``: a float array, or a :class:`mipdp.data.ClippedDesign` (a memmap or a
        sparse matrix clipped lazily; :func:`mipdp._validation.clip_design`)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(ridge={_fmt(self.ridge)}, radius={_fmt(self.radius)})"


def _fmt(v) -> str:
    """``None`` (left to the default rule) or a number, for reprs."""
    return "None" if v is None else f"{v:g}"


class SupportObjective(ABC):
    """``L(S)`` on fixed data, with cuts and one-swap evaluation."""

    #: Whether :meth:`values` is a cheap batched closed form (then small problems are
    #: enumerated exhaustively instead of by outer approximation).
    cheap_values: bool = False
    #: Whether the cuts may use a certified diagonal under ``XᵀX`` (least squares with
    #: ``p <= n``, docs/algorithms.md "Shifted cuts"); set from
    #: ``enumeration_options["shifted_cuts"]``.  Every choice gives valid cuts.
    shifted_cuts: bool = True
    #: How :mod:`mipdp.enumeration.costs` models the time of a value and of a cut (a
    #: function of the sizes only, so the explicit search's choices never read a clock):
    #: ``"least_squares"``, ``"least_squares_statistics"`` (Gram statistics, no rows),
    #: ``"huber"``, ``"hinge"`` or ``"iterative"`` (any other objective).
    cost_kind: str = "iterative"

    def __init__(self, loss: Loss, X: np.ndarray | ClippedDesign, y: np.ndarray) -> None:
        from ..data import as_design
        loss._check_resolved("binding to data")
        self.loss = loss
        #: the (clipped) design, a :class:`mipdp.data.ClippedDesign`: products with it
        #: are computed column chunk by column chunk, ``X`` is never copied whole
        self.X = as_design(X)
        X = self.X
        self.y = y
        self.n, self.p = X.shape
        #: number of supports evaluated so far (statistics only)
        self.n_evaluations = 0

    #: counters of the work done (statistics only): a fork's are added back by
    #: :meth:`merge_fork`, and the largest of ``_FORK_MAXES`` kept
    _FORK_SUMS = ("n_evaluations", "n_fallback")
    _FORK_MAXES = ("max_gap",)

    def fork(self) -> SupportObjective:
        """A copy for one worker of :mod:`mipdp.enumeration.fork`: the same data, its own
        per-call state (the extra cuts of the last support, the design's memo and Gram
        columns).  Its values are those of this objective."""
        import copy
        new = copy.copy(self)
        fork_x = getattr(self.X, "fork", None)
        if fork_x is not None:
            new.X = fork_x()
        new.__dict__.pop("_extra", None)
        new.__dict__["_fork_base"] = {k: getattr(self, k) for k in self._FORK_SUMS
                                      if hasattr(self, k)}
        return new

    def merge_fork(self, child: SupportObjective) -> None:
        """Add a fork's counters to this objective's."""
        base = getattr(child, "_fork_base", {})
        for k, v0 in base.items():
            setattr(self, k, getattr(self, k) + getattr(child, k) - v0)
        for k in self._FORK_MAXES:
            if hasattr(self, k) and hasattr(child, k):
                setattr(self, k, max(getattr(self, k), getattr(child, k)))

    @abstractmethod
    def values(self, supports: np.ndarray) -> np.ndarray:
        """``L(S)`` for each row of ``supports`` (shape ``(m, s)``, sorted indices).

        The value of :meth:`value_bounds` (an upper bound within the certified tolerance;
        exact for closed forms).  This is what the samplers use.
        """

    def value_bounds(self, supports: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(values, lowers)`` with ``lowers <= L(S) <= values`` certified.

        Default (closed forms): ``lowers = values``.
        """
        v = self.values(supports)
        return v, v.copy()

    @abstractmethod
    def value_and_cut(self, support: np.ndarray) -> tuple[float, float, np.ndarray]:
        """``(value, lower, g)`` at one support.

        ``lower <= L(S) <= value`` (certified, as in :meth:`value_bounds`) and ``g`` is
        such that the cut ``η >= lower + gᵀ(z - 1_S)`` is a global lower bound on ``L``
        over all supports (each loss proves it in its module notes), so it stays valid
        in every later master problem.  ``value`` is what the enumeration records.
        """

    def extra_cuts(self, support: np.ndarray) -> list[tuple[float, np.ndarray]]:
        """Further cuts ``(lower, g)`` at the support last passed to :meth:`value_and_cut`.

        Each must satisfy the same contract as the cut of :meth:`value_and_cut`
        (``lower <= L(support)`` certified; ``η >= lower + gᵀ(z - 1_S)`` a global lower
        bound).  Default: none.
        """
        return []

    def one_swap_values(self, support: np.ndarray) -> np.ndarray:
        """Objective of every one-swap neighbour of ``support``.

        Returns
        -------
        ndarray, shape (s, p)
            Entry ``[a, j]`` is ``L(S - {S[a]} + {j})``; ``inf`` where ``j ∈ S``.
            The default evaluates all ``s (p - s)`` supports in one batched call of
            :meth:`values`; losses with a closed form override it with a vectorised
            update.
        """
        support = np.asarray(support)
        out = np.full((support.size, self.p), np.inf)
        outside, cand = one_swap_supports(support, self.p)
        if outside.size:
            out[:, outside] = self.values(cand).reshape(support.size, outside.size)
        return out


def one_swap_supports(support: np.ndarray, p: int) -> tuple[np.ndarray, np.ndarray]:
    """``(outside, cand)``: the features not in ``support`` and its ``s (p − s)`` one-swap
    neighbours as sorted rows, ``S[a]`` replaced by ``outside[j]`` in row
    ``a · len(outside) + j`` (the layout of :meth:`SupportObjective.one_swap_values`)."""
    support = np.asarray(support)
    s = support.size
    outside = np.setdiff1d(np.arange(p), support)
    if outside.size == 0:
        return outside, np.empty((0, s), dtype=support.dtype)
    rest = np.array([np.delete(support, a) for a in range(s)]).reshape(s, s - 1)
    cand = np.concatenate([np.column_stack([np.broadcast_to(rest[a], (outside.size, s - 1)),
                                            outside]) for a in range(s)])
    return outside, np.sort(cand, axis=1)
