r"""Private coefficients on a released support: objective perturbation, replace-one or add/remove.

After a support ``Ŝ`` has been released privately (by :func:`~mipdp.private_bss` or a
comparator), :func:`private_coefficients` fits least-squares coefficients on ``Ŝ`` with
their own budget ``ε_fit``.  By basic composition the pair ``(Ŝ, β̂)`` is
``(ε_select + ε_fit)``-DP (under one neighbour notion for both).  The mechanism is
objective perturbation (Chaudhuri, Monteleoni & Sarwate 2011; Kifer, Smith & Thakurta 2012,
Algorithm 1 with ``δ = 0``), calibrated for either neighbour notion of the package
(``neighbours=`` as in :func:`~mipdp.private_bss`):

* ``"replace_one"`` (default): one row replaced, ``n`` fixed and public;
* ``"add_remove"``: one row added or removed, ``n`` not public.

The published calibration (noise scale ``2ζ/ε``, extra ridge ``2λ_H/ε``) covers one row
*added or removed*: under replace-one it is only ``(ε + log(1 + ε/2))``-DP, and exact
output laws exceed ``ε`` (k = 1, ``b_x = b_y = 0.5``, ``r = 0.02``, ridge 0: 0.534 at
``ε = 0.5``; see ``tests/mipdp/test_coefficients.py``).  Hence the factor 2 below.

Mechanism
---------
Data clipped to public bounds, ``|x_ij| ≤ b_x``, ``|y_i| ≤ b_y``; ``k = |Ŝ|``;
``F = {β ∈ R^k : ||β||₂ ≤ r}``; ridge ``λ_r ≥ 0``.  Constants (data-free)::

    ζ    = (b_y + b_x √k r) · b_x √k      bound on ||∇ℓ(β; x, y)||₂ over F and the box
    λ_H  = k b_x²                         bound on the eigenvalue of the rank-1 Hessian x xᵀ
    ε_J  = log(1 + λ_H / λ_r)     and  Δ = 0                     if that is ≤ ε/2
    ε_J  = ε/2                    and  Δ = λ_H / (e^{ε/2} − 1) − λ_r   otherwise
    ε_b  = ε − ε_J                        (≥ ε/2)
    Δ_G  = 2ζ (replace-one)  or  ζ (add/remove)     gradient sensitivity of the sum

Draw ``b ∈ R^k`` with density ``ν(b) ∝ exp(−ε_b ||b||₂ / Δ_G)`` (``||b|| ~ Gamma(k, Δ_G/ε_b)``,
uniform direction) and release::

    β̂ = argmin_{β ∈ F}  Σ_i ½ (y_i − x_{iŜ}ᵀβ)² + ½ (λ_r + Δ) ||β||² + bᵀβ

(the same problem divided by ``n`` is the package's objective
``(1/2n)||y − X_Ŝβ||² + (λ_r/2n)||β||²`` plus ``(Δ/2n)||β||² + bᵀβ/n``; times ``n``, that
objective is the sum form with ridge ``λ_r``, so the argmin above involves the rows only
through ``Σ_i x_i x_iᵀ`` and ``Σ_i y_i x_i`` and **never uses n**; ``n``
enters :func:`~mipdp.losses.least_squares.ridge_ball_values` only through the objective
*value*, ``(·)/2n``, which is not released).  It is a ridge problem on a ball, solved exactly
by the trust-region secular equation.  Only ``Δ_G`` (the noise scale) depends on the notion.

Guarantee
---------
**ε-DP (pure) given Ŝ, under the notion of the call** (Ŝ must itself be a private release
under the same notion, or fixed without looking at the data).

Proof.  Write ``Λ = λ_r + Δ > 0`` (``Δ > 0`` whenever ``λ_r = 0``) and
``G(β; D) = Σ_i ∇ℓ(β; z_i) + Λβ`` with ``∇ℓ(β; x, y) = −(y − xᵀβ) x``.  The objective is
``Λ``-strongly convex, so ``β̂`` is unique, and the optimality condition
``0 ∈ G(β̂; D) + b + N_F(β̂)`` (``N_F`` the normal cone of the ball) gives a bijection between
``b`` and the pair (``β̂`` in the open ball) or (``β̂`` on the sphere, ``t ≥ 0``):

* interior:  ``b = −G(β̂; D)``;  Jacobian ``|det ∇G| = det(H_D + ΛI)``, ``H_D = Σ_i x_i x_iᵀ``;
* sphere:    ``b = −G(β̂; D) − t β̂``;  parametrising the sphere locally by an orthonormal
  tangent basis ``U`` (k × (k−1)), the Jacobian of ``(β̂, t) ↦ b`` is
  ``r · det(Uᵀ(H_D + ΛI)U + t I_{k−1})``.

So ``β̂`` has a density on the open ball and on the sphere (after integrating ``t``), and in
both cases the density at a point is ``ν(b_D) · J_D`` (integrated over ``t``).  Neither
``ν``, nor ``Λ``, nor the map ``b ↦ β̂`` involves ``n``: ``G`` is a *sum* over rows, so a
dataset of any size is handled by the same formulas, which is what add/remove needs.  Fix
the output point (and ``t``) and compare neighbours, side by side:

================  ================================================  ==============================
neighbours        replace-one: ``D'`` replaces ``z_n`` by ``z_n'``  add/remove: ``D' = D ∪ {z}``,
                                                                    ``z = (x, y)``
================  ================================================  ==============================
noise value       ``b_D − b_{D'} = ∇ℓ(β̂; z_n') − ∇ℓ(β̂; z_n)``       ``b_D − b_{D'} = ∇ℓ(β̂; z)``
its norm          ``≤ 2ζ = Δ_G``                                    ``≤ ζ = Δ_G``
Hessian change    ``− x_n x_nᵀ + x_n' x_n'ᵀ`` (two rank-1 terms)    ``+ x xᵀ`` (one rank-1 term)
Jacobian ratio    ``(1 + u_nᵀM⁻¹u_n)/(1 + u_n'ᵀM⁻¹u_n')``,          ``J_{D'}/J_D = 1 + uᵀM⁻¹u``,
                  ``M = Σ_{i<n} x_i x_iᵀ + ΛI``                     ``M = H_D + ΛI``
================  ================================================  ==============================

(on the sphere ``u = Uᵀx`` and ``M`` is replaced by its tangent compression
``UᵀMU + tI``; in the interior ``u = x``).  In both columns ``M ⪰ ΛI`` and
``||u|| ≤ ||x|| ≤ √k b_x``, so ``uᵀM⁻¹u ∈ [0, λ_H/Λ]``.

1. *Noise term.*  ``log ν`` is ``ε_b/Δ_G``-Lipschitz and ``||b_D − b_{D'}|| ≤ Δ_G``, so
   ``|log ν(b_D) − log ν(b_{D'})| ≤ ε_b`` under either notion, provided ``Δ_G`` is the
   notion's: ``2ζ`` for a replaced row (it removes one gradient and adds another — the
   factor 2 the published add/remove calibration misses), ``ζ`` for one added or removed
   row (one gradient).  Calibrating add/remove with ``ζ`` under replace-one would allow
   ``2ε_b``: the notions are not interchangeable (replace-one's noise is valid, and
   conservative, under add/remove; the converse fails — both measured in the tests).
2. *Jacobian term.*  Matrix determinant lemma.  Replace-one: the ratio of two factors
   each in ``[1, 1 + λ_H/Λ]``; add/remove: one factor in ``[1, 1 + λ_H/Λ]`` (the ratio is
   ``≥ 1`` from ``D`` to ``D ∪ {z}`` and ``≤ 1`` the other way).  Either way
   ``|log J_D − log J_{D'}| ≤ log(1 + λ_H/Λ) = ε_J`` (with ``Λ = λ_r`` when ``Δ = 0``, with
   ``Λ = λ_H/(e^{ε/2} − 1)`` otherwise): the same ``ε_J`` and ``Δ`` for both notions.

The density ratio is at most ``e^{ε_b + ε_J} = e^ε`` pointwise, in both directions, and
integrating over ``t`` (sphere) or over any set of outputs keeps the bound: ``β̂`` is ε-DP
under the notion of the call.  For ``k = 1`` the sphere is ``{±r}`` (two atoms, the
Jacobian of ``t`` is 1) and the law of ``β̂`` is ``clip((Σ x_i y_i − b)/(Σ x_i² + Λ), −r, r)``
with Laplace ``b`` (scale ``Δ_G/ε_b``); the tests compute it in closed form on neighbouring
datasets (replace-one pairs; add/remove pairs ``D`` / ``D ∪ {z}`` and ``D ∖ {z_n}`` /
``D ∖ {z_n} ∪ {z}`` with ``z`` over a grid of the box, its corners included) and check the
log-ratio ≤ ε over a grid of outputs, the two atoms and the event ``|β̂| ≤ 1e−5``.  Under
add/remove the bound is nearly attained (0.4993 at ``r = 0.02, ε = 0.5``): an added corner
row moves the noise by the full ``ζ`` and the Jacobian by the full ``1 + λ_H/Λ`` at once,
which a replaced row cannot do (the two Jacobian factors then cancel).

Assumptions the proof uses, all enforced here: the loss is convex and twice continuously
differentiable (least squares); data clipped to bounds given by the caller (never read off
the data); ``r`` finite; ``λ_r``, ``r``, ``ε`` and ``Ŝ`` fixed independently of the data.
The minimisation is exact (closed form up to the 1-D secular equation, solved to machine
precision), so the released point is the argmin the proof is about.  Under add/remove the
proof holds for every ``n ≥ 0`` and ``n`` is private: every ``n ≥ 1`` runs
(``MIN_SAMPLES_ADD_REMOVE``), so no refusal depends on how many rows there are; under
replace-one ``n`` is public and fewer than 2 rows are refused before any noise is drawn
(docs/privacy.md, "The number of rows").

What is returned: ``coef`` (private), the data-free calibration, the guarantee.  The noise
``b`` is **not** returned: together with the (public) ``coef`` it reveals ``G(β̂; D)``, a
data-dependent quantity without noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real

import numpy as np

from ._neighbours import neighbours_argument
from ._param_validation import (
    EPSILON,
    POSITIVE_REAL,
    Interval,
    InvalidParameterError,
    StrOptions,
    _Bounds,
    _Constraint,
    validate_params,
)
from .accounting import cancels_on_error, check_release, record_release
from .guarantee import Guarantee, Neighbour
from .result import PrivacyReport
from .selection import NEIGHBOURS

__all__ = ["private_coefficients", "PrivateCoefficients", "ObjectivePerturbationCalibration",
           "objective_perturbation_calibration", "sample_l2_laplace"]


@dataclass(frozen=True)
class ObjectivePerturbationCalibration:
    """Data-free constants of :func:`private_coefficients` (see the module docstring).

    Attributes
    ----------
    epsilon : float
        Total ``ε`` of the fit, ``= epsilon_noise + epsilon_jacobian``.
    zeta : float
        ``ζ``, bound on one row's gradient norm; a replaced row moves the gradient sum by
        ``2ζ``, an added or removed row by ``ζ``.
    lambda_h : float
        ``λ_H = k b_x²``, bound on one row's Hessian eigenvalue.
    ridge : float
        ``λ_r``, the objective's own ridge.
    extra_ridge : float
        ``Δ`` added to the ridge (0 when ``λ_r`` alone makes the Jacobian term ≤ ε/2).
    epsilon_jacobian : float
        ``ε_J = log(1 + λ_H / (λ_r + Δ))``.
    epsilon_noise : float
        ``ε_b = ε − ε_J``.
    noise_scale : float
        ``sensitivity / ε_b``: ``||b|| ~ Gamma(k, noise_scale)``.
    neighbours : {"replace_one", "add_remove"}
        Neighbour notion the constants are calibrated for.
    sensitivity : float
        Gradient sensitivity under ``neighbours``: ``2ζ`` (replace-one) or ``ζ`` (add/remove).
    """

    epsilon: float
    zeta: float
    lambda_h: float
    ridge: float
    extra_ridge: float
    epsilon_jacobian: float
    epsilon_noise: float
    noise_scale: float
    neighbours: str = "replace_one"
    sensitivity: float = math.nan


@neighbours_argument
def objective_perturbation_calibration(k: int, eps: float, *, bounds: tuple[float, float],
                                       ridge: float, radius: float,
                                       neighbours: str = "replace_one"
                                       ) -> ObjectivePerturbationCalibration:
    """Calibration of objective perturbation for ``k`` coefficients under ``neighbours``.

    Only the noise depends on the notion: its scale is ``2ζ/ε_b`` under replace-one and
    ``ζ/ε_b`` under add/remove; ``Δ``, ``ε_J`` and ``ε_b`` are the same (module docstring).

    Parameters
    ----------
    k : int
        Number of coefficients (support size).
    eps : float
        Budget of the fit.
    bounds : (float, float)
        Public clipping bounds ``(b_x, b_y)``.
    ridge : float
        ``λ_r ≥ 0``.
    radius : float
        Finite ``r > 0``.
    neighbours : {"replace_one", "add_remove"}, default "replace_one"
        Neighbour notion (as in :func:`private_coefficients`).

    Returns
    -------
    ObjectivePerturbationCalibration
    """
    from ._validation import check_epsilon, check_positive
    eps = check_epsilon(eps, "eps")
    b_x = check_positive(bounds[0], "bounds[0] (bound on |x_ij|)")
    b_y = check_positive(bounds[1], "bounds[1] (bound on |y_i|)")
    ridge = check_positive(ridge, "ridge", allow_zero=True)
    radius = check_positive(radius, "radius")
    if not (isinstance(neighbours, str) and neighbours in NEIGHBOURS):
        raise InvalidParameterError(f"The 'neighbours' parameter of "
                                    f"objective_perturbation_calibration must be a str among "
                                    f"{set(NEIGHBOURS)}. Got {neighbours!r} instead.")
    sk = math.sqrt(k)
    zeta = (b_y + b_x * sk * radius) * b_x * sk
    lam_h = k * b_x * b_x
    eps_j = math.log1p(lam_h / ridge) if ridge > 0 else math.inf
    if eps_j <= eps / 2:
        extra = 0.0
    else:
        extra = lam_h / math.expm1(eps / 2) - ridge      # > 0 here
        eps_j = math.log1p(lam_h / (ridge + extra))       # = eps / 2 up to rounding
    eps_b = eps - eps_j
    # a replaced row moves the gradient sum by <= 2ζ, an added/removed row by <= ζ
    sens = (2.0 if neighbours == "replace_one" else 1.0) * zeta
    return ObjectivePerturbationCalibration(
        epsilon=eps, zeta=float(zeta), lambda_h=float(lam_h), ridge=ridge, extra_ridge=float(extra),
        epsilon_jacobian=float(eps_j), epsilon_noise=float(eps_b),
        noise_scale=float(sens / eps_b), neighbours=neighbours, sensitivity=float(sens))


def sample_l2_laplace(k: int, scale: float, rng: np.random.Generator) -> np.ndarray:
    """A draw of ``b ∈ R^k`` with density ``∝ exp(−||b||₂ / scale)``.

    ``||b||`` is ``Gamma(k, scale)`` and the direction is uniform on the sphere.
    """
    direction = rng.standard_normal(k)
    direction /= np.linalg.norm(direction)
    return rng.gamma(shape=k, scale=scale) * direction


@dataclass(repr=False)
class PrivateCoefficients(PrivacyReport):
    """Result of :func:`private_coefficients`.

    Attributes
    ----------
    coef : ndarray of shape (k,)
        ``β̂`` on the support, in the order of ``support`` (private).
    support : ndarray of int
        The (sorted) support the coefficients belong to, as given.
    guarantee : Guarantee
        The guarantee of this fit, given the support (``str(fit.guarantee)`` in words):
        pure ``ε``-DP under the ``neighbours`` of the call, sensitivity ``2ζ`` (replace-one)
        or ``ζ`` (add/remove), the gradient's.
        ``epsilon``, ``delta``, ``neighbour``, ``sensitivity`` and ``is_private`` are read
        off it (:class:`~mipdp.result.PrivacyReport`).
    calibration : ObjectivePerturbationCalibration
        Data-free constants (noise scale, extra ridge, split of ``ε``).
    """

    coef: np.ndarray
    support: np.ndarray
    guarantee: Guarantee
    calibration: ObjectivePerturbationCalibration

    def __repr__(self) -> str:
        return (f"PrivateCoefficients(support={self.support.tolist()}, "
                f"coef={np.round(self.coef, 6).tolist()}, {self._privacy_repr()})")

    def full_coef(self, p: int) -> np.ndarray:
        """The coefficients as a length-``p`` vector (zero off the support)."""
        out = np.zeros(int(p))
        out[self.support] = self.coef
        return out

    def predict(self, X) -> np.ndarray:
        """``X[:, support] @ coef`` (no clipping: clip new data yourself if you want to)."""
        return np.asarray(X, dtype=float)[:, self.support] @ self.coef


def _check_support(support, p: int | None) -> np.ndarray:
    """Sorted distinct integer column indices (in ``[0, p)`` when ``p`` is given)."""
    try:
        S = np.asarray(support)
    except Exception as exc:  # pragma: no cover - exotic containers
        raise TypeError(f"support: expected integer column indices, got {support!r}") from exc
    if S.ndim != 1 or S.size == 0 or not np.issubdtype(S.dtype, np.integer):
        raise ValueError(f"support: expected a non-empty 1-D array of integer column indices, "
                         f"got {support!r}")
    S = np.sort(S.astype(np.intp))
    if S[0] < 0 or (p is not None and S[-1] >= p) or np.any(np.diff(S) == 0):
        where = "non-negative" if p is None else f"in [0, p = {p})"
        raise ValueError(f"support: indices must be distinct and {where}, got "
                         f"{np.asarray(support).tolist()}")
    return S


def _perturbed_fit(Xs: np.ndarray, yc: np.ndarray, b: np.ndarray, total_ridge: float,
                   radius: float) -> np.ndarray:
    """``argmin_{||β|| ≤ r} ½||y − Xβ||² + ½ total_ridge ||β||² + bᵀβ`` (exact)."""
    from .losses.least_squares import ridge_ball_values
    k = Xs.shape[1]
    A = Xs.T @ Xs + total_ridge * np.eye(k)
    q = Xs.T @ yc - b
    _, beta, _ = ridge_ball_values(A[None], q[None], float(yc @ yc), Xs.shape[0], radius,
                                   return_coef=True)
    return beta[0]


class _PublicBounds(_Constraint):
    """A pair ``(b_x, b_y)`` of finite positive numbers (no ``None``: no bound off the data)."""

    def is_satisfied_by(self, value):
        return (isinstance(value, (tuple, list)) and len(value) == 2
                and all(v is not None for v in value) and _Bounds().is_satisfied_by(value))

    def __str__(self):
        return ("a pair (bound_x, bound_y) of positive finite numbers chosen without looking "
                "at the data (bounds read off the data would void the guarantee)")


#: Parameter table of :func:`private_coefficients` (checked before the data is read).
PRIVATE_COEFFICIENTS_CONSTRAINTS = {
    "X": "no_validation", "y": "no_validation", "support": "no_validation",
    "eps": EPSILON, "bounds": [_PublicBounds()],
    "ridge": [Interval(Real, 0, None, closed="left")],
    "radius": POSITIVE_REAL,
    "random_state": ["random_state"], "accountant": ["accountant"],
    "neighbours": [StrOptions(set(NEIGHBOURS))],
}


@neighbours_argument
@validate_params(PRIVATE_COEFFICIENTS_CONSTRAINTS)
@cancels_on_error
def private_coefficients(X, y, support, eps: float, *, bounds: tuple[float, float],
                         ridge: float = 120.0, radius: float = 1.1,
                         random_state=None, accountant=None,
                         neighbours: str = "replace_one") -> PrivateCoefficients:
    """ε-DP least-squares coefficients on a released support (objective perturbation).

    Parameters
    ----------
    X : array_like of shape (n, p)
    y : array_like of shape (n,)
        Data; clipped here to ``bounds``.
    support : array_like of int
        Columns to fit.  Must be public: a private release (e.g.
        ``private_bss(...).support``, whose budget adds to ``eps`` by basic composition)
        or chosen without looking at the data.
    eps : float
        Budget of the fit.
    bounds : (float, float)
        Public clipping bounds ``(b_x, b_y)``; required (bounds read off the data would
        void the guarantee).
    ridge : float, default 120.0
        ``λ_r ≥ 0`` of the objective ``(1/2n)||y − X_Ŝβ||² + (λ_r/2n)||β||²``.
    radius : float, default 1.1
        Finite radius ``r`` of the ball ``||β||₂ ≤ r``.
    random_state : None, int, SeedSequence or numpy.random.Generator
    accountant : BudgetAccountant, optional
        Privacy accountant (:mod:`mipdp.accounting`): the guarantee (computed from the
        arguments alone) is checked against its budget before the data is read and then
        recorded.  Default: the accountant of an enclosing ``with`` block.  The support's
        own release is accounted for by the call that made it.  Releases under another
        neighbour notion than the accountant's are refused (``BudgetError``).
    neighbours : {"replace_one", "add_remove"}, default "replace_one"
        Neighbour notion of the guarantee, as in :func:`~mipdp.private_bss`.
        ``"replace_one"``: the datasets have the same number of rows ``n`` (public) and
        differ in one row; noise density ``∝ exp(−ε_b ||b|| / (2ζ))``.  ``"add_remove"``:
        one dataset is the other with one row added (``n`` need not be public); a row moves
        the gradient sum by at most ``ζ``, so the noise is half as large,
        ``∝ exp(−ε_b ||b|| / ζ)``.  The extra ridge and the split of ``ε`` are the same.
        Use the notion of the support's release (the accountant composes one notion).

    Returns
    -------
    PrivateCoefficients
        ``coef`` and its guarantee.  The noise drawn is not returned (with ``coef`` it
        would reveal the data's gradient at ``coef`` exactly).

    Notes
    -----
    Neighbours: replace one row (``n`` public; default) or add/remove one row.
    Sensitivity: one replaced row moves the gradient of the (sum-form) objective by at
    most ``2ζ``, one added or removed row by at most ``ζ``, ``ζ = (b_y + b_x√k r) b_x√k``;
    the Hessian moves by one (add/remove) or two (replace-one) rank-1 terms of eigenvalue
    ``≤ λ_H = k b_x²``.  Noise: density ``∝ exp(−ε_b ||b|| / (2ζ))`` (replace-one) or
    ``∝ exp(−ε_b ||b|| / ζ)`` (add/remove), plus the extra ridge ``Δ`` of
    :func:`objective_perturbation_calibration`.  Guarantee: **ε-DP (pure)** given the
    support; proof in the module docstring (and ``docs/privacy.md``).

    Examples
    --------
    >>> import numpy as np
    >>> from mipdp import private_bss, private_coefficients
    >>> from mipdp.datasets import make_bss_regression
    >>> X, y, _ = make_bss_regression(n=500, p=10, s=2, random_state=0)
    >>> sel = private_bss(X, y, s=2, eps=0.5, bounds=(0.5, 0.5), random_state=0)
    >>> fit = private_coefficients(X, y, sel.support, 0.5, bounds=(0.5, 0.5), random_state=0)
    >>> fit.coef.shape, fit.epsilon
    ((2,), 0.5)
    >>> sel = private_bss(X, y, s=2, eps=0.5, bounds=(0.5, 0.5), random_state=0,
    ...                   neighbours="add_remove")
    >>> fit = private_coefficients(X, y, sel.support, 0.5, bounds=(0.5, 0.5), random_state=0,
    ...                            neighbours="add_remove")
    >>> str(fit.neighbour)
    'add/remove-one'
    """
    from ._validation import check_random_state, check_X_y, clip_data, min_samples
    b_x, b_y = bounds
    k = _check_support(support, None).size   # its size only: the data is not read yet
    cal = objective_perturbation_calibration(k, eps, bounds=(b_x, b_y), ridge=ridge,
                                             radius=radius, neighbours=neighbours)
    add_remove = neighbours == "add_remove"
    guarantee = Guarantee.pure(
        cal.epsilon, Neighbour.ADD_REMOVE if add_remove else Neighbour.REPLACE_ONE,
        f"objective perturbation calibrated for {'add/remove' if add_remove else 'replace-one'} "
        "neighbours, given the support (itself a private release or data-independent)",
        sensitivity=cal.sensitivity,
        notes=(f"gradient moves by <= {'' if add_remove else '2*'}zeta = {cal.sensitivity:.4g}; "
               "noise epsilon "
               f"{cal.epsilon_noise:.4g}, Jacobian epsilon {cal.epsilon_jacobian:.4g}, extra "
               f"ridge {cal.extra_ridge:.4g}; data clipped to b_x = {float(b_x):g}, "
               f"b_y = {float(b_y):g}; ||beta||_2 <= {float(radius):g}"))
    acc = check_release(accountant, guarantee)  # before the data is read
    X, y = check_X_y(X, y, min_samples=min_samples(add_remove))
    S = _check_support(support, X.shape[1])
    rng = check_random_state(random_state)
    Xs, yc = clip_data(X[:, S], y, float(b_x), float(b_y))
    b = sample_l2_laplace(S.size, cal.noise_scale, rng)
    coef = _perturbed_fit(Xs, yc, b, cal.ridge + cal.extra_ridge, float(radius))
    return record_release(acc, PrivateCoefficients(coef=coef, support=S, guarantee=guarantee,
                                                   calibration=cal))
