"""Differentially private Frank-Wolfe on the λ-ℓ1 ball (Talwar, Thakurta & Zhang 2015).

The problem is ``min_{||w||_1 <= λ} F(w)``, ``F(w) = (1/n) Σ ℓ(x_iᵀw, y_i)``. The ball is the
convex hull of its ``2p`` vertices ``±λ e_j``; Frank-Wolfe moves towards the vertex that
minimises the linearisation ``⟨v, ∇F(w_t)⟩ ∈ {±λ ∂_jF(w_t)}`` with step ``η_t = 2/(t+2)``.
The private version picks that vertex by report-noisy-min (Laplace noise on the ``2p``
scores); everything else is post-processing of the picks.

This module also holds the pieces shared with :mod:`.rules`: the result object
(:class:`ScreeningResult`), the per-part privacy record (:class:`NoiseCalibration`), the
composition helpers and the Frank-Wolfe engine the screening rules plug into.

Two noise calibrations are offered (``calibration=``):

``"rigorous"`` (default)
    Replace-one neighbours with ``n`` public. The vertex score ``±λ ∂_jF(w)`` has
    sensitivity ``Δ = λ · 2 L1 / n`` with ``L1 = b_x Γ`` the loss's ℓ1-Lipschitz constant on
    the clipped domain (:mod:`.losses`). The scores of ``+λe_j`` and ``−λe_j`` move in
    opposite directions, so report-noisy-min needs Laplace scale ``2Δ/ε_iter`` to be
    ``ε_iter``-DP per round (the ``Δ/ε`` scale of Dwork & Roth's Claim 3.9 is for monotone
    counting queries only).
``"seed"``
    The formula of Talwar et al. as Khanna et al. (2023, 2025) use it:
    ``scale = λ L1 √(8T log(1/δ)) / (n ε) = λ L1 / (n ε_iter)`` with ``L1 = 1`` (the
    seeds' stated constant). That is a quarter of the rigorous scale with the true ``L1``
    (51 times smaller still at ``λ = 50``); it is kept to reproduce the seeds, and no
    privacy guarantee is claimed for it.

Both use ``ε_iter = ε/√(8T log(1/δ))``: by the advanced composition theorem, ``T``
``ε_iter``-DP rounds are ``(ε/2 + T ε_iter(e^{ε_iter} − 1), δ)``-DP, which is ``<= ε`` whenever
the second term is ``<= ε/2`` (checked; the rigorous mode solves for ``ε_iter`` exactly when
it is not, and uses basic composition ``ε_iter = ε/T`` when that is larger).
"""

from __future__ import annotations

import logging
import math
import numbers
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, cast

import numpy as np
from scipy.optimize import brentq

from .._param_validation import (
    EPSILON_OR_INF,
    POSITIVE_INT,
    POSITIVE_REAL,
    PROBABILITY_OPEN,
    StrOptions,
    validate_params,
)
from .._validation import (
    bounds_not_private_reason,
    check_positive,
    check_random_state,
    data_derived_bounds,
)
from .._warnings import find_stack_level
from ..accounting import cancels_on_error, check_release, record_release
from ..exceptions import PrivacyLeakWarning
from ..guarantee import Guarantee, Neighbour, compose
from ..result import PrivacyReport
from .losses import SEED_LIPSCHITZ_L1, Loss, SquaredLoss, get_loss, prepare_data

__all__ = ["dp_frank_wolfe", "fw_noise", "ScreeningResult", "NoiseCalibration",
           "advanced_composition", "CALIBRATIONS"]

logger = logging.getLogger(__name__)

CALIBRATIONS = ("rigorous", "seed")
NEIGHBOUR = {
    "rigorous": "replace-one (one row (x_i, y_i) replaced; n fixed and public)",
    "seed": "add/remove-one as stated by Khanna et al. (2023, 2025) (their bounds do not "
            "establish it; see docs/screening.md)",
}
_REFRESH_EVERY = 64  # recompute u = Xw from scratch every so many iterations


