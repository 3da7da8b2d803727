"""Envelopes that follow one cut over a region: weights ``∝ Π_{i∈T} w_i``, sampled exactly.

A region's constant envelope gives every member the weight of the region's bound, the
minimum over all its members: on a large region most members lie far above it, and the
exponential mechanism's rejection sampler pays for the difference.  An outer-approximation
cut ``L(T) >= a + Σ_{i∈T} g_i`` (:class:`~mipdp.enumeration.cuts.CutStore`, valid for every
support ``T``) gives each member its own lower bound instead, and the envelope weight

    h(T) = exp(-c (a + Σ_{i∈T} g_i - ref)) = h_0 Π_{i∈T \\ F} w_i,    w_i = exp(-c g_i)

(``c = ε/(2Δ)``, ``F`` the region's fixed-in features) is a product over features.  Its
mass over the region — ``q_C`` members kept from the free centre features and ``q_O`` added
from the free outside ones — is

    Z = h_0 e_{q_C}(w over free centre) e_{q_O}(w over free outside)

with ``e_q`` the elementary symmetric polynomial of degree ``q``, and a member with law
``h / Z`` is two independent fixed-size subsets with probability ``∝ Π w_i``
(:class:`WeightedSubsets`: exact, by the suffix polynomials ``E_r(j) = e_r(w_j, w_{j+1}, ...)``
and inverse transform).  Holes are members too: a proposal that falls in one is rejected.

Everything here is computed from a *valid* cut: ``h(T) >= exp(-c (L(T) - ref))`` for every
member, so rejection from ``h`` has the same exact law as from the constant envelope
(:mod:`mipdp.mechanisms.em_rejection`).  Only the running time changes.
"""

from __future__ import annotations

import math

import numpy as np

from .regions import Region

__all__ = ["WeightedSubsets", "LinearEnvelope", "best_linear_envelope"]


