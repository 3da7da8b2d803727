"""Bounds-free private linear regression: the Tukey mechanism.

The mechanism of Amin, Joseph, Ribero and Vassilvitskii (2023), "Easy differentially private
linear regression", with the tighter propose-test-release check of Dick, Gillenwater and
Joseph (2023), "Better private linear regression through better private feature selection"
(their Lemma 8.5), restated and proved here for one *replaced model* (docs/privacy.md, "The
Tukey mechanism (`tukey_regression`)"):

1. **Models.**  The rows are split at random into ``m`` disjoint parts, by a rule that does
   not look at the data (a uniformly random balanced partition under replace-one
   neighbours; independent uniform labels under add/remove).  Least squares is fitted on
   each part (the least-norm solution, by one batched SVD: a part with fewer rows than
   columns, or a constant column, gives a model like any other part, by the same code).
   With an intercept each part contributes, by default, the vector ``(ȳ_i, x̄_i, β_i)``
   of its means and slopes (:func:`centred_part_statistics`), and the intercept released
   is ``ȳ − x̄·β``.  A neighbouring data set changes exactly one of the ``m`` vectors.
2. **Depth.**  The approximate (axis-aligned) Tukey depth of ``β ∈ R^d`` among the models
   ``D = {β_1, ..., β_m}`` is ``T_D(β) = min_j min(#{i: β_ij ≤ β_j}, #{i: β_ij ≥ β_j})``;
   one replaced model moves it by at most 1 everywhere (sensitivity 1).  The region of
   depth ``≥ u`` is the box ``Y_u = Π_j [β_(u),j, β_(m+1-u),j]`` of order statistics, so
   its volume ``V_u`` and the weight ``W_u = ∫_{Y_u} exp(c T_D)`` are sums over the nested
   boxes (kept in log space: the volume of a ``d``-dimensional box underflows).
3. **Test.**  With ``c = ε_em / 2``, a target depth ``t`` (public), and
   ``A(D) = max{k ∈ [0, t-2] : W_{t+k} > 0 and c (t+1+k) + log V_{t-1-k} ≤ log δ + log W_{t+k}}``
   (``-1`` when no ``k`` qualifies), ``A`` is 1-sensitive and ``A(D) ≥ 0`` makes ``D``
   *safe* (the restricted exponential mechanism below is ``(ε_em, δ)``-indistinguishable
   on every neighbour).  The mechanism passes when
   ``A(D) + Laplace(1/ε_ptr) ≥ log(1/(2δ))/ε_ptr − 1`` and refuses otherwise
   (:class:`~mipdp.exceptions.PTRRefusedError`: nothing is released).
4. **Release.**  On a pass, ``β`` is drawn exactly from the density ``∝ exp(c T_D(β))`` on
   ``Y_t``: a depth level ``u ≥ t`` with probability ``∝ exp(c u) vol(Y_u \\ Y_{u+1})``,
   then a point uniformly in the shell ``Y_u \\ Y_{u+1}``, by splitting the shell into ``d``
   disjoint boxes (the first coordinate that leaves the inner box) and drawing one by its
   volume.  No rejection.

Guarantee: ``(ε_ptr + ε_em, δ)``-DP under the caller's neighbour notion (replace-one or
add/remove-one rows), with no bounds on the data.  When ``m`` is not given it is chosen from
the number of rows: under replace-one ``n`` is public, so this costs nothing; under
add/remove a fraction ``m_fraction`` of ``ε`` buys a Laplace lower bound on ``n``
(:func:`private_n_lower_bound`), by basic composition.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np

from ._neighbours import NEIGHBOURS, neighbours_argument
from ._param_validation import (
    EPSILON,
    Interval,
    StrOptions,
    validate_params,
)
from .accounting import cancels_on_error, check_release, record_release
from .exceptions import InvalidParameterError, PTRRefusedError
from .guarantee import Guarantee, Neighbour

__all__ = ["tukey_regression", "TukeyResult", "private_n_lower_bound", "TukeyLevels",
           "tukey_levels", "approximate_tukey_depth", "fit_part_models", "split_parts",
           "centred_part_statistics", "ptr_distance", "ptr_pass_probability",
           "ptr_refusal_probability", "level_law",
           "target_depth", "sample_tukey", "models_for_rows", "models_wanted",
           "refusal_before_reading", "ROWS_PER_MODEL", "MODELS_MARGIN", "DEPTH_FRACTION",
           "PTR_SHARE", "N_LOWER_BOUND_FAILURE"]

#: rows per part beyond the ``d`` coefficients when ``m`` is not given:
#: ``m = floor(n / (d + ROWS_PER_MODEL))`` (measured: benchmarks/tukey/tune.py)
ROWS_PER_MODEL = 1
#: the target depth is ``t = K + 1 + max(1, floor(DEPTH_FRACTION * m))``, ``K`` the distance
#: the test needs to pass with probability ``1 - e^{-2}/2`` (measured: tune.py)
DEPTH_FRACTION = 0.05
#: the default ``m`` is this many times :func:`models_wanted` (when the rows allow it;
#: 1.0 was at least as good as 1.5 in 13 of 18 real-set cells: benchmarks/tukey/README.md)
MODELS_MARGIN = 1.0
#: share of the mechanism's ``ε`` spent on the test (the rest on the exponential mechanism)
PTR_SHARE = 0.4
#: probability that :func:`private_n_lower_bound` exceeds ``n`` (a utility parameter: the
#: privacy of the bound does not depend on it)
N_LOWER_BOUND_FAILURE = 1e-3
#: models are clipped to this magnitude (a fixed map of each part's fit: keeps the boxes'
#: widths finite whatever the data)
_MODEL_CAP = 1e100


@dataclass(frozen=True)
class TukeyResult:
    """A release of :func:`tukey_regression`.

    Attributes
    ----------
    coef : ndarray of shape (d,)
        Private coefficients (one per column of ``X``).
    intercept : float
        Private intercept (``0.0`` when ``fit_intercept=False``).
    m : int
        Number of models.  Public when given by the caller or computed from ``n`` under
        replace-one neighbours (``n`` is public then); a private release (post-processing of
        the Laplace lower bound on ``n``) when chosen under add/remove neighbours.
    guarantee : Guarantee
        ``(ε, δ)`` of the whole call and its neighbour notion.
    info : dict
        Public parameters of the run: ``target_depth`` (``t``), ``eps_ptr``, ``eps_em``,
        ``eps_m`` (0 unless ``m`` was chosen privately), ``n_lower_bound`` (the private
        lower bound on ``n``, or ``None``), ``m_source`` (``"given"``, ``"n"`` or
        ``"private n lower bound"``), ``coordinates`` (what each part released: the
        centred ``(ȳ, x̄, slopes)``, ``(intercept, slopes)`` or ``slopes``).  Nothing in
        it depends on the data without noise.
    """

    coef: np.ndarray
    intercept: float
    m: int
    guarantee: Guarantee
    info: dict = field(default_factory=dict)

    @property
    def epsilon(self) -> float:
        """``ε`` of the release."""
        return self.guarantee.epsilon

    @property
    def delta(self) -> float:
        """``δ`` of the release."""
        return self.guarantee.delta


# -- the parts and their models ------------------------------------------------------------
def split_parts(n: int, m: int, rng: np.random.Generator, *, add_remove: bool) -> np.ndarray:
    """Part labels in ``[0, m)`` for ``n`` rows, drawn without looking at the data.

    Replace-one: a uniformly random balanced partition (part sizes ``⌊n/m⌋`` or
    ``⌈n/m⌉``); replacing row ``i`` changes only the part of row ``i``.  Add/remove:
    independent uniform labels, so that (coupling the labels of the common rows) an added
    row changes only the part it joins.
    """
    if add_remove:
        return rng.integers(m, size=n)
    labels = np.empty(n, dtype=np.int64)
    labels[rng.permutation(n)] = np.arange(n) % m
    return labels


def _lstsq_batched(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Least-norm least-squares solutions of the stacked systems ``A[i] β = B[i]``."""
    _, r, d = A.shape
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    cutoff = s[:, :1] * (max(r, d) * np.finfo(float).eps)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        inv = np.where(s > cutoff, 1.0 / np.where(s > 0, s, 1.0), 0.0)
        coef = np.einsum("mkd,mk->md", Vt, inv * np.einsum("mrk,mr->mk", U, B))
    return coef


