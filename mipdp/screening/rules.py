"""Raj et al.'s safe screening rule on the λ-ℓ1 ball and its private versions.

The rule (Raj, Olbrich, Gärtner, Schölkopf & Jaggi 2016; Khanna et al. (2025) eq. (1)) for
``min_{||w||_1 <= λ} f(Xw)``, ``f`` ``L``-smooth and ``μ``-strongly convex, at any ``w ∈ C``
with ``u = Xw`` and Wolfe gap ``G(w) = max_{z∈C} ⟨Xw − Xz, ∇f(u)⟩ = ⟨w, g⟩ + λ||g||_∞``
(``g = Xᵀ∇f(u)``):

    s_i(w) = λ |x_(i)ᵀ∇f(u)| + uᵀ∇f(u) + L (λ ||x_(i)||_2 + ||u||_2) √(G(w)/μ)
    s_i(w) < 0   ⇒   w*_i = 0 for every minimiser w*.

Proof sketch (ours). ``u* = Xw*`` is unique. Strong monotonicity and the optimality of
``w*`` give ``μ||u − u*||² <= ⟨∇f(u) − ∇f(u*), u − u*⟩ <= G(w)``, so ``||u − u*|| <= r =
√(G/μ)`` and ``||∇f(u) − ∇f(u*)|| <= L r``. At the optimum ``⟨w*, g*⟩ = −λ||g*||_∞`` and
``w*_i ≠ 0`` forces ``|g*_i| = ||g*||_∞``; hence ``λ|g*_i| + ⟨u*, ∇f(u*)⟩ < 0`` implies
``w*_i = 0``. Bounding both terms at ``u*`` by their values at ``u`` (using
``⟨u* − u, ∇f(u*)⟩ <= 0``) gives ``s_i``.

Khanna et al. (2025) write eq. (1) without ``λ`` on the column terms: that is the rule for
the unit ball (``λ = 1``); for ``λ > 1`` it screens coefficients that are non-zero at the
optimum (at ``w = w*`` it reads ``|g*_i| − λ||g*||_∞ < 0`` for every ``i``). We use the
λ-scaled rule above; with ``λ = 1`` the two coincide.

Writing ``L = κ_L/n``, ``μ = κ_μ/n`` (:mod:`.losses`), the last term is
``κ (λ c_i + m) √G`` with ``κ = κ_L/√κ_μ``, ``c_i = ||x_(i)||/√n``, ``m = ||u||/√n``.

Private versions (both run inside DP Frank-Wolfe, :mod:`.frank_wolfe`):

* **ADP-Screen** (Khanna et al. (2025) Algorithm 1): at chosen iterations add ``N(0, σ² I)`` to the
  whole score vector and zero every coefficient whose noisy score is ``< 0``.
* **RNM-Screen** (Khanna et al. (2025) Algorithm 2): every iteration pick ``j`` by report-noisy-min
  (Laplace) over the scores and zero it if its noisy score is ``< 0``.

Sensitivity of ``s_i`` (per coordinate), ``calibration="rigorous"`` (replace-one, ``n``
public, data clipped to ``|x_ij| <= b_x``, ``|y_i| <= b_y``, ``Γ`` from :mod:`.losses`)::

    λ|g_i|        : 2λ b_x Γ / n
    ⟨w, g⟩        : 2λ b_x Γ / n
    κ(λc_i+m)√G   : κ [ P_max √ΔG + √G_max ΔP ] = κ (2 + √2) · 2λ b_x √(λ b_x Γ / n)
                    (P = λc_i + m <= 2λb_x, ΔP <= 2λb_x/√n, 0 <= G <= 2λb_xΓ, ΔG <= 4λb_xΓ/n,
                     |√a − √b| <= √|a − b|, |PQ − P'Q'| <= P_max|Q − Q'| + Q_max|P − P'|)

``calibration="seed"`` uses Khanna et al.'s ``Δ = 2λ/n + 2λ²/n + 2λ(1+λ)/n`` (squared loss) and
Khanna et al.'s (2023) logistic one. Their third term bounds the sensitivity of a product by the
product of the sensitivities, which is not a valid bound (the product of a ``Θ(λ)`` factor
and a ``√G`` factor whose change is ``Θ(λ/√n)``); the test-suite exhibits neighbouring
datasets that violate it. That mode exists only to reproduce the seeds.
"""

