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

from .._parallel import parallel_map
from ..mechanisms.regions import Region, region_members
from .costs import reveal_cost
from .enumerator import SupportEnumerator
from .fork import can_fork, run_forked

logger = logging.getLogger(__name__)

__all__ = ["Envelope", "build_envelope"]


class Envelope:
    """Singletons (exact values) and regions (certified bounds) partitioning all supports."""

    def __init__(self, singletons: np.ndarray, values: np.ndarray, regions: list[Region],
                 refine=None, cuts=None, reveal_cost: float | None = None) -> None:
        self.singletons = singletons
        self.values = values
        self.regions = regions
        self.refine = refine
        #: the enumeration's cut store (valid cuts for linear envelopes), or ``None``
        self.cuts = cuts
        #: modelled seconds per member a best-first search reveals
        #: (:func:`mipdp.enumeration.costs.reveal_cost`; ``None``: not known)
        self.reveal_cost = reveal_cost


def build_envelope(enum: SupportEnumerator, epsilon: float, sensitivity: float, *,
                   c: float = 5.0, tol: float = 0.5, max_solves: int | None = 3,
                   refine_solves: int | None = 3, gap: float = 1e-2,
                   full_class_max: int | None = None, split: bool | None = None,
                   split_slack: float = 2.0, split_max_leaves: int = 24,
                   split_max_evaluations: int = 150_000) -> Envelope:
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
    full_class_max : int, optional
        A class of at most this many supports, for an objective with cheap batched values,
        is evaluated in full: its members become singletons (exact values).  Default: the
        enumerator's ``full_class_max`` (100 000; ``enumeration_options={"full_class_max":
        0}`` bounds every class by the certified MIP region bounds).
    split : bool, optional
        Default: the enumerator's ``envelope_split`` (True).  A class whose MIP bound is
        more than ``split_slack`` (units of ``2Δ/ε``; 2: a class within ``e^2`` of its
        level weighs at most ``e^{2-c}`` of the singletons, too little for the rejections
        to pay for an explicit search) below its level is searched
        explicitly at the level (:func:`_below_level`): the members below the level become
        singletons, the rest regions bounded by the level; leaves that would take more
        than ``split_max_evaluations`` evaluations in all keep the MIP bound, and a class
        that needs more than ``split_max_leaves`` explicit searches keeps it whole.
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
    if full_class_max is None:
        full_class_max = getattr(enum, "full_class_max", 100_000)
    full_max = full_class_max if enum.objective.cheap_values else 0
    if split is None:
        split = getattr(enum, "envelope_split", True)
    extra_sup, extra_val = [], []
    class_lower = []

    def class_search(e: SupportEnumerator, k: int):
        """Bound mistake class ``k`` on the enumerator ``e`` (a fork, or ``enum``):
        ``(members, values, regions, class lower bound)``."""
        R = Region(center, k, e.p)
        lev = level(R.size)
        rb = e.region_bound(R, level=lev, abs_tol=tol * unit, max_solves=max_solves, gap=gap)
        parts = None
        if split and rb.lower < lev - split_slack * unit:
            logger.info("envelope: class %d (%d supports): MIP bound L0 + %.4g, level L0 + "
                        "%.4g (units of 2Δ/ε); explicit search at the level (not private)",
                        k, R.size, (rb.lower - L0) / unit, (lev - L0) / unit)

            def leaf_bound(Q, floor=rb.lower, lev=lev):   # master solves (the explicit search
                # of this leaf already passed its budget)
                return max(floor, e.region_bound(Q, level=lev, abs_tol=tol * unit,
                                                 max_solves=max_solves, gap=gap,
                                                 explicit=False).lower)

            parts = _below_level(e, R, lev, fallback=leaf_bound,
                                 max_leaves=split_max_leaves,
                                 max_evaluations=split_max_evaluations)
        if parts is not None:   # the members below the level, exact; the rest above it
            sup, val, rest = parts
            logger.info("envelope: class %d (%d supports): %d member(s) below the level L0 + "
                        "%.4g (units of 2Δ/ε) evaluated, the rest bounded by it in %d "
                        "sub-region(s) (not private)", k, R.size, val.size,
                        (lev - L0) / unit, len(rest))
            return sup, val, rest, float(min([lev, *val.tolist(), *(Q.bound for Q in rest)]))
        R.bound = rb.lower
        logger.info("envelope: class %d (%d supports) bound L0 + %.4g (units of 2Δ/ε), "
                    "best member found L0 + %.4g, level L0 + %.4g; %d solves (not private)",
                    k, R.size, (rb.lower - L0) / unit, (rb.best - L0) / unit,
                    (lev - L0) / unit, rb.solves)
        return None, None, [R], float(rb.lower)

    # The classes too large to evaluate are bounded by independent searches, each on its
    # own fork of the enumerator, on the call's workers, merged in the classes' order
    # (mipdp.enumeration.fork): the same bounds and release for every n_jobs.
    searched = [k for k in range(2, K + 1) if Region(center, k, enum.p).size > full_max]
    # the warm cuts of every class, before the searches (each search gains from the
    # others' cuts too); evaluated on the workers, recorded in order
    if K >= 2:
        warm = enum.warm_class_supports()
        enum.add_warm_cuts([S for k in sorted(warm) for S in warm[k]])
    _prefetch_columns(enum, center, [k for k in searched
                                     if enum.best_found_inside(R := Region(center, k, enum.p))[0]
                                     < level(R.size)])
    if len(searched) >= 2 and can_fork(enum):
        bounds = dict(zip(searched, run_forked(enum, searched, class_search), strict=True))
    else:
        bounds = {k: class_search(enum, k) for k in searched}
    for k in range(2, K + 1):
        if k in bounds:
            sup, val, rest, low = bounds[k]
            if sup is not None:
                extra_sup.append(sup)
                extra_val.append(val)
            regions.extend(rest)
            class_lower.append(low)
            continue
        R = Region(center, k, enum.p)
        t0 = time.perf_counter()
        low = np.inf
        chunks = list(region_members(R))

        def chunk_values(rows, k=k):
            enum.remaining_time(f"class_{k}")   # time_limit holds between chunks
            return np.asarray(enum.objective.values(rows), dtype=float)

        # the chunks run on the call's workers (mipdp._parallel), kept in their order
        for rows, vals in zip(chunks, parallel_map(chunk_values, chunks), strict=True):
            extra_sup.append(rows)
            extra_val.append(vals)
            if vals.size:
                low = min(low, float(np.min(vals)))
        class_lower.append(low)
        enum.record_phase(f"class_{k}", time.perf_counter() - t0, evaluations=R.size)
        logger.info("envelope: class %d (%d supports) evaluated in full (not private)", k,
                    R.size)

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
        singletons = np.vstack([singletons] + [np.asarray(a, dtype=np.intp).reshape(-1, enum.s)
                                               for a in extra_sup])
        values = np.concatenate([values] + extra_val)
    cuts = enum.cuts if getattr(enum, "linear_envelopes", True) else None
    obj = enum.objective
    reveal = reveal_cost(str(getattr(obj, "cost_kind", "iterative")), int(obj.n), int(obj.p),
                         int(enum.s))
    return Envelope(singletons, values, regions, refine, cuts=cuts, reveal_cost=reveal)