def fit_part_models(Z: np.ndarray, y: np.ndarray, labels: np.ndarray, m: int) -> np.ndarray:
    """The ``(m, d)`` least-squares models of the parts ``labels`` of ``(Z, y)``.

    Each model is the least-norm solution of its part (``numpy.linalg.lstsq``'s answer):
    rank-deficient parts (fewer rows than columns, a constant or repeated column, an empty
    part) are solved by the same code as the others, and a model is a fixed function of its
    part's rows.  Models are clipped to ``±1e100`` and a non-finite one (overflow) is set to
    0, again a fixed map of the part; no exception depends on the data.
    """
    n, d = Z.shape
    counts = np.bincount(labels, minlength=m)
    order = np.argsort(labels, kind="stable")      # each part's rows in index order
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    coef = np.zeros((m, d))
    # parts of equal size are solved together: numpy runs LAPACK on each matrix of a stack
    # on its own, so a part's model depends on its own rows only (not on the other parts'
    # sizes, as padding to the largest part would make it, down to the last bit)
    for size in np.unique(counts):
        if size == 0:
            continue                                # an empty part: the zero model
        parts = np.flatnonzero(counts == size)
        rows = order[starts[parts][:, None] + np.arange(size)[None, :]]
        try:
            coef[parts] = _lstsq_batched(Z[rows], y[rows])
        except np.linalg.LinAlgError:      # pragma: no cover - SVD failed on some part
            for i, part in enumerate(parts):
                try:
                    coef[part] = _lstsq_batched(Z[rows[i:i + 1]], y[rows[i:i + 1]])[0]
                except np.linalg.LinAlgError:
                    coef[part] = 0.0
    coef = np.where(np.isfinite(coef), coef, 0.0)
    return np.clip(coef, -_MODEL_CAP, _MODEL_CAP)