from __future__ import annotations

import logging
import math
import numbers
import time
from collections.abc import Iterable
from typing import Literal

import numpy as np
from scipy.optimize import brentq
from scipy.special import expit

from .._param_validation import validate_params
from .._validation import check_positive
from ..accounting import cancels_on_error, check_release, record_release
from .frank_wolfe import (
    CONSTRAINTS,
    NEIGHBOUR,
    NoiseCalibration,
    ScreeningResult,
    _check_calibration,
    _check_eps_delta,
    _check_n,
    _check_n_iter,
    _finish,
    _frank_wolfe_core,
    _planned,
    _pure_rounds,
    _Screener,
    _setup,
    advanced_composition,
    fw_noise,
)
from .losses import Loss, get_loss, prepare_data

__all__ = ["screening_scores", "safe_screen", "score_sensitivity", "rnm_noise", "adp_noise",
           "adp_screen", "rnm_screen"]

logger = logging.getLogger(__name__)


# ========================================================================== the scores
def _scores(colnorms: np.ndarray, w: np.ndarray, u: np.ndarray, g: np.ndarray, l1_radius: float,
            loss: Loss, b_x: float, n: int) -> np.ndarray:
    """Vectorised ``s_i`` from the state (``colnorms = ||x_(i)||_2``, ``u = Xw``, ``g = ∇F(w)``)."""
    inner = float(w @ g)                                       # = uᵀ∇f(u)
    gap = max(inner + l1_radius * float(np.max(np.abs(g))), 0.0)  # Wolfe gap G(w) >= 0
    s = l1_radius * np.abs(g) + inner
    if gap > 0.0:
        kappa_mu = loss.kappa_strong(b_x, l1_radius)
        coef = math.inf if kappa_mu == 0.0 else loss.kappa_smooth / math.sqrt(n * kappa_mu)
        s = s + coef * math.sqrt(gap) * (l1_radius * colnorms + float(np.linalg.norm(u)))
    return s


def _rounding_slack(w: np.ndarray, g: np.ndarray, l1_radius: float) -> float:
    """Margin for the exact (non-private) test ``s_i < −slack``.

    At the optimum the active coordinates have ``s_i = 0`` exactly; rounding (or a point a
    hair outside the ball) can push them to ``−1e-16``. Private decisions need no margin.
    """
    return 1e-9 * (l1_radius * float(np.max(np.abs(g))) + abs(float(w @ g)))


def _scores_at(X, y, w, l1_radius, loss, bounds):
    """Validate, clip and return ``(s(w), w, ∇F(w))``."""
    loss = get_loss(loss)
    l1_radius = check_positive(l1_radius, "l1_radius")
    Xc, yc, b_x, _ = prepare_data(X, y, loss, bounds)
    w = np.asarray(w, dtype=np.float64)
    if w.shape != (Xc.shape[1],):
        raise ValueError(f"w: expected shape ({Xc.shape[1]},), got {w.shape}")
    if np.abs(w).sum() > l1_radius * (1 + 1e-9):
        raise ValueError(f"w: ||w||_1 = {np.abs(w).sum():g} exceeds l1_radius = {l1_radius:g}")
    u = Xc @ w
    g = (loss.derivative(u, yc) / Xc.shape[0]) @ Xc    # divided first: never overflows
    s = _scores(np.linalg.norm(Xc, axis=0), w, u, g, l1_radius, loss, b_x, Xc.shape[0])
    return s, w, g


