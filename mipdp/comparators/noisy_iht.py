"""Noisy iterative hard thresholding with peeling (Cai, Wang & Zhang 2021).

The statistics literature's minimax-rate method for sparse linear regression under
differential privacy (Cai, Wang & Zhang 2021, *Ann. Statist.* 49(5), "The cost of
privacy"), adapted to the package's conventions: public coordinate-wise clipping bounds
instead of the paper's truncation levels, and a clipped residual instead of the paper's
projection of the iterates (docs/comparators.md, "Noisy IHT"; proof in docs/privacy.md,
"Noisy IHT with peeling").
"""

from __future__ import annotations

import logging
import math
import time
from numbers import Integral, Real
from typing import Any

import numpy as np

from .._feature_names import keeps_feature_names
from .._neighbours import neighbours_argument
from .._param_validation import (
    POSITIVE_REAL,
    Interval,
    InvalidParameterError,
    check_less_than,
    validate_params,
)
from .._validation import check_bounds, check_random_state, check_X_y, clip_data, min_samples
from ..accounting import cancels_on_error, check_release, record_release
from ..guarantee import Guarantee, advanced_epsilon
from ..result import SelectionResult
from ._common import (
    ADD_REMOVE,
    COMMON_CONSTRAINTS,
    check_neighbour,
    finalize_guarantee,
    make_result,
    support_size_alias,
)

__all__ = ["noisy_iht", "iht_calibration", "iht_sensitivity", "gradient_step",
           "scaled_gradient_step", "peel", "DEFAULT_N_ITER", "DEFAULT_STEP", "DEFAULT_RESIDUAL"]

logger = logging.getLogger(__name__)

#: Default number of iterations ``T`` (chosen on Prastakos et al.'s design; docs/comparators.md).
DEFAULT_N_ITER = 2
#: Default step ``eta = DEFAULT_STEP / b_x**2`` (``b_x**2`` bounds every diagonal entry of
#: the Hessian ``X^T X / n`` of the clipped data; chosen on the design of Prastakos et al. (2025)).
DEFAULT_STEP = 1.0
#: Default residual bound ``c = DEFAULT_RESIDUAL * b_y`` (chosen on Prastakos et al.'s design).
DEFAULT_RESIDUAL = 0.5

_CONSTRAINTS = {
    **COMMON_CONSTRAINTS,
    "delta": [Interval(Real, 0, 1, closed="left")],
    "n_iter": [Interval(Integral, 1, None, closed="left")],
    "step": [None, *POSITIVE_REAL],
    "residual_bound": [None, *POSITIVE_REAL],
    "n_public": [None, Interval(Integral, 1, None, closed="left")],
}


def _n_mechanisms(k: int, n_iter: int) -> int:
    """Number of ``eps_0``-DP Laplace mechanisms of one run: ``k`` picks per iteration and
    ``k`` noisy values in every iteration but the last (only its support is released)."""
    return k * n_iter + k * (n_iter - 1)


def iht_calibration(k: int, n_iter: int, eps: float, delta: float = 0.0
                    ) -> tuple[float, int, float]:
    """Privacy parameter ``eps_0`` of each of the run's Laplace mechanisms.

    Parameters
    ----------
    k : int
        Coordinates peeled per iteration.
    n_iter : int
        Iterations ``T``.
    eps : float
        Budget of one run.
    delta : float, default 0
        ``0``: basic composition, ``eps_0 = eps / m``.  ``> 0``: the largest ``eps_0`` whose
        advanced composition over the ``m`` mechanisms (``delta' = delta``) is ``<= eps``
        (Kairouz, Oh & Viswanath 2017; never below ``eps / m``).

    Returns
    -------
    eps0 : float
    m : int
        Number of mechanisms, ``k T + k (T - 1)``.
    eps_total : float
        The composed ``eps`` actually guaranteed (``<= eps``).
    """
    m = _n_mechanisms(k, n_iter)
    if delta == 0.0:
        return eps / m, m, eps
    lo, hi = eps / m, eps       # advanced_epsilon([lo] * m) <= basic = eps; at hi it is > eps
    if advanced_epsilon([hi] * m, delta) <= eps:
        lo = hi
    else:
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if advanced_epsilon([mid] * m, delta) <= eps:
                lo = mid
            else:
                hi = mid
    return lo, m, advanced_epsilon([lo] * m, delta)