#: columns whose products the objective prepares before the class searches, when they
#: are likely to evaluate supports (:func:`_prefetch_columns`)
PREFETCH_COLUMNS = 48


def _prefetch_columns(enum: SupportEnumerator, center: np.ndarray, busy: list[int]) -> None:
    """Before the class searches, let the objective prepare the products of the
    :data:`PREFETCH_COLUMNS` outside features of least mean cut coefficient (least squares:
    their Gram columns, in one pass over ``X``), when a searched class (``busy``) already
    holds an evaluated member below its level, so that its search will evaluate members.

    Each search runs on a fork whose objective starts from the products kept here and
    computes the ones it lacks on its own, a pass over ``X`` per evaluated support with a
    feature not kept (at p = 10⁴, n = 3000 about 20 ms each; a rank release made nine):
    the features its members take are mostly those with the most negative cut
    coefficients, which this pass computes once for every fork.  It depends on the
    enumeration's state only (the same for every ``n_jobs``), and changes the products only
    by the rounding of the batch they are computed in, never a bound's validity.
    """
    prepare = getattr(enum.objective, "prepare_supports", None)
    if not busy or prepare is None or len(enum.cuts) == 0:
        return
    G = enum.cuts.arrays[1]
    score = G.mean(axis=0)
    score[center] = np.inf
    m = min(PREFETCH_COLUMNS, enum.p - center.size)
    if m <= 0:
        return
    # m <= p - |center| < p: a strict subset of the columns
    prepare(np.sort(np.argpartition(score, m - 1)[:m])[None, :])


