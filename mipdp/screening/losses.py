"""Losses for DP Frank-Wolfe and screening: value, gradient and the bounds the privacy needs.

Both losses are generalised linear: the objective over the λ-ℓ1 ball
``C = {w : ||w||_1 <= λ}`` is

    F(w) = f(Xw),    f(u) = (1/n) Σ_i ℓ(u_i, y_i),

so ``∇F(w) = Xᵀ∇f(Xw) = (1/n) Σ_i ℓ'(x_iᵀw, y_i) x_i``.

Data domain (after clipping to the public bounds ``b_x``, ``b_y``): ``|x_ij| <= b_x``
and ``|y_i| <= b_y``; the seeds assume ``b_x = 1``. For ``w ∈ C`` every prediction
satisfies ``|x_iᵀw| <= b_x λ``, which gives the constants below:

* ``Γ = max |ℓ'(u, y)|`` over that domain (the derivative bound);
* the per-sample gradient ``ℓ'·x_i`` has ``ℓ∞`` norm ``<= b_x Γ``: this is the loss's
  ℓ1-Lipschitz constant ``L1`` (Talwar et al. 2015);
* ``f`` is ``κ_L/n``-smooth and ``κ_μ/n``-strongly convex on the reachable predictions.

=========  ======================  =====================  ============  ==================
loss       ℓ(u, y)                 Γ                      κ_L           κ_μ
=========  ======================  =====================  ============  ==================
squared    (u − y)²/2              b_x λ + b_y            1             1
logistic   log(1+eᵘ) − y u         σ(b_x λ)               1/4           σ(b_x λ)·σ(−b_x λ)
=========  ======================  =====================  ============  ==================

(logistic labels ``y ∈ [0, 1]``; labels in ``{−1, +1}`` — whatever their counts — are
mapped to ``{0, 1}``.)

Khanna et al. (2023, 2025) say both losses are "1-Lipschitz with respect to the ℓ1 norm"; that is
the constant they calibrate DP-FW with (``SEED_LIPSCHITZ_L1``). It holds only for small
radii: at ``λ = 50``, ``b_x = b_y = 1`` the squared loss has ``L1 = 51``.
"""

from __future__ import annotations

import logging
import numbers
from abc import ABC, abstractmethod

import numpy as np
from scipy.special import expit

from .._validation import check_bounds, check_positive, check_X_y, clip_data

__all__ = ["Loss", "SquaredLoss", "LogisticLoss", "get_loss", "prepare_data",
           "gradient_sensitivity", "SEED_LIPSCHITZ_L1"]

logger = logging.getLogger(__name__)

#: The ℓ1-Lipschitz constant Khanna et al. use for both losses (valid only for small λ).
SEED_LIPSCHITZ_L1 = 1.0