def iht_sensitivity(b_x: float, residual_bound: float, step: float, norm: float,
                    neighbour) -> float:
    """Coordinate-wise sensitivity of the gradient-step vector.

    Row ``i`` enters ``v = beta - (step / norm) sum_i r_i x_i`` through ``r_i x_i`` with
    ``|r_i| <= residual_bound`` and ``|x_ij| <= b_x``: replacing it moves each coordinate by
    at most ``2 step b_x c / norm``, adding or removing it by ``step b_x c / norm``
    (``norm`` is public: ``n`` under replace-one, ``n_public`` under add/remove).
    """
    factor = 1.0 if check_neighbour(neighbour) == ADD_REMOVE else 2.0
    return factor * step * b_x * residual_bound / norm


def gradient_step(Xc: np.ndarray, yc: np.ndarray, beta: np.ndarray, step: float, norm: float,
                  residual_bound: float) -> np.ndarray:
    """``beta - (step / norm) X^T clip(X beta - y, -c, c)`` on clipped data (no checks)."""
    r = np.clip(Xc @ beta - yc, -residual_bound, residual_bound)
    return beta - (step / norm) * (Xc.T @ r)


# -- the iterations in scaled units ---------------------------------------------------------
#: an exponent no term of a product reaches (the exponent given to an exact zero)
_NO_EXPONENT = -(1 << 40)
#: the largest noise scale (in units of the gradient's coefficient u) a run accepts: the
#: iterates then stay far below the largest float for any number of iterations used
MAX_NOISE_SCALE = 1e290


def _frexp(x: float) -> tuple[float, int]:
    """``x = m 2**e`` with ``0.5 <= |m| < 1`` (``m = 0, e = 0`` for ``x = 0``)."""
    return math.frexp(float(x))


def _scale_pair(*mul: float, div: tuple[float, ...] = ()) -> tuple[float, int]:
    """The product ``prod(mul) / prod(div)`` of positive public scalars as ``(m, e)``,
    ``m 2**e``, formed without overflow or underflow whatever their magnitudes."""
    m, e = 1.0, 0
    for x in mul:
        mx, ex = _frexp(x)
        m, de = _frexp(m * mx)
        e += ex + de
    for x in div:
        mx, ex = _frexp(x)
        m, de = _frexp(m / mx)
        e += de - ex
    return m, e