# =============================================================================== records
@dataclass(frozen=True)
class NoiseCalibration:
    """How one randomised part (optimizer or screening) was calibrated and accounted.

    Attributes
    ----------
    part : str
        ``"optimizer"`` or ``"screening"``.
    mechanism : str
        The per-round mechanism.
    neighbour : str
        Neighbouring-dataset notion of the sensitivity.
    sensitivity : float
        Per-score sensitivity ``Δ`` (Laplace) or ℓ2-sensitivity ``Δ2`` (Gaussian).
    epsilon, delta : float
        Budget of this part (``delta`` actually used: 0 when basic composition was chosen).
    n_rounds : int
        Number of rounds composed.
    epsilon_iter, delta_iter : float
        Per-round privacy parameters.
    scale : float
        Laplace scale ``b`` or Gaussian ``σ`` of the selection noise (0 when non-private).
    threshold_scale : float or None
        RNM-Screen (rigorous) only: Laplace scale of the fresh noise of the ``< 0`` test.
    epsilon_composed : float
        What the composition theorem gives for ``n_rounds`` rounds at ``epsilon_iter``
        (``<= epsilon`` for the rigorous calibration).
    composition : str
        The composition rule in words.
    formula : str
        The noise-scale formula.
    """

    part: str
    mechanism: str
    neighbour: str
    sensitivity: float
    epsilon: float
    delta: float
    n_rounds: int
    epsilon_iter: float
    delta_iter: float
    scale: float
    threshold_scale: float | None
    epsilon_composed: float
    composition: str
    formula: str

    @property
    def private(self) -> bool:
        """False for the non-private (``eps = inf``) runs."""
        return math.isfinite(self.epsilon)


#: Parameter table shared by DP Frank-Wolfe, the screening rules and their noise helpers.
CONSTRAINTS = {
    "X": "no_validation", "y": "no_validation", "w": "no_validation",
    "n": POSITIVE_INT, "n_features": POSITIVE_INT,
    "l1_radius": POSITIVE_REAL, "n_iter": POSITIVE_INT, "n_screens": POSITIVE_INT,
    "eps": EPSILON_OR_INF, "eps_opt": EPSILON_OR_INF, "eps_screen": EPSILON_OR_INF,
    "delta": [None] + PROBABILITY_OPEN, "delta_opt": [None] + PROBABILITY_OPEN,
    "delta_screen": [None] + PROBABILITY_OPEN,
    "loss": [StrOptions({"squared", "least_squares", "logistic"}), Loss],
    "bounds": ["bounds"], "calibration": [StrOptions(set(CALIBRATIONS))],
    "init": [StrOptions({"zero", "random"}), np.ndarray, list, tuple],
    "random_state": ["random_state"], "return_path": ["boolean"],
    "screen_every": POSITIVE_INT, "screen_at": [None, "no_validation"],
    "accountant": ["accountant"],
}
NEIGHBOUR_OF = {"rigorous": Neighbour.REPLACE_ONE, "seed": Neighbour.ADD_REMOVE}
SEED_NOT_PRIVATE = ("noise calibrated with the papers' formulas (calibration='seed'), whose "
                    "sensitivity bounds are not valid (see docs/screening.md): NO PROVEN "
                    "GUARANTEE")


def part_guarantee(cal: NoiseCalibration, calibration: str) -> Guarantee:
    """The guarantee of one randomised part (optimizer or screening) from its calibration."""
    nb = NEIGHBOUR_OF[calibration]
    if not cal.private:
        return Guarantee.none(f"the {cal.part} ran with eps = inf (non-private)", nb,
                              cal.mechanism, sensitivity=cal.sensitivity)
    return Guarantee.approximate(cal.epsilon, cal.delta, nb, f"{cal.part}: {cal.mechanism}",
                                 sensitivity=cal.sensitivity, notes=cal.composition)


def release_guarantee(parts: dict, calibration: str, bounds, loss) -> Guarantee:
    """Guarantee of a DP Frank-Wolfe / screening run: parts by basic composition, voided by
    the papers' calibration or by bounds read off the data.  Needs no data."""
    g = compose([part_guarantee(c, calibration) for c in parts.values()])
    if calibration == "seed":
        g = g.not_private(SEED_NOT_PRIVATE)
    derived = data_derived_bounds(bounds, need_y=isinstance(get_loss(loss), SquaredLoss))
    if derived:
        g = g.not_private(bounds_not_private_reason(derived))
    return g