@validate_params(shared=CONSTRAINTS)
def screening_scores(X, y, w, l1_radius: float, loss: str | Loss = "squared",
                     bounds: tuple[float, float] | float | None = (1.0, 1.0)) -> np.ndarray:
    """The (non-private) screening scores ``s_i(w)`` of all features, vectorised.

    ``s_i(w) < 0`` certifies that coefficient ``i`` is zero in every minimiser of
    ``F`` over ``{||w||_1 <= λ}`` (see the module docstring for the formula and proof).

    Parameters
    ----------
    X : array-like of shape (n, p)
    y : array-like of shape (n,)
    w : array-like of shape (p,)
        Any point of the ball.
    l1_radius : float
        ``λ``.
    loss : {"squared", "logistic"} or Loss
    bounds : (float, float) or float or None
        Clipping bounds ``(b_x, b_y)`` (the problem is the one on the clipped data;
        ``b_x`` also sets the logistic strong-convexity constant ``σ(b_xλ)σ(−b_xλ)``).

    Returns
    -------
    ndarray of shape (p,)

    Notes
    -----
    Non-private: this function adds no noise. Neighbour notion, sensitivity, noise scale and
    (ε, δ) are those of :func:`adp_screen` / :func:`rnm_screen`, which privatise it; its
    per-coordinate sensitivity is :func:`score_sensitivity`.
    """
    return _scores_at(X, y, w, l1_radius, loss, bounds)[0]


@validate_params(shared=CONSTRAINTS)
def safe_screen(X, y, w, l1_radius: float, loss: str | Loss = "squared",
                bounds: tuple[float, float] | float | None = (1.0, 1.0)) -> np.ndarray:
    """Indices the exact (non-private) rule removes at ``w``: ``{i : s_i(w) < 0}``.

    Same parameters as :func:`screening_scores`. The test is ``s_i < −10⁻⁹·(λ||g||_∞ +
    |⟨w, g⟩|)`` so that rounding cannot remove a coefficient sitting exactly on the boundary
    ``s_i = 0`` (the active coefficients at the optimum).

    Notes
    -----
    Non-private: no noise and no guarantee (neighbour notion, sensitivity, noise scale and
    composition of the private versions: :func:`adp_screen`, :func:`rnm_screen`).
    """
    s, w, g = _scores_at(X, y, w, l1_radius, loss, bounds)
    return np.flatnonzero(s < -_rounding_slack(w, g, float(l1_radius)))


# ===================================================================== sensitivities
@validate_params(shared=CONSTRAINTS)
def score_sensitivity(n: int, l1_radius: float, loss: str | Loss = "squared",
                      bounds: tuple[float, float] = (1.0, 1.0),
                      calibration: Literal["rigorous", "seed"] = "rigorous") -> dict:
    """Per-coordinate sensitivity ``Δ`` of the screening score ``s_i``, uniformly over ``w ∈ C``.

    Neighbour notion: replace-one, ``n`` public (``"rigorous"``); add/remove-one as claimed
    by the seeds (``"seed"``).

    Sensitivity (rigorous): ``Δ = 4λb_xΓ/n + κ(2+√2)·2λb_x·√(λb_xΓ/n)``, ``κ = κ_L/√κ_μ``
    (squared: ``Γ = b_xλ + b_y``, ``κ = 1``; logistic: ``Γ = σ(b_xλ)``,
    ``κ = 1/(4√(σ(b_xλ)σ(−b_xλ)))``). Seed: squared ``2λ/n + 2λ²/n + 2λ(1+λ)/n``; logistic
    ``2σ(λ)/n + 2λσ(λ)/n + (1+λ)/(4n)·√(4λ/(1−σ(λ)))``.

    Noise scale, (ε, δ), composition: not applicable here (see :func:`rnm_noise`,
    :func:`adp_noise`).

    Returns
    -------
    dict
        ``"per_coordinate"`` (``Δ``) and ``"components"`` (the three terms).
    """
    calibration = _check_calibration(calibration)
    loss = get_loss(loss)
    n = _check_n(n)
    lam = check_positive(l1_radius, "l1_radius")
    b_x, b_y = bounds
    if calibration == "seed":
        if loss.name == "squared":
            comps = {"abs_gradient": 2 * lam / n, "inner": 2 * lam ** 2 / n,
                     "gap_term": (1 + lam) / n * math.sqrt((4 * lam ** 2 / n) / (1 / n))}
        else:
            sig = float(expit(lam))
            comps = {"abs_gradient": 2 * sig / n, "inner": 2 * lam * sig / n,
                     "gap_term": (1 + lam) / (4 * n) * math.sqrt((4 * lam * sig / n)
                                                                 / (sig * (1 - sig) / n))}
    else:
        gam = loss.derivative_bound(b_x, b_y, lam)
        kappa_mu = loss.kappa_strong(b_x, lam)
        kappa = math.inf if kappa_mu == 0.0 else loss.kappa_smooth / math.sqrt(kappa_mu)
        comps = {"abs_gradient": 2 * lam * b_x * gam / n, "inner": 2 * lam * b_x * gam / n,
                 "gap_term": kappa * (2 + math.sqrt(2)) * 2 * lam * b_x
                 * math.sqrt(lam * b_x * gam / n)}
    return {"per_coordinate": float(sum(comps.values())), "components": comps}