def _times(pair: tuple[float, int], arr: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``2**e m arr`` as mantissas and exponents (an exact zero gets :data:`_NO_EXPONENT`)."""
    fa, ea = np.frexp(arr)
    m, e = pair
    fm, de = np.frexp(m * fa)
    ex = (ea + de).astype(np.int64) + e
    return fm, np.where(fm == 0.0, _NO_EXPONENT, ex)


def _clip_difference(a: tuple[float, int], z: np.ndarray, b: tuple[float, int],
                     w: np.ndarray) -> np.ndarray:
    """``clip(A z - B w, -1, 1)`` for public scalars ``A = a``, ``B = b`` given as
    ``(m, e)`` (:func:`_scale_pair`) and finite arrays ``z``, ``w``, with no intermediate
    that overflows: both terms are brought to the larger one's binary exponent ``F``, so
    their difference is at most 2 in magnitude, then scaled by ``2**F`` (an overflow to
    ``±inf`` there is a value beyond the clipping range, which the clip maps to ``±1``,
    exactly as in real arithmetic).  A term that underflows against the other is smaller
    than ``2**-1070`` times it: below the rounding of the difference."""
    fa, ea = _times(a, z)
    fb, eb = _times(b, w)
    big = np.maximum(ea, eb)
    with np.errstate(over="ignore", under="ignore"):
        diff = (np.ldexp(fa, np.maximum(ea - big, -2000).astype(np.int32))
                - np.ldexp(fb, np.maximum(eb - big, -2000).astype(np.int32)))
        top = np.clip(big, -2000, 2000).astype(np.int32)
        out = np.ldexp(diff, np.where(diff == 0.0, 0, top))
    return np.clip(out, -1.0, 1.0)


def scaled_gradient_step(Xs: np.ndarray, ys: np.ndarray, gamma: np.ndarray,
                         kappa: tuple[float, int], inv_c: tuple[float, int]) -> np.ndarray:
    """The gradient step of :func:`gradient_step` in scaled units, with no overflow.

    With ``Xs = Xc / b_x``, ``ys = yc / b_y`` (entries in ``[-1, 1]``), the iterate
    ``beta = u gamma`` in units of ``u = eta b_x c / N`` (``c`` the residual bound, ``N``
    the normaliser), and the public scalars ``kappa = eta b_x**2 / N`` and
    ``inv_c = b_y / c`` as ``(m, e)`` pairs (:func:`_scale_pair`), it returns
    ``nu = v / u = gamma - Xs^T rho`` with the clipped residual in units of ``c``,

    ``rho_i = clip(x_i^T beta - y_i, -c, c) / c = clip(kappa Xs_i^T gamma - inv_c ys_i, -1, 1)``

    (the same numbers as :func:`gradient_step` in real arithmetic, divided by ``u``).

    ``|Xs^T rho| <= n``, so ``nu`` is finite whenever ``gamma`` is; the coordinate-wise
    sensitivity of ``nu`` is ``2`` (replace-one) or ``1`` (add/remove), the sensitivity of
    :func:`iht_sensitivity` divided by ``u``.  ``Xs gamma`` is formed on ``gamma`` scaled
    by a power of two (``|.| <= 1``), its exponent folded into ``kappa``.
    """
    g = float(np.max(np.abs(gamma))) if gamma.size else 0.0
    if g == 0.0:
        z, shift = np.zeros(Xs.shape[0]), 0
    else:
        shift = _frexp(g)[1]
        with np.errstate(under="ignore"):
            z = Xs @ np.ldexp(gamma, -shift)
    rho = _clip_difference((kappa[0], kappa[1] + shift), z, inv_c, ys)
    return gamma - Xs.T @ rho


def peel(v: np.ndarray, k: int, eps0: float, sensitivity: float, rng: np.random.Generator,
         *, values: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """Peeling: ``k`` rounds of report-noisy-max on ``|v_j|``, then noisy values.

    Round ``l`` picks ``argmax_{j not yet picked} |v_j| + w_j``, ``w_j ~ Laplace(2 Delta /
    eps0)`` fresh; then ``v_S + Laplace(Delta / eps0)`` is released on the picked set.  Each
    pick and each value is ``eps0``-DP when every ``v_j`` moves by at most ``Delta``.

    Returns
    -------
    picked : ndarray of int, shape (k,)
        In the order picked.
    noisy_values : ndarray (k,) or None
        ``None`` when ``values=False``.
    """
    u = np.abs(v)
    alive = np.ones(u.size, dtype=bool)
    picked = np.empty(k, dtype=np.intp)
    scale = 2.0 * sensitivity / eps0
    for r in range(k):
        noisy = u + rng.laplace(scale=scale, size=u.size)
        noisy[~alive] = -np.inf
        j = int(np.argmax(noisy))
        picked[r] = j
        alive[j] = False
    if not values:
        return picked, None
    return picked, v[picked] + rng.laplace(scale=sensitivity / eps0, size=k)


def _guarantee(eps, delta, neighbour, k, n_iter, n_draws, bounds, sens=None, b_x=None,
               b_y=None, c=None):
    eps0, m, eps_total = iht_calibration(k, n_iter, eps, delta)
    clip = "" if b_x is None else (f" on data clipped to |x| <= {b_x:g}, |y| <= {b_y:g}, "
                                   f"residuals clipped to {c:g}")
    mech = (f"noisy IHT with Laplace peeling{clip}: {n_iter} iteration(s) x ({k} "
            f"report-noisy-max picks + {k} Laplace values, none in the last), {m} "
            f"mechanisms each {eps0:.6g}-DP")
    if delta == 0.0:
        per_draw = Guarantee.pure(eps_total, neighbour, mech, sensitivity=sens,
                                  notes="basic composition")
    else:
        how = (f"advanced composition with delta' = {delta:g}" if eps0 * m > eps * (1 + 1e-12)
               else "basic composition (advanced composition gains nothing at this m; the "
                    "release is also pure eps-DP)")
        per_draw = Guarantee.approximate(eps_total, delta, neighbour, mech, sensitivity=sens,
                                         notes=how)
    return finalize_guarantee(per_draw, n_draws, bounds, need_bounds=True)


@keeps_feature_names
@support_size_alias
@neighbours_argument
@validate_params(shared=_CONSTRAINTS)
@cancels_on_error
def noisy_iht(X, y, k: int, eps: float, delta: float = 0.0, bounds=None,
              n_iter: int = DEFAULT_N_ITER, step: float | None = None,
              residual_bound: float | None = None, neighbours: str = "replace_one",
              n_public: int | None = None, random_state=None, n_draws: int = 1,
              accountant=None) -> SelectionResult:
    """Select ``k`` features by noisy iterative hard thresholding with peeling.

    Cai, Wang & Zhang (2021)'s private sparse regression: projected gradient descent on
    least squares where the projection onto ``k``-sparse vectors is replaced by
    *peeling*, ``k`` rounds of report-noisy-max (Laplace) followed by noisy values on the
    chosen set.  The released support is the set peeled in the last iteration.

    Parameters
    ----------
    X : array_like, shape (n, p)
    y : array_like, shape (n,)
    k : int
        Support size, ``1 <= k < p`` (peeled per iteration).
    eps : float
        Privacy budget per draw.
    delta : float, default 0
        ``0``: pure ``eps``-DP, basic composition of the run's Laplace mechanisms.
        ``> 0``: ``(eps, delta)``-DP, the same mechanisms calibrated by advanced
        composition (the paper's version); less noise only when the number of
        mechanisms ``k (2 n_iter - 1)`` exceeds about 30 (at ``delta = 1e-6``).
    bounds : (b_x, b_y) or float or None
        Public clipping bounds, ``|x_ij| <= b_x``, ``|y_i| <= b_y`` (the paper truncates
        at levels of its sub-Gaussian model instead).  Missing bounds are read off the
        data with a :class:`~mipdp.exceptions.PrivacyLeakWarning`: not private.
    n_iter : int, default 2
        Iterations ``T`` (public).  Each costs budget; on Prastakos et al.'s (2025) design ``T = 2``
        beat ``T = 3, 5, 10`` (docs/comparators.md).  ``T = 1`` scored higher still there
        but does not iterate: it is private marginal screening with Laplace peeling.
    step : float, optional
        Step ``eta``; default ``1 / b_x**2``.
    residual_bound : float, optional
        Residuals ``x_i^T beta - y_i`` are clipped to ``[-c, c]``; default ``c = b_y / 2``
        (chosen on the design of Prastakos et al. (2025), docs/comparators.md).
    neighbours : {"replace_one", "add_remove"}, default "replace_one"
        Neighbour notion of the guarantee (a :class:`~mipdp.Neighbour` member is
        accepted too).  The old ``neighbour="replace-one" | "add/remove"`` still works,
        with a :class:`FutureWarning`.
    n_public : int, optional
        Public normaliser of the gradient, ``v = beta - (eta / n_public) sum_i g_i``.
        Required under add/remove neighbours (``n`` is not public then; ``InvalidParameterError``
        before the data is read otherwise); under replace-one it defaults to ``n``.
    random_state : None, int, SeedSequence or Generator
    n_draws : int, default 1
        Independent runs; reported ``epsilon = n_draws * eps`` (and ``n_draws * delta``).
    accountant : BudgetAccountant, optional

    Returns
    -------
    SelectionResult
        ``info`` holds the calibration (``eps0``, ``n_mechanisms``, ``sensitivity``,
        ``step``, ``residual_bound``, ``n_iter``) — all public.

    Notes
    -----
    **Neighbours and sensitivity.**  On the clipped data, iteration ``t`` computes
    ``v = beta^t - (eta / N) sum_i r_i x_i`` with ``r_i = clip(x_i^T beta^t - y_i, -c, c)``
    and ``N = n`` (replace-one, ``n`` public) or ``N = n_public`` (add/remove).  Given
    ``beta^t`` (a previous output), row ``i`` enters only through ``r_i x_i``, whose entries
    are at most ``b_x c``: every ``v_j`` moves by at most ``Delta = 2 eta b_x c / n``
    (replace-one) or ``eta b_x c / n_public`` (add/remove), all at once allowed.

    **Privacy.**  Each report-noisy-max pick (Laplace scale ``2 Delta / eps_0`` on
    ``|v_j|``) and each noisy value (Laplace scale ``Delta / eps_0``) is ``eps_0``-DP; a run
    is an adaptive composition of ``m = k T + k (T - 1)`` of them (no values are drawn in the
    last iteration).  ``delta = 0``: ``eps_0 = eps / m``, **eps-DP** (pure) by basic
    composition.  ``delta > 0``: ``eps_0`` is the largest value whose advanced composition
    with ``delta' = delta`` is ``<= eps``: **(eps, delta)-DP**.  Both hold under the chosen
    neighbour notion *provided the bounds are data-independent*.  Proof in docs/privacy.md,
    "Noisy IHT with peeling".

    **Floating point.**  The iterations run in scaled units (``X / b_x``, ``y / b_y``, the
    iterate in units of ``u = eta b_x c / N``, sensitivity 2 or 1 there), the same
    mechanism in law, so that no intermediate overflows for any public bounds, step or
    residual bound (docs/privacy.md, "Noisy IHT in scaled units").  A noise scale above
    ``1e290 u`` is refused before the data is read.
    """
    t0 = time.perf_counter()
    eps, delta = float(eps), float(delta)
    neighbour = check_neighbour(neighbours)
    if neighbour == ADD_REMOVE and n_public is None:
        raise InvalidParameterError(
            "n_public: noisy_iht under add/remove neighbours needs a public normaliser of the "
            "gradient (the number of rows is not public then); pass n_public=<a public "
            "estimate of n>, or use neighbours='replace_one'")
    unit_sens = 1.0 if neighbour == ADD_REMOVE else 2.0
    eps0, m, _ = iht_calibration(int(k), n_iter, eps, delta)
    if 2.0 * unit_sens / eps0 > MAX_NOISE_SCALE:         # public: before the data is read
        raise InvalidParameterError(
            f"eps: {eps:g} spread over the run's {m} Laplace mechanisms gives a noise scale "
            f"above {MAX_NOISE_SCALE:g} times the gradient's (eps0 = {eps0:g}); pass a "
            "larger eps or fewer iterations n_iter / a smaller k")
    acc = check_release(accountant, _guarantee(eps, delta, neighbour, k, n_iter, n_draws,
                                               bounds))
    # n >= 1 under add/remove (n private), n >= 2 under replace-one (n public)
    X, y = check_X_y(X, y, min_samples=min_samples(neighbour == ADD_REMOVE))
    n, p = X.shape
    k = check_less_than(k, p, "k", "p", "noisy_iht")
    rng = check_random_state(random_state)
    b_x, b_y = check_bounds(bounds, X, y)
    assert b_y is not None  # need_y
    Xc, yc = clip_data(X, y, b_x, b_y)
    with np.errstate(over="ignore", under="ignore", divide="ignore"):   # public figures
        eta = (float(np.float64(DEFAULT_STEP) / b_x / b_x) if step is None else float(step))
        c = DEFAULT_RESIDUAL * b_y if residual_bound is None else float(residual_bound)
        norm = float(n if n_public is None else n_public)
        u_b = np.float64(DEFAULT_STEP) / b_x if step is None else np.float64(step) * b_x
        # the sensitivity in the data's units (reported; the run uses the scaled one)
        sens = float((1.0 if neighbour == ADD_REMOVE else 2.0) * u_b * c / norm)
    # scaled units (docs/privacy.md, "Noisy IHT in scaled units"): Xs = Xc / b_x,
    # ys = yc / b_y, the iterate beta = u gamma with u = eta b_x c / N; the sensitivity of
    # the scaled gradient step is 2 (replace-one) or 1 (add/remove)
    if step is None:
        kappa = _scale_pair(DEFAULT_STEP, div=(norm,))      # eta b_x^2 / N = 1 / N
    else:
        kappa = _scale_pair(float(step), b_x, b_x, div=(norm,))
    inv_c = _scale_pair(b_y, div=(c,))
    with np.errstate(under="ignore"):     # |x| <= b_x: the quotients are in [-1, 1]
        Xs, ys = Xc / b_x, yc / b_y
    t1 = time.perf_counter()
    supports = []
    for _ in range(n_draws):
        gamma = np.zeros(p)
        for t in range(n_iter):
            nu = scaled_gradient_step(Xs, ys, gamma, kappa, inv_c)
            last = t == n_iter - 1
            picked, vals = peel(nu, k, eps0, unit_sens, rng, values=not last)
            if not last:
                gamma = np.zeros(p)
                gamma[picked] = vals
        supports.append(picked)
    t2 = time.perf_counter()
    logger.debug("noisy_iht: p=%d k=%d T=%d eps=%g delta=%g eps0=%g sensitivity=%g", p, k,
                 n_iter, eps, delta, eps0, sens)
    guarantee = _guarantee(eps, delta, neighbour, k, n_iter, n_draws, bounds, sens, b_x, b_y, c)
    info: dict[str, Any] = {"n_iter": n_iter, "step": eta, "residual_bound": c, "normaliser": norm,
            "eps0": eps0, "n_mechanisms": m, "sensitivity": sens, "delta": delta}
    info["bounds" if guarantee.is_private else "bounds_not_private"] = (b_x, b_y)
    return record_release(acc, make_result(
        supports, method="noisy_iht", guarantee=guarantee, epsilon_per_draw=eps,
        timings={"setup": t1 - t0, "selection": t2 - t1, "total": t2 - t0}, info=info))


# ------------------------------------------------------------------ exact law (audit)
def _rnm_probabilities(u: np.ndarray, scale: float) -> np.ndarray:
    """``P(argmax_j u_j + w_j = i)``, ``w_j ~ Laplace(scale)`` i.i.d., by quadrature."""
    from scipy import integrate

    def cdf(z):
        e = 0.5 * np.exp(-np.abs(z) / scale)
        return np.where(z < 0, e, 1.0 - e)

    out = np.empty(u.size)
    lo, hi = float(u.min()) - 40.0 * scale, float(u.max()) + 40.0 * scale
    pts = np.unique(u)
    for i in range(u.size):
        others = np.delete(u, i)

        def f(t, i=i, others=others):
            return (math.exp(-abs(t - u[i]) / scale) / (2.0 * scale)
                    * float(np.prod(cdf(t - others))))
        out[i] = integrate.quad(f, lo, hi, points=pts, limit=400, epsabs=1e-14,
                                epsrel=1e-11)[0]
    return out / out.sum()


def laplace_peeling_distribution(v, k: int, eps0: float, sensitivity: float
                                 ) -> tuple[list[tuple], np.ndarray]:
    """Exact law of the ordered picks of :func:`peel` (small ``p``; audit and tests).

    Returns every ordered ``k``-tuple of distinct indices and its log-probability, the
    product over rounds of the report-noisy-max probabilities (1-D quadrature).
    """
    import itertools
    u = np.abs(np.asarray(v, dtype=float))
    scale = 2.0 * sensitivity / eps0
    cache: dict[tuple, np.ndarray] = {}

    def probs(removed: tuple) -> np.ndarray:
        key = tuple(sorted(removed))
        if key not in cache:
            alive = np.setdiff1d(np.arange(u.size), key)
            p = np.zeros(u.size)
            p[alive] = _rnm_probabilities(u[alive], scale)
            cache[key] = p
        return cache[key]

    tuples = list(itertools.permutations(range(u.size), k))
    logp = np.array([sum(math.log(probs(t[:r])[t[r]]) for r in range(k)) for t in tuples])
    return tuples, logp