@dataclass(repr=False)
class ScreeningResult(PrivacyReport):
    """Output of :func:`dp_frank_wolfe`, :func:`~mipdp.screening.adp_screen` and
    :func:`~mipdp.screening.rnm_screen`.

    It shares its privacy reporting with :class:`~mipdp.result.SelectionResult`
    (:class:`~mipdp.result.PrivacyReport`): ``epsilon``, ``delta``, ``neighbour``,
    ``sensitivity``, ``is_private`` and ``guarantee_proven`` are read off ``guarantee``.

    Attributes
    ----------
    coef_ : ndarray of shape (p,)
        Final iterate ``w_T`` (``||coef_||_1 <= l1_radius``).
    support : ndarray of int
        Sorted indices of the non-zero coefficients.
    method : str
        ``"dp_frank_wolfe"``, ``"adp_screen"`` or ``"rnm_screen"``.
    loss : str
        ``"squared"`` or ``"logistic"``.
    l1_radius : float
        ``λ``.
    n_iter : int
        ``T``, the number of Frank-Wolfe steps.
    guarantee : Guarantee
        The optimizer's and the screening's guarantees by basic composition (its
        ``parts``).  Proven only for finite budgets with the rigorous calibration and
        bounds given by the user; **not private** (``epsilon`` NaN) when a part ran with
        ``eps = inf``, with ``calibration="seed"`` or with ``bounds=None``.
    calibration : str
        ``"rigorous"`` or ``"seed"``.
    composition : str
        How the per-round costs were composed into ``(epsilon, delta)``.
    privacy : dict of str to NoiseCalibration
        ``"optimizer"`` and (for the screening methods) ``"screening"``.
    screened : list of ndarray
        ``screened[t-1]`` = indices the rule set to zero at iteration ``t`` (empty when the
        rule did not run or did not fire).
    fw_coordinates, fw_signs : ndarray of shape (T,)
        The private vertex picks ``sign·λ·e_j`` of every iteration.
    timings : dict
        Seconds: ``"total"``, ``"screening"``.  **Not private**: wall-clock times depend on
        the data.
    coef_path : ndarray of shape (T+1, p) or None
        All iterates (only with ``return_path=True``); private like ``coef_``.
    info : dict
        Further details (bounds used, initialisation, screening iterations).
    """

    coef_: np.ndarray
    support: np.ndarray
    method: str
    loss: str
    l1_radius: float
    n_iter: int
    calibration: str
    guarantee: Guarantee
    composition: str
    privacy: dict
    screened: list
    fw_coordinates: np.ndarray
    fw_signs: np.ndarray
    timings: dict = field(default_factory=dict)
    coef_path: np.ndarray | None = None
    info: dict = field(default_factory=dict)

    @property
    def n_nonzero(self) -> int:
        """Number of non-zero coefficients."""
        return int(self.support.size)

    @property
    def sparsity(self) -> float:
        """Fraction of non-zero coefficients (Khanna et al.'s (2025) "sparsity" column)."""
        return self.n_nonzero / self.coef_.size

    @property
    def n_screen_events(self) -> int:
        """How many coefficients the rule set to zero, summed over iterations."""
        return int(sum(s.size for s in self.screened))

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(method={self.method!r}, loss={self.loss!r}, "
                f"n_nonzero={self.n_nonzero}/{self.coef_.size}, {self._privacy_repr()}, "
                f"calibration={self.calibration!r})")