def _below_level(enum: SupportEnumerator, region: Region, level: float, *,
                 fallback=None, max_leaves: int = 24,
                 max_evaluations: int = 150_000):
    """Every member of ``region`` with ``L < level``, exactly, and the rest bounded by ``level``.

    The region is split on features (:meth:`~SupportEnumerator.split_feature`) into at most
    ``max_leaves`` leaves of at most ``enum.explicit_max`` members; each is searched
    explicitly with the fixed threshold ``level``
    (:func:`~mipdp.enumeration.explicit.explicit_search`), which evaluates every member
    that may lie below it and excludes the others with a cut proof.  So every member not
    evaluated below the level has ``L >= level``: the leaf with those members made holes
    carries the certified bound ``level``.  A leaf whose search would evaluate more than
    the budget left (``max_evaluations`` in all, a hundredth of it for objectives whose
    values are not cheap, e.g. the hinge loss) is bounded by ``fallback(leaf)`` instead (a
    certified bound; :func:`build_envelope` uses master solves only; default ``-inf``),
    with no holes — computed only when some other leaf was searched.

    A leaf is only searched when the cuts' bounds at 256 uniform members of it suggest no
    more candidates (members whose cut bound is below the level, each to be evaluated)
    than the budget left (:func:`_candidates_estimate`).

    Returns ``(supports, values, regions)`` — the members below the level (for the
    singletons, with their exact values) and the leaves — or ``None`` when the region needs
    more than ``max_leaves`` leaves, when no leaf could be searched, or when
    ``enum.explicit_max`` is 0 (no explicit search): the caller then keeps the region
    whole.  The work done is kept (cuts, evaluated supports); nothing else changes.
    """
    from .explicit import explicit_search

    cap = int(enum.explicit_max)
    if cap <= 0:   # explicit searches are switched off: MIP bounds only
        return None
    if region.size > max_leaves * cap:
        # the leaves below partition the region into non-empty parts of at most ``cap``
        # members (a split partitions its region, holes included), so there would be more
        # than ``max_leaves``: the split loop would return None, after every split_feature
        # (pure) on the way — 96 of them, 21 ms, for the four classes of a rank release
        # at p = 10⁴; the same answer without them
        return None
    leaves, stack = [], [region]
    while stack:
        R = stack.pop()
        if R.size == 0:
            continue
        if R.size <= cap:
            leaves.append(R)
        else:
            stack.extend(R.split(enum.split_feature(R, None)))
        if len(leaves) + len(stack) > max_leaves:
            return None
    cheap = bool(getattr(enum.objective, "cheap_values", False))
    budget = int(max_evaluations) if cheap else int(max_evaluations) // 100
    sup, val, rest, unsearched = [], [], [], []
    rng = np.random.default_rng(0x5EED)   # probes only decide the running time, never a law
    for R in leaves:
        res = None
        if _candidates_estimate(enum, R, level, rng) <= budget:
            res = explicit_search(enum, R, threshold=lambda: level, level=level,
                                  name=f"class_{R.k}", max_evaluations=max(0, budget))
            budget -= res.n_evaluated
        if res is None or not res.complete:
            unsearched.append(R)
            continue
        keys = [k for k, v in enum.found.items() if v < level]
        below = np.array(keys, dtype=np.intp).reshape(-1, R.s)
        if below.size:
            below = below[R.contains(below)]
        sup.append(below)
        val.append(np.array([enum.found[tuple(r)] for r in below.tolist()], dtype=float))
        child = R.without(below)
        child.bound = level
        if child.size:
            rest.append(child)
    if len(unsearched) == len(leaves):
        logger.debug("envelope: class %d: every leaf has more candidates than the budget; "
                     "the MIP bounds it instead (not private)", region.k)
        return None
    for R in unsearched:
        R.bound = -math.inf if fallback is None else float(fallback(R))
        rest.append(R)
    return (np.vstack(sup) if sup else np.zeros((0, region.s), dtype=np.intp),
            np.concatenate(val) if val else np.zeros(0), rest)


def _candidates_estimate(enum: SupportEnumerator, region: Region, level: float,
                         rng: np.random.Generator, m: int = 256) -> float:
    """Estimated number of members of ``region`` whose cut bound is at most ``level``.

    The fraction among ``m`` uniform members (bounds of every cut in the store, no
    objective evaluated) times the region's size.  It only decides whether an explicit
    search is worth its time.
    """
    a, G = enum.cuts.arrays
    if a.size == 0 or region.size <= m:
        return float(region.size)
    probe = region.sample(rng, m)
    b = (a[:, None] + G[:, probe].sum(axis=2)).max(axis=0)
    return float(np.mean(b <= level)) * region.size
