"""A deterministic cost model of the explicit search's two kinds of work (and of
permute-and-flip's split decision).

The explicit search of a region (:func:`mipdp.enumeration.explicit.explicit_search`)
chooses, batch after batch, between evaluating the members with the lowest bounds and
taking a cut at the lowest one first (a cut raises the bounds of the members around it
and may exclude many of them), and it sizes its batches.  Both choices weigh the cost of
one **cut** (an evaluation with its dual bound and slope over all ``p`` features, its
master row added) against the cost of one **value** in a batch.  They used to be measured
(``time.perf_counter`` around each call, smoothed), so the first search in a process —
slower, its caches cold — chose differently from the later ones, and so did two searches
side by side on two threads: the set of supports evaluated, the envelope's singletons and
a seeded draw could differ from run to run and with ``n_jobs`` (docs/algorithms.md, "Run
to run: no decision reads the clock").

Here both costs are **modelled** from sizes only: the number of rows ``n``, of features
``p``, the support size ``s`` and the kind of objective (its closed form or its
iterative solver).  Nothing is measured, so the search makes the same choices in every
run, on every worker, for every ``n_jobs``.  The sizes are those of the (clipped) data the
enumeration runs on; the choices only change how fast the search is, never what it
certifies (every member not evaluated is excluded by a proof), so the envelope — and not
the law of the release — is all that depends on them.

Model (seconds; ``k`` the objective's :attr:`~mipdp.losses.base.SupportObjective.cost_kind`,
``b`` the number of supports in the batch)::

    value = V0[k] + VN[k] · n · s + CALL[k] / b   (one support in a batch of b)
    cut   = C0    + CNP · n · p + V0[k] + VN[k] · n · s
                                           (one support, its dual and slope, its row)

with, for least squares, ``VN = 0`` when the Gram matrix is kept (``p <= 2048``: a value
gathers an ``s × s`` block and solves it) and a term in ``n · s²`` otherwise (the block is
computed from the columns).  The constants were set once from
``python -m experiments.studies.calibrate_search_costs`` (in a clone; Prastakos et al.'s design,
``s = 5``, 2 shared cores, load about 3; medians of 5 batches of 256 values and of 9
cuts), e.g. least squares ``n = 1000, p = 1000``: 3.7 µs per value, 1.15 ms per cut;
Huber ``n = 3000, p = 1000``: 32 µs, 1.25 ms; hinge ``n = 3000, p = 1000``: 55 µs,
0.51 ms (the full table is in docs/algorithms.md, "The explicit search's cost model").
Only the ratio ``cut / value`` enters the search, so a uniformly faster or slower machine
makes the same choices; a wrong ratio only makes the search slower.

Permute-and-flip's best-first search splits a region when revealing the members expected
to beat the best found would cost more than refining it; both sides are modelled here too
(:func:`reveal_cost`, :func:`refine_cost`), so a split — and the randomness it consumes —
is the same in every run.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..losses.least_squares import _GRAM_MAX_P  # up to this p, least squares keeps XᵀX

__all__ = ["SearchCosts", "search_costs", "value_cost", "call_cost", "cut_cost",
           "reveal_cost", "refine_cost", "DEFAULT_REVEAL_COST"]

#: seconds of one value in a batch that does not grow with n (Python, gathers, the solve
#: of an s × s system), by cost kind
_V0 = {"least_squares": 3.5e-6, "least_squares_statistics": 3.5e-6, "huber": 3.0e-6,
       "hinge": 3.0e-6, "iterative": 3.0e-6}
#: seconds of one call to ``values`` that do not grow with the batch (Python, dispatch)
_CALL = {"least_squares": 25e-6, "least_squares_statistics": 25e-6, "huber": 90e-6,
         "hinge": 90e-6, "iterative": 90e-6}
#: seconds per row and support feature of one value (the iterative solvers' passes)
_VN = {"least_squares": 0.0, "least_squares_statistics": 0.0, "huber": 3.0e-9,
       "hinge": 5.0e-9, "iterative": 5.0e-9}
#: least squares without a kept Gram matrix: seconds per row and pair of support features
_VN_GRAM_BLOCK = 1.2e-9
#: seconds of one cut that do not grow with the data (the dual, the tangent cuts, the
#: master row's bookkeeping)
_C0 = 4.0e-4
#: seconds per entry of ``X`` of one cut (its slope ``Xᵀρ`` over all p features)
_CNP = 1.0e-9


@dataclass(frozen=True)
class SearchCosts:
    """Modelled seconds of one value in a large batch (``value``), of one call to
    ``values`` whatever its size (``call``), and of one cut (``cut``)."""

    value: float
    call: float
    cut: float

    def per_value(self, batch: int) -> float:
        """Seconds per value in a batch of ``batch`` values (the call's share included)."""
        return self.value + self.call / max(1, int(batch))

    def ratio(self, batch: int) -> float:
        """Values (in batches of ``batch``) that one cut costs."""
        return self.cut / self.per_value(batch)


def value_cost(kind: str, n: int, p: int, s: int) -> float:
    """Modelled seconds of one value in a batch (see the module notes)."""
    kind = kind if kind in _V0 else "iterative"
    if kind == "least_squares_statistics":      # the Gram matrix is the data
        return _V0[kind] * max(1.0, (s / 5.0) ** 2)
    if kind == "least_squares":
        if p <= _GRAM_MAX_P:
            return _V0[kind] * max(1.0, (s / 5.0) ** 2)
        return _V0[kind] + _VN_GRAM_BLOCK * n * s * s
    return _V0[kind] + _VN[kind] * n * s


def call_cost(kind: str) -> float:
    """Modelled seconds of one call to ``values``, whatever its size."""
    return _CALL.get(kind, _CALL["iterative"])


def cut_cost(kind: str, n: int, p: int, s: int) -> float:
    """Modelled seconds of one cut (see the module notes)."""
    rows = s if kind == "least_squares_statistics" else n   # its slope reads s Gram rows
    return _C0 + _CNP * rows * p + value_cost(kind, n, p, s)


def search_costs(enum, region) -> SearchCosts:
    """The cost model for an explicit search of ``region`` on ``enum``'s objective.

    A function of ``n``, ``p``, ``s`` and the objective's ``cost_kind`` only: the same in
    every run and on every worker (it never reads a clock).
    """
    obj = enum.objective
    kind = str(getattr(obj, "cost_kind", "iterative"))
    n, p, s = int(obj.n), int(obj.p), int(region.s)
    return SearchCosts(value=value_cost(kind, n, p, s), call=call_cost(kind),
                       cut=cut_cost(kind, n, p, s))


# -- permute-and-flip's split decision (mipdp.mechanisms.permute_flip) ---------------------
#: seconds of the best-first search's own work per revealed member (the heap, the order
#: statistics, the bookkeeping): 12.8 µs measured at n = p = 1000 (below)
_REVEAL_OVERHEAD = 13e-6
#: members evaluated per call when a region's queue is refilled (its largest refill)
_REVEAL_BATCH = 1024
#: seconds per revealed member when the objective is not known (a sampler built directly)
DEFAULT_REVEAL_COST = 20e-6
#: seconds of a refinement that do not grow with the region (a few master solves)
_REFINE0 = 0.05
#: seconds per member of the region refined (its children's explicit searches list and
#: bound every member): 1.4 s per refinement of 4.9·10⁶-member regions measured (below)
_REFINE_PER_MEMBER = 0.3e-6
#: members beyond which a child is bounded by master solves, not listed (the enumerator's
#: default ``explicit_max``): the modelled cost stops growing there
_REFINE_MAX_MEMBERS = 6_000_000


def reveal_cost(kind: str, n: int, p: int, s: int) -> float:
    """Modelled seconds per member the best-first search of permute-and-flip reveals: its
    value in a queue refill and the search's own work.

    Set from one run of ``method="permute_and_flip"`` (least squares, Prastakos et al.'s design,
    ``n = p = 1000``, ``ρ = 0.1``, 100 draws, 3 refinements) where the sampler measured
    12.8 µs of search and 6.6 µs of evaluation per revealed member.
    """
    return value_cost(kind, n, p, s) + call_cost(kind) / _REVEAL_BATCH + _REVEAL_OVERHEAD


def refine_cost(size: int) -> float:
    """Modelled seconds of one refinement of a region of ``size`` members (the same run:
    1.1 s per refinement of regions of 10¹¹ members, bounded by master solves)."""
    return _REFINE0 + _REFINE_PER_MEMBER * float(min(size, _REFINE_MAX_MEMBERS))