def centred_part_statistics(X: np.ndarray, y: np.ndarray, labels: np.ndarray, m: int
                            ) -> np.ndarray:
    """Per part ``(ȳ_i, x̄_i, β_i)``: the part's means and its least-squares slopes.

    Shape ``(m, 2k + 1)``.  The slopes ``β_i`` are those of :func:`fit_part_models` on
    ``[1, X]``; the intercept of part ``i`` is ``ȳ_i − x̄_i·β_i``.  Released in these
    coordinates, the intercept does not inherit the error of the slopes times the mean of
    ``X`` (which, for columns far from 0, dominates the error of the intercept released in
    the coordinates ``(intercept, β)``).  A fixed function of each part's rows (an empty
    part gives zeros), clipped like the models.
    """
    n, k = X.shape
    Z = np.hstack([np.ones((n, 1)), X])
    slopes = fit_part_models(Z, y, labels, m)[:, 1:]
    del Z
    count = np.maximum(np.bincount(labels, minlength=m), 1).astype(float)
    with np.errstate(over="ignore", invalid="ignore"):
        xbar = np.stack([np.bincount(labels, weights=X[:, j], minlength=m) for j in range(k)],
                        axis=1) / count[:, None] if k else np.zeros((m, 0))
        ybar = np.bincount(labels, weights=y, minlength=m) / count
    stats = np.hstack([ybar[:, None], xbar, slopes])
    stats = np.where(np.isfinite(stats), stats, 0.0)
    return np.clip(stats, -_MODEL_CAP, _MODEL_CAP)


# -- depth, the nested boxes and their volumes -----------------------------------------------
def approximate_tukey_depth(models: np.ndarray, points: np.ndarray) -> np.ndarray:
    """``T_D(β)`` of each row of ``points`` among ``models`` (brute force, ``O(m d)`` each)."""
    models = np.asarray(models, dtype=float)
    points = np.atleast_2d(np.asarray(points, dtype=float))
    le = (models[None, :, :] <= points[:, None, :]).sum(axis=1)
    ge = (models[None, :, :] >= points[:, None, :]).sum(axis=1)
    return np.minimum(le, ge).min(axis=1)


def _logsumexp(x: np.ndarray, axis=None) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    mx = np.max(x, axis=axis, keepdims=True)
    safe = np.where(np.isfinite(mx), mx, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(x - safe), axis=axis, keepdims=True)) + safe
    out = np.where(np.isneginf(mx), -np.inf, out)
    return out if axis is None and out.ndim == 0 else np.squeeze(out, axis=axis)