# ========================================================================== accounting
def advanced_composition(eps_iter: float, n_rounds: int, delta: float) -> float:
    """ε of ``k`` adaptive ``ε_iter``-DP rounds with slack ``δ`` (Dwork, Rothblum & Vadhan 2010).

    ``ε = √(2k log(1/δ)) ε_iter + k ε_iter (e^{ε_iter} − 1)``; the composition is
    ``(ε, δ)``-DP (plus ``k δ_iter`` if the rounds are ``(ε_iter, δ_iter)``-DP).

    Neighbour notion, sensitivity and noise scale: those of the composed rounds (this is
    accounting only). The rounds may be chosen adaptively.
    """
    k = int(n_rounds)
    return math.sqrt(2 * k * math.log(1 / delta)) * eps_iter + k * eps_iter * math.expm1(eps_iter)


def _check_calibration(calibration: str) -> Literal["rigorous", "seed"]:
    if calibration not in CALIBRATIONS:
        raise ValueError(f"calibration: expected one of {CALIBRATIONS}, got {calibration!r}")
    return cast(Literal["rigorous", "seed"], calibration)


def _check_eps_delta(eps, delta, eps_name: str, delta_name: str) -> tuple[float, float | None]:
    eps = check_positive(eps, eps_name, allow_inf=True)
    if math.isinf(eps):
        return eps, None
    if delta is None or isinstance(delta, bool) or not isinstance(delta, numbers.Real):
        raise ValueError(f"{delta_name}: a finite {eps_name} needs a delta in (0, 1), "
                         f"got {delta!r}")
    delta = float(delta)
    if not 0.0 < delta < 1.0:
        raise ValueError(f"{delta_name}: must lie in (0, 1), got {delta}")
    return eps, delta


def _check_n(n) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"n: expected a positive integer number of samples, got {n!r}")
    return int(n)


def _check_n_iter(n_iter) -> int:
    if isinstance(n_iter, bool) or not isinstance(n_iter, numbers.Integral) or n_iter < 1:
        raise ValueError(f"n_iter: expected a positive integer, got {n_iter!r}")
    return int(n_iter)


def _pure_rounds(eps: float, delta: float, k: int,
                 calibration: str) -> tuple[float, float, float, str]:
    """Per-round ε for ``k`` pure-DP rounds: returns ``(ε_iter, ε_composed, δ_used, text)``."""
    talwar = eps / math.sqrt(8 * k * math.log(1 / delta))
    text = f"ε_iter = ε/√(8T log(1/δ)) = {talwar:.6g}; advanced composition over T = {k}"
    if calibration == "seed":
        return talwar, advanced_composition(talwar, k, delta), delta, text
    adv = talwar
    if advanced_composition(adv, k, delta) > eps:
        adv = brentq(lambda e: advanced_composition(e, k, delta) - eps, 0.0, talwar, xtol=1e-15)
        text = (f"ε_iter = {adv:.6g} solves the advanced composition bound = ε over T = {k} "
                "(the √(8T log(1/δ)) rule did not verify)")
    if eps / k > adv:
        return (eps / k, eps, 0.0,
                f"ε_iter = ε/T = {eps / k:.6g}; basic composition over T = {k} (δ unused)")
    return adv, advanced_composition(adv, k, delta), delta, text