@validate_params(shared=CONSTRAINTS)
def rnm_noise(n: int, l1_radius: float, n_iter: int, eps: float, delta: float | None,
              loss: str | Loss = "squared", bounds: tuple[float, float] = (1.0, 1.0),
              calibration: Literal["rigorous", "seed"] = "rigorous") -> NoiseCalibration:
    """Noise of RNM-Screen's per-iteration report-noisy-min.

    Neighbour notion: replace-one, ``n`` public (rigorous); add/remove-one as claimed by
    Khanna et al. (2025) (seed).

    Sensitivity: ``Δ`` per score from :func:`score_sensitivity`.

    Noise scale: ``ε_iter = ε/√(8T log(1/δ))`` (Khanna et al. (2025) Algorithm 2, line 1) and

    * seed: ``b = Δ/ε_iter`` with the paper's ``Δ = 2λ/n + 2λ²/n + 2λ(1+λ)/n``; the same noisy
      score decides ``< 0``;
    * rigorous: the round is split in two ``ε_iter/2`` halves: report-noisy-min with
      ``b_sel = 2Δ/(ε_iter/2) = 4Δ/ε_iter`` (non-monotone scores) releases ``j``, then a fresh
      Laplace mechanism ``s_j + Lap(b_thr)``, ``b_thr = Δ/(ε_iter/2) = 2Δ/ε_iter``, decides
      ``< 0``. (Reusing the selection noise, as the seed does, also releases whether the
      noisy minimum is negative; report-noisy-min's proof does not cover that event, whose
      probability is a product over all ``p`` coordinates.)

    (ε, δ) and composition: each iteration is ``ε_iter``-DP; ``T`` iterations compose by
    advanced composition to ``(ε, δ)`` (rigorous: verified, with the same fallbacks as
    :func:`~mipdp.screening.frank_wolfe.fw_noise`).

    Returns
    -------
    NoiseCalibration
    """
    calibration = _check_calibration(calibration)
    n_iter = _check_n_iter(n_iter)
    eps, delta = _check_eps_delta(eps, delta, "eps_screen", "delta_screen")
    sens = score_sensitivity(n, l1_radius, loss, bounds, calibration)["per_coordinate"]
    if calibration == "seed":
        formula = ("b = Δ/ε_iter, Δ = 2λ/n + 2λ²/n + 2λ(1+λ)/n "
                   "(Khanna et al. (2025) Alg. 2; Khanna et al. (2023) for logistic)")
        mech = "report-noisy-min over the p scores (Laplace); zero j if its noisy score < 0"
    else:
        formula = "b_sel = 4Δ/ε_iter, b_thr = 2Δ/ε_iter, Δ from score_sensitivity (replace-one)"
        mech = ("report-noisy-min over the p scores (Laplace, ε_iter/2) then a fresh Laplace "
                "test s_j + Lap < 0 (ε_iter/2)")
    if math.isinf(eps):
        return NoiseCalibration("screening", "exact argmin, zero it if s_j < 0 (non-private)",
                                NEIGHBOUR[calibration], sens, math.inf, 0.0, n_iter, math.inf,
                                0.0, 0.0, None if calibration == "seed" else 0.0, math.inf,
                                "none (eps = inf)", formula)
    assert delta is not None  # a finite eps comes with a delta
    eps_iter, eps_comp, delta_used, text = _pure_rounds(eps, delta, n_iter, calibration)
    if calibration == "seed":
        scale, thr = sens / eps_iter, None
    else:
        scale, thr = 4.0 * sens / eps_iter, 2.0 * sens / eps_iter
    return NoiseCalibration("screening", mech, NEIGHBOUR[calibration], sens, eps, delta_used,
                            n_iter, eps_iter, 0.0, scale, thr, eps_comp, text, formula)


