"""Private top-k selection from a score vector (higher score = better).

Three mechanisms, each a plain function of ``scores``:

* :func:`canonical_lipschitz_topk` -- the canonical Lipschitz mechanism of
  Shekelyan & Loukides (2022) in the exposition of Swope et al. (2024), Appendix A
  (Definition A.1, Algorithm 2), with standard exponential noise;
* :func:`gumbel_peeling_topk` -- k rounds of the exponential mechanism with
  ``eps / k`` each (implemented as one-shot Gumbel top-k);
* :func:`laplace_topk` -- one-shot Laplace noise top-k.

and the *exact* output distributions of the first two for small ``d``
(:func:`canonical_lipschitz_topk_distribution`,
:func:`gumbel_peeling_topk_distribution`), computed from the definitions of the
mechanisms over all ``C(d, k)`` subsets, independently of the samplers.

Privacy contract shared by all three: the caller promises that for every pair of
neighbouring datasets ``D ~ D'`` (under whichever neighbour notion the caller
uses) the score vectors satisfy ``max_i |f_i(D) - f_i(D')| <= sensitivity``
(component-wise / L-infinity sensitivity; any number of scores may move). Under
that promise each mechanism below is ``eps``-DP (pure, ``delta = 0``) for the
same neighbour notion. The functions never look at the data, only at scores.

All computations are done in log space / relative to the k-th largest score, so
``eps`` up to ``1e6`` and scores of magnitude ``1e12`` neither overflow nor lose
the ordering; randomness comes only from the ``numpy.random.Generator`` passed in.
"""

from __future__ import annotations

import itertools
import logging
import math
import numbers
from numbers import Real

import numpy as np
from scipy.special import gammaln, logsumexp, roots_legendre

from .._param_validation import EPSILON, POSITIVE_INT, POSITIVE_REAL, Interval, validate_params
from .._validation import check_epsilon, check_positive, check_random_state, check_sparsity

#: Parameter table shared by the top-k mechanisms (one meaning per name).
_CONSTRAINTS = {"scores": "no_validation", "subset": "no_validation", "k": POSITIVE_INT,
                "eps": EPSILON, "sensitivity": POSITIVE_REAL, "rng": ["random_state"],
                "gamma": [Interval(Real, 0, 1, closed="both")]}

__all__ = ["canonical_lipschitz_topk", "canonical_lipschitz_topk_distribution",
           "gumbel_peeling_topk", "gumbel_peeling_topk_distribution", "laplace_topk",
           "canonical_loss", "distribution_as_dict"]

logger = logging.getLogger(__name__)

#: Largest number of subsets the exact-distribution helpers will enumerate.
MAX_EXACT_SUBSETS = 5000

# Number of (t, h) utility classes handled per vectorised chunk of Algorithm 2 (whole rows
# of k classes, so the noise stream, and the release, do not depend on it).  2^13 keeps the
# workspace near 1 MB at d = 2·10⁴ (2^20 took 27 MB, the peak of a sparse pre-screened
# release) and was not slower (0.52 against 0.65 s per draw at d = 10⁶, k = 20).
_CHUNK_ENTRIES = 1 << 13