@validate_params(shared=CONSTRAINTS)
def fw_noise(n: int, l1_radius: float, n_iter: int, eps: float, delta: float | None,
             loss: str | Loss = "squared", bounds: tuple[float, float] = (1.0, 1.0),
             calibration: Literal["rigorous", "seed"] = "rigorous") -> NoiseCalibration:
    """Laplace scale of DP-FW's report-noisy-min over the ``2p`` vertices.

    Neighbour notion: replace-one, ``n`` public (``"rigorous"``); the papers' formula
    (``"seed"``) claims add/remove-one.

    Sensitivity: vertex score ``±λ ∂_jF(w)``; ``Δ = 2 λ L1 / n`` with ``L1 = b_x Γ``
    (:meth:`Loss.lipschitz_l1`) for ``"rigorous"``; the seeds use ``λ · 1 / n``.

    Noise scale: ``ε_iter = ε/√(8T log(1/δ))`` and

    * rigorous: ``b = 2Δ/ε_iter = 4 λ L1 √(8T log(1/δ)) / (n ε)`` (non-monotone scores);
    * seed (Talwar et al.'s formula with ``L1 = 1``): ``b = λ √(8T log(1/δ)) / (n ε)``.

    (ε, δ) and composition: each round is ``ε_iter``-DP; ``T`` rounds compose by the advanced
    composition theorem to ``(ε, δ)`` (see :func:`advanced_composition`; the rigorous mode
    falls back to an exact solve or to basic composition as described in the module doc).
    ``eps = inf`` gives ``b = 0`` (plain Frank-Wolfe).

    Returns
    -------
    NoiseCalibration
    """
    calibration = _check_calibration(calibration)
    loss = get_loss(loss)
    n = _check_n(n)
    l1_radius = check_positive(l1_radius, "l1_radius")
    n_iter = _check_n_iter(n_iter)
    eps, delta = _check_eps_delta(eps, delta, "eps", "delta")
    b_x, b_y = bounds
    if calibration == "seed":
        lip = SEED_LIPSCHITZ_L1
        sens = l1_radius * lip / n
        formula = "b = λ·L1·√(8T log(1/δ))/(n ε) with L1 = 1 (Khanna et al.; Talwar et al.)"
    else:
        lip = loss.lipschitz_l1(b_x, b_y, l1_radius)
        sens = 2.0 * l1_radius * lip / n
        formula = (f"b = 2Δ/ε_iter, Δ = 2λ·L1/n, L1 = b_x·Γ = {lip:.6g} "
                   f"({loss.name} loss, b_x = {b_x:g}, b_y = {b_y})")
    mech = "report-noisy-min over the 2p vertices ±λe_j, Laplace noise"
    if math.isinf(eps):
        return NoiseCalibration("optimizer", "exact argmin (non-private)", NEIGHBOUR[calibration],
                                sens, math.inf, 0.0, n_iter, math.inf, 0.0, 0.0, None, math.inf,
                                "none (eps = inf)", formula)
    assert delta is not None  # a finite eps comes with a delta
    eps_iter, eps_comp, delta_used, text = _pure_rounds(eps, delta, n_iter, calibration)
    scale = sens / eps_iter if calibration == "seed" else 2.0 * sens / eps_iter
    return NoiseCalibration("optimizer", mech, NEIGHBOUR[calibration], sens, eps, delta_used,
                            n_iter, eps_iter, 0.0, scale, None, eps_comp, text, formula)


# ======================================================================= the FW engine
def _check_init(init, p: int, l1_radius: float, rng: np.random.Generator) -> tuple[np.ndarray, str]:
    if isinstance(init, str):
        if init == "zero":
            return np.zeros(p), "zero"
        if init == "random":
            # uniform in the λ-ℓ1 ball: Dirichlet(1,…,1) over p+1 cells (one is slack), random signs
            e = rng.exponential(size=p + 1)
            w = l1_radius * e[:p] / e.sum() * rng.choice(np.array([-1.0, 1.0]), size=p)
            return w, "random (uniform in the λ-ℓ1 ball, data-independent)"
        raise ValueError(f"init: expected 'zero', 'random' or an array of shape ({p},), "
                         f"got {init!r}")
    w = np.asarray(init, dtype=np.float64)
    if w.shape != (p,) or not np.all(np.isfinite(w)):
        raise ValueError(f"init: expected a finite array of shape ({p},), got shape {w.shape}")
    if np.abs(w).sum() > l1_radius * (1 + 1e-12):
        raise ValueError(f"init: ||init||_1 = {np.abs(w).sum():g} exceeds "
                         f"l1_radius = {l1_radius:g}")
    return w.copy(), "user-supplied (must not depend on the data)"


class _Screener:
    """Interface of a screening step plugged into :func:`_frank_wolfe_core`."""

    def active(self, t: int) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def __call__(self, w: np.ndarray, u: np.ndarray, g: np.ndarray,
                 rng: np.random.Generator) -> np.ndarray:
        """Indices to set to zero at the iterate ``w`` (predictions ``u = Xw``, gradient ``g``)."""
        raise NotImplementedError  # pragma: no cover


