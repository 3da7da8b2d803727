"""Permute-and-flip over all supports, sampled exactly by best-first search over regions.

Target law over the ``N = C(p, s)`` supports of size ``s``: the release is

    argmax_S  q(S) + E_S,      q(S) = -ε L(S) / (2Δ),   E_S i.i.d. Exp(1),

report-noisy-max with exponential noise, which has the law of permute-and-flip
(McKenna & Sheldon 2020; Ding et al. 2021).  **ε-DP under replace-one neighbours for every
dataset** (``Δ`` the sensitivity of ``L``); with a monotone score and the add/remove scale
(``Δ = B/(2n)``) ε-DP under add/remove neighbours (docs/privacy.md).

Exact sampling (docs/algorithms.md, "Permute-and-flip over all supports")
-------------------------------------------------------------------------
The supports are partitioned into *singletons* (``L`` known) and *regions* ``A_j`` with a
certified lower bound ``ℓ_j <= min_{A_j} L``, so every member of ``A_j`` has
``q <= u_j = -ε ℓ_j / (2Δ)``.  The noises are generated lazily, in decreasing order within
each region: the state of a region is ``m`` unrevealed members one of which (uniform) has
noise ``x`` and the other ``m - 1`` have i.i.d. Exp(1) noises conditioned below ``x``.  The
largest of ``m`` i.i.d. Exp(1) conditioned below ``t`` has CDF
``((1 - e^{-y}) / (1 - e^{-t}))^m`` on ``[0, t]`` and is drawn by inversion.

Best-first search: every region is keyed by ``u_j + x_j``, an upper bound on the noisy
score of each of its unrevealed members.  The top region is popped; if its key is at most
the best noisy score found, every unrevealed support is beaten and the best found is the
exact arg-max.  Otherwise its top member (uniform among the unrevealed ones) is evaluated
(``q + x``), and the next noise is drawn below ``x``.  A region popped often may be *split*
(refined) into children with tighter bounds: the member carrying ``x`` is in child ``A``
with probability ``m_A / m`` (it is uniform); that child keeps ``x``, the other's members
are i.i.d. Exp(1) below ``x`` and draw their own maximum.  Every step keeps the joint law
of the unrevealed noises given everything revealed exactly as i.i.d. Exp(1) conditioned
on what was revealed, so the output is the arg-max of i.i.d. noisy scores: the law is
permute-and-flip's **exactly**, whatever the envelope, its refinements and the batch
sizes (which only change the running time).  No truncation, no cap on the search.

Regions are independent, so a region may instead be searched on its own, against the
running best, by *thinning*: with a linear envelope ``e^{q(T)} <= h(T)`` (a cut, product
form), the members' noisy scores arrive (going down from ``+inf``) with hazards dominated
by a Poisson process of rate ``κ Σ h`` in ``t = e^{-y}``, marks drawn ``∝ h``; each point
kept with the ratio of hazards, the first kept point is the region's maximum, exactly
(:meth:`PermuteAndFlipSampler._thin`; docs/algorithms.md, "Thinning over the linear
envelopes").  Which method a region gets depends only on the running best, which is
independent of that region's noises.
"""

from __future__ import annotations

import heapq
import logging
import math
import time
from collections.abc import Callable

import numpy as np

from ..enumeration.costs import DEFAULT_REVEAL_COST, refine_cost
from ._envelope_sampler import _MAX_SEEN, EnvelopeSampler
from .linear_envelope import LinearEnvelope, best_linear_envelope
from .regions import Region, region_members

logger = logging.getLogger(__name__)
#: periodic progress lines of long sampling runs (the command line shows them)
progress_logger = logging.getLogger(__name__ + ".progress")

__all__ = ["PermuteAndFlipSampler", "permute_and_flip_log_law", "pf_log_probability_bounds",
           "truncated_exp_max"]


def truncated_exp_max(rng: np.random.Generator, m: int, t: float = math.inf) -> float:
    """Maximum of ``m`` i.i.d. Exp(1) variables conditioned to lie below ``t`` (inversion).

    ``P(max <= y) = ((1 - e^{-y}) / (1 - e^{-t}))^m`` on ``[0, t]``: with ``U`` uniform,
    ``y = -log(1 - (1 - e^{-t}) U^{1/m})``, computed in log space (exact for any ``m``).
    """
    log_ft = 0.0 if math.isinf(t) else math.log1p(-math.exp(-t)) if t > 0 else -math.inf
    u = rng.random()
    if u <= 0.0 or log_ft == -math.inf:
        return 0.0
    a = log_ft + math.log(u) / float(m)
    return -math.log(-math.expm1(a))


#: batches of order statistics up to this size are computed with scalar arithmetic
_SCALAR_K = 16