def _gaussian_sigma(sens2: float, eps_i: float, delta_i: float) -> float:
    return sens2 * math.sqrt(2.0 * math.log(1.25 / delta_i)) / eps_i


@validate_params(shared=CONSTRAINTS)
def adp_noise(n: int, n_features: int, l1_radius: float, n_screens: int, eps: float,
              delta: float | None, loss: str | Loss = "squared",
              bounds: tuple[float, float] = (1.0, 1.0),
              calibration: Literal["rigorous", "seed"] = "rigorous") -> NoiseCalibration:
    """Gaussian noise of ADP-Screen (Khanna et al. (2025) Algorithm 1, lines 1–4).

    Neighbour notion: replace-one, ``n`` public (rigorous); add/remove-one as claimed (seed).

    Sensitivity: ℓ2-sensitivity of the whole score vector ``Δ2 = √p · Δ`` (``Δ`` per
    coordinate from :func:`score_sensitivity`; Khanna et al. (2025) eq. (3) is the same product).

    Noise scale: ``l = n_screens``, ``δ_iter = δ/(l+1)``, ``ε_iter = ε/(2√(2l log(1/δ_iter)))``,
    ``σ = Δ2 √(2 log(1.25/δ_iter)) / ε_iter`` (classic Gaussian mechanism, needs
    ``ε_iter < 1``). Rigorous: the advanced-composition bound is verified (``ε_iter`` solved
    exactly if not), and basic composition ``(ε/l, δ/l)`` per screen is used when it gives a
    smaller ``σ``.

    (ε, δ) and composition: each screen is ``(ε_iter, δ_iter)``-DP; ``l`` screens compose by
    advanced composition with slack ``δ_iter`` to ``(ε, l δ_iter + δ_iter) = (ε, δ)``.

    Returns
    -------
    NoiseCalibration
    """
    calibration = _check_calibration(calibration)
    if isinstance(n_screens, bool) or not isinstance(n_screens, numbers.Integral) or n_screens < 1:
        raise ValueError(f"n_screens: expected a positive integer, got {n_screens!r}")
    n_it = int(n_screens)
    eps, delta = _check_eps_delta(eps, delta, "eps_screen", "delta_screen")
    sens2 = math.sqrt(n_features) * score_sensitivity(n, l1_radius, loss, bounds,
                                                      calibration)["per_coordinate"]
    formula = "σ = Δ2·√(2 log(1.25/δ_iter))/ε_iter, Δ2 = √p·Δ"
    mech = "Gaussian noise on all p scores; zero every j with noisy score < 0"
    if math.isinf(eps):
        return NoiseCalibration("screening", "exact rule: zero every j with s_j < 0 (non-private)",
                                NEIGHBOUR[calibration], sens2, math.inf, 0.0, n_it, math.inf, 0.0,
                                0.0, None, math.inf, "none (eps = inf)", formula)
    d_it = delta / (n_it + 1)
    e_it = eps / (2.0 * math.sqrt(2.0 * n_it * math.log(1.0 / d_it)))
    text = (f"δ_iter = δ/(l+1), ε_iter = ε/(2√(2l log(1/δ_iter))) = {e_it:.6g}; advanced "
            f"composition over l = {n_it} screens with slack δ_iter")
    basic = False
    if calibration == "rigorous":
        if advanced_composition(e_it, n_it, d_it) > eps:
            e_it = brentq(lambda e: advanced_composition(e, n_it, d_it) - eps, 0.0, e_it,
                          xtol=1e-15)
            text = f"ε_iter = {e_it:.6g} solves the advanced composition bound = ε over l = {n_it}"
        if eps / n_it < 1.0 and (e_it >= 1.0
                                 or _gaussian_sigma(sens2, eps / n_it, delta / n_it)
                                 < _gaussian_sigma(sens2, e_it, d_it)):
            e_it, d_it, basic = eps / n_it, delta / n_it, True
            text = f"ε_iter = ε/l, δ_iter = δ/l; basic composition over l = {n_it} screens"
    if e_it >= 1.0:
        raise ValueError(f"eps_screen: the per-screen ε_iter = {e_it:.3g} is >= 1, outside the "
                         "range of the classic Gaussian mechanism; lower eps_screen or screen "
                         "more often")
    eps_comp = eps if basic else advanced_composition(e_it, n_it, d_it)
    return NoiseCalibration("screening", mech, NEIGHBOUR[calibration], sens2, eps, delta, n_it,
                            e_it, d_it, _gaussian_sigma(sens2, e_it, d_it), None, eps_comp,
                            text, formula)