def _frank_wolfe_core(X: np.ndarray, y: np.ndarray, loss: Loss, l1_radius: float, n_iter: int,
                      scale: float, rng: np.random.Generator, w0: np.ndarray,
                      screener: _Screener | None = None, return_path: bool = False,
                      callback: Callable[[int, np.ndarray], None] | None = None) -> dict:
    """Run ``T`` (noisy) Frank-Wolfe steps, each optionally followed by a screening step."""
    n, p = X.shape
    w = w0.copy()
    u = X @ w
    fresh = False
    g = np.empty(p)
    coords = np.empty(n_iter, dtype=np.int64)
    signs = np.empty(n_iter)
    screened: list[np.ndarray] = []
    path = np.empty((n_iter + 1, p)) if return_path else None
    if path is not None:  # return_path
        path[0] = w
    t_screen = 0.0
    empty = np.empty(0, dtype=np.int64)
    for t in range(1, n_iter + 1):
        if not fresh:
            g = (loss.derivative(u, y) / n) @ X      # at most L1: cannot overflow
        # ---- vertex pick: argmin over ±λ e_j of ⟨v, g⟩ (+ Laplace noise)
        if scale == 0.0:
            j = int(np.argmax(np.abs(g)))
            s = -1.0 if g[j] > 0 else 1.0
        else:
            noisy = np.concatenate((l1_radius * g, -l1_radius * g)) + rng.laplace(0.0, scale, 2 * p)
            k = int(np.argmin(noisy))
            j, s = (k, 1.0) if k < p else (k - p, -1.0)
        coords[t - 1], signs[t - 1] = j, s
        eta = 2.0 / (t + 2.0)
        w *= 1.0 - eta
        w[j] += eta * s * l1_radius
        if t % _REFRESH_EVERY == 0:
            u = X @ w
        else:
            u *= 1.0 - eta
            u += (eta * s * l1_radius) * X[:, j]
        fresh = False
        # ---- screening at w_t
        idx = empty
        if screener is not None and screener.active(t):
            t0 = time.perf_counter()
            g = (loss.derivative(u, y) / n) @ X      # at most L1: cannot overflow
            fresh = True
            idx = np.asarray(screener(w, u, g, rng), dtype=np.int64)
            changed = idx[w[idx] != 0.0]
            if changed.size:
                u -= X[:, changed] @ w[changed]
                w[changed] = 0.0
                fresh = False
            t_screen += time.perf_counter() - t0
        screened.append(idx)
        if path is not None:  # return_path
            path[t] = w
        if callback is not None:
            callback(t, w)
    return {"w": w, "coords": coords, "signs": signs, "screened": screened, "path": path,
            "t_screen": t_screen}


def _finish(method: str, core: dict, loss: Loss, l1_radius: float, n_iter: int,
            calibration: str, parts: dict, t_total: float, info: dict,
            bounds) -> ScreeningResult:
    """Assemble the result object and its privacy statement."""
    w = core["w"]
    lines = [f"{name}: {c.mechanism}; {c.composition} → ({c.epsilon:g}, {c.delta:g})"
             for name, c in parts.items()]
    composition = "; ".join(lines)
    if len(parts) > 1:
        composition += ("; total by basic composition of the two parts (their rounds interleave "
                        "adaptively; each part's privacy loss is bounded by its own martingale "
                        "argument, and a union bound adds the δ's)")
    guarantee = release_guarantee(parts, calibration, bounds, loss)
    if not guarantee.is_private:
        info["bounds_not_private"] = info.pop("bounds")
    support = np.flatnonzero(w)
    return ScreeningResult(
        coef_=w, support=support, method=method, loss=loss.name, l1_radius=l1_radius,
        n_iter=n_iter, calibration=calibration, guarantee=guarantee,
        composition=composition, privacy=dict(parts), screened=core["screened"],
        fw_coordinates=core["coords"], fw_signs=core["signs"],
        timings={"total": t_total, "screening": core["t_screen"]}, coef_path=core["path"],
        info=info)


#: the largest ``l1_radius * L1`` accepted: the scores, gradients and noise scales of a run
#: then stay far from the largest double (issue 39: beyond it a sum overflowed on one
#: neighbour only)
MAX_SCORE_BOUND = 1e290


