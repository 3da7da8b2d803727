"""The result objects every selection method returns, and their shared privacy reporting."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .guarantee import Guarantee, Neighbour

__all__ = ["SelectionResult", "PrivacyReport", "PrivateBSSResult"]


class PrivacyReport:
    """Privacy reporting shared by every result type (a mixin over a ``guarantee`` field).

    :class:`SelectionResult` (and :class:`~mipdp.selection.PrivateBSSResult`) and
    :class:`~mipdp.screening.ScreeningResult` derive from it, so ``epsilon``, ``delta``,
    ``neighbour``, ``sensitivity``, ``is_private`` and :meth:`privacy_summary` mean the
    same thing for every method: they are read off the :class:`~mipdp.guarantee.Guarantee`
    record, never stored twice.
    """

    guarantee: Guarantee

    @property
    def epsilon(self) -> float:
        """Total ``ε`` of the whole release (all draws, all stages).

        NaN when the release is not private (e.g. clipping bounds read off the data): no
        ``ε`` applies.  For a conditional guarantee it is the ``ε`` that holds *if* the
        condition does.
        """
        return self.guarantee.epsilon

    @property
    def delta(self) -> float:
        """Total ``δ`` (0 for pure DP; NaN when unknown or not private)."""
        return self.guarantee.delta

    @property
    def neighbour(self) -> Neighbour:
        """Neighbouring-dataset notion of the guarantee (a :class:`~mipdp.guarantee.Neighbour`,
        equal to its string ``"replace-one"`` / ``"add/remove-one"``)."""
        return self.guarantee.neighbour

    @property
    def sensitivity(self) -> float | None:
        """Sensitivity of the release's (last) mechanism.

        For a composed release (pre-screen then selection; optimizer and screening) the
        sensitivity of its last part; ``result.guarantee.leaves()`` lists every part with
        its own.
        """
        g = self.guarantee
        if g.sensitivity is not None:
            return g.sensitivity
        for part in reversed(g.leaves()):
            if part.sensitivity is not None:
                return part.sensitivity
        return None

    @property
    def is_private(self) -> bool:
        """Whether the release has a proven differential-privacy guarantee."""
        return self.guarantee.is_private

    @property
    def guarantee_proven(self) -> bool:
        """Same as ``guarantee.proven``."""
        return self.guarantee.proven

    def privacy_summary(self) -> str:
        """One line per part of the guarantee (a composed release lists its parts)."""
        lines = [str(self.guarantee)]
        leaves = self.guarantee.leaves()
        if len(leaves) > 1:
            lines += [f"  part {i + 1}: {leaf}" for i, leaf in enumerate(leaves)]
        return "\n".join(lines)

    def _privacy_repr(self) -> str:
        eps = "n/a" if math.isnan(self.epsilon) else f"{self.epsilon:g}"
        delta = "n/a" if math.isnan(self.delta) else f"{self.delta:g}"
        return (f"epsilon={eps}, delta={delta}, neighbour={self.neighbour.value!r}, "
                f"status={self.guarantee.status!r}")


@dataclass(repr=False)
class SelectionResult(PrivacyReport):
    """A private support release and what it guarantees.

    Attributes
    ----------
    support : ndarray of int
        The released support (sorted indices), i.e. ``supports[0]``.
    supports : ndarray of int, shape (n_draws, s)
        One row per independent release.
    method : str
        Registry name of the method.
    guarantee : Guarantee
        The privacy guarantee of all draws together (``str(result.guarantee)`` in words).
        ``epsilon``, ``delta``, ``neighbour``, ``sensitivity`` and ``is_private`` are read
        off it (see :class:`PrivacyReport`).
    timings : dict
        Wall-clock seconds per phase.  **Not private**: they depend on the data through the
        work each phase did (solves, evaluations, proposals), so they are a diagnostic for
        the analyst and must not be published with the release.
    info : dict
        Method-specific details (never anything that leaks beyond the guarantee
        unless the key says so).
    feature_names_in : ndarray of str or None
        The column names of ``X`` when it was a DataFrame with string column names
        (public metadata, not data), else ``None``.
    feature_names : ndarray of str or None
        The names of the released ``support`` (``feature_names_in[support]``), or
        ``None``.
    """

    support: np.ndarray
    supports: np.ndarray
    method: str
    guarantee: Guarantee
    timings: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)
    feature_names_in: np.ndarray | None = None

    @property
    def feature_names(self) -> np.ndarray | None:
        """The column names of the released support (``None`` without names)."""
        if self.feature_names_in is None:
            return None
        return np.asarray(self.feature_names_in)[self.support]

    @property
    def n_draws(self) -> int:
        """Number of independent releases."""
        return int(self.supports.shape[0])

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(method={self.method!r}, support={self.support.tolist()}, "
                f"n_draws={self.n_draws}, {self._privacy_repr()})")


@dataclass(repr=False)
class PrivateBSSResult(SelectionResult):
    """Result of :func:`private_bss`.

    Besides the :class:`~mipdp.result.SelectionResult` fields:

    Attributes
    ----------
    mechanism : sampler or mechanism object
        The mechanism that produced the draws: an ``ExponentialMechanismSampler``,
        ``PermuteAndFlipSampler``, ``TopRMechanism`` or ``MistakesMechanism`` (it knows
        the exact probability of every support, or certified bounds on it for the
        exponential mechanism).  **Not private**: it holds the enumerated supports and
        objectives.
    sensitivity : float
        ``Δ`` of the support objective (read off ``guarantee``; **not private** when the
        bounds were read off the data).
    R : int or None
        Size of the top-R set (top-R sampler only).
    candidates, candidate_values : ndarray
        The exact top-R supports (in original feature indices) and their objectives,
        or the mistakes centre, or (exponential mechanism, permute-and-flip) the
        envelope's centre: the optimum when ``stats["optimum_certified"]`` is True, else a
        one-swap local optimum (the mechanisms never need the optimum certified, so it is
        not certified only for this field).  **Not private**; for research and diagnostics
        only.
    stats : dict
        Enumeration statistics: time per phase, solver calls, cuts, optimality gap,
        whether the candidate set was certified, backend; for ``method="exponential"``
        also ``stats["sampler"]``: proposals made and accepted, the bound on the expected
        number of proposals, the envelope's mass per region.  **Not private**: every
        figure depends on the data (the counts tell neighbours apart).
    """

    mechanism: Any = None   # a sampler (sample, log_probability, log_probability_bounds)
    R: int | None = None
    candidates: np.ndarray | None = None
    candidate_values: np.ndarray | None = None
    stats: dict = field(default_factory=dict)
    _columns: np.ndarray | None = None

    def probability(self, support) -> float:
        """Exact probability that one draw of this run's mechanism outputs ``support``.

        With a pre-screen it is the probability conditional on the screened columns.
        ``method="exponential"`` knows it exactly only when every support was evaluated
        (small problems); otherwise this raises ``ValueError``: use
        :meth:`probability_bounds`.  ``method="permute_and_flip"`` likewise, when
        ``C(p, s) <= 20 000`` (its law needs every support's score).  **Not private** (it
        depends on the data).
        """
        return math.exp(self.log_probability(support))

    def log_probability(self, support) -> float:
        """Natural log of :meth:`probability` (``-inf`` for impossible supports)."""
        S = self._local(support)
        return -math.inf if S is None else self.mechanism.log_probability(S)

    def probability_bounds(self, support) -> tuple[float, float]:
        """Certified bounds ``(lo, hi)`` on the probability that one draw is ``support``.

        Equal for the samplers whose law is known exactly (top-R, mistakes, and the
        exponential mechanism when every support was evaluated).  **Not private**.
        """
        S = self._local(support)
        if S is None:
            return 0.0, 0.0
        lo, hi = self.mechanism.log_probability_bounds(S)
        return math.exp(min(lo, hi)), math.exp(hi)

    def _local(self, support):
        """``support`` in the indices the mechanism works on (``None``: impossible)."""
        S = np.asarray(support, dtype=np.intp).ravel()
        if self._columns is not None:
            pos = {int(c): i for i, c in enumerate(self._columns)}
            if not all(int(i) in pos for i in S):
                return None
            S = np.array([pos[int(i)] for i in S])
        return S