def _log(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(x)


@dataclass(frozen=True)
class TukeyLevels:
    """The nested boxes of the approximate Tukey depth of ``m`` models in ``R^d``.

    Arrays are indexed by the depth level ``u`` (row 0 unused; ``u = 1..H``, ``H = ⌊m/2⌋``,
    the deepest level of positive volume).

    Attributes
    ----------
    lo, hi : ndarray of shape (H + 2, d)
        ``Y_u = Π_j [lo[u, j], hi[u, j]]`` (row ``H + 1``: a point box, so the shell of
        level ``H`` is ``Y_H``).
    log_volume : ndarray of shape (H + 1,)
        ``log V_u = log vol(Y_u)`` (``-inf`` for zero volume).
    log_piece : ndarray of shape (H + 1, d)
        ``log vol`` of piece ``j`` of the shell ``Y_u \\ Y_{u+1}``: the points of ``Y_u``
        whose first coordinate outside ``Y_{u+1}`` is ``j``.
    log_shell : ndarray of shape (H + 1,)
        ``log vol(Y_u \\ Y_{u+1})`` (log-sum-exp of the pieces).
    """

    lo: np.ndarray
    hi: np.ndarray
    log_volume: np.ndarray
    log_piece: np.ndarray
    log_shell: np.ndarray

    @property
    def depth_max(self) -> int:
        """``H = ⌊m/2⌋``."""
        return self.log_volume.size - 1

    def log_weight(self, c: float) -> np.ndarray:
        """``log W_u = log ∫_{Y_u} exp(c T_D)`` for ``u = 0..H`` (entry 0: ``u = 1``'s)."""
        H = self.depth_max
        u = np.arange(H + 1, dtype=float)
        lw = c * u + self.log_shell
        lw[0] = -np.inf
        out = np.logaddexp.accumulate(lw[::-1])[::-1]
        return out


def tukey_levels(models: np.ndarray) -> TukeyLevels:
    """The boxes ``Y_u`` of depth ``≥ u`` of ``models`` (shape ``(m, d)``, ``m ≥ 2``)."""
    models = np.asarray(models, dtype=float)
    m, d = models.shape
    H = m // 2
    S = np.sort(models, axis=0)
    lo = np.empty((H + 2, d))
    hi = np.empty((H + 2, d))
    lo[0] = -np.inf
    hi[0] = np.inf
    lo[1:H + 1] = S[:H]                      # lo[u] = β_(u)
    hi[1:H + 1] = S[::-1][:H]                # hi[u] = β_(m+1-u)
    lo[H + 1] = lo[H]
    hi[H + 1] = lo[H]
    outer = hi[1:H + 1] - lo[1:H + 1]                       # b[u], u = 1..H
    inner = hi[2:H + 2] - lo[2:H + 2]                       # a[u] = widths of Y_{u+1}
    gap = (lo[2:H + 2] - lo[1:H + 1]) + (hi[1:H + 1] - hi[2:H + 2])   # b[u] - a[u]
    log_b = _log(outer)
    log_a = _log(inner)
    zeros = np.zeros((H, 1))
    before = np.hstack([zeros, np.cumsum(log_a, axis=1)[:, :-1]])     # sum_{i<j} log a_i
    after = np.hstack([np.cumsum(log_b[:, ::-1], axis=1)[:, ::-1][:, 1:], zeros])  # i > j
    log_piece = np.full((H + 1, d), -np.inf)
    with np.errstate(invalid="ignore"):
        log_piece[1:] = before + _log(gap) + after
    log_piece = np.where(np.isnan(log_piece), -np.inf, log_piece)
    log_shell = np.full(H + 1, -np.inf)
    log_shell[1:] = _logsumexp(log_piece[1:], axis=1)
    log_volume = np.full(H + 1, np.inf)
    log_volume[1:] = log_b.sum(axis=1)
    return TukeyLevels(lo=lo, hi=hi, log_volume=log_volume, log_piece=log_piece,
                       log_shell=log_shell)


# -- propose-test-release --------------------------------------------------------------------
def _distance_needed(eps_ptr: float, delta: float) -> int:
    """``K = ⌈log(1/(2δ))/ε_ptr − 1 + 2/ε_ptr⌉``: with ``A ≥ K`` the test passes with
    probability ``≥ 1 − e^{−2}/2 ≈ 0.93``."""
    return max(0, math.ceil(_threshold(eps_ptr, delta) + 2.0 / eps_ptr))


def target_depth(m: int, eps_ptr: float, delta: float) -> int:
    """The depth ``t`` the exponential mechanism is restricted to (public: ``m``, ``ε_ptr``
    and ``δ`` only): ``t = K + 1 + max(1, ⌊0.05 m⌋)``, so that the test's outer box
    ``Y_{t−1−K}`` leaves out the extreme 5 % of the models on each side, capped at
    ``⌊m/2⌋``."""
    return int(min(max(m // 2, 1), _distance_needed(eps_ptr, delta) + 1
                   + max(1, int(DEPTH_FRACTION * m))))


def _threshold(eps_ptr: float, delta: float) -> float:
    return math.log(1.0 / (2.0 * delta)) / eps_ptr - 1.0


def ptr_distance(levels: TukeyLevels, t: int, eps_em: float, delta: float) -> int:
    """``A(D)``: the 1-sensitive lower bound on the distance to an unsafe data set.

    The largest ``k ∈ [0, t − 2]`` with ``t + k ≤ H``, ``W_{t+k} > 0`` and
    ``c (t+1+k) + log V_{t−1−k} ≤ log δ + log W_{t+k}`` (``c = ε_em/2``), or ``-1``.
    """
    H = levels.depth_max
    c = eps_em / 2.0
    kmax = min(t - 2, H - t)
    if kmax < 0:
        return -1
    k = np.arange(kmax + 1)
    logW = levels.log_weight(c)
    inner = logW[t + k]
    lhs = c * (t + 1 + k) + levels.log_volume[t - 1 - k]
    ok = np.isfinite(inner) & (lhs <= math.log(delta) + inner)
    hits = np.flatnonzero(ok)
    return int(k[hits[-1]]) if hits.size else -1


def ptr_pass_probability(distance: int, eps_ptr: float, delta: float) -> float:
    """``P[A + Laplace(1/ε_ptr) ≥ log(1/(2δ))/ε_ptr − 1]`` (exact)."""
    x = _threshold(eps_ptr, delta) - distance      # P[Lap ≥ x]
    if x >= 0:
        return 0.5 * math.exp(-eps_ptr * x)
    return 1.0 - 0.5 * math.exp(eps_ptr * x)


def ptr_refusal_probability(distance: int, eps_ptr: float, delta: float) -> float:
    """``1 −`` :func:`ptr_pass_probability`, computed without cancellation."""
    x = _threshold(eps_ptr, delta) - distance
    if x >= 0:
        return -0.5 * math.expm1(-eps_ptr * x) + 0.5
    return 0.5 * math.exp(eps_ptr * x)


def level_law(levels: TukeyLevels, t: int, eps_em: float) -> np.ndarray:
    """Exact law of the depth level ``u = t..H`` of the released point (array of ``H+1``)."""
    H = levels.depth_max
    c = eps_em / 2.0
    u = np.arange(H + 1)
    lw = np.where(u >= t, c * u + levels.log_shell, -np.inf)
    total = _logsumexp(lw)
    if not np.isfinite(total):
        return np.zeros(H + 1)
    return np.exp(lw - total)


def sample_tukey(levels: TukeyLevels, t: int, eps_em: float, rng: np.random.Generator
                 ) -> np.ndarray:
    """One exact draw from the density ``∝ exp(ε_em T_D / 2)`` on ``Y_t``.

    A level ``u`` by :func:`level_law`, a piece of its shell by volume, then a uniform
    point in that piece.  When ``Y_t`` has zero volume (every weight is 0: the test cannot
    have passed but with probability ≤ δ) a point uniform on the box's sides of positive
    length is returned instead; no exception either way.
    """
    H = levels.depth_max
    p = level_law(levels, t, eps_em)
    d = levels.lo.shape[1]
    if p.sum() <= 0:
        return rng.uniform(levels.lo[t], levels.hi[t])
    u = int(min(np.searchsorted(np.cumsum(p), rng.random() * p.sum(), side="right"), H))
    while p[u] == 0:             # guard against a rounding step into a zero-weight level
        u -= 1
    lp = levels.log_piece[u]
    q = np.exp(lp - _logsumexp(lp))
    j = int(min(np.searchsorted(np.cumsum(q), rng.random() * q.sum(), side="right"), d - 1))
    while q[j] == 0:
        j -= 1
    lo_out, hi_out = levels.lo[u], levels.hi[u]
    lo_in, hi_in = levels.lo[u + 1], levels.hi[u + 1]
    beta = np.empty(d)
    beta[:j] = rng.uniform(lo_in[:j], hi_in[:j])
    beta[j + 1:] = rng.uniform(lo_out[j + 1:], hi_out[j + 1:])
    gl = lo_in[j] - lo_out[j]
    gr = hi_out[j] - hi_in[j]
    x = rng.random() * (gl + gr)
    beta[j] = lo_out[j] + x if x < gl else hi_in[j] + (x - gl)
    return beta


# -- the number of models ----------------------------------------------------------------------
def models_wanted(d: int, eps_ptr: float, eps_em: float, delta: float) -> int:
    """The number of models with which the test is expected to pass on well-behaved data.

    A data-free rule (a function of ``d``, ``ε_ptr``, ``ε_em`` and ``δ`` only): the
    smallest even ``m`` with ``c (u − t − 1 − K) ≥ log(1/δ) + d log(0.66 c m / d)``, where
    ``c = ε_em/2``, ``K`` is the distance the test needs, ``t`` the target depth and
    ``u = ⌊m/2⌋ − d/c`` the depth around which the exponential mechanism's weight sits; the
    logarithm is that of the volume ratio of the test's outer and inner boxes for
    normally distributed models.  Measured against the pass rate (benchmarks/tukey/tune.py):
    at ``ε = 1``, ``δ = 1e-5`` it gives 382 models for ``d = 4`` (passing at 400 models,
    failing at 200) and 430 for ``d = 6`` (passing at 430–570).
    """
    c = eps_em / 2.0
    d = max(int(d), 1)
    K = _distance_needed(eps_ptr, delta)
    log_inv_delta = math.log(1.0 / delta)

    def enough(m: int) -> bool:
        t = target_depth(m, eps_ptr, delta)
        u = m // 2 - d / c
        if u - t - K < 0:
            return False
        spread = d * math.log(max(0.66 * c * m / d, 1.0))
        return c * (u - t - 1 - K) >= log_inv_delta + spread

    hi = 8
    while not enough(hi):
        hi *= 2
        if hi > 2 ** 40:           # pragma: no cover - eps_em absurdly small
            return hi
    lo = hi // 2
    while hi - lo > 2:             # enough() is monotone in m: bisect on even m
        mid = (lo + hi) // 2 // 2 * 2
        if enough(mid):
            hi = mid
        else:
            lo = mid
    return hi


def models_for_rows(n: int, d: int, eps_ptr: float, eps_em: float, delta: float, *,
                    dim: int | None = None) -> int:
    """The default ``m``: ``min(⌊n / (d + 1)⌋, ⌈MODELS_MARGIN · models_wanted(dim, ...)⌉)``.

    ``d`` is the number of least-squares coefficients of a part (each part gets at least
    ``d + 1`` rows); ``dim`` (default ``d``) the dimension of the released vector (``2k + 1``
    for the centred coordinates).  Beyond the models the test needs the extra rows go into
    the parts, which makes each model better (on real data the median of models fitted on a
    few rows each is far from least squares on all rows; benchmarks/tukey/tune_real.py).
    """
    cap = int(max(n, 0) // (max(d, 1) + ROWS_PER_MODEL))
    want = math.ceil(MODELS_MARGIN * models_wanted(d if dim is None else dim, eps_ptr,
                                                   eps_em, delta))
    return int(min(cap, want))


def _pass_bound(m: int, eps_ptr: float, delta: float) -> float:
    """The largest pass probability any data set can have with ``m`` models."""
    t = target_depth(m, eps_ptr, delta)
    kmax = min(t - 2, m // 2 - t)
    return ptr_pass_probability(kmax, eps_ptr, delta) if kmax >= 0 else 0.0


def _models_needed(eps_ptr: float, delta: float) -> int:
    """The fewest models with which the test can pass with probability ≥ 1/2."""
    m = 4
    while _pass_bound(m, eps_ptr, delta) < 0.5:
        m += 2
    return m


def private_n_lower_bound(n_or_data, eps: float, delta: float = N_LOWER_BOUND_FAILURE, *,
                          random_state=None) -> int:
    """An ``ε``-DP lower bound on the number of rows: ``⌊n + Laplace(1/ε) − log(1/(2δ))/ε⌋``.

    Parameters
    ----------
    n_or_data : int or array_like
        The number of rows, or the data (its length is used).
    eps : float
        Budget of the bound (pure ``ε``-DP: one row added or removed moves ``n`` by 1).
    delta : float, default 1e-3
        Probability that the bound exceeds ``n`` (not a privacy parameter: the privacy of
        the release does not depend on it).
    random_state : None, int, SeedSequence or numpy.random.Generator

    Returns
    -------
    int
        The bound, at least 0.  Under replace-one neighbours ``n`` is public and this
        costs nothing; under add/remove it is ``eps``-DP (record it with the release it
        serves: :func:`tukey_regression` does).

    Examples
    --------
    >>> from mipdp.tukey import private_n_lower_bound
    >>> 9_000 < private_n_lower_bound(10_000, 0.05, random_state=0) <= 10_000
    True
    """
    from ._validation import check_random_state
    if not (isinstance(eps, Real) and eps > 0 and math.isfinite(eps)):
        raise InvalidParameterError(f"The 'eps' parameter of private_n_lower_bound must be a "
                                    f"positive finite float. Got {eps!r} instead.")
    if not (isinstance(delta, Real) and 0 < delta < 0.5):
        raise InvalidParameterError(f"The 'delta' parameter of private_n_lower_bound must lie "
                                    f"in (0, 0.5). Got {delta!r} instead.")
    if isinstance(n_or_data, Integral) and not isinstance(n_or_data, bool):
        n = int(n_or_data)
        if n < 0:
            raise InvalidParameterError("The 'n_or_data' parameter of private_n_lower_bound "
                                        f"must be a non-negative int. Got {n} instead.")
    else:
        n = len(n_or_data)
    rng = check_random_state(random_state)
    est = n + rng.laplace(0.0, 1.0 / eps) - math.log(1.0 / (2.0 * delta)) / eps
    return int(max(math.floor(est), 0))


# -- the public function ------------------------------------------------------------------------
TUKEY_REGRESSION_CONSTRAINTS = {
    "X": "no_validation", "y": "no_validation",
    "eps": EPSILON, "delta": [Interval(Real, 0, 0.5, closed="neither")],
    "m": [None, Interval(Integral, 4, None, closed="left")],
    "m_fraction": [Interval(Real, 0, 1, closed="neither")],
    "fit_intercept": ["boolean"], "centred": ["boolean"],
    "neighbours": [StrOptions(set(NEIGHBOURS))],
    "random_state": ["random_state"], "accountant": ["accountant"],
}


def _refusal(what: str, *, m: int, d: int | None, eps_ptr: float, eps_em: float,
             delta: float, read: bool, dim: int | None = None) -> PTRRefusedError:
    need = _models_needed(eps_ptr, delta)
    spent = ("The call's guarantee was recorded (the refusal is an output of the "
             "mechanism)." if read else "Nothing was computed from the data.")
    if d is None:
        typical = ""
    else:
        want = models_wanted(d if dim is None else dim, eps_ptr, eps_em, delta)
        typical = (f"; with d = {d} coefficients it typically passes from about {want} "
                   f"models, i.e. n >= {want * (d + ROWS_PER_MODEL)} rows at the default m")
    return PTRRefusedError(
        f"tukey_regression refused: {what} Nothing was released. {spent} With eps_ptr = "
        f"{eps_ptr:.3g} and delta = {delta:.3g} the test needs at least {need} models "
        f"whatever the data (m = {m} here){typical}. To pass more often: more rows, a "
        "larger eps or delta, or fewer columns (select them first, e.g. with "
        "mipdp.private_bss).")


def refusal_before_reading(shape, eps: float, delta: float, *, m: int | None = None,
                           fit_intercept: bool = True, centred: bool = True,
                           neighbours: str = "replace_one") -> PTRRefusedError | None:
    """The refusal :func:`tukey_regression` raises before reading the data, or ``None``.

    When ``m`` is public (given, or computed from the public ``n`` under replace-one) and no
    data set can pass the test with probability ``1/2`` with ``m`` models, the call refuses
    from ``shape`` and the parameters alone: nothing is computed from the data and nothing
    need be recorded.  ``eps`` is the mechanism's ``ε`` (``m`` public: nothing is spent on
    ``n``).  Callers that run other releases first (:class:`~mipdp.PrivateSparseRegression`)
    call it before those, so that a refusal known in advance costs nothing.
    """
    add_remove = neighbours == "add_remove"
    eps_ptr, eps_em = PTR_SHARE * eps, (1.0 - PTR_SHARE) * eps
    shape = tuple(shape)
    d_public = shape[1] + int(fit_intercept) if len(shape) == 2 else None
    use_centred = bool(centred and fit_intercept)
    dim_public = (2 * shape[1] + 1 if use_centred else d_public) if len(shape) == 2 else None
    m_public = m
    if m is None and not add_remove and d_public is not None and shape[1] >= 1:
        m_public = models_for_rows(shape[0], d_public, eps_ptr, eps_em, delta, dim=dim_public)
    if m_public is not None and (m_public < 4 or _pass_bound(m_public, eps_ptr, delta) < 0.5):
        what = (f"with m = {m} models" if m is not None
                else f"{shape[0]} rows give m = {m_public} models, and with them")
        return _refusal(f"{what} the test passes with probability below 1/2 whatever the "
                        "data.", m=m_public, d=d_public, eps_ptr=eps_ptr, eps_em=eps_em,
                        delta=delta, read=False, dim=dim_public)
    return None


@neighbours_argument
@validate_params(TUKEY_REGRESSION_CONSTRAINTS)
@cancels_on_error
def tukey_regression(X, y, eps: float, delta: float, *, m: int | None = None,
                     m_fraction: float = 0.05, fit_intercept: bool = True,
                     neighbours: str = "replace_one", random_state=None,
                     accountant=None, centred: bool = True) -> TukeyResult:
    """``(ε, δ)``-DP linear regression without data bounds (the Tukey mechanism).

    Fits least squares on ``m`` disjoint random parts of the rows, tests privately that the
    ``m`` models agree (propose-test-release), and draws the coefficients from the
    exponential mechanism on their approximate Tukey depth (Amin, Joseph, Ribero and
    Vassilvitskii 2023, "Easy differentially private linear regression"; with the tighter
    test of Dick, Gillenwater and Joseph 2023, "Better private linear regression through
    better private feature selection").  Use it when no public bounds on ``X`` and ``y``
    are known and ``n`` is large against the number of columns: at ``ε = 1`` and
    ``δ = 1e-5`` the test needs some 300–550 models (:func:`models_wanted`) of at least
    ``k + 2`` rows each, so a few thousand rows for 3–5 columns.  Select the columns first
    (:func:`~mipdp.private_bss`).

    Parameters
    ----------
    X : array_like of shape (n, k)
        Features (the columns to fit; public, e.g. a private support).
    y : array_like of shape (n,)
    eps : float
        Total ``ε`` of the call.
    delta : float
        ``δ``, in ``(0, 0.5)``.
    m : int, optional
        Number of models (``≥ 4``), public.  Default: :func:`models_for_rows`, i.e.
        ``min(⌊n / (d + 1)⌋, m*)`` with ``d = k + 1`` least-squares coefficients (``k``
        without intercept) and ``m*`` the data-free number of models the test needs for
        the released dimension (:func:`models_wanted`; ``2k + 1`` in the centred
        coordinates); computed from ``n`` under replace-one (``n`` is public) and from a
        private lower bound on ``n`` under add/remove.
    m_fraction : float, default 0.05
        Share of ``eps`` spent on the lower bound on ``n`` when ``m`` is chosen under
        add/remove neighbours (ignored otherwise: nothing is spent).
    fit_intercept : bool, default True
        Fit ``[1, X]`` (the intercept is the first coordinate of each model).
    neighbours : {"replace_one", "add_remove"}, default "replace_one"
        Neighbour notion of the guarantee.
    random_state : None, int, SeedSequence or numpy.random.Generator
    accountant : BudgetAccountant, optional
        The call's guarantee is checked before the data is read and recorded once (also
        when the test refuses: the refusal is an output).
    centred : bool, default True
        With an intercept, release each part's ``(ȳ_i, x̄_i, β_i)``
        (:func:`centred_part_statistics`, dimension ``2k + 1``) and set the intercept to
        ``ȳ − x̄·β`` from the released vector, instead of releasing ``(intercept, β)``
        (dimension ``k + 1``).  The intercept then does not carry the slopes' error times
        the mean of ``X``: on the real sets with ``n ≥ 2000`` this raised the test R² in 9
        of 12 cells (benchmarks/tukey/centring.py).  Ignored without an intercept.

    Returns
    -------
    TukeyResult

    Raises
    ------
    PTRRefusedError
        The test refused (or, before the data is read, cannot pass with ``m`` models).
        Nothing is released.

    Notes
    -----
    Neighbours: replace one row (``n`` public; default) or add/remove one row; either way
    one of the ``m`` part models changes (a *replaced model*).  Sensitivity: the
    approximate Tukey depth and the test's distance bound ``A`` move by at most 1.
    Budget: ``ε_m = m_fraction · ε`` for the bound on ``n`` (add/remove with ``m=None``
    only), the rest split 40 % to the test (``ε_ptr``, Laplace noise on ``A``) and 60 %
    to the exponential mechanism (``ε_em``, density ``∝ exp(ε_em T_D / 2)``).  Target
    depth: :func:`target_depth`.
    Guarantee: **(ε, δ)-DP**, proven, no data bounds (docs/privacy.md, "The Tukey mechanism
    (`tukey_regression`)").

    Examples
    --------
    >>> import numpy as np
    >>> from mipdp.tukey import tukey_regression
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(20_000, 2))
    >>> y = X @ np.array([1.0, -2.0]) + 0.5 + rng.normal(size=20_000)
    >>> res = tukey_regression(X, y, eps=1.0, delta=1e-5, random_state=0)
    >>> bool(np.allclose(res.coef, [1.0, -2.0], atol=0.1)), res.m
    (True, 368)
    """
    from ._validation import check_random_state, check_X_y, min_samples
    add_remove = neighbours == "add_remove"
    nb = Neighbour.ADD_REMOVE if add_remove else Neighbour.REPLACE_ONE
    private_m = m is None and add_remove
    eps_m = m_fraction * eps if private_m else 0.0
    eps_t = eps - eps_m
    eps_ptr, eps_em = PTR_SHARE * eps_t, (1.0 - PTR_SHARE) * eps_t
    g_tukey = Guarantee.approximate(
        eps_t, delta, nb,
        "Tukey mechanism: propose-test-release on the models' approximate Tukey depth, then "
        "the exponential mechanism on the region at least the target depth deep",
        sensitivity=1.0,
        notes=(f"eps_ptr = {eps_ptr:.4g} (Laplace on the distance bound), eps_em = "
               f"{eps_em:.4g} (density exp(eps_em * depth / 2)); one row changes one model; "
               "no data bounds"))
    guarantee = g_tukey
    if private_m:
        guarantee = Guarantee.pure(eps_m, nb, "Laplace lower bound on n (chooses m)",
                                   sensitivity=1.0) + g_tukey
    # a public m (given, or from the public n under replace-one): refuse before reading the
    # data (the shape is public metadata, not the values)
    early = refusal_before_reading(np.shape(X), eps_t, delta, m=m, fit_intercept=fit_intercept,
                                   centred=centred, neighbours=neighbours)
    if early is not None:
        raise early
    use_centred = bool(centred and fit_intercept)
    acc = check_release(accountant, guarantee)
    X, y = check_X_y(X, y, min_samples=min_samples(add_remove))
    rng = check_random_state(random_state)
    n, k = X.shape
    d = k + int(fit_intercept)
    dim = 2 * k + 1 if use_centred else d
    n_bound = None
    if m is None:
        if private_m:
            n_bound = private_n_lower_bound(n, eps_m, random_state=rng)
            m_used = models_for_rows(n_bound, d, eps_ptr, eps_em, delta, dim=dim)
            source = "private n lower bound"
        else:
            m_used = models_for_rows(n, d, eps_ptr, eps_em, delta, dim=dim)
            source = "n"
    else:
        m_used = int(m)
        source = "given"
    d_fixed = d
    t = target_depth(max(m_used, 1), eps_ptr, delta)
    info: dict = {"m_source": source, "eps_m": eps_m, "eps_ptr": eps_ptr, "eps_em": eps_em,
                  "n_lower_bound": n_bound, "target_depth": t,
                  "coordinates": "centred (ybar, xbar, slopes)" if use_centred
                  else ("(intercept, slopes)" if fit_intercept else "slopes")}

    def refuse(what: str):
        record_release(acc, _Refused(guarantee))
        return _refusal(what, m=m_used, d=d_fixed, eps_ptr=eps_ptr, eps_em=eps_em, delta=delta,
                        read=True, dim=dim)

    if m_used < 4 or _pass_bound(m_used, eps_ptr, delta) < 0.5:   # from a private n bound
        raise refuse(f"the private lower bound on n gives m = {m_used} models, too few for "
                     "the test to pass with probability 1/2 whatever the data.")
    labels = split_parts(n, m_used, rng, add_remove=add_remove)
    if use_centred:
        models = centred_part_statistics(X, y, labels, m_used)
    else:
        Z = np.hstack([np.ones((n, 1)), X]) if fit_intercept else X
        models = fit_part_models(Z, y, labels, m_used)
        del Z
    levels = tukey_levels(models)
    dist = ptr_distance(levels, t, eps_em, delta)
    noisy = dist + rng.laplace(0.0, 1.0 / eps_ptr)
    if noisy < _threshold(eps_ptr, delta):
        raise refuse("the noisy test of the models' agreement failed.")
    beta = sample_tukey(levels, t, eps_em, rng)
    if use_centred:
        coef = beta[k + 1:].copy()
        with np.errstate(over="ignore", invalid="ignore"):
            intercept = float(beta[0] - beta[1:k + 1] @ coef)
        if not math.isfinite(intercept):        # post-processing of the release
            intercept = 0.0
    elif fit_intercept:
        coef, intercept = beta[1:].copy(), float(beta[0])
    else:
        coef, intercept = beta.copy(), 0.0
    return record_release(acc, TukeyResult(coef=coef, intercept=intercept, m=m_used,
                                           guarantee=guarantee, info=info))


@dataclass(frozen=True)
class _Refused:
    """What the accountant records when the test refuses (the refusal is an output)."""

    guarantee: Guarantee