def _check_scale(loss, b_x, b_y, l1_radius) -> None:
    """Refuse bounds whose score bound ``λ L1`` leaves the double range (public figures:
    the refusal does not depend on the data when the bounds are given)."""
    with np.errstate(over="ignore", invalid="ignore"):
        lip = loss.lipschitz_l1(b_x, b_y, l1_radius)
        top = float(np.float64(l1_radius) * lip)
    if not (math.isfinite(top) and top <= MAX_SCORE_BOUND):
        raise ValueError(
            f"bounds: with bound_x = {b_x:g}, bound_y = {b_y} and l1_radius = {l1_radius:g} "
            f"the scores' bound l1_radius * L1 = {top:g} exceeds {MAX_SCORE_BOUND:g} (the "
            "gradient would overflow a double); rescale X and y by public constants")


def _setup(X, y, loss, l1_radius, n_iter, bounds, calibration, init, random_state):
    """Shared validation for the three public functions."""
    calibration = _check_calibration(calibration)
    loss = get_loss(loss)
    l1_radius = check_positive(l1_radius, "l1_radius")
    n_iter = _check_n_iter(n_iter)
    rng = check_random_state(random_state)
    Xc, yc, b_x, b_y = prepare_data(X, y, loss, bounds)
    _check_scale(loss, b_x, b_y, l1_radius)
    if calibration == "seed":
        if b_x > 1.0:
            raise ValueError("bounds: calibration='seed' assumes ||x_i||_inf <= 1 "
                             f"(Khanna et al.); got bound_x = {b_x:g}. Rescale X or use "
                             "calibration='rigorous'.")
        if loss.name == "squared" and b_y > l1_radius:
            raise ValueError("bounds: calibration='seed' assumes |y_i| <= l1_radius "
                             "(Khanna et al.); "
                             f"got bound_y = {b_y:g} > {l1_radius:g}")
        warnings.warn("calibration='seed' reproduces Khanna et al.'s (2023, 2025) noise, whose "
                      "sensitivity bounds are not valid: the output carries no proven "
                      "differential-privacy guarantee (see ScreeningResult.guarantee).",
                      PrivacyLeakWarning, stacklevel=find_stack_level())
    w0, init_desc = _check_init(init, Xc.shape[1], l1_radius, rng)
    info = {"bounds": (b_x, b_y), "init": init_desc, "n_samples": Xc.shape[0],
            "n_features": Xc.shape[1]}
    return Xc, yc, loss, l1_radius, n_iter, rng, w0, calibration, info


def _planned(calibration, bounds, loss, *cals) -> Guarantee:
    """The guarantee a run will have, from its noise calibrations (computed without data)."""
    return release_guarantee({c.part: c for c in cals}, calibration, bounds, loss)