# --------------------------------------------------------------------------- checks
def _check_scores(scores, sensitivity) -> tuple[np.ndarray, float]:
    try:
        arr = np.asarray(scores)
    except Exception as exc:  # pragma: no cover - exotic containers
        raise TypeError(f"scores: could not convert to an array ({exc})") from exc
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise TypeError(f"scores: expected numeric values, got dtype {arr.dtype}")
    if np.iscomplexobj(arr):
        raise TypeError("scores: complex values are not supported")
    arr = np.array(arr, dtype=np.float64, copy=True)
    if arr.ndim != 1:
        raise ValueError(f"scores: expected a 1-D array, got shape {arr.shape}")
    if arr.size < 2:
        raise ValueError(f"scores: need at least 2 scores, got {arr.size}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("scores: contains NaN or infinite values")
    sensitivity = check_positive(sensitivity, "sensitivity")
    x = arr / sensitivity
    if not np.all(np.isfinite(x)):
        raise ValueError("scores / sensitivity overflows; rescale the scores")
    return x, sensitivity


def _check_gamma(gamma) -> float:
    if isinstance(gamma, bool) or not isinstance(gamma, numbers.Real):
        raise TypeError(f"gamma: expected a real number in [0, 1], got {type(gamma).__name__}")
    gamma = float(gamma)
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma: must lie in [0, 1], got {gamma}")
    return gamma


def _check_common(scores, k, eps, sensitivity):
    x, sensitivity = _check_scores(scores, sensitivity)
    k = check_sparsity(k, x.size, "k")
    eps = check_epsilon(eps, "eps")
    return x, k, eps, sensitivity


# ------------------------------------------------------------------ noise helpers
def _log_max_exp_noise(log_e: np.ndarray, log_m: np.ndarray) -> np.ndarray:
    """``F^{-1}(U^{1/m}) = -log(1 - U^{1/m})`` for ``F`` the Exp(1) CDF, in log space.

    With ``E = -log U ~ Exp(1)``, ``U^{1/m} = exp(-E/m)`` and the noise is
    ``-log(-expm1(-w))`` with ``w = E/m = exp(log E - log m)``. For ``w`` below
    ``e^-30`` (huge classes, ``m`` up to ``e^{10^5}`` and beyond) ``w`` itself would
    underflow, so the expansion ``-log(w) + w/2 + O(w^2)`` is used instead, which is
    exact to double precision there.
    """
    lz = log_e - log_m
    out = np.empty_like(lz)
    small = lz < -30.0
    out[small] = -lz[small] + 0.5 * np.exp(lz[small])
    w = np.exp(lz[~small])
    out[~small] = -np.log(-np.expm1(-w))
    return out


# --------------------------------------------------------- canonical Lipschitz
@validate_params(shared=_CONSTRAINTS)
def canonical_loss(subset, scores, sensitivity: float = 1.0, gamma: float = 0.5) -> float:
    """Canonical loss ``LOSS_gamma(y | x)`` of one k-subset (Swope et al., 2024, App. A.3).

    With ``x = scores / sensitivity``, ``a = max_{i not in y} x_i`` (best excluded
    score) and ``b = min_{i in y} x_i`` (worst included score),

        LOSS_gamma(y | x) = (1 - gamma) * max(a, b) - gamma * b.

    For ``gamma = 1/2`` this is ``max(0, a - b) / 2 = min_{v in OPT^{-1}(y)} ||x - v||_inf``,
    the distance from ``x`` to the set of vectors whose top-k index set is ``y``.
    For every gamma in [0, 1] it is 1-Lipschitz in ``||x||_inf`` (``max(a, b)`` and
    ``b`` each move by at most ``||x - x'||_inf``), i.e. ``Delta_LOSS = 1``. On
    classes ``C_{h,t}`` it equals ``(1-gamma) x_[h+1] - gamma x_[t]`` (and
    ``(1 - 2 gamma) x_[k]`` on the true top-k), the form used by Algorithm 2.
    """
    x, _ = _check_scores(scores, sensitivity)
    gamma = _check_gamma(gamma)
    mask = np.zeros(x.size, dtype=bool)
    mask[np.asarray(subset, dtype=np.intp)] = True
    a = float(np.max(x[~mask]))
    b = float(np.min(x[mask]))
    return (1.0 - gamma) * max(a, b) - gamma * b


@validate_params(shared=_CONSTRAINTS)
def canonical_lipschitz_topk(scores, k: int, eps: float, sensitivity: float,
                             rng: np.random.Generator | int | None,
                             gamma: float = 0.5) -> np.ndarray:
    """Canonical Lipschitz mechanism for private top-k (Swope et al., 2024, App. A, Algorithm 2).

    Parameters
    ----------
    scores : array_like, shape (d,)
        Scores ``f(D)``; higher is better.
    k : int
        Subset size, ``1 <= k < d``.
    eps : float
        Privacy parameter; the mechanism is ``eps``-DP (see Notes).
    sensitivity : float
        Component-wise sensitivity ``Delta_f`` of the scores under the caller's
        neighbour notion: ``max_i |f_i(D) - f_i(D')| <= Delta_f`` for neighbours.
    rng : numpy.random.Generator (or int / None, see ``check_random_state``)
        Source of all randomness.
    gamma : float in [0, 1], default 0.5
        Loss parameter: weight of the worst *included* score versus the best
        *excluded* score. It shapes utility only; the privacy parameter does not
        depend on it.

    Returns
    -------
    ndarray of int, shape (k,)
        Sorted indices of the released subset.

    Notes
    -----
    **Mechanism.** Definition A.1 with ``F`` the standard exponential CDF
    (``F^{-1}(u) = -log(1 - u)``, ``log(1 - F)`` is 1-Lipschitz): over all k-subsets
    ``y``, release ``argmax_y  -(eps/2) LOSS_gamma(y | x) + E_y`` with
    ``E_y ~ Exp(1)`` i.i.d. and ``x = scores / sensitivity``; the canonical loss has
    ``Delta_LOSS = 1`` (see :func:`canonical_loss`), so the utility is
    ``-eps / (2 Delta_LOSS) LOSS``.

    **Privacy parameter.** Exactly ``eps`` (pure, ``delta = 0``), for every
    ``gamma`` in [0, 1] and every neighbour notion under which the scores have
    component-wise sensitivity ``sensitivity``. Proof: the utility
    ``u(y) = -(eps/2) LOSS_gamma(y | f(D)/Delta_f)`` moves by at most ``eps/2`` for
    each ``y``; condition on the noise of all ``y' != y``; ``y`` wins iff
    ``E_y >= c_y := max_{y'}(u(y') + E_{y'}) - u(y)``, ``c_y`` moves by at most
    ``eps``, and ``P(E >= c) = min(1, e^{-c})`` changes by a factor at most
    ``e^{eps}``. In Algorithm 2's notation ``eps_1 = (1 - gamma) eps`` is spent on
    the best excluded score and ``eps_2 = gamma eps`` on the worst included one;
    ``eps_1 + eps_2 = eps``. (Swope et al.'s (2024) utility bound, Thm 4.1, has ``gamma eps / 2``.)

    **Classes.** Sort ``x_[1] >= ... >= x_[d]`` (indices ``j_1..j_d``). Every
    subset other than the true top-k has a head ``{j_1..j_h}`` (``h < k``, ``j_{h+1}``
    excluded), a tail ``j_t`` (its worst member, ``t > k``) and a body of
    ``k - h - 1`` indices from ``{j_{h+2}, ..., j_{t-1}}``, so
    ``|C_{h,t}| = C(t - h - 2, k - h - 1)`` and ``C_{k-1,k} = {top-k}``; these
    ``k(d - k) + 1`` classes partition all ``C(d, k)`` subsets.
    Swope et al. (2024) writes ``C(t - h - 1, k - h - 1)`` (body from ``j_{h+1}..j_{t-1}``); that
    double-counts subsets containing ``j_{h+1}`` (the sizes no longer sum to
    ``C(d, k)``; e.g. d = 3, k = 2 gives 4) and the sampler would then not be the
    mechanism of Definition A.1, so the corrected count is used here
    (the tests check the partition and the distribution by brute force).

    **Sampling.** The maximum of ``m`` i.i.d. Exp(1) is ``-log(1 - U^{1/m})``; it is
    evaluated as ``-log(-expm1(-E/m))`` with ``E ~ Exp(1)`` and ``log m`` from
    ``gammaln``, with an asymptotic branch for ``E/m < e^-30`` (where it may underflow).
    Utilities are taken relative to ``x_[k]`` (a common shift, which does not change the
    argmax).
    Time ``O(d log d + d k)``, memory ``O(d + min(d k, 2^13))``; the winner is a uniform
    member of the winning class (uniform body).
    """
    x, k, eps, _ = _check_common(scores, k, eps, sensitivity)
    gamma = _check_gamma(gamma)
    rng = check_random_state(rng)
    d = x.size
    order = np.argsort(-x, kind="stable")
    z = x[order] - x[order[k - 1]]          # z[k-1] = 0; z[:k] >= 0 >= z[k-1:]
    half = 0.5 * eps

    # class C_{k-1,k}: utility 0 after centring, one member
    tiny = np.finfo(float).tiny                 # E = 0 has probability ~0; keep log finite
    best_val = float(_log_max_exp_noise(np.log(np.atleast_1d(max(rng.standard_exponential(),
                                                                  tiny))), np.zeros(1))[0])
    best_h, best_t = k - 1, k
    if d > k:
        h = np.arange(k)                                    # h = 0..k-1
        head_term = (1.0 - gamma) * z[h]                    # (1-gamma) x_[h+1]
        lfact = gammaln(np.arange(1, d + 1, dtype=np.float64))   # lfact[i] = log(i!)
        lg_kh = lfact[k - h - 1]                            # log (k-h-1)!
        chunk = max(1, _CHUNK_ENTRIES // k)
        for start in range(k + 1, d + 1, chunk):
            t = np.arange(start, min(d, start + chunk - 1) + 1)   # 1-based t
            util = half * (gamma * z[t - 1][:, None] - head_term[None, :])
            log_m = (lfact[t[:, None] - h[None, :] - 2] - lg_kh[None, :]
                     - lfact[t - k - 1][:, None])           # log C(t-h-2, k-h-1)
            e = rng.standard_exponential(size=util.shape)
            np.maximum(e, tiny, out=e)
            val = util + _log_max_exp_noise(np.log(e), log_m)
            flat = int(np.argmax(val))
            if val.flat[flat] > best_val:
                best_val = float(val.flat[flat])
                best_t, best_h = int(t[flat // k]), int(h[flat % k])
    if best_t == k:
        chosen = order[:k]
    else:
        n_body = k - best_h - 1
        body_pos = best_h + 1 + rng.choice(best_t - best_h - 2, size=n_body, replace=False)
        chosen = np.concatenate([order[:best_h], order[body_pos], order[[best_t - 1]]])
    # The winning class (h, t) is not logged: it names the true top-h of the scores and the
    # rank t of the tail, which the release (a uniform member of the class) does not reveal.
    return np.sort(chosen.astype(np.intp))


def _all_subsets(d: int, k: int) -> np.ndarray:
    n_sub = math.comb(d, k)
    if n_sub > MAX_EXACT_SUBSETS:
        raise ValueError(f"exact distribution: C({d}, {k}) = {n_sub} subsets exceeds "
                         f"MAX_EXACT_SUBSETS = {MAX_EXACT_SUBSETS}; use a smaller d")
    return np.array(list(itertools.combinations(range(d), k)), dtype=np.intp).reshape(n_sub, k)


def exp_noise_argmax_logprobs(utilities) -> np.ndarray:
    """Exact log-probabilities of ``argmax_i u_i + E_i`` with ``E_i ~ Exp(1)`` i.i.d.

    ``P(i) = q_i * integral_0^1 prod_{j != i} (1 - q_j z) dz`` with
    ``q_j = exp(u_j - max u)`` (substitute ``z = exp(max u - v)`` in
    ``P(i) = integral f(v - u_i) prod_{j != i} F(v - u_j) dv``). The integrand is a
    polynomial of degree ``N - 1`` in ``z``, so Gauss-Legendre with
    ``ceil(N / 2) + 1`` nodes integrates it exactly; every quadrature term is
    positive, so evaluating it with ``log1p`` and ``logsumexp`` loses nothing.
    """
    u = np.asarray(utilities, dtype=np.float64)
    n_items = u.size
    log_q = u - np.max(u)
    q = np.exp(log_q)
    nodes, weights = roots_legendre(n_items // 2 + 2)
    zz = 0.5 * (nodes + 1.0)
    log_w = np.log(0.5 * weights)
    terms = np.log1p(-q[:, None] * zz[None, :])            # (N, nodes), finite as z < 1
    total = terms.sum(axis=0)
    log_int = logsumexp(log_w[None, :] + total[None, :] - terms, axis=1)
    return log_q + log_int


@validate_params(shared=_CONSTRAINTS)
def canonical_lipschitz_topk_distribution(scores, k: int, eps: float, sensitivity: float,
                                          gamma: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """Exact output distribution of :func:`canonical_lipschitz_topk` (small ``d``).

    Computed from Definition A.1 directly, over all ``C(d, k)`` subsets and without
    the class decomposition of the sampler: each subset gets utility
    ``-(eps/2) LOSS_gamma(y | scores/sensitivity)`` (:func:`canonical_loss`) and the
    law of ``argmax`` of utility plus i.i.d. Exp(1) noise is evaluated exactly by
    :func:`exp_noise_argmax_logprobs`.

    Returns
    -------
    subsets : ndarray of int, shape (C(d, k), k)
        All k-subsets in lexicographic order (rows sorted).
    log_prob : ndarray, shape (C(d, k),)
        Natural-log probabilities (exact to rounding; usable when probabilities
        underflow, e.g. for large ``eps``).

    Raises
    ------
    ValueError
        If ``C(d, k)`` exceeds :data:`MAX_EXACT_SUBSETS`.
    """
    x, k, eps, _ = _check_common(scores, k, eps, sensitivity)
    gamma = _check_gamma(gamma)
    subsets = _all_subsets(x.size, k)
    xc = x - np.sort(x)[::-1][k - 1]           # common shift: utilities unchanged up to a constant
    inside = np.zeros((subsets.shape[0], x.size), dtype=bool)
    inside[np.arange(subsets.shape[0])[:, None], subsets] = True
    a = np.where(inside, -np.inf, xc[None, :]).max(axis=1)
    b = np.where(inside, xc[None, :], np.inf).min(axis=1)
    loss = (1.0 - gamma) * np.maximum(a, b) - gamma * b
    return subsets, exp_noise_argmax_logprobs(-0.5 * eps * loss)


def distribution_as_dict(subsets: np.ndarray, log_prob: np.ndarray) -> dict:
    """``{frozenset(subset): probability}`` from the array form of a distribution."""
    return {frozenset(int(i) for i in row): float(np.exp(lp))
            for row, lp in zip(subsets, log_prob, strict=True)}


# --------------------------------------------------------------- Gumbel peeling
@validate_params(shared=_CONSTRAINTS)
def gumbel_peeling_topk(scores, k: int, eps: float, sensitivity: float,
                        rng: np.random.Generator | int | None) -> np.ndarray:
    """Peeling exponential mechanism: k rounds of ``eps / k`` (one-shot Gumbel top-k).

    Parameters
    ----------
    scores : array_like, shape (d,)
        Scores; higher is better.
    k : int
        Number of indices, ``1 <= k < d``.
    eps : float
        Total privacy parameter.
    sensitivity : float
        Component-wise sensitivity ``Delta`` of the scores under the caller's
        neighbour notion (no monotonicity assumed).
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    ndarray of int, shape (k,)
        Sorted released indices.

    Notes
    -----
    Round ``l`` samples from the remaining indices with
    ``P(i) ∝ exp((eps/k) * scores_i / (2 Delta))``, the exponential mechanism, which
    is ``(eps/k)``-DP since each score moves by at most ``Delta``; by basic
    composition the ordered k-tuple (hence the set) is **eps-DP**, ``delta = 0``.
    Adding i.i.d. Gumbel(scale ``2 k Delta / eps``) noise to all scores once and
    taking the top k in order has exactly this distribution (Gumbel-max trick
    applied round by round; Durfee & Rogers 2019), which is what is computed.
    (For monotone scores, e.g. counts under add/remove, the factor 2 could be
    dropped; it is kept because the callers' scores are not monotone in general.)
    """
    x, k, eps, _ = _check_common(scores, k, eps, sensitivity)
    rng = check_random_state(rng)
    noisy = (x - x.max()) * (eps / (2.0 * k)) + rng.gumbel(size=x.size)
    top = np.argpartition(-noisy, k - 1)[:k]
    return np.sort(top.astype(np.intp))


@validate_params(shared=_CONSTRAINTS)
def gumbel_peeling_topk_distribution(scores, k: int, eps: float,
                                     sensitivity: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact set distribution of :func:`gumbel_peeling_topk` (small ``d``).

    The probability of a set is the sum over its ``k!`` orderings of the product of
    the k softmax steps ``exp(c x_{i_l}) / sum_{j not yet chosen} exp(c x_j)``,
    ``c = eps / (2 k Delta)``, all in log space.

    Returns
    -------
    subsets : ndarray of int, shape (C(d, k), k)
    log_prob : ndarray, shape (C(d, k),)
    """
    x, k, eps, _ = _check_common(scores, k, eps, sensitivity)
    subsets = _all_subsets(x.size, k)
    w = (x - x.max()) * (eps / (2.0 * k))
    log_norm: dict[frozenset, float] = {}      # log sum_{j not in chosen} exp(w_j), per prefix set

    def norm(chosen: frozenset) -> float:
        if chosen not in log_norm:
            alive = np.ones(x.size, dtype=bool)
            alive[list(chosen)] = False
            log_norm[chosen] = float(logsumexp(w[alive]))
        return log_norm[chosen]

    log_prob = np.empty(subsets.shape[0])
    for r, sub in enumerate(subsets):
        per_order = []
        for perm in itertools.permutations(sub.tolist()):
            lp = 0.0
            for pos, i in enumerate(perm):
                lp += w[i] - norm(frozenset(perm[:pos]))
            per_order.append(lp)
        log_prob[r] = logsumexp(per_order)
    return subsets, log_prob


# ---------------------------------------------------------------- Laplace top-k
@validate_params(shared=_CONSTRAINTS)
def laplace_topk(scores, k: int, eps: float, sensitivity: float,
                 rng: np.random.Generator | int | None) -> np.ndarray:
    """One-shot Laplace top-k: add Laplace noise once to every score, keep the k largest.

    Parameters
    ----------
    scores : array_like, shape (d,)
        Scores; higher is better.
    k : int
        Number of indices, ``1 <= k < d``.
    eps : float
        Privacy parameter.
    sensitivity : float
        Component-wise sensitivity ``Delta`` of the scores (any number may move).
    rng : numpy.random.Generator
        Source of randomness.

    Returns
    -------
    ndarray of int, shape (k,)
        Sorted released indices (noisy values are not released).

    Notes
    -----
    Noise scale ``b = 2 k Delta / eps``; the release (even the ordered top-k) is
    **eps-DP**, ``delta = 0``. Proof (coupling): fix the output order
    ``i_1, ..., i_k`` and the noise of the other ``d - k`` indices, whose best noisy
    value ``M`` moves by at most ``Delta``. Given noise ``Z`` producing the output on
    ``D``, the noise ``Z'_{i_l} = Z_{i_l} + Delta - (f_{i_l}(D') - f_{i_l}(D))``
    raises every selected noisy score by exactly ``Delta`` on ``D'``, keeping their
    order and keeping them above ``M' <= M + Delta``. Each shift is at most
    ``2 Delta``, so the Laplace densities differ by at most ``exp(2 k Delta / b)
    = e^eps``. This is the safe pure-DP scale; Qiao, Su & Zhang (2021) show that a
    scale of order ``sqrt(k log(1/delta)) Delta / eps`` suffices for
    ``(eps, delta)``-DP, which is not used here because the callers need pure DP.
    """
    x, k, eps, _ = _check_common(scores, k, eps, sensitivity)
    rng = check_random_state(rng)
    noisy = (x - x.max()) * (eps / (2.0 * k)) + rng.laplace(size=x.size)
    top = np.argpartition(-noisy, k - 1)[:k]
    return np.sort(top.astype(np.intp))
