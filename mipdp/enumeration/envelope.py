"""Certified envelopes for the exact exponential-mechanism sampler.

:func:`build_envelope` partitions all supports for
:class:`~mipdp.mechanisms.em_rejection.ExponentialMechanismSampler`:

* **singletons** — the optimum ``S*`` and its ``s(p - s)`` one-swaps, all evaluated in
  the optimum phase anyway (or, on the exhaustive path, every support);
* **one region per mistake class** ``k >= 2`` around ``S*`` (``C(s,k) C(p-s,k)``
  supports), with the certified lower bound of
  :meth:`~mipdp.enumeration.SupportEnumerator.region_bound`.

A region only needs a *valid* bound; how tight it is only changes the running time.
Each class is searched until its envelope mass is negligible (its bound passes the
level where the whole class weighs at most ``e^{-c}`` of the singletons) or the bound is
within ``tol`` (in units of ``2Δ/ε``) of the best member found, with at most
``max_solves`` master solves.  Regions that still waste proposals are split while
sampling (:func:`refiner`), each child bounded the same way.
"""

from __future__ import annotations

import logging
import math

import numpy as np
from scipy.special import logsumexp

from ..mechanisms.regions import Region
from .enumerator import SupportEnumerator

logger = logging.getLogger(__name__)

__all__ = ["Envelope", "build_envelope"]


class Envelope:
    """Singletons (exact values) and regions (certified bounds) partitioning all supports."""

    def __init__(self, singletons: np.ndarray, values: np.ndarray, regions: list[Region],
                 refine=None) -> None:
        self.singletons = singletons
        self.values = values
        self.regions = regions
        self.refine = refine


def build_envelope(enum: SupportEnumerator, epsilon: float, sensitivity: float, *,
                   c: float = 5.0, tol: float = 0.5, max_solves: int | None = 6,
                   refine_solves: int | None = 3) -> Envelope:
    """The natural envelope around the optimum (see the module notes).

    Parameters
    ----------
    enum : SupportEnumerator
        Enumerator on the (clipped) data; its optimum phase runs here if not yet run.
    epsilon, sensitivity : float
        ``ε`` of one draw and ``Δ``: the envelope's unit is ``2Δ/ε``.
    c : float
        A class whose bound passes its level weighs at most ``e^{-c}`` of the singletons.
    tol : float
        Wanted accuracy of a class bound, in units of ``2Δ/ε``.
    max_solves, refine_solves : int or None
        Master solves per class, and per child region when refining.
    """
    center, L0 = enum.optimum()
    if enum.table is not None:  # every support evaluated: the law is explicit
        sup, vals = enum.table
        return Envelope(sup, vals, [])
    unit = 2.0 * sensitivity / epsilon  # objective units per unit of log-weight
    swaps = enum.center_swaps
    a_idx, j_idx = np.nonzero(np.isfinite(swaps))
    rest = np.array([np.delete(center, a) for a in range(center.size)])
    ones = np.sort(np.column_stack([rest[a_idx], j_idx]), axis=1)
    singletons = np.vstack([center[None, :], ones]).astype(np.intp)
    values = np.r_[L0, swaps[a_idx, j_idx]]
    log_single = float(logsumexp(-(values - L0) / unit))

    def level(size: int) -> float:
        """Bound above which a region of ``size`` supports weighs <= e^{-c} of the singletons."""
        return L0 + unit * (math.log(size) + c - log_single)

    K = min(enum.s, enum.p - enum.s)
    regions = []
    enum.progress.start("envelope", classes=max(0, K - 1))
    if K >= 2:
        enum.warm_class_cuts()
    for k in range(2, K + 1):
        R = Region(center, k, enum.p)
        rb = enum.region_bound(R, level=level(R.size), abs_tol=tol * unit, max_solves=max_solves)
        R.bound = rb.lower
        regions.append(R)
        logger.info("envelope: class %d (%d supports) bound L0 + %.4g (units of 2Δ/ε), "
                    "best member found L0 + %.4g, level L0 + %.4g; %d solves (not private)",
                    k, R.size, (rb.lower - L0) / unit, (rb.best - L0) / unit,
                    (level(R.size) - L0) / unit, rb.solves)

    enum.progress.done("envelope", regions=len(regions))

    def refine(region: Region, best_member) -> list[Region]:
        j = enum.split_feature(region, best_member)
        children = []
        for child in region.split(j):
            if child.size == 0:
                continue
            rb = enum.region_bound(child, level=level(child.size), abs_tol=tol * unit,
                                   max_solves=refine_solves)
            child.bound = max(region.bound, rb.lower)
            children.append(child)
        return children

    return Envelope(singletons, values, regions, refine)