# ========================================================================== screeners
class _ScoreScreener(_Screener):
    def __init__(self, X: np.ndarray, loss: Loss, l1_radius: float, b_x: float):
        self.colnorms = np.linalg.norm(X, axis=0)
        self.loss, self.l1_radius, self.b_x, self.n = loss, l1_radius, b_x, X.shape[0]

    def scores(self, w, u, g):
        return _scores(self.colnorms, w, u, g, self.l1_radius, self.loss, self.b_x, self.n)


class _ADPScreener(_ScoreScreener):
    def __init__(self, X, loss, l1_radius, b_x, iterations: set[int], sigma: float):
        super().__init__(X, loss, l1_radius, b_x)
        self.iterations, self.sigma = iterations, sigma

    def active(self, t):
        return t in self.iterations

    def __call__(self, w, u, g, rng):
        s = self.scores(w, u, g)
        if self.sigma == 0.0:
            return np.flatnonzero(s < -_rounding_slack(w, g, self.l1_radius))
        return np.flatnonzero(s + rng.normal(0.0, self.sigma, s.size) < 0.0)


class _RNMScreener(_ScoreScreener):
    def __init__(self, X, loss, l1_radius, b_x, scale: float, threshold_scale: float | None):
        super().__init__(X, loss, l1_radius, b_x)
        self.scale, self.threshold_scale = scale, threshold_scale

    def active(self, t):
        return True

    def __call__(self, w, u, g, rng):
        s = self.scores(w, u, g)
        if self.scale == 0.0:
            j = int(np.argmin(s))
            below = s[j] < -_rounding_slack(w, g, self.l1_radius)
        else:
            noisy = s + rng.laplace(0.0, self.scale, s.size)
            j = int(np.argmin(noisy))
            if self.threshold_scale is None:           # Khanna et al.: reuse the selection noise
                below = noisy[j] < 0.0
            else:                                      # rigorous: fresh noise for the test
                below = s[j] + rng.laplace(0.0, self.threshold_scale) < 0.0
        return np.array([j]) if below else np.empty(0, dtype=np.int64)


def _screen_iterations(n_iter: int, screen_every, screen_at) -> list[int]:
    if screen_at is not None:
        try:
            its = sorted({int(t) for t in screen_at})
        except (TypeError, ValueError) as exc:
            raise ValueError("screen_at: expected iteration numbers in 1..n_iter, "
                             f"got {screen_at!r}") from exc
        if not its or its[0] < 1 or its[-1] > n_iter:
            raise ValueError(f"screen_at: iterations must lie in 1..{n_iter}, got {screen_at!r}")
        return its
    if isinstance(screen_every, bool) or not isinstance(screen_every, numbers.Integral) \
            or not 1 <= int(screen_every) <= n_iter:
        raise ValueError(f"screen_every: expected an integer in 1..n_iter = {n_iter}, "
                         f"got {screen_every!r}")
    return list(range(int(screen_every), n_iter + 1, int(screen_every)))


