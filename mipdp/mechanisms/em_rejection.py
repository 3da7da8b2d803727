"""The exponential mechanism over all supports, sampled exactly by rejection.

Target law over the ``N = C(p, s)`` supports of size ``s``:

    π(S) ∝ w(S) = exp(-ε L(S) / (2Δ))

with ``Δ`` the sensitivity of ``L`` under replace-one neighbours.  This is the
exponential mechanism (McSherry & Talwar 2007): **ε-DP under replace-one neighbours, for
every dataset, with no condition** — one draw; ``k`` independent draws are ``kε``-DP by
basic composition.

Sampling by rejection from a certified envelope
-----------------------------------------------
An *envelope* partitions the supports into *singletons* (supports whose ``L`` is known)
and *regions* ``A_j`` (:class:`~mipdp.mechanisms.regions.Region`, with an exact size
``|A_j|``) each carrying a certified lower bound ``ℓ_j <= min_{S∈A_j} L(S)``.  The
envelope weight ``g(S) = exp(-ε ℓ_j / (2Δ)) >= w(S)`` on ``A_j`` (``g = w`` on
singletons) has mass ``Z_j = |A_j| exp(-ε ℓ_j / (2Δ))``.  One *proposal*: pick a
singleton or a region with probability proportional to its mass, a uniform member ``S``
of the region, evaluate ``L(S)``, and accept with probability
``w(S) / g(S) = exp(-ε (L(S) - ℓ_j) / (2Δ))`` (singletons are always accepted).  The
first accepted proposal has law exactly ``π``: a proposal is ``S`` and accepted with
probability ``g(S)/ΣZ · w(S)/g(S) = w(S)/ΣZ``.  There is **no cap** on the number of
proposals; their expected number is ``ΣZ / Σ w <= ΣZ / Z_low``, ``Z_low`` the weight of
the supports evaluated so far.

Proposals are drawn in vectorised batches; the accepted ones are taken in proposal
order, so the draws are independent and each has law ``π``.  Between batches a region
that wastes many proposals may be *refined* (split into two sub-regions with their own
certified bounds, as in A* sampling, Maddison, Tarlow & Minka 2014): each proposal still
uses a valid envelope, and whatever envelope was used, a proposal is accepted with
probability ``Σ w / ΣZ_t`` and, given acceptance, has law ``π`` — so the output law does
not depend on the refinements (adaptive rejection sampling, Gilks & Wild 1992).

Regions may also carry a *linear envelope* (:mod:`mipdp.mechanisms.linear_envelope`):
with the cut store of the enumeration (``cuts=``), a region whose best cut
``L(T) >= a + Σ_{i∈T} g_i`` gives a smaller mass than its constant bound proposes with
probability ``∝ exp(-ε (a + Σ_{i∈T} g_i) / (2Δ))`` instead of uniformly, and accepts with
``exp(-ε (L(S) - a - Σ_{i∈S} g_i) / (2Δ))``.  The argument above holds for any envelope
``g >= w``; a proposal that falls in one of the region's holes is rejected.

Everything data-dependent here (the envelope, the number of proposals, the time) only
changes the running time, never the output law; the time is a side channel, as for every
method that runs longer on some data than on other.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable

import numpy as np
from scipy.special import logsumexp

from .._parallel import parallel_map
from ._envelope_sampler import _MAX_SEEN, EnvelopeSampler
from .linear_envelope import LinearEnvelope, best_linear_envelope
from .regions import Region, region_members

logger = logging.getLogger(__name__)
#: periodic progress lines of long sampling runs (the command line shows them)
progress_logger = logging.getLogger(__name__ + ".progress")

__all__ = ["ExponentialMechanismSampler"]

#: a chunk of proposals evaluated between two deadline checks grows while it takes less
_CHUNK_SECONDS = 0.1
#: the first chunk of a batch (then doubled while fast, halved while slow, at most 4096)
_FIRST_CHUNK = 16
#: a linear envelope replaces the constant one only when its log-mass is this much smaller
_LINEAR_MIN_GAIN = 0.1
#: relative allowance for rounding in a linear envelope's mass (probability bounds)
_LINEAR_RTOL = 1e-8
#: most memory held by the linear envelopes' suffix polynomials
_LINEAR_MAX_BYTES = 256 * 2 ** 20
#: marks an envelope not built in advance (:meth:`ExponentialMechanismSampler._prebuild_linear`)
_NOT_BUILT = object()


class ExponentialMechanismSampler(EnvelopeSampler):
    """Exact sampler of the exponential mechanism ``π(S) ∝ exp(-ε L(S) / (2Δ))``.

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
        ``Δ`` of ``L`` under replace-one neighbours.
    refine : callable, optional
        ``refine(region, best_member) -> list of Region`` (a partition of ``region`` with
        certified bounds, each at least ``region.bound``).  Called between batches for a
        region that wastes proposals.  ``None``: no refinement.
    deadline : Deadline or float, optional
        The call's :class:`~mipdp.deadline.Deadline` (or a ``time.perf_counter()`` value)
        after which sampling raises :class:`~mipdp.exceptions.TimeLimitError` (nothing is
        returned).  It is checked before every chunk of proposal evaluations, and a chunk
        grows only while it is quick, so the overshoot is about one chunk (≈ 0.1 s).
    cuts : CutStore, optional
        Cuts ``L(T) >= a_t + Σ_{i∈T} G[t, i]`` valid for every support (the enumeration's
        :class:`~mipdp.enumeration.cuts.CutStore`).  A region whose best cut gives a
        smaller envelope mass than its constant bound samples from that cut's linear
        envelope (:mod:`mipdp.mechanisms.linear_envelope`).  ``None``: constant envelopes.

    Notes
    -----
    **Privacy.** Neighbours: replace one row (``n`` fixed).  Score ``L`` with sensitivity
    ``Δ``.  Every draw has law exactly ``π``, the exponential mechanism with ``ε`` over all
    ``C(p, s)`` supports: **ε-DP (pure) per draw, for every dataset**.  The envelope must be
    valid (every region bound a true lower bound): that is the whole proof, and it is
    checked on every evaluated proposal (an evaluated value below its region's bound raises
    :class:`~mipdp.exceptions.CertificationError`).
    """

    def __init__(self, values: Callable[[np.ndarray], np.ndarray], singletons: np.ndarray,
                 singleton_values: np.ndarray, regions: list[Region], p: int, epsilon: float,
                 sensitivity: float, *, refine: Callable | None = None,
                 deadline: float | None = None, cuts=None) -> None:
        super().__init__(values, singletons, singleton_values, p, epsilon, sensitivity,
                         refine=refine, deadline=deadline)
        self._cuts = cuts
        self._linear: list[LinearEnvelope | None] = []
        self._linear_bytes = 0
        self._single_logw = -self.coef * (self.singleton_values - self.ref)
        self._single_logZ = float(logsumexp(self._single_logw))
        self._single_cdf = np.cumsum(np.exp(self._single_logw - self._single_logw.max()))
        self.regions: list[Region] = []
        self._acc_prob: list[list[float]] = []
        self._prop: list[int] = []
        self._acc: list[int] = []
        self._best: list[tuple[float, np.ndarray | None]] = []
        built = self._prebuild_linear(regions)
        for i, R in enumerate(regions):
            self._add_region(R, built.get(i, _NOT_BUILT))
        self._check_covered()
        #: statistics (**not private**: they depend on the data)
        self.n_proposals = 0
        self.n_accepted = 0
        self.n_refinements = 0
        self.time_refining = 0.0

    # -- envelope -----------------------------------------------------------------------
    def _prebuild_linear(self, regions: list[Region]) -> dict:
        """The best linear envelopes of the initial regions, built on the call's workers
        (:mod:`mipdp._parallel`; each is a pure function of its region and the cuts), as
        ``{index: envelope or None}``.  :meth:`_linear_envelope` then applies the memory cap
        to them in the regions' order, as if it had built them one by one: the same
        envelopes for every ``n_jobs``.  Only when all of them fit in the cap at once."""
        if self._cuts is None or len(self._cuts) == 0:
            return {}
        todo = [i for i, R in enumerate(regions)
                if R.size > 0 and math.isfinite(getattr(R, "bound", math.nan))]
        need = sum(LinearEnvelope.tables_nbytes(regions[i]) + 8 * self.p for i in todo)
        if len(todo) < 2 or need > _LINEAR_MAX_BYTES:
            return {}
        a, G = self._cuts.arrays
        slack, comb = self._cuts.slack(), self._cuts.combination_slack()

        def build(i):
            try:
                return best_linear_envelope(regions[i], a, G, slack, self.coef, self.ref,
                                            combination_slack=comb)
            except Exception:   # noqa: BLE001 - built again in order, where it raises
                return _NOT_BUILT

        return dict(zip(todo, parallel_map(build, todo), strict=True))

    def _add_region(self, R: Region, lin=_NOT_BUILT) -> None:
        if R.size == 0:
            return
        self._check_bounded([R])
        self.regions.append(R)
        self._linear.append(self._linear_envelope(R, lin))
        self._acc_prob.append([])
        self._prop.append(0)
        self._acc.append(0)
        self._best.append((math.inf, None))

    def _linear_envelope(self, R: Region, built=_NOT_BUILT) -> LinearEnvelope | None:
        """The best cut's linear envelope of ``R`` if it beats the constant one
        (``built``: that envelope, already built by :meth:`_prebuild_linear`)."""
        if self._cuts is None or len(self._cuts) == 0:
            return None
        # the suffix polynomials' size is known before any is built: past the cap, build none
        if self._linear_bytes + LinearEnvelope.tables_nbytes(R) > _LINEAR_MAX_BYTES:
            return None
        if built is _NOT_BUILT:
            a, G = self._cuts.arrays
            lin = best_linear_envelope(R, a, G, self._cuts.slack(), self.coef, self.ref,
                                       combination_slack=self._cuts.combination_slack())
        else:
            lin = built
        const = R.log_size - self.coef * (R.bound - self.ref)
        # a mass that is not finite is a numerical failure (R has members of positive
        # weight): never an envelope of mass 0, which would never propose them
        if (lin is None or not math.isfinite(lin.log_mass)
                or not lin.log_mass < const - _LINEAR_MIN_GAIN
                or self._linear_bytes + lin.nbytes() > _LINEAR_MAX_BYTES):
            return None
        self._linear_bytes += lin.nbytes()
        return lin

    def _drop_region(self, j: int) -> None:
        lin = self._linear[j]
        if lin is not None:
            self._linear_bytes -= lin.nbytes()
        del (self.regions[j], self._linear[j], self._prop[j], self._acc[j], self._best[j],
             self._acc_prob[j])

    def _region_logZ(self) -> np.ndarray:
        """Each region's envelope log-mass (its linear envelope's where it has one)."""
        return np.array([lin.log_mass if lin is not None
                         else R.log_size - self.coef * (R.bound - self.ref)
                         for R, lin in zip(self.regions, self._linear, strict=True)])

    def log_envelope_mass(self) -> float:
        """``log ΣZ`` of the current envelope (relative to the best singleton's weight)."""
        return float(logsumexp(np.r_[self._single_logZ, self._region_logZ()]))

    def log_known_mass(self) -> float:
        """``log Z_low``: the weight of every support evaluated so far (``<= log Σ w``)."""
        seen = np.fromiter(self._seen.values(), float, len(self._seen))
        return float(logsumexp(np.r_[self._single_logZ, -self.coef * (seen - self.ref)]))

    def expected_proposals_bound(self) -> float:
        """Upper bound ``ΣZ / Z_low`` on the expected number of proposals per draw."""
        d = self.log_envelope_mass() - self.log_known_mass()
        return math.inf if d > 700 else math.exp(d)

    # -- sampling ------------------------------------------------------------------------
    def sample(self, rng: np.random.Generator, size: int = 1) -> np.ndarray:
        """``size`` independent draws from ``π``, shape ``(size, s)``."""
        out: list[np.ndarray] = []
        bound = self.expected_proposals_bound()
        rate = min(1.0, 1.0 / bound)
        logger.info("exponential mechanism: at most %.3g expected proposals per draw with the "
                    "envelope as built (refined while sampling); not private", bound)
        t_start = last = time.perf_counter()
        while len(out) < size:
            if time.perf_counter() - last >= 5.0:  # a long sampling run is never silent
                last = time.perf_counter()
                progress_logger.info(
                    "exponential mechanism: %.0f s, %d of %d draws, %d proposals, %d regions, "
                    "at most %.3g expected proposals per draw (not private)", last - t_start,
                    len(out), size, self.n_proposals, len(self.regions),
                    self.expected_proposals_bound())
            self._check_deadline()
            need = size - len(out)
            batch = int(min(65536, max(16, math.ceil(1.5 * need / max(rate, 1e-4)))))
            accepted = self._propose(rng, batch, need)
            out.extend(accepted)
            rate = (self.n_accepted + 1) / (self.n_proposals + 2)
            if len(out) < size:
                self._check_deadline()
                self._maybe_refine(rate)
        logger.info("exponential mechanism: %d draws from %d proposals (%d regions, "
                    "%d refinements); not private", size, self.n_proposals,
                    len(self.regions), self.n_refinements)
        return np.array(out[:size], dtype=np.intp).reshape(size, self.s)

    def _deadline_detail(self) -> str:
        return (f"{self.n_proposals} proposals, {self.n_accepted} accepted, "
                f"{len(self.regions)} regions (not private)")

    def _propose(self, rng: np.random.Generator, m: int, need: int | None = None
                 ) -> list[np.ndarray]:
        """Draw ``m`` proposals; return the accepted ones in proposal order.

        All randomness of the ``m`` proposals is drawn first; the region proposals are then
        evaluated in proposal order, in growing chunks, and with ``need`` the batch stops
        right after its ``need``-th acceptance: the proposals after it are discarded
        unevaluated (they are independent of everything before them, so the first ``need``
        accepted proposals are still ``need`` independent draws from ``π``).
        """
        need = m if need is None else int(need)
        logZ = np.r_[self._single_logZ, self._region_logZ()]
        prob = np.exp(logZ - logZ.max())
        cdf = np.cumsum(prob)
        comp = np.minimum(np.searchsorted(cdf, rng.random(m) * cdf[-1], side="right"),
                          cdf.size - 1)
        props = np.empty((m, self.s), dtype=np.intp)
        accept = np.zeros(m, dtype=bool)
        single = np.flatnonzero(comp == 0)
        if single.size:
            c = self._single_cdf
            idx = np.minimum(np.searchsorted(c, rng.random(single.size) * c[-1], side="right"),
                             c.size - 1)
            props[single] = self.singletons[idx]
            accept[single] = True
        in_region = np.flatnonzero(comp > 0)
        used = m  # proposals considered (the rest are discarded unevaluated)
        # each evaluated region proposal's value and log acceptance probability; only those
        # before ``used`` enter the statistics (:meth:`_record`), so the chunk sizes (which
        # follow measured times) change how much work is discarded, never the state that
        # later batches and refinements read
        vals = np.full(m, np.nan)
        log_acc = np.full(m, -np.inf)
        holes = np.zeros(m, dtype=bool)
        if in_region.size:
            for j in np.unique(comp[in_region]) - 1:
                rows = in_region[comp[in_region] == j + 1]
                src = self._linear[j] if self._linear[j] is not None else self.regions[j]
                props[rows] = src.sample(rng, rows.size)
            log_u = np.log(rng.random(in_region.size))
            k, chunk = 0, _FIRST_CHUNK
            while k < in_region.size:
                # the deadline is checked before every chunk of evaluations, and a chunk
                # only grows while it takes less than _CHUNK_SECONDS (so an expensive
                # objective never overshoots time_limit by a whole batch); an interrupted
                # batch releases nothing
                self._check_deadline()
                part = np.arange(k, min(k + chunk, in_region.size))
                t0 = time.perf_counter()
                self._evaluate(props, accept, in_region[part], comp, log_u[part],
                               (vals, log_acc, holes))
                fast = time.perf_counter() - t0 < _CHUNK_SECONDS
                k, chunk = part[-1] + 1, min(2 * chunk, 4096) if fast else max(1, chunk // 2)
                upto = in_region[part[-1]] + 1  # every proposal before it is decided
                hits = np.flatnonzero(accept[:upto])
                if hits.size >= need:
                    used = int(hits[need - 1]) + 1
                    break
            self._record(props, accept, in_region[in_region < used], comp,
                         (vals, log_acc, holes))
        else:
            hits = np.flatnonzero(accept)
            if hits.size >= need:
                used = int(hits[need - 1]) + 1
        self.n_proposals += used
        self.n_accepted += int(accept[:used].sum())
        return [props[i] for i in np.flatnonzero(accept[:used])]

    def _evaluate(self, props, accept, rows, comp, log_u, out) -> None:
        """Evaluate the region proposals ``rows`` and decide their acceptance (``accept``);
        their values, log acceptance probabilities and hole flags go to the arrays ``out``
        for :meth:`_record`."""
        L = np.asarray(self._values(props[rows]), dtype=float)
        which = comp[rows] - 1
        bound = np.array([self.regions[j].bound for j in which])
        hole = np.zeros(rows.size, dtype=bool)
        for j in np.unique(which):
            lin = self._linear[j]
            if lin is None:
                continue
            mine = np.flatnonzero(which == j)
            bound[mine] = lin.bounds(props[rows[mine]])
            if self.regions[j].holes:
                hole[mine] = self.regions[j]._in_holes(props[rows[mine]])
        self._check_envelope(props[rows], L, bound)
        log_acc = -self.coef * np.maximum(L - bound, 0.0)
        log_acc[hole] = -np.inf       # a hole is a singleton: never accepted from a region
        accept[rows] = log_u < log_acc
        out[0][rows], out[1][rows], out[2][rows] = L, log_acc, hole

    def _record(self, props, accept, rows, comp, out) -> None:
        """Add the evaluated region proposals ``rows`` (those the batch decided) to the
        statistics that the refinements and the probability bounds read."""
        vals, log_acc, hole = (a[rows] for a in out)
        for r, j, v, la, h in zip(rows, comp[rows] - 1, vals, log_acc, hole, strict=True):
            self._prop[j] += 1
            self._acc_prob[j].append(math.exp(la))
            if h:   # a singleton already: not a member, not counted again in Z_low
                continue
            if accept[r]:
                self._acc[j] += 1
            if v < self._best[j][0]:
                self._best[j] = (float(v), props[r].copy())
            if len(self._seen) < _MAX_SEEN:
                self._seen.setdefault(tuple(props[r].tolist()), float(v))

    def _maybe_refine(self, rate: float) -> None:
        """Split the region that wastes the most proposals, when proposals are wasted."""
        if self._refine is None or not self.regions or rate >= 0.5 or self.n_proposals < 32:
            return
        logZ = self._region_logZ()
        acc = (np.array(self._acc) + 1.0) / (np.array(self._prop) + 2.0)
        waste = logZ + np.log1p(-np.minimum(acc, 1 - 1e-12))
        j = int(np.argmax(waste))
        if waste[j] - self.log_envelope_mass() < math.log(0.05) or self.regions[j].size <= 1:
            return
        R = self.regions[j]
        t0 = time.perf_counter()
        children = list(self._refine(R, self._best[j][1]))
        self.time_refining += time.perf_counter() - t0
        if sum(c.size for c in children) != R.size:
            raise ValueError("refine: the children must partition the region")
        for c in children:
            if c.bound < R.bound:  # a child inherits its parent's valid bound
                c.bound = R.bound
        best = self._best[j]
        self._drop_region(j)
        for c in children:
            n0 = len(self.regions)
            self._add_region(c)
            if len(self.regions) > n0 and best[1] is not None and c.contains(best[1][None])[0]:
                self._best[-1] = best
        self.n_refinements += 1
        logger.debug("exponential mechanism: refined a class-%d region of %d supports into %d "
                     "(not private)", R.k, R.size, len(children))

    # -- probabilities --------------------------------------------------------------------
    def _logw(self, support) -> float:
        return -self.coef * (self._value(tuple(sorted(int(i) for i in support))) - self.ref)

    def log_probability_bounds(self, support) -> tuple[float, float]:
        """Certified bounds ``(lo, hi)`` on ``log π(support)``.

        ``π(S) = w(S) / Σ w`` with ``Z_low <= Σ w <= Z_up``: ``Z_low`` sums the weights of
        the supports evaluated so far, ``Z_up`` adds, for every region, its members not
        evaluated at the region's envelope weight.  Equal bounds mean an exact value.
        """
        key = self._support_key(support)
        if key is None:
            return -math.inf, -math.inf
        logw = self._logw(key)
        log_low = self.log_known_mass()
        parts = [self._single_logZ]
        seen_keys = np.array(list(self._seen), dtype=np.intp).reshape(-1, self.s)
        seen_vals = np.fromiter(self._seen.values(), float, len(self._seen))
        for R, lin in zip(self.regions, self._linear, strict=True):
            mine = R.contains(seen_keys) if seen_vals.size else np.zeros(0, dtype=bool)
            n_seen = int(mine.sum())
            if n_seen:
                parts.append(float(logsumexp(-self.coef * (seen_vals[mine] - self.ref))))
            if R.size > n_seen:
                rest = math.log(R.size - n_seen) - self.coef * (R.bound - self.ref)
                if lin is not None:   # the unseen members' envelope mass, Z_lin - Σ_seen h
                    h_seen = (float(logsumexp(-self.coef * (lin.bounds(seen_keys[mine])
                                                           - self.ref)))
                              if n_seen else -math.inf)
                    frac = math.exp(min(0.0, h_seen - lin.log_mass))
                    rest = min(rest, lin.log_mass + math.log(1.0 - frac + _LINEAR_RTOL))
                parts.append(rest)
        log_up = float(logsumexp(parts))
        return logw - log_up, logw - log_low

    def log_probability(self, support) -> float:
        """Exact ``log π(support)``.

        Needs the exact normaliser ``Σ w``: known when every support is a singleton, and
        computed on first use (every region member evaluated once) when there are at most
        :attr:`exact_max` supports.  Otherwise raises ``ValueError``: use
        :meth:`log_probability_bounds`.
        """
        key = self._support_key(support)
        if key is None:
            return -math.inf
        return self._logw(key) - self._log_normaliser()

    #: largest ``C(p, s)`` for which :meth:`log_probability` evaluates every support
    exact_max = 200_000

    def _log_normaliser(self) -> float:
        if getattr(self, "_exact_logZ", None) is None:
            if self.regions and self.n_supports > self.exact_max:
                raise ValueError(
                    f"the exponential mechanism's normaliser over C({self.p}, {self.s}) = "
                    f"{self.n_supports} supports is only known within certified bounds; use "
                    "probability_bounds(S) (or probability_estimate(S))")
            parts = [self._single_logZ]
            for R in self.regions:
                for rows in region_members(R):
                    vals = np.asarray(self._values(rows), dtype=float)
                    parts.append(float(logsumexp(-self.coef * (vals - self.ref))))
                    for key, v in zip(map(tuple, rows.tolist()), vals, strict=True):
                        if len(self._seen) < _MAX_SEEN:
                            self._seen.setdefault(key, float(v))
            self._exact_logZ = float(logsumexp(parts))
        return self._exact_logZ

    def probability_estimate(self, support) -> tuple[float, float]:
        """An *estimate* of ``π(support)`` and its standard error (not a bound).

        ``Σ w`` is estimated without bias from the proposals made so far: a region's true
        mass is its envelope mass times the mean acceptance probability of its uniform
        proposals.  Use :meth:`probability_bounds` for certified figures.
        """
        logw = self._logw(support)
        Z = math.exp(self._single_logZ)
        var = 0.0
        for zr_log, acc in zip(self._region_logZ(), self._acc_prob, strict=True):
            zr = math.exp(zr_log)
            if len(acc) >= 2:
                a = np.asarray(acc)
                Z += zr * a.mean()
                var += zr * zr * a.var(ddof=1) / a.size
            else:
                Z += zr * (acc[0] if acc else 1.0)  # unexplored: at most its envelope
                var += zr * zr
        est = math.exp(logw) / Z
        return est, est * math.sqrt(var) / Z

    # -- statistics ----------------------------------------------------------------------
    def stats(self) -> dict:
        """Sampling statistics.  **Not private**: they depend on the data."""
        logZ = self._region_logZ()
        total = self.log_envelope_mass()
        return {
            "n_proposals": self.n_proposals, "n_accepted": self.n_accepted,
            "expected_proposals_bound": self.expected_proposals_bound(),
            "n_refinements": self.n_refinements, "time_refining": self.time_refining,
            "singletons": {"count": int(self.singletons.shape[0]),
                           "mass": math.exp(self._single_logZ - total)},
            "regions": [dict(R.describe(), bound=R.bound, mass=math.exp(z - total),
                             envelope="constant" if self._linear[j] is None else "linear",
                             proposals=self._prop[j], accepted=self._acc[j])
                        for j, (R, z) in enumerate(zip(self.regions, logZ, strict=True))],
        }