class WeightedSubsets:
    """``q``-subsets of a pool of ``m`` items with probability ``∝ Π_{i∈T} w_i``.

    Parameters
    ----------
    log_w : ndarray, shape (m,)
        ``log w_i`` (``-inf`` allowed: the item is never drawn).
    q : int
        Subset size, ``0 <= q``.

    Notes
    -----
    ``E_r(j) = e_r(w_j, ..., w_{m-1})`` satisfies ``E_r(j) = Σ_{i>=j} w_i E_{r-1}(i+1)``, so
    each degree is one reversed cumulative sum of non-negative terms (no cancellation).
    Given that the items before ``a`` are decided and ``r`` remain, the next chosen item is
    ``j >= a`` with probability ``w_j E_{r-1}(j+1) / E_r(a) = (E_r(j) - E_r(j+1)) / E_r(a)``:
    a draw ``u E_r(a)`` (``u`` uniform on ``[0, 1)``) falls in ``[E_r(j+1), E_r(j))`` — a
    binary search on the non-increasing ``E_r``, vectorised over draws.  Memory
    ``(q + 1)(m + 1)``.

    The weights are scaled by their maximum.  When the finite ``log w`` span less than
    ``_LINEAR_SPAN / q`` and every ``C(m, r)``, ``r <= q``, is below ``e^{_LINEAR_SPAN}``,
    no product of ``r <= q`` scaled weights underflows and no ``E_r`` overflows, and the
    recurrence runs in floating point as it is.  Otherwise (very unequal weights, or large
    ``q`` and ``m``) it runs on ``log E_r`` (``np.logaddexp.accumulate``, also monotone):
    in linear scale a small weight would underflow to zero and, when the subsets' mass is
    carried by such products, the whole normaliser with it (an envelope of mass ``0`` over
    members of positive weight, which would never be proposed).
    """

    #: largest ``log`` range the linear-scale recurrence is trusted with
    _LINEAR_SPAN = 600.0

    def __init__(self, log_w: np.ndarray, q: int) -> None:
        log_w = np.asarray(log_w, dtype=float)
        self.q, self.m = int(q), log_w.size
        self._E = None
        self._log = False
        if self.q == 0:
            self.log_norm = 0.0
            return
        finite = np.isfinite(log_w)
        if np.count_nonzero(finite) < self.q:
            self.log_norm = -math.inf
            return
        if np.any(log_w[~finite] > 0) or np.any(np.isnan(log_w)):
            raise ValueError("log_w: finite values or -inf expected")
        top = float(np.max(log_w))
        self._lw = log_w - top       # scaled log-weights (inclusion probabilities)
        span = top - float(np.min(log_w[finite]))
        r_mid = min(self.q, self.m // 2)
        log_binom = (math.lgamma(self.m + 1) - math.lgamma(r_mid + 1)
                     - math.lgamma(self.m - r_mid + 1))
        if self.q * span <= self._LINEAR_SPAN and log_binom <= self._LINEAR_SPAN:
            w = np.exp(log_w - top)
            E = np.zeros((self.q + 1, self.m + 1))
            E[0] = 1.0
            for r in range(1, self.q + 1):
                E[r, :self.m] = np.cumsum((w * E[r - 1, 1:])[::-1])[::-1]
            self.log_norm = (math.log(E[self.q, 0]) + self.q * top if E[self.q, 0] > 0
                             else -math.inf)
        else:   # log scale: nothing underflows or overflows
            self._log = True
            lw = log_w - top
            E = np.full((self.q + 1, self.m + 1), -math.inf)
            E[0] = 0.0
            for r in range(1, self.q + 1):
                E[r, :self.m] = np.logaddexp.accumulate((lw + E[r - 1, 1:])[::-1])[::-1]
            self.log_norm = float(E[self.q, 0]) + self.q * top
        self._E = E

    def inclusion(self) -> np.ndarray:
        """``P(i ∈ subset)`` of each item, shape ``(m,)``:
        ``w_i Σ_r e_r(w_0..w_{i-1}) e_{q-1-r}(w_{i+1}..) / e_q`` (prefix and suffix
        polynomials, non-negative terms only; in log scale when the suffix polynomials are)."""
        if self.q == 0 or self._E is None or not self.log_norm > -math.inf:
            return np.zeros(self.m)
        q, m, lw = self.q, self.m, self._lw
        if not self._log:
            w = np.exp(lw)
            F = np.zeros((q, m + 1))
            F[0] = 1.0
            for r in range(1, q):
                F[r, 1:] = np.cumsum(w * F[r - 1, :-1])
            acc = np.zeros(m)
            for r in range(q):
                acc += F[r, :m] * self._E[q - 1 - r, 1:]
            return np.minimum(1.0, w * acc / self._E[q, 0])
        F = np.full((q, m + 1), -math.inf)
        F[0] = 0.0
        for r in range(1, q):
            F[r, 1:] = np.logaddexp.accumulate(lw + F[r - 1, :-1])
        acc = np.full(m, -math.inf)
        for r in range(q):
            acc = np.logaddexp(acc, F[r, :m] + self._E[q - 1 - r, 1:])
        return np.minimum(1.0, np.exp(lw + acc - self._E[q, 0]))

    def sample(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` independent subsets, shape ``(size, q)``: positions in the pool, increasing."""
        out = np.empty((size, self.q), dtype=np.intp)
        if self.q == 0:
            return out
        if self._E is None or not self.log_norm > -math.inf:
            raise ValueError("sample: no subset has positive weight")
        start = np.zeros(size, dtype=np.intp)
        m = self.m
        for t in range(self.q):
            Er = self._E[self.q - t]
            if self._log:   # log(u E_r(a)); u = 0 gives -inf, like u E_r(a) = 0 below
                with np.errstate(divide="ignore"):
                    target = np.log(rng.random(size)) + Er[start]
            else:
                target = rng.random(size) * Er[start]
            # first i with Er[i] <= target (Er non-increasing, Er[m] = 0); the item is i - 1
            n_le = np.searchsorted(Er[::-1], target, side="right")
            j = m - n_le
            out[:, t] = j
            start = j + 1
        return out


class LinearEnvelope:
    """The envelope of one cut ``L(T) >= a + Σ_{i∈T} g_i`` over a region (module notes).

    Parameters
    ----------
    region : Region
        The region (its holes are proposed too, and rejected by the caller).
    a : float
        The cut's constant, less its rounding slack (a certified bound's constant).
    g : ndarray, shape (p,)
        The cut's slopes.
    coef, ref : float
        ``ε/(2Δ)`` and the reference value of the sampler's weights.
    """

    def __init__(self, region: Region, a: float, g: np.ndarray, coef: float,
                 ref: float) -> None:
        self.region = region
        self.a = float(a)
        # a copy: a view would keep the cut store's whole buffer alive after it grows
        self.g = np.array(g, dtype=float)
        log_w = -coef * self.g
        self._keep = WeightedSubsets(log_w[region.free_center], region.n_keep)
        self._add = WeightedSubsets(log_w[region.free_outside], region.n_add)
        self.log_mass = (-coef * (self.a - ref) + float(log_w[region.fixed_in].sum())
                         + self._keep.log_norm + self._add.log_norm)

    def sample(self, rng: np.random.Generator, m: int) -> np.ndarray:
        """``m`` independent members with law ``h / Z`` (holes included), rows sorted."""
        R = self.region
        keep = R.free_center[self._keep.sample(rng, m)]
        add = R.free_outside[self._add.sample(rng, m)]
        fixed = np.broadcast_to(R.fixed_in, (m, R.fixed_in.size))
        return np.sort(np.concatenate([keep, add, fixed], axis=1), axis=1)

    def inclusion(self) -> np.ndarray:
        """``P(i ∈ T)`` for ``T`` with law ``h / Z``, shape ``(p,)``."""
        R = self.region
        pi = np.zeros(self.g.size)
        pi[R.fixed_in] = 1.0
        pi[R.free_center] = self._keep.inclusion()
        pi[R.free_outside] = self._add.inclusion()
        return pi

    def bounds(self, rows: np.ndarray) -> np.ndarray:
        """The cut's lower bound ``a + Σ_{i∈T} g_i`` of each row."""
        return self.a + self.g[np.asarray(rows, dtype=np.intp)].sum(axis=1)

    @staticmethod
    def tables_nbytes(region: Region) -> int:
        """Upper bound on the bytes of the suffix polynomials of ``region``'s two weighted
        subsets (``8 (q + 1)(m + 1)`` each), known before they are built."""
        return sum(8 * (q + 1) * (pool.size + 1) for q, pool in
                   ((region.n_keep, region.free_center), (region.n_add, region.free_outside))
                   if q > 0)

    def nbytes(self) -> int:
        """Memory held: the slopes and the suffix polynomials."""
        return self.g.nbytes + sum(w._E.nbytes for w in (self._keep, self._add)
                                   if w._E is not None)


def best_linear_envelope(region: Region, a: np.ndarray, G: np.ndarray, slack: float,
                         coef: float, ref: float, *, exact: int = 4,
                         combination_slack: float | None = None, max_iter: int = 20,
                         tol: float = 0.05) -> LinearEnvelope | None:
    """The envelope of least mass over ``region`` from the cuts ``(a, G)``.

    The single cuts are ranked by an upper bound on their mass (``e_q(w) <= (Σ w)^q / q!``,
    one pass over the pool per cut) and the ``exact`` best are built.  With
    ``combination_slack`` (:meth:`~mipdp.enumeration.cuts.CutStore.combination_slack`) the
    best one is then improved by *combining* cuts: for weights ``μ`` on the simplex,
    ``Σ_t μ_t (a_t + Σ_{i∈T} G_ti)`` is again a valid cut, and its envelope's log-mass is
    convex in ``μ`` (a log-sum-exp of functions linear in ``μ``), with gradient
    ``-c E_h[a_t + Σ_{i∈T} G_ti] = -c (a_t + G_t π)`` (``π`` the inclusion probabilities
    under the current envelope).  Frank-Wolfe steps toward the cut of least gradient,
    with a golden-section line search, run until the duality gap is below ``tol`` (log
    units) or ``max_iter`` steps; the combined cut's constant loses ``combination_slack``
    for rounding.  ``None`` without cuts.
    """
    if a.size == 0 or region.size == 0:
        return None
    fc, fo, fi = region.free_center, region.free_outside, region.fixed_in
    qc, qo = region.n_keep, region.n_add

    def log_sum(lw):
        if lw.size == 0:
            return -math.inf
        top = float(lw.max())
        return top + math.log(float(np.exp(lw - top).sum()))

    proxy = np.empty(a.size)
    for t in range(a.size):           # one cut at a time: no (T, p) temporary
        g = G[t]
        v = -coef * (float(a[t]) - slack) - coef * float(g[fi].sum())
        if qc:
            v += qc * log_sum(-coef * g[fc]) - math.lgamma(qc + 1)
        if qo:
            v += qo * log_sum(-coef * g[fo]) - math.lgamma(qo + 1)
        proxy[t] = v
    best, best_t = None, -1
    for t in np.argsort(proxy)[:exact]:
        env = LinearEnvelope(region, float(a[t]) - slack, G[t], coef, ref)
        if best is None or env.log_mass < best.log_mass:
            best, best_t = env, int(t)
    if combination_slack is None or a.size < 2:
        return best
    assert best is not None  # exact >= 1 envelopes were built
    if not np.isfinite(best.log_mass):
        return best
    mu = _frank_wolfe(region, a, G, coef, ref, best_t, max_iter, tol)
    if np.count_nonzero(mu) < 2:
        return best
    combined = LinearEnvelope(region, float(mu @ a) - combination_slack, mu @ G, coef, ref)
    return combined if combined.log_mass < best.log_mass else best


_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


def _frank_wolfe(region: Region, a: np.ndarray, G: np.ndarray, coef: float, ref: float,
                 t0: int, max_iter: int, tol: float) -> np.ndarray:
    """Simplex weights ``μ`` lowering the combined cut's envelope log-mass, from cut ``t0``."""
    mu = np.zeros(a.size)
    mu[t0] = 1.0
    a_mu, g_mu = float(a[t0]), np.array(G[t0], dtype=float)
    env = LinearEnvelope(region, a_mu, g_mu, coef, ref)
    for _ in range(max_iter):
        pi = env.inclusion()
        expect = a + G @ pi                      # E_h[a_t + Σ_{i∈T} G_ti] for every cut
        t = int(np.argmax(expect))
        if coef * (expect[t] - (a_mu + float(g_mu @ pi))) < tol:
            break                                # Frank-Wolfe duality gap

        def phi(gam, a_mu=a_mu, g_mu=g_mu, t=t):   # this iteration's cut and weights
            return LinearEnvelope(region, (1 - gam) * a_mu + gam * float(a[t]),
                                  (1 - gam) * g_mu + gam * G[t], coef, ref).log_mass

        lo, hi = 0.0, 1.0
        x1, x2 = hi - _GOLDEN * (hi - lo), lo + _GOLDEN * (hi - lo)
        f1, f2 = phi(x1), phi(x2)
        for _ in range(12):
            if f1 <= f2:
                hi, x2, f2 = x2, x1, f1
                x1 = hi - _GOLDEN * (hi - lo)
                f1 = phi(x1)
            else:
                lo, x1, f1 = x1, x2, f2
                x2 = lo + _GOLDEN * (hi - lo)
                f2 = phi(x2)
        gam = x1 if f1 <= f2 else x2
        if not min(f1, f2) < env.log_mass - 1e-9:
            break
        mu *= 1 - gam
        mu[t] += gam
        a_mu, g_mu = (1 - gam) * a_mu + gam * float(a[t]), (1 - gam) * g_mu + gam * G[t]
        env = LinearEnvelope(region, a_mu, g_mu, coef, ref)
    return mu
