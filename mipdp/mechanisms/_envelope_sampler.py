"""What the exact samplers over the certified envelope share.

:class:`~mipdp.mechanisms.ExponentialMechanismSampler` (rejection) and
:class:`~mipdp.mechanisms.PermuteAndFlipSampler` (best-first search) both take the same
envelope — singletons with exact objective values and regions with certified lower bounds
— and differ only in how they draw from it.  This base holds their common state, the
checks of the envelope's shape, the support keys and the value look-up.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable

import numpy as np

from ..deadline import Deadline
from ..exceptions import CertificationError
from ._support_index import SupportIndex
from .regions import Region

logger = logging.getLogger(__name__)

#: relative slack below a region's bound before an evaluated value counts as a violation
_VIOLATION_RTOL = 1e-10
#: most evaluated supports remembered for probability bounds
_MAX_SEEN = 2_000_000


class EnvelopeSampler:
    """Common state of a sampler over singletons (exact values) and certified regions.

    Sets ``singletons``, ``singleton_values``, ``p``, ``s``, ``epsilon``, ``sensitivity``,
    ``coef = ε/(2Δ)``, ``ref`` (the smallest singleton value), ``n_supports``, the
    singletons' index, the refinement callback and the call's :class:`Deadline`.
    """

    #: the certified regions (set by each sampler)
    regions: list[Region]

    def __init__(self, values: Callable[[np.ndarray], np.ndarray], singletons: np.ndarray,
                 singleton_values: np.ndarray, p: int, epsilon: float, sensitivity: float, *,
                 refine: Callable | None = None, deadline: float | None = None) -> None:
        self._values = values
        self.singletons = np.atleast_2d(np.asarray(singletons, dtype=np.intp))
        self.singleton_values = np.asarray(singleton_values, dtype=float).ravel()
        if self.singletons.shape[0] != self.singleton_values.size:
            raise ValueError("singleton_values: one value per singleton support expected")
        self.p = int(p)
        self.s = self.singletons.shape[1]
        self.epsilon = float(epsilon)
        self.sensitivity = float(sensitivity)
        self.coef = self.epsilon / (2.0 * self.sensitivity)
        self.ref = float(np.min(self.singleton_values))
        self._refine = refine
        self._deadline = Deadline.coerce(deadline)
        self.n_supports = math.comb(self.p, self.s)
        self._single_index = SupportIndex(self.singletons)   # 16 bytes per singleton
        self._seen: dict[tuple, float] = {}

    def __getstate__(self) -> dict:
        """A pickle leaves out the refinement callback (a closure over the enumeration):
        refining changes how fast the sampler draws, never its law, so an unpickled sampler
        draws from the same distribution without refining."""
        state = self.__dict__.copy()
        state["_refine"] = None
        return state

    @staticmethod
    def _check_bounded(regions: list[Region]) -> None:
        for R in regions:
            if R.size > 0 and not R.bound > -math.inf:
                raise ValueError("regions: every region needs a finite certified bound")

    def _check_covered(self) -> None:
        covered = self.singletons.shape[0] + sum(R.size for R in self.regions)
        if covered != self.n_supports:
            raise ValueError(f"regions: the envelope covers {covered} supports, expected "
                             f"C({self.p}, {self.s}) = {self.n_supports}")

    def _deadline_detail(self) -> str | None:
        """What the sampler had done when the deadline ran out (logged at DEBUG)."""
        return None

    def _check_deadline(self) -> None:
        if self._deadline is not None and self._deadline.expired():
            raise self._deadline.error("sampling", detail=self._deadline_detail())

    @staticmethod
    def _check_envelope(members: np.ndarray, L: np.ndarray, bound) -> None:
        """Raise if an evaluated value lies below its region's certified bound (``bound``:
        one per member, or one for all): the envelope is then invalid, and nothing may be
        released."""
        b = np.broadcast_to(np.asarray(bound, dtype=float), L.shape)
        low = L < b - _VIOLATION_RTOL * np.maximum(1.0, np.abs(L))
        if np.any(low):
            i = int(np.flatnonzero(low)[0])
            logger.debug("invalid envelope: support %s has L = %r below its region's "
                         "certified bound %r (not private)", members[i].tolist(),
                         float(L[i]), float(b[i]))
            raise CertificationError(
                "invalid envelope: an evaluated support lies below its region's certified "
                "bound; nothing was released (please report this bug; the support and the "
                "values are logged at DEBUG level, labelled not private)")

    def _support_key(self, support) -> tuple | None:
        """``support`` as a sorted tuple, or ``None`` if it is not an s-subset of range(p)."""
        key = tuple(sorted(int(i) for i in support))
        if len(key) != self.s or len(set(key)) != self.s or not all(0 <= i < self.p for i in key):
            return None
        return key

    def _value(self, key: tuple) -> float:
        """``L(key)``: a singleton's value, a remembered one, or evaluated now."""
        i = self._single_index.get(key)
        if i is not None:
            return float(self.singleton_values[i])
        v = self._seen.get(key)
        if v is None:
            v = float(np.asarray(self._values(np.array([key], dtype=np.intp)))[0])
        return v

    def log_probability_bounds(self, support) -> tuple[float, float]:
        raise NotImplementedError

    def probability_bounds(self, support) -> tuple[float, float]:
        """Certified bounds ``(lo, hi)`` on the probability that one draw is ``support``."""
        lo, hi = self.log_probability_bounds(support)
        return math.exp(lo), math.exp(hi)