def next_order_statistics(rng: np.random.Generator, m: int, x: float, k: int) -> np.ndarray:
    """The next ``k`` values, in decreasing order, of ``m`` i.i.d. Exp(1) conditioned below ``x``.

    ``V = 1 - e^{-E}`` is uniform; the largest of ``m`` i.i.d. uniforms below ``v`` is
    ``v U^{1/m}``, and the rest are i.i.d. below it, so ``log V_j = log V_{j-1} +
    log(U_j) / (m - j + 1)`` (a cumulative sum) and ``E_j = -log(1 - V_j)``.  Same law as
    ``k`` successive calls of :func:`truncated_exp_max`; ``k <= m``.
    """
    log_v0 = 0.0 if math.isinf(x) else math.log1p(-math.exp(-x)) if x > 0 else -math.inf
    if log_v0 == -math.inf:
        return np.zeros(k)
    u = rng.random(k)
    if k <= _SCALAR_K:   # the usual batch: the same arithmetic without numpy's overhead
        out = np.empty(k)
        c = 0.0
        for j in range(k):
            c = c + math.log(u[j]) / (float(m) - j) if u[j] > 0.0 else -math.inf
            lv = log_v0 + c
            out[j] = -math.log(-math.expm1(lv)) if lv < 0.0 else math.inf
        return out
    with np.errstate(divide="ignore"):
        steps = np.log(u) / (float(m) - np.arange(k))
    log_v = log_v0 + np.cumsum(steps)
    with np.errstate(divide="ignore"):
        return -np.log(-np.expm1(log_v))


# -- exact law of report-noisy-max with exponential noise -----------------------------------
def _phi(x: np.ndarray) -> np.ndarray:
    """``(1 - e^{-x}) / x`` for ``x >= 0`` (1 at 0, 0 at +inf)."""
    x = np.asarray(x, dtype=float)
    out = np.ones_like(x)
    big = x > 1e-12
    with np.errstate(over="ignore", invalid="ignore"):
        out[big] = -np.expm1(-x[big]) / x[big]
    out[np.isinf(x)] = 0.0
    return out