# ======================================================================== public API
@validate_params(shared=CONSTRAINTS)
@cancels_on_error
def adp_screen(X, y, l1_radius: float, n_iter: int = 1000, eps_opt: float = 1.0,
               delta_opt: float | None = None, eps_screen: float = 1.0,
               delta_screen: float | None = None, loss: str | Loss = "squared",
               screen_every: int = 50, screen_at: Iterable[int] | None = None,
               bounds: tuple[float, float] | float | None = (1.0, 1.0),
               calibration: Literal["rigorous", "seed"] = "rigorous",
               init: str | np.ndarray = "zero", random_state=None,
               return_path: bool = False, accountant=None) -> ScreeningResult:
    """ADP-Screen: DP Frank-Wolfe with Gaussian-noised screening of all features (Khanna et al.).

    After the Frank-Wolfe step of each screening iteration ``t ∈ I`` the score vector
    ``s(w_t) + N(0, σ² I)`` is released and every coefficient with a negative noisy score is
    set to zero. ``I`` = multiples of ``screen_every`` (or ``screen_at``), fixed in advance.

    Parameters
    ----------
    X, y, l1_radius, n_iter, loss, bounds, calibration, init, random_state, return_path
        As in :func:`~mipdp.screening.dp_frank_wolfe`.
    eps_opt, delta_opt : float
        ``(ε1, δ1)`` of the optimizer (``eps_opt = inf``: non-private Frank-Wolfe).
    eps_screen, delta_screen : float
        ``(ε2, δ2)`` of the screening (``eps_screen = inf``: the exact safe rule).
    screen_every : int, default 50
    screen_at : iterable of int, optional
        Explicit screening iterations in ``1..n_iter`` (overrides ``screen_every``).
    accountant : BudgetAccountant, optional
        Checks the planned guarantee before the data is read and records the release.

    Returns
    -------
    ScreeningResult

    Notes
    -----
    Neighbour notion: replace-one, ``n`` public (``"rigorous"``); ``"seed"`` reproduces the
    seeds' formulas, which claim add/remove-one without a valid sensitivity bound.

    Sensitivity: optimizer ``Δ = 2λL1/n`` per vertex score (:func:`fw_noise`); screening
    ℓ2-sensitivity ``Δ2 = √p·Δ_s`` with ``Δ_s`` from :func:`score_sensitivity`.

    Noise scale: optimizer Laplace ``b`` of :func:`fw_noise`; screening
    ``σ = Δ2 √(2 log(1.25/δ_iter))/ε_iter``, ``δ_iter = δ2/(l+1)``,
    ``ε_iter = ε2/(2√(2l log(1/δ_iter)))``, ``l = |I|`` (:func:`adp_noise`).

    (ε, δ) and composition: the optimizer is ``(ε1, δ1)``-DP (advanced composition over
    ``T`` picks), the screening ``(ε2, δ2)``-DP (advanced composition over ``l`` Gaussian
    releases); the zeroing is post-processing; the whole is ``(ε1+ε2, δ1+δ2)``-DP by basic
    composition (Khanna et al. (2025) Lemma 2).
    """
    t0 = time.perf_counter()
    its = _screen_iterations(n_iter, screen_every, screen_at)
    acc = check_release(accountant, _planned(
        calibration, bounds, loss,
        fw_noise(1, l1_radius, n_iter, eps_opt, delta_opt, loss, (1.0, 1.0), calibration),
        adp_noise(1, 1, l1_radius, len(its), eps_screen, delta_screen, loss, (1.0, 1.0),
                  calibration)))
    Xc, yc, loss, l1_radius, n_iter, rng, w0, calibration, info = _setup(
        X, y, loss, l1_radius, n_iter, bounds, calibration, init, random_state)
    assert isinstance(loss, Loss)  # resolved by _setup
    n, p = Xc.shape
    cal_fw = fw_noise(n, l1_radius, n_iter, eps_opt, delta_opt, loss, info["bounds"], calibration)
    cal_s = adp_noise(n, p, l1_radius, len(its), eps_screen, delta_screen, loss, info["bounds"],
                      calibration)
    info["screen_iterations"] = its
    screener = _ADPScreener(Xc, loss, l1_radius, info["bounds"][0], set(its), cal_s.scale)
    core = _frank_wolfe_core(Xc, yc, loss, l1_radius, n_iter, cal_fw.scale, rng, w0, screener,
                             return_path)
    res = _finish("adp_screen", core, loss, l1_radius, n_iter, calibration,
                  {"optimizer": cal_fw, "screening": cal_s}, time.perf_counter() - t0, info,
                  bounds)
    logger.info("adp_screen: %d non-zero of %d, %d coefficients screened over %d screens (%.2fs)",
                res.n_nonzero, p, res.n_screen_events, len(its), res.timings["total"])
    return record_release(acc, res)