@validate_params(shared=CONSTRAINTS)
@cancels_on_error
def dp_frank_wolfe(X, y, l1_radius: float, n_iter: int = 1000, eps: float = 1.0,
                   delta: float | None = None, loss: str | Loss = "squared",
                   bounds: tuple[float, float] | float | None = (1.0, 1.0),
                   calibration: Literal["rigorous", "seed"] = "rigorous",
                   init: str | np.ndarray = "zero", random_state=None,
                   return_path: bool = False, accountant=None) -> ScreeningResult:
    """Differentially private Frank-Wolfe on ``{w : ||w||_1 <= λ}`` (Talwar et al. 2015).

    For ``t = 1..T``: ``g = ∇F(w_{t-1})``; pick the vertex ``v = ±λe_j`` minimising
    ``⟨v, g⟩ + Lap(b)`` (report-noisy-min over the ``2p`` vertices); ``w_t = (1−η_t) w_{t-1}
    + η_t v`` with ``η_t = 2/(t+2)``. With ``eps = np.inf`` no noise is added and this is plain
    Frank-Wolfe (``F(w_t) − F* = O(1/t)``).

    Parameters
    ----------
    X : array-like of shape (n, p)
    y : array-like of shape (n,)
        Targets (squared loss) or labels in ``[0, 1]`` / ``{−1, +1}`` (logistic loss).
    l1_radius : float
        ``λ > 0``, the radius of the ℓ1 ball.
    n_iter : int, default 1000
        ``T``, number of Frank-Wolfe steps (fixed in advance: it sets the noise).
    eps : float, default 1.0
        ``ε > 0``; ``np.inf`` for the non-private algorithm.
    delta : float, optional
        ``δ ∈ (0, 1)``; required when ``eps`` is finite.
    loss : {"squared", "logistic"} or Loss, default "squared"
    bounds : (float, float) or float or None, default (1.0, 1.0)
        ``(b_x, b_y)``: ``X`` is clipped to ``[-b_x, b_x]`` and ``y`` (squared loss) to
        ``[-b_y, b_y]``; the sensitivity uses them. The seeds assume ``||x_i||_∞ <= 1``.
        ``None`` reads them off the data (not private; warns).
    calibration : {"rigorous", "seed"}, default "rigorous"
        See below.
    init : {"zero", "random"} or ndarray, default "zero"
        ``w_0``: zero, uniform in the ball (Khanna et al.), or a data-independent point of it.
    random_state : None, int, SeedSequence or numpy Generator
        Source of all randomness.
    return_path : bool, default False
        Keep every iterate in ``coef_path``.
    accountant : BudgetAccountant, optional
        Checks the planned guarantee before the data is read and records the release.

    Returns
    -------
    ScreeningResult

    Notes
    -----
    Neighbour notion: replace-one (``n`` fixed, public) for ``"rigorous"``; the papers' formula
    claims add/remove-one.  The result is marked not private (``epsilon`` NaN) with
    ``bounds=None``, ``calibration="seed"`` or ``eps = inf``.

    Sensitivity: the score of vertex ``±λe_j`` is ``±λ ∂_jF(w)``; one replaced row moves it by
    at most ``Δ = 2λ L1/n``, ``L1 = b_x Γ`` the ℓ1-Lipschitz constant of the loss on the
    clipped domain (squared: ``b_x(b_x λ + b_y)``; logistic: ``b_x σ(b_x λ)``).

    Noise scale: ``ε_iter = ε/√(8T log(1/δ))``; rigorous ``b = 2Δ/ε_iter`` (report-noisy-min
    over non-monotone scores); seed ``b = λ√(8T log(1/δ))/(nε)`` (Talwar et al. with the
    seeds' ``L1 = 1``), see :func:`fw_noise`.

    (ε, δ) and composition: each pick is ``ε_iter``-DP, the iterates are post-processing of
    the picks, and the ``T`` picks compose adaptively by the advanced composition theorem to
    ``(ε, δ)``-DP (rigorous calibration; the seed calibration claims the same without a valid
    sensitivity bound).
    """
    t0 = time.perf_counter()
    acc = check_release(accountant, _planned(
        calibration, bounds, loss, fw_noise(1, l1_radius, n_iter, eps, delta, loss, (1.0, 1.0),
                                            calibration)))
    Xc, yc, loss, l1_radius, n_iter, rng, w0, calibration, info = _setup(
        X, y, loss, l1_radius, n_iter, bounds, calibration, init, random_state)
    assert isinstance(loss, Loss)  # resolved by _setup
    cal = fw_noise(Xc.shape[0], l1_radius, n_iter, eps, delta, loss, info["bounds"], calibration)
    logger.debug("dp_frank_wolfe: Laplace scale %g (ε_iter %g)", cal.scale, cal.epsilon_iter)
    core = _frank_wolfe_core(Xc, yc, loss, l1_radius, n_iter, cal.scale, rng, w0,
                             return_path=return_path)
    res = _finish("dp_frank_wolfe", core, loss, l1_radius, n_iter, calibration,
                  {"optimizer": cal}, time.perf_counter() - t0, info, bounds)
    logger.info("dp_frank_wolfe: %d non-zero of %d after %d iterations (%.2fs)", res.n_nonzero,
                res.coef_.size, n_iter, res.timings["total"])
    return record_release(acc, res)