def pf_log_probability_bounds(q_s: float, q_others: np.ndarray, counts: np.ndarray | None = None,
                              grid: int = 800) -> tuple[float, float]:
    """Bounds ``(lo, hi)`` on ``log P(argmax_T q_T + E_T = S)`` (``E`` i.i.d. Exp(1)).

    ``q_others`` are the scores of the other candidates, ``counts`` their multiplicities.
    With ``v = e^{-E_S}``, ``P = ∫_0^{v_0} Π_T (1 - a_T v)^{c_T} dv``, ``a_T = e^{q_T - q_S}``,
    ``v_0 = min(1, 1/max a_T)``.  The integrand is log-concave and decreasing, so on each
    interval of a grid the chord of its logarithm bounds it below and the tangent at the
    left end bounds it above: both bounds are closed forms and hold up to rounding.  The
    gap shrinks as ``grid**-2``.
    """
    q = np.asarray(q_others, dtype=float).ravel()
    c = np.ones_like(q) if counts is None else np.asarray(counts, dtype=float).ravel()
    keep = (c > 0) & (q > -np.inf)
    q, c = q[keep], c[keep]
    if q.size == 0:
        return 0.0, 0.0
    top = max(float(q_s), float(q.max()))
    log_v0 = float(q_s) - top                       # v0 = min(1, 1/max a)
    b = np.exp(q - top)                             # a_T v0 <= 1
    bsum = float(np.dot(c, b))
    w1 = min(1.0, 60.0 / bsum)
    w = np.linspace(0.0, w1, grid + 1)
    if w1 < 1.0:
        w = np.r_[w, np.geomspace(w1, 1.0, grid // 2 + 1)[1:]]
    logf = np.zeros(w.size)
    dlog = np.zeros(w.size)
    step = max(1, 2_000_000 // w.size)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(0, b.size, step):
            bb, cc = b[i:i + step], c[i:i + step]
            bw = np.minimum(np.outer(w, bb), 1.0)
            logf += np.log1p(-bw) @ cc
            dlog -= np.where(bw < 1.0, bb / (1.0 - bw), np.inf) @ cc
    h = np.diff(w)
    l0, l1 = logf[:-1], logf[1:]
    with np.errstate(invalid="ignore"):
        chord = np.where(np.isneginf(l1), np.inf, l0 - l1)
    chord = np.where(np.isneginf(l0), np.inf, chord)
    lo_terms = h * np.exp(l0) * _phi(np.maximum(chord, 0.0))
    tang = -dlog[:-1] * h
    hi_terms = h * np.exp(l0) * _phi(np.maximum(np.nan_to_num(tang, posinf=np.inf), 0.0))
    lo, hi = float(lo_terms.sum()), float(hi_terms.sum())
    lo_log = math.log(lo) + log_v0 if lo > 0 else -math.inf
    hi_log = math.log(hi) + log_v0 if hi > 0 else -math.inf
    return lo_log, hi_log


def permute_and_flip_log_law(scores: np.ndarray, grid: int | None = None) -> np.ndarray:
    """Log-probabilities of ``argmax_i scores[i] + E_i`` (``E`` i.i.d. Exp(1)), every ``i``.

    The midpoint (in probability) of the bounds of :func:`pf_log_probability_bounds`;
    their relative gap is below ``1e-6`` at the default grid (4000 points for lists of up
    to 1000 distinct scores, fewer above).  Permute-and-flip's law for the quality scores
    ``scores``.
    """
    q = np.asarray(scores, dtype=float).ravel()
    if grid is None:
        grid = int(min(4000, max(800, 4_000_000 // max(1, np.unique(q).size))))
    out = np.empty(q.size)
    # scores equal to another's share one term with a count (faster for ties)
    vals, inv, cnt = np.unique(q, return_inverse=True, return_counts=True)
    cache = {}
    for i in range(q.size):
        k = int(inv[i])
        if k not in cache:
            c = cnt.astype(float).copy()
            c[k] -= 1.0
            lo, hi = pf_log_probability_bounds(vals[k], vals, c, grid)
            cache[k] = np.logaddexp(lo, hi) - math.log(2.0) if hi > -np.inf else -np.inf
        out[i] = cache[k]
    return out


#: members a region draws ahead and evaluates in one batch the first time it is popped in a
#: draw (doubled at each refill, up to ``_MAX_QUEUE``)
_FIRST_QUEUE = 16
_MAX_QUEUE = 1024

#: largest batch of order statistics drawn at one pop
_MAX_BATCH = 65536

#: thinning is used on a region only while its cap stays this far (log units) below the
#: running best (near the cap the dominating rate grows without bound)
_THIN_MARGIN = 1e-3
#: largest batch of thinning proposals evaluated at once
_THIN_BATCH = 4096
#: most memory held by the linear envelopes' suffix polynomials (as the exponential
#: mechanism's sampler)
_LINEAR_MAX_BYTES = 256 * 2 ** 20


def _batch_size(m: int, x: float, t: float) -> int:
    """How many of the next order statistics of ``m`` Exp(1) noises below ``x`` to draw at
    once: a little more than the expected number above ``t`` (those are evaluated now).

    The expected count is ``m (e^{-t} - e^{-x}) / (1 - e^{-x})`` (``m`` if ``t <= 0``).
    Only the running time depends on the batch (the draws beyond the first one below
    ``t`` are discarded, and the next maximum is redrawn below it: the Markov property of
    the order statistics), never the law.  A fixed schedule (16, ×4 per pop, up to 65 536)
    drew thousands of values per pop to use one or two: 35 % of the sampling time at
    p = 100, ρ = 0.7, n = 1000.
    """
    if m <= 0:
        return 0
    if t <= 0.0 or not math.isfinite(x):
        expected = float(m) if t <= 0.0 else m * math.exp(-t)
    else:
        expected = m * -math.expm1(-(x - t)) * math.exp(-t) / -math.expm1(-x) if x > 0 else 0.0
    return int(min(_MAX_BATCH, max(4, math.ceil(1.25 * expected) + 4)))


def _keys(rows: np.ndarray) -> list[bytes]:
    """Hashable keys of sorted support rows."""
    rows = np.ascontiguousarray(rows, dtype=np.intp)
    return [r.tobytes() for r in rows]


class _State:
    """Search state of one region during one draw (see the module notes)."""

    __slots__ = ("region", "visited", "m", "x", "best", "queue", "queue_L", "pending",
                 "qbatch")

    def __init__(self, region: Region, visited: set, m: int, x: float, best=None) -> None:
        self.region, self.visited, self.m, self.x = region, visited, m, x
        self.best = best
        # members drawn ahead (a uniform random order of distinct unrevealed members) and
        # their objectives, evaluated in one batch; their noises are not revealed yet
        self.queue = np.empty((0, region.s), dtype=np.intp)
        self.queue_L = np.empty(0)
        self.pending: set = set()
        self.qbatch = _FIRST_QUEUE


class PermuteAndFlipSampler(EnvelopeSampler):
    """Exact sampler of permute-and-flip over all ``C(p, s)`` supports.

    The release is ``argmax_S -ε L(S) / (2Δ) + E_S`` with ``E_S`` i.i.d. Exp(1)
    (report-noisy-max with exponential noise, which has permute-and-flip's law).

    Parameters
    ----------
    values : callable
        ``values(supports) -> L`` for a batch of supports (shape ``(m, s)``, sorted rows).
    singletons : ndarray, shape (m, s)
        Supports whose objective is known (sorted rows, distinct).
    singleton_values : ndarray, shape (m,)
        Their objectives ``L``.
    regions : list of Region
        The other supports, partitioned; each with a certified ``bound``.
    p : int
        Number of features.
    epsilon : float
        ``ε`` of one draw.
    sensitivity : float
        ``Δ``: the scale of the score (``B/n`` under replace-one neighbours; ``B/(2n)``,
        the monotone scale, under add/remove).
    refine : callable, optional
        ``refine(region, best_member) -> list of Region`` (a partition of ``region`` with
        certified bounds, each at least ``region.bound``).  ``None``: no refinement.
    deadline : float, optional
        ``time.perf_counter()`` value after which sampling raises
        :class:`~mipdp.exceptions.TimeLimitError` (nothing is returned).
    refine_after : int
        A popped region is split when more than this many of its unrevealed members are
        expected to beat the best found and revealing them (``reveal_cost`` per member)
        would take longer than a refinement.
    split_cost : float, optional
        Seconds a refinement is taken to cost in that comparison (default: the modelled
        cost of refining the region, :func:`mipdp.enumeration.costs.refine_cost`, which
        grows with its size: a child's bound can take a long explicit search on flat
        landscapes; ``0`` refines whenever the other condition holds).  Only the running
        time depends on it, never the law.
    reveal_cost : float, optional
        Modelled seconds per revealed member (its value and the search's own work;
        :func:`mipdp.enumeration.costs.reveal_cost`, which the method passes for its
        objective; default 20 µs).  No decision reads a clock, so the same
        ``random_state`` gives the same draws in every run and for every ``n_jobs``.
    cuts : CutStore, optional
        Cuts ``L(T) >= a_t + Σ_{i∈T} G[t, i]`` valid for every support (the enumeration's
        cut store).  A region whose best cut's linear envelope makes it cheaper is
        searched by thinning a Poisson process over that envelope (:meth:`_thin`) instead
        of the best-first search; ``None``: best-first search only.  Only the running
        time depends on it, never the law.

    Notes
    -----
    **Privacy.** Neighbours: replace one row (``n`` fixed), score ``L`` with sensitivity
    ``Δ``: every draw has exactly permute-and-flip's law with ``ε``: **ε-DP (pure) per draw,
    for every dataset**; ``k`` draws are ``kε``-DP.  Under add/remove neighbours, with the
    monotone sum-form score ``F = n L`` (adding a row moves every ``F`` up by at most ``B``)
    and ``sensitivity = B/(2n)``, the exponent is ``ε F / B`` and a draw is ε-DP under
    add/remove neighbours (docs/privacy.md).  The envelope must be valid (every bound a
    true lower bound): it is checked on every evaluated member (an evaluated value below
    its region's bound raises :class:`~mipdp.exceptions.CertificationError`).  The envelope
    and the search only change the running time, never the law.
    """

    def __init__(self, values: Callable[[np.ndarray], np.ndarray], singletons: np.ndarray,
                 singleton_values: np.ndarray, regions: list[Region], p: int, epsilon: float,
                 sensitivity: float, *, refine: Callable | None = None,
                 deadline: float | None = None, refine_after: int = 64,
                 split_cost: float | None = None, cuts=None,
                 reveal_cost: float | None = None) -> None:
        super().__init__(values, singletons, singleton_values, p, epsilon, sensitivity,
                         refine=refine, deadline=deadline)
        self._cuts = cuts
        #: each region's linear envelope (``None``: none beats its constant bound), by id
        self._linear: dict[int, tuple[Region, LinearEnvelope | None, float]] = {}
        self._linear_bytes = 0
        #: draws' regions searched by thinning, and the proposals it made (not private)
        self.n_thinned = 0
        self.n_proposals = 0
        self.refine_after = int(refine_after)
        self.split_cost = None if split_cost is None else float(split_cost)
        self.reveal_cost = DEFAULT_REVEAL_COST if reveal_cost is None else float(reveal_cost)
        self._single_q = -self.coef * (self.singleton_values - self.ref)
        self.regions: list[Region] = [R for R in regions if R.size > 0]
        self._check_bounded(self.regions)
        self._check_covered()
        #: statistics (**not private**: they depend on the data)
        self.n_draws = 0
        self.n_evaluations = 0
        self.n_pops = 0
        self.n_refinements = 0
        self.time_refining = 0.0
        self.draw_times: list[float] = []

    # -- sampling ------------------------------------------------------------------------
    def sample(self, rng: np.random.Generator, size: int = 1) -> np.ndarray:
        """``size`` independent draws of permute-and-flip, shape ``(size, s)``."""
        out = np.empty((size, self.s), dtype=np.intp)
        for i in range(size):
            t0 = time.perf_counter()
            out[i] = self._draw(rng)
            self.draw_times.append(time.perf_counter() - t0)
        logger.info("permute-and-flip: %d draws, %d evaluations, %d pops, %d regions "
                    "(%d refinements); not private", size, self.n_evaluations, self.n_pops,
                    len(self.regions), self.n_refinements)
        return out

    def _u(self, R: Region) -> float:
        """Upper bound on the score of every member of ``R``."""
        return -self.coef * (R.bound - self.ref)

    # -- thinning over a linear envelope ---------------------------------------------------
    def _linear_of(self, R: Region) -> tuple[LinearEnvelope | None, float]:
        """``R``'s best linear envelope and ``log H``, ``H`` a cap on ``e^q`` over ``R``
        (the least of the constant cap and the envelope's largest weight); cached."""
        got = self._linear.get(id(R))
        if got is not None and got[0] is R:
            return got[1], got[2]
        lin, log_h = None, self._u(R)
        if (self._cuts is not None and len(self._cuts) > 0
                and self._linear_bytes + LinearEnvelope.tables_nbytes(R) <= _LINEAR_MAX_BYTES):
            a, G = self._cuts.arrays
            lin = best_linear_envelope(R, a, G, self._cuts.slack(), self.coef, self.ref,
                                       combination_slack=self._cuts.combination_slack())
            if lin is None or not math.isfinite(lin.log_mass):
                lin = None
            else:
                self._linear_bytes += lin.nbytes()
                g = -self.coef * lin.g
                top = -self.coef * (lin.a - self.ref) + float(g[R.fixed_in].sum())
                for pool, q in ((R.free_center, R.n_keep), (R.free_outside, R.n_add)):
                    if q > 0:
                        top += float(np.sort(g[pool])[::-1][:q].sum())
                log_h = min(log_h, top)
        self._linear[id(R)] = (R, lin, log_h)
        return lin, log_h

    @staticmethod
    def _intervals(s_end: float) -> list[tuple[float, float]]:
        """Pieces ``[s_k, s_{k+1}]`` of ``[0, s_end]`` (``s_end < 1``), each halving the
        distance to 1 at most: the dominating rate's factor ``1/(1 - s_{k+1})`` stays
        within twice the true hazard's on each."""
        if not s_end < 1.0:
            raise ValueError("s_end: thinning needs the running best above the cap")
        out, lo = [], 0.0
        while lo < s_end:
            hi = min(s_end, 0.5 * (1.0 + lo))
            out.append((lo, hi))
            lo = hi
        return out

    def _thin_cost(self, R: Region, lin: LinearEnvelope, log_h: float, thr: float) -> float:
        """Expected proposals of :meth:`_thin` on ``R`` above ``thr`` (inf: not applicable)."""
        if not log_h - thr < -_THIN_MARGIN or lin.log_mass - log_h > 600.0:
            return math.inf
        s_end = math.exp(log_h - thr)
        rate = math.exp(lin.log_mass - log_h)
        return sum(rate * (b - a) / (1.0 - b) for a, b in self._intervals(s_end))

    def _search_cost(self, R: Region, thr: float) -> float:
        """Expected members the best-first search reveals in ``R`` above ``thr``."""
        d = self._u(R) - thr
        return float(R.size) * (1.0 if d >= 0 else math.exp(d))

    def _thin(self, R: Region, lin: LinearEnvelope, log_h: float, thr: float,
              rng: np.random.Generator) -> tuple[float, np.ndarray] | None:
        """``(max, argmax)`` of the noisy scores of ``R``'s members if the max beats
        ``thr``, else ``None``, by thinning a Poisson process (docs/algorithms.md,
        "Permute-and-flip by thinning").

        Downward from ``+inf``, member ``T``'s noisy score ``Y_T = q_T + E_T`` arrives at
        level ``y > q_T`` with hazard ``λ_T(y) = e^{q_T - y} / (1 - e^{q_T - y})``; the
        first arrival over the region is its maximum.  With ``t = e^{-y}`` and
        ``e^{q_T} <= h_T`` (the cut's weight) and ``e^{q_T} <= H``, on ``t <= t_1 < 1/H``
        the hazard is at most ``κ h_T`` per unit of ``t``, ``κ = 1/(1 - H t_1)``: a
        homogeneous Poisson process of rate ``κ Z`` in ``t``, marks drawn ``∝ h_T`` (the
        linear envelope's sampler), each kept with probability ``λ_T / (κ h_T e^{-y})``,
        gives exactly the superposition of the members' hazards; its first kept point is
        the region's maximum.  A proposal in a hole (not a member) is never kept.
        """
        s_end = math.exp(log_h - thr)
        log_zh = lin.log_mass - log_h         # rate per unit of s = H t, before κ
        for lo, hi in self._intervals(s_end):
            kappa = 1.0 / (1.0 - hi)
            rate = kappa * math.exp(log_zh)
            s_now = lo
            while True:
                self._check_deadline()
                k = int(min(_THIN_BATCH, max(4, math.ceil(1.25 * rate * (hi - s_now)) + 4)))
                gaps = rng.exponential(size=k) / rate
                s_pts = s_now + np.cumsum(gaps)
                inside = int(np.searchsorted(s_pts, hi, side="right"))
                members = lin.sample(rng, k)
                log_u = np.log(rng.random(k))
                if inside:
                    got = self._thin_batch(R, lin, log_h, members[:inside], s_pts[:inside],
                                           log_u[:inside], hi)
                    if got is not None:
                        return got
                if inside < k:
                    break          # the process passed hi: next interval
                s_now = float(s_pts[-1])
        return None

    def _thin_batch(self, R: Region, lin: LinearEnvelope, log_h: float, members: np.ndarray,
                    s_pts: np.ndarray, log_u: np.ndarray, hi: float):
        """Evaluate proposals in arrival order and return the first kept, if any."""
        self.n_proposals += members.shape[0]
        hole = R._in_holes(members) if R.holes else np.zeros(members.shape[0], dtype=bool)
        L = np.full(members.shape[0], np.inf)
        ok = np.flatnonzero(~hole)
        if ok.size:
            L[ok] = np.asarray(self._values(members[ok]), dtype=float)
            cut = lin.bounds(members[ok])
            self._check_envelope(members[ok], L[ok], np.maximum(cut, R.bound))
            self.n_evaluations += ok.size
            if len(self._seen) < _MAX_SEEN:
                for key, v in zip(map(tuple, members[ok].tolist()), L[ok], strict=True):
                    self._seen.setdefault(key, float(v))
        q = -self.coef * (L - self.ref)
        log_hT = np.full(members.shape[0], np.inf)
        if ok.size:
            log_hT[ok] = -self.coef * (cut - self.ref)
        y = log_h - np.log(s_pts)
        with np.errstate(invalid="ignore", over="ignore"):
            # log of λ_T / (κ h_T e^{-y}) = q - log h_T + log(1 - hi) - log(1 - e^{q - y})
            log_acc = q - log_hT + math.log1p(-hi) - np.log1p(-np.exp(q - y))
        log_acc[hole] = -np.inf
        kept = np.flatnonzero(log_u < log_acc)
        if kept.size == 0:
            return None
        i = int(kept[0])
        self.n_thinned += 1
        return float(y[i]), members[i].copy()

    def _draw(self, rng: np.random.Generator) -> np.ndarray:
        self._check_deadline()
        noisy = self._single_q + rng.exponential(size=self._single_q.size)
        i = int(np.argmax(noisy))
        best, best_S = float(noisy[i]), self.singletons[i].copy()
        # Regions are independent: each one's maximum is needed only where it beats the
        # running best, and any exact method may find it (the choice below depends only on
        # the noises of the singletons and of the regions already searched, which are
        # independent of this region's).  Regions with a linear envelope that makes
        # thinning cheaper than the best-first search are searched by thinning, highest
        # cap first; the others together by the best-first search.
        deferred = []
        for R in sorted(self.regions, key=lambda Q: Q.bound):
            lin, log_h = self._linear_of(R)
            cost = math.inf if lin is None else self._thin_cost(R, lin, log_h, best)
            if lin is None or not math.isfinite(cost) or cost > self._search_cost(R, best):
                deferred.append(R)
                continue
            self._check_deadline()
            hit = self._thin(R, lin, log_h, best, rng)
            if hit is not None:
                best, best_S = hit
        return self._best_first(deferred, best, best_S, rng)

    def _best_first(self, regions: list[Region], best: float, best_S: np.ndarray,
                    rng: np.random.Generator) -> np.ndarray:
        """The arg-max of ``best`` and the noisy scores of ``regions``' members, by the
        best-first search of the module notes (ends the draw)."""
        states: list[_State] = []
        heap: list[tuple[float, int]] = []

        def push(st: _State) -> None:
            states.append(st)
            heapq.heappush(heap, (-(self._u(st.region) + st.x), len(states) - 1))

        for R in regions:
            push(_State(R, set(), R.size, truncated_exp_max(rng, R.size)))
        last = time.perf_counter()
        while heap and -heap[0][0] > best:
            self._check_deadline()
            if time.perf_counter() - last >= 5.0:  # a long search is never silent
                last = time.perf_counter()
                progress_logger.info("permute-and-flip: draw %d, %d evaluations, %d open "
                                     "regions (not private)", self.n_draws + 1,
                                     self.n_evaluations, len(heap))
            _, sid = heapq.heappop(heap)
            st = states[sid]
            self.n_pops += 1
            if self._want_split(st, best):
                for child in self._split(st, rng):
                    push(child)
                continue
            u = self._u(st.region)
            thr = max(best, -heap[0][0] if heap else -math.inf)
            # the next order statistics that would be popped before anything else (a batch)
            k = min(st.m - 1, _batch_size(st.m - 1, st.x, thr - u))
            nxt = None
            if k > 0:
                ys = next_order_statistics(rng, st.m - 1, st.x, k)
                below = np.flatnonzero(u + ys <= thr)
                above = int(below[0]) if below.size else k
                xs = np.concatenate(([st.x], ys[:above]))
                if above < k:
                    nxt = float(ys[above])
                elif st.m - 1 - k > 0:
                    nxt = truncated_exp_max(rng, st.m - 1 - k, float(ys[-1]))
            else:
                xs = np.array([st.x])
            members, L = self._next_members(st, len(xs), rng)
            sc = -self.coef * (L - self.ref) + xs
            j = int(np.argmax(sc))
            if sc[j] > best:
                best, best_S = float(sc[j]), members[j].copy()
            k = int(np.argmin(L))
            if st.best is None or L[k] < st.best[0]:
                st.best = (float(L[k]), members[k].copy())
            st.visited.update(_keys(members))
            st.m -= len(xs)
            if st.m > 0:
                assert nxt is not None  # set above whenever members remain
                st.x = nxt
                states[sid] = st
                heapq.heappush(heap, (-(u + st.x), sid))
        self.n_draws += 1
        return best_S

    def _want_split(self, st: _State, best: float) -> bool:
        """Split when many more members of the region would still beat the best found and
        evaluating them would cost more than a refinement (both costs modelled from sizes,
        never measured: the decision, and the randomness a split consumes, are the same in
        every run)."""
        if self._refine is None or st.region.size <= 1:
            return False
        tau = best - self._u(st.region)          # members above: noise > tau
        expected = st.m * (math.exp(-tau) if tau > 0 else 1.0)
        if expected <= self.refine_after:
            return False
        if self.split_cost is not None:
            return expected * self.reveal_cost >= self.split_cost
        return expected * self.reveal_cost >= refine_cost(st.region.size)

    def _split(self, st: _State, rng: np.random.Generator) -> list[_State]:
        """Refine ``st.region`` and give the children their exact conditional noise laws."""
        R = st.region
        assert self._refine is not None  # _want_split is False without it
        t0 = time.perf_counter()
        children = [c for c in self._refine(R, None if st.best is None else st.best[1])
                    if c.size > 0]
        self.time_refining += time.perf_counter() - t0
        if sum(c.size for c in children) != R.size:
            raise ValueError("refine: the children must partition the region")
        for c in children:
            c.bound = max(c.bound, R.bound)    # a child inherits its parent's valid bound
        # the envelope keeps the refinement for later draws
        idx = next(i for i, Q in enumerate(self.regions) if Q is R) if any(
            Q is R for Q in self.regions) else None
        if idx is not None:
            self.regions[idx:idx + 1] = children
        self.n_refinements += 1
        vis = np.frombuffer(b"".join(st.visited), dtype=np.intp).reshape(-1, self.s)
        parts = []
        for c in children:
            mine = c.contains(vis) if vis.size else np.zeros(0, dtype=bool)
            v = set(_keys(vis[mine]))
            parts.append((c, v, c.size - len(v)))
        ms = np.array([m for _, _, m in parts], dtype=float)
        # the member carrying x is uniform among the unrevealed ones
        holder = int(np.searchsorted(np.cumsum(ms), rng.random() * ms.sum(), side="right"))
        holder = min(holder, len(parts) - 1)
        out = []
        for i, (c, v, m) in enumerate(parts):
            if m == 0:
                continue
            x = st.x if i == holder else truncated_exp_max(rng, m, st.x)
            best = st.best if st.best is not None and c.contains(st.best[1][None])[0] else None
            out.append(_State(c, v, m, x, best))
        return out

    def _next_members(self, st: _State, k: int, rng: np.random.Generator
                      ) -> tuple[np.ndarray, np.ndarray]:
        """The next ``k`` members of the region's uniform random order of its unrevealed
        members, with their objectives.

        Members are drawn ahead (``st.qbatch`` at a time) and evaluated in one batch: one
        call for many supports costs about what one call for one support costs.  The
        queue is a uniformly random sequence of distinct unrevealed members drawn
        independently of the noises, so its first ``k`` entries are a uniform ordered
        ``k``-tuple of the unrevealed members, as the search needs; knowing their
        objectives early changes nothing (they are deterministic, and only decide how fast
        the search goes).  A split discards the queue (its members stay unrevealed).

        The queue's order is the order of the next noises, so no control decision may depend
        on a queued member's identity, not even through the time its evaluation took (a
        split decision that did would re-randomise the holder of ``x`` with a bias): the
        split decision reads modelled costs only (``reveal_cost``), never a measured time.
        Returns the rows and their objectives.
        """
        avail = st.queue.shape[0]
        if avail < k:
            want = min(st.m - avail, max(k - avail, st.qbatch))
            st.qbatch = min(2 * st.qbatch, _MAX_QUEUE)
            new = self._uniform_unvisited(st, want, rng)
            new_L = self._evaluate(new, st.region)
            st.pending.update(_keys(new))
            st.queue = np.concatenate([st.queue, new])
            st.queue_L = np.concatenate([st.queue_L, new_L])
        rows, L = st.queue[:k], st.queue_L[:k]
        st.queue, st.queue_L = st.queue[k:], st.queue_L[k:]
        st.pending.difference_update(_keys(rows))
        return rows, L

    def _uniform_unvisited(self, st: _State, k: int, rng: np.random.Generator) -> np.ndarray:
        """A uniformly random ordered ``k``-tuple of distinct unrevealed members (not
        already queued).

        Uniform draws of the region in order, keeping the first occurrence of each
        unrevealed member (rejection: uniform over the unrevealed ones, in a uniformly
        random order); when at most half the members are unrevealed, the unrevealed ones
        are listed and ``k`` of them drawn without replacement.
        """
        R = st.region
        if st.m <= R.size // 2 and R.size <= 4_000_000:  # mostly revealed: enumerate
            rows = np.vstack(list(region_members(R)))
            if st.visited or st.pending:
                keep = np.array([key not in st.visited and key not in st.pending
                                 for key in _keys(rows)])
                rows = rows[keep]
            return rows[rng.choice(rows.shape[0], size=k, replace=False)]
        got: list[np.ndarray] = []
        taken: set = set()
        while len(got) < k:
            cand = np.ascontiguousarray(R.sample(rng, max(8, int(1.2 * (k - len(got))) + 8)))
            for r, key in zip(cand, _keys(cand), strict=True):
                if key in st.visited or key in st.pending or key in taken:
                    continue
                taken.add(key)
                got.append(r)
                if len(got) == k:
                    break
        return np.array(got, dtype=np.intp).reshape(k, self.s)

    def _evaluate(self, members: np.ndarray, R: Region) -> np.ndarray:
        L = np.asarray(self._values(members), dtype=float)
        self._check_envelope(members, L, R.bound)
        self.n_evaluations += L.size
        if len(self._seen) < _MAX_SEEN:
            for key, v in zip(map(tuple, members.tolist()), L, strict=True):
                self._seen.setdefault(key, float(v))
        return L

    # -- probabilities --------------------------------------------------------------------
    def _L(self, key: tuple) -> float:
        v = self._value(key)
        if key not in self._single_index:
            self._seen[key] = v
        return v

    def log_probability_bounds(self, support) -> tuple[float, float]:
        """Certified bounds ``(lo, hi)`` on ``log P(one draw = support)``.

        The probability decreases in every other support's score.  Lower bound: every
        unevaluated member of a region at its region's score cap ``-ε ℓ_j / (2Δ)``; upper
        bound: the unevaluated members left out (score ``-∞``).  Each is a one-dimensional
        integral bounded by :func:`pf_log_probability_bounds`.  Equal up to the quadrature's
        gap when every support has been evaluated.
        """
        key = self._support_key(support)
        if key is None:
            return -math.inf, -math.inf
        q_s = -self.coef * (self._L(key) - self.ref)
        seen = {k: v for k, v in self._seen.items() if k != key and k not in self._single_index}
        seen_keys = np.array(list(seen), dtype=np.intp).reshape(-1, self.s)
        seen_q = -self.coef * (np.fromiter(seen.values(), float, len(seen)) - self.ref)
        single_q = self._single_q[[i for i, r in enumerate(self.singletons.tolist())
                                   if tuple(r) != key]] if key in self._single_index \
            else self._single_q
        known = np.r_[single_q, seen_q]
        caps, counts = [], []
        for R in self.regions:
            n_seen = int(R.contains(seen_keys).sum()) if seen_q.size else 0
            n_un = R.size - n_seen - int(bool(R.contains(np.array([key]))[0]))
            if n_un > 0:
                caps.append(self._u(R))
                counts.append(float(n_un))
        grid = int(min(4000, max(800, 4_000_000 // max(1, known.size + len(caps)))))
        lo, _ = pf_log_probability_bounds(q_s, np.r_[known, caps],
                                          np.r_[np.ones(known.size), counts], grid)
        _, hi = pf_log_probability_bounds(q_s, known, grid=grid)
        return lo, hi

    #: largest ``C(p, s)`` for which :meth:`log_probability` evaluates every support
    exact_max = 20_000

    def log_probability(self, support) -> float:
        """``log P(one draw = support)`` (to the quadrature's relative accuracy, ~1e-6).

        Needs every support's score: known when every support is a singleton, and
        computed on first use when there are at most :attr:`exact_max` supports.
        Otherwise raises ``ValueError``: permute-and-flip's probability of a support
        depends on every other support's score individually (not through a normaliser),
        so only :meth:`log_probability_bounds` is available.
        """
        key = self._support_key(support)
        if key is None:
            return -math.inf
        if self.regions:
            if self.n_supports > self.exact_max:
                raise ValueError(
                    f"permute-and-flip's probability of a support over C({self.p}, {self.s}) "
                    f"= {self.n_supports} supports depends on every support's score, and "
                    "only the evaluated ones are known; use probability_bounds(S)")
            for R in self.regions:
                for rows in region_members(R):
                    vals = np.asarray(self._values(rows), dtype=float)
                    for k, v in zip(map(tuple, rows.tolist()), vals, strict=True):
                        self._seen.setdefault(k, float(v))
        lo, hi = self.log_probability_bounds(key)
        return float(np.logaddexp(lo, hi) - math.log(2.0)) if hi > -math.inf else -math.inf

    # -- statistics ----------------------------------------------------------------------
    def stats(self) -> dict:
        """Sampling statistics.  **Not private**: they depend on the data."""
        return {"n_draws": self.n_draws, "n_evaluations": self.n_evaluations,
                "n_pops": self.n_pops, "n_thinned": self.n_thinned,
                "n_proposals": self.n_proposals, "n_refinements": self.n_refinements,
                "time_refining": self.time_refining, "draw_times": list(self.draw_times),
                "singletons": int(self.singletons.shape[0]),
                "regions": [dict(R.describe(), bound=R.bound) for R in self.regions]}