@validate_params(shared=CONSTRAINTS)
@cancels_on_error
def rnm_screen(X, y, l1_radius: float, n_iter: int = 1000, eps_opt: float = 1.0,
               delta_opt: float | None = None, eps_screen: float = 1.0,
               delta_screen: float | None = None, loss: str | Loss = "squared",
               bounds: tuple[float, float] | float | None = (1.0, 1.0),
               calibration: Literal["rigorous", "seed"] = "rigorous",
               init: str | np.ndarray = "zero", random_state=None,
               return_path: bool = False, accountant=None) -> ScreeningResult:
    """RNM-Screen: DP Frank-Wolfe that privately screens one coefficient per iteration.

    Khanna et al. (2025), Alg. 2: after every Frank-Wolfe step, report-noisy-min picks the feature
    ``j`` with the smallest noisy screening score and sets ``w_j = 0`` if its noisy score is
    ``< 0``.

    Parameters
    ----------
    X, y, l1_radius, n_iter, loss, bounds, calibration, init, random_state, return_path
        As in :func:`~mipdp.screening.dp_frank_wolfe`.
    eps_opt, delta_opt : float
        ``(ε1, δ1)`` of the optimizer (``eps_opt = inf``: non-private Frank-Wolfe).
    eps_screen, delta_screen : float
        ``(ε2, δ2)`` of the screening (``eps_screen = inf``: zero the exact argmin if negative).
    accountant : BudgetAccountant, optional
        Checks the planned guarantee before the data is read and records the release.

    Returns
    -------
    ScreeningResult

    Notes
    -----
    Neighbour notion: replace-one, ``n`` public (``"rigorous"``); ``"seed"`` reproduces the
    seeds' formulas, which claim add/remove-one without a valid sensitivity bound.

    Sensitivity: optimizer ``Δ = 2λL1/n`` per vertex score (:func:`fw_noise`); screening
    ``Δ_s`` per score (:func:`score_sensitivity`; seed: ``2λ/n + 2λ²/n + 2λ(1+λ)/n``).

    Noise scale: ``ε_iter = ε2/√(8T log(1/δ2))``; seed ``b = Δ_s/ε_iter``; rigorous
    ``b_sel = 4Δ_s/ε_iter`` for the pick and a fresh ``Lap(2Δ_s/ε_iter)`` for the ``< 0``
    test (:func:`rnm_noise`).

    (ε, δ) and composition: each screening round is ``ε_iter``-DP and ``T`` rounds compose
    by advanced composition to ``(ε2, δ2)``; the optimizer is ``(ε1, δ1)``-DP; the whole is
    ``(ε1+ε2, δ1+δ2)``-DP by basic composition (Khanna et al. (2025) Lemma 3).
    """
    t0 = time.perf_counter()
    acc = check_release(accountant, _planned(
        calibration, bounds, loss,
        fw_noise(1, l1_radius, n_iter, eps_opt, delta_opt, loss, (1.0, 1.0), calibration),
        rnm_noise(1, l1_radius, n_iter, eps_screen, delta_screen, loss, (1.0, 1.0),
                  calibration)))
    Xc, yc, loss, l1_radius, n_iter, rng, w0, calibration, info = _setup(
        X, y, loss, l1_radius, n_iter, bounds, calibration, init, random_state)
    assert isinstance(loss, Loss)  # resolved by _setup
    n, p = Xc.shape
    cal_fw = fw_noise(n, l1_radius, n_iter, eps_opt, delta_opt, loss, info["bounds"], calibration)
    cal_s = rnm_noise(n, l1_radius, n_iter, eps_screen, delta_screen, loss, info["bounds"],
                      calibration)
    screener = _RNMScreener(Xc, loss, l1_radius, info["bounds"][0], cal_s.scale,
                            cal_s.threshold_scale)
    core = _frank_wolfe_core(Xc, yc, loss, l1_radius, n_iter, cal_fw.scale, rng, w0, screener,
                             return_path)
    res = _finish("rnm_screen", core, loss, l1_radius, n_iter, calibration,
                  {"optimizer": cal_fw, "screening": cal_s}, time.perf_counter() - t0, info,
                  bounds)
    logger.info("rnm_screen: %d non-zero of %d, %d screening events (%.2fs)", res.n_nonzero, p,
                res.n_screen_events, res.timings["total"])
    return record_release(acc, res)
