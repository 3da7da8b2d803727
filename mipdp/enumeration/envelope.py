"""Certified envelopes for the exact exponential-mechanism sampler.

:func:`build_envelope` partitions all supports for
:class:`~mipdp.mechanisms.em_rejection.ExponentialMechanismSampler`:

* **singletons** — the centre ``S*`` and its ``s(p - s)`` one-swaps, all evaluated by the
  warm start anyway (or, on the exhaustive path, every support);
* **one region per mistake class** ``k >= 2`` around ``S*`` (``C(s,k) C(p-s,k)``
  supports), with the certified lower bound of
  :meth:`~mipdp.enumeration.SupportEnumerator.region_bound`.

A region only needs a *valid* bound; how tight it is only changes the running time.
Nor does the centre need to be the optimum: it is the warm start (a one-swap local
optimum, :meth:`~mipdp.enumeration.SupportEnumerator.warm_center`), the optimum phase is
skipped, and the class bounds certify the centre as the optimum for free when they all
pass its value (:meth:`~mipdp.enumeration.SupportEnumerator.certify_center`; otherwise a
later call of ``optimum()`` runs the optimum phase).  The law of the sampler is exact
whatever the centre.
Each class is searched until its envelope mass is negligible (its bound passes the
level where the whole class weighs at most ``e^{-c}`` of the singletons) or the bound is
within ``tol`` (in units of ``2Δ/ε``) of the best member found, with at most
``max_solves`` master solves.  Regions that still waste proposals are split while
sampling (:func:`refiner`), each child bounded the same way.
"""

from __future__ import annotations

import logging
import math
import time

import numpy as np
from scipy.special import logsumexp

from ..mechanisms.regions import Region, region_members
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
                   c: float = 5.0, tol: float = 0.5, max_solves: int | None = 3,
                   refine_solves: int | None = 3, gap: float = 1e-2,
                   full_class_max: int = 100_000) -> Envelope:
    """The natural envelope around the optimum (see the module notes).

    Parameters
    ----------
    enum : SupportEnumerator
        Enumerator on the (clipped) data; its warm start runs here if not yet run.
    epsilon, sensitivity : float
        ``ε`` of one draw and ``Δ``: the envelope's unit is ``2Δ/ε``.
    c : float
        A class whose bound passes its level weighs at most ``e^{-c}`` of the singletons.
    tol : float
        Wanted accuracy of a class bound, in units of ``2Δ/ε``.
    max_solves, refine_solves : int or None
        Master solves per class, and per child region when refining.
    gap : float
        Relative MIP gap of those solves (their dual bound is valid whatever the gap).
    full_class_max : int
        A class of at most this many supports, for an objective with cheap batched values,
        is evaluated in full: its members become singletons (exact values).
    """
    # The envelope needs valid region bounds, not a certified optimum: it is built around
    # the warm start, and the class bounds certify it as the optimum when they all pass L0.
    center, L0 = enum.warm_center()
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
    full_max = full_class_max if enum.objective.cheap_values else 0
    extra_sup, extra_val = [], []
    class_lower = []
    for k in range(2, K + 1):
        R = Region(center, k, enum.p)
        if R.size <= full_max:
            t0 = time.perf_counter()
            low = np.inf
            for rows in region_members(R):
                enum.remaining_time(f"class_{k}")   # time_limit holds between chunks
                extra_sup.append(rows)
                extra_val.append(np.asarray(enum.objective.values(rows), dtype=float))
                if extra_val[-1].size:
                    low = min(low, float(np.min(extra_val[-1])))
            class_lower.append(low)
            enum.record_phase(f"class_{k}", time.perf_counter() - t0, evaluations=R.size)
            logger.info("envelope: class %d (%d supports) evaluated in full (not private)", k,
                        R.size)
            continue
        rb = enum.region_bound(R, level=level(R.size), abs_tol=tol * unit, max_solves=max_solves,
                               gap=gap)
        R.bound = rb.lower
        class_lower.append(float(rb.lower))
        regions.append(R)
        logger.info("envelope: class %d (%d supports) bound L0 + %.4g (units of 2Δ/ε), "
                    "best member found L0 + %.4g, level L0 + %.4g; %d solves (not private)",
                    k, R.size, (rb.lower - L0) / unit, (rb.best - L0) / unit,
                    (level(R.size) - L0) / unit, rb.solves)

    enum.progress.done("envelope", regions=len(regions))
    enum.certify_center(class_lower)

    def refine(region: Region, best_member) -> list[Region]:
        j = enum.split_feature(region, best_member)
        children = []
        for child in region.split(j):
            if child.size == 0:
                continue
            if child.size <= full_max:  # small: its exact minimum
                low = min(float(np.min(enum.objective.values(rows)))
                          for rows in region_members(child))
            else:
                low = enum.region_bound(child, level=level(child.size), abs_tol=tol * unit,
                                        max_solves=refine_solves, gap=gap).lower
            child.bound = max(region.bound, low)
            children.append(child)
        return children

    if extra_sup:
        singletons = np.vstack([singletons] + extra_sup)
        values = np.concatenate([values] + extra_val)
    return Envelope(singletons, values, regions, refine)