class Loss(ABC):
    """A per-sample loss ``ℓ(u, y)`` of the prediction ``u = xᵀw``.

    Subclasses give the value, the derivative in ``u`` and the constants of the table in the
    module docstring; everything else (objective, gradient, Lipschitz bound) is shared.
    """

    #: registry name
    name: str = "loss"
    #: ``f`` is ``kappa_smooth / n``-smooth in ``u``
    kappa_smooth: float = 1.0

    @abstractmethod
    def values(self, u: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Per-sample losses ``ℓ(u_i, y_i)``."""

    @abstractmethod
    def derivative(self, u: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Per-sample derivatives ``ℓ'(u_i, y_i) = ∂ℓ/∂u``."""

    @abstractmethod
    def derivative_bound(self, b_x: float, b_y: float | None, l1_radius: float) -> float:
        """``Γ``: a bound on ``|ℓ'(u, y)|`` for ``|u| <= b_x λ`` and admissible ``y``."""

    @abstractmethod
    def kappa_strong(self, b_x: float, l1_radius: float) -> float:
        """``κ_μ``: ``f`` is ``κ_μ/n``-strongly convex on ``{Xw : w ∈ C}``."""

    @abstractmethod
    def check_targets(self, y: np.ndarray, b_y: float | None) -> np.ndarray:
        """Validate (and clip or map) the targets; returns a copy."""

    # ---------------------------------------------------------------- shared
    def lipschitz_l1(self, b_x: float, b_y: float | None, l1_radius: float) -> float:
        """``L1 = b_x Γ``: bound on ``||∇ℓ(x_iᵀw, y_i)||_∞`` over the domain and ``C``."""
        return float(b_x * self.derivative_bound(b_x, b_y, l1_radius))

    def objective(self, X: np.ndarray, y: np.ndarray, w: np.ndarray) -> float:
        """``F(w) = (1/n) Σ ℓ(x_iᵀw, y_i)``."""
        return float(np.mean(self.values(X @ w, y)))

    def gradient(self, X: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
        """``∇F(w) = (1/n) Xᵀ ℓ'(Xw, y)``."""
        # divided by n before the sum: each term is at most L1 / n, the sum at most L1 (a
        # sum of n terms up to L1 would overflow on a neighbour only, issue 39)
        return (self.derivative(X @ w, y) / X.shape[0]) @ X

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class SquaredLoss(Loss):
    """``ℓ(u, y) = (u − y)²/2``: least squares, ``F(w) = ||y − Xw||²/(2n)``."""

    name = "squared"
    kappa_smooth = 1.0

    def values(self, u, y):
        return 0.5 * (u - y) ** 2

    def derivative(self, u, y):
        return u - y

    def derivative_bound(self, b_x, b_y, l1_radius):
        if b_y is None:
            raise ValueError("bounds: the squared loss needs a bound on |y_i|")
        return float(b_x * l1_radius + b_y)

    def kappa_strong(self, b_x, l1_radius):
        return 1.0

    def check_targets(self, y, b_y):
        return y.copy() if b_y is None else np.clip(y, -b_y, b_y)


class LogisticLoss(Loss):
    """``ℓ(u, y) = log(1 + eᵘ) − y u`` (binary cross-entropy, labels ``y ∈ [0, 1]``)."""

    name = "logistic"
    kappa_smooth = 0.25

    def values(self, u, y):
        return np.logaddexp(0.0, u) - y * u

    def derivative(self, u, y):
        return expit(u) - y

    def derivative_bound(self, b_x, b_y, l1_radius):
        # |σ(u) − y| <= max(σ(u), 1 − σ(u)) = σ(|u|) <= σ(b_x λ) for y ∈ [0, 1]
        return float(expit(b_x * l1_radius))

    def kappa_strong(self, b_x, l1_radius):
        a = b_x * l1_radius
        return float(expit(a) * expit(-a))

    def check_targets(self, y, b_y):
        """Labels in ``{−1, +1}`` are mapped to ``{0, 1}``; labels in ``[0, 1]`` are kept.

        The rule looks only at the label *domain*, never at how many labels of each value
        occur: a one-class vector (all ``−1``, all ``+1``, all ``0``) is a valid dataset and
        the neighbour of a two-class one, so it must run.  An all-``+1`` vector reads the
        same in both conventions (``+1 ↦ 1``).  Only values outside both domains raise.
        """
        if np.all((y == -1.0) | (y == 1.0)):
            return (y + 1.0) / 2.0
        if np.any(y < 0.0) or np.any(y > 1.0):
            # the values found are not echoed: an exception's text must not carry the data
            raise ValueError("y: the logistic loss needs labels in [0, 1] or in {-1, +1}, and "
                             "some are outside both; map the classes to 0/1 or -1/+1 first")
        return y.copy()


_LOSSES = {"squared": SquaredLoss, "least_squares": SquaredLoss, "logistic": LogisticLoss}


def get_loss(loss: str | Loss) -> Loss:
    """Resolve ``"squared"``/``"logistic"`` (or a :class:`Loss` instance).

    Privacy: none involved (no data). The constants a loss supplies feed the sensitivities of
    :func:`gradient_sensitivity` and :func:`~mipdp.screening.score_sensitivity`.
    """
    if isinstance(loss, Loss):
        return loss
    if isinstance(loss, str) and loss.lower() in _LOSSES:
        return _LOSSES[loss.lower()]()
    from .._param_validation import InvalidParameterError
    raise InvalidParameterError("The 'loss' parameter of get_loss must be a str among "
                                f"{{'squared', 'logistic'}} or a Loss instance. Got {loss!r} "
                                "instead.")


def prepare_data(X, y, loss: Loss, bounds) -> tuple[np.ndarray, np.ndarray, float, float | None]:
    """Validate ``X, y``, resolve the bounds and clip.

    ``bounds=(b_x, b_y)`` (a single number means both). ``None`` reads them off the data
    with a :class:`~mipdp.exceptions.PrivacyLeakWarning` (such bounds are not private).
    ``X`` is clipped coordinate-wise to ``[-b_x, b_x]``; ``y`` to ``[-b_y, b_y]`` for the
    squared loss. The logistic loss ignores ``b_y`` (labels lie in ``[0, 1]``).

    Privacy: no mechanism here. The bounds must be data-independent for any downstream
    guarantee (neighbour notion, sensitivity, noise and composition are stated by the
    methods that use the clipped data).
    """
    X, y = check_X_y(X, y)
    if isinstance(bounds, numbers.Real) and not isinstance(bounds, bool):
        bounds = (bounds, bounds)
    need_y = isinstance(loss, SquaredLoss)
    if bounds is not None and not need_y:
        try:
            bounds = (bounds[0], None)
        except (TypeError, IndexError) as exc:
            raise TypeError(f"bounds: expected (bound_x, bound_y), got {bounds!r}") from exc
    b_x, b_y = check_bounds(bounds, X, y, need_y=need_y, name="bounds")
    n_clip_x = int(np.count_nonzero(np.abs(X) > b_x))
    Xc, _ = clip_data(X, None, b_x, None)
    yc = loss.check_targets(y, b_y if need_y else None)
    n_clip_y = int(np.count_nonzero(yc != y)) if need_y else 0
    if n_clip_x or n_clip_y:
        logger.info("not private: clipped %d entries of X to ±%g and %d targets to ±%s",
                    n_clip_x, b_x, n_clip_y, b_y)
    return Xc, yc, float(b_x), (None if b_y is None else float(b_y))


def gradient_sensitivity(n: int, l1_radius: float, loss: str | Loss = "squared",
                         bounds: tuple[float, float] = (1.0, 1.0)) -> float:
    """Replace-one sensitivity of each coordinate of ``∇F(w)``, uniformly over ``w ∈ C``.

    Neighbours: replace one row ``(x_i, y_i)``, ``n`` fixed and public. Each per-sample term
    ``ℓ'(x_iᵀw, y_i) x_ij`` lies in ``[−b_x Γ, b_x Γ]``, so one replacement moves
    ``(1/n) Σ_i ℓ'_i x_ij`` by at most ``2 b_x Γ / n = 2 L1 / n``.

    Parameters
    ----------
    n : int
        Number of rows (public).
    l1_radius : float
        ``λ > 0``.
    loss : {"squared", "logistic"} or Loss
    bounds : (float, float)
        ``(b_x, b_y)``; ``b_y`` is ignored by the logistic loss.

    Returns
    -------
    float
        ``2 b_x Γ / n``.

    Notes
    -----
    Neighbour notion: replace-one. Sensitivity: as above. Noise scale, (ε, δ) and
    composition: not applicable (a sensitivity only; DP-FW's vertex scores ``±λ ∂_jF`` have
    ``λ`` times this sensitivity, see :func:`~mipdp.screening.fw_noise`).
    """
    loss = get_loss(loss)
    l1_radius = check_positive(l1_radius, "l1_radius")
    b_x = check_positive(bounds[0], "bounds[0]")
    b_y = None if bounds[1] is None else check_positive(bounds[1], "bounds[1]")
    return 2.0 * loss.lipschitz_l1(b_x, b_y, l1_radius) / int(n)
