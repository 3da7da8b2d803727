"""Metropolis-Hastings exponential mechanism for best subset selection (Roy & Tewari 2023)."""

from __future__ import annotations

import logging
import math
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import lars_path_gram

from .._feature_names import keeps_feature_names
from .._neighbours import neighbours_argument
from .._parallel import with_n_jobs
from .._param_validation import POSITIVE_INT, POSITIVE_REAL, check_less_than, validate_params
from .._validation import (
    check_bounds,
    check_random_state,
    check_X_y,
    clip_data,
    data_derived_bounds,
    min_samples,
)
from ..accounting import cancels_on_error, check_release, record_release
from ..guarantee import Guarantee
from ..result import SelectionResult
from ._common import (
    ADD_REMOVE,
    COMMON_CONSTRAINTS,
    check_neighbour,
    finalize_guarantee,
    make_result,
)

__all__ = ["mcmc", "l1_ball_lstsq", "project_l1_ball", "l1_ball_lstsq_pgd"]

logger = logging.getLogger(__name__)


# ------------------------------------------------------------- inner solver
def project_l1_ball(v: np.ndarray, radius: float) -> np.ndarray:
    """Euclidean projection onto ``{b : ||b||_1 <= radius}`` (Duchi et al. 2008, O(s log s))."""
    a = np.abs(v)
    if a.sum() <= radius:
        return v.copy()
    u = np.sort(a)[::-1]
    css = np.cumsum(u)
    j = np.arange(1, u.size + 1)
    keep = u * j > css - radius
    # the largest entry always stays (u_1 > u_1 - radius), but in floating point
    # css_1 - radius rounds to u_1 when radius is below u_1's last bit (|v| ~ 1e95, radius 1)
    keep[0] = True
    rho = np.flatnonzero(keep)[-1]
    # a - theta as (a - mean of the kept entries) + radius / (rho + 1): exact when one entry
    # is kept, where a - theta would cancel to 0
    return np.sign(v) * np.maximum((a - css[rho] / (rho + 1.0)) + radius / (rho + 1.0), 0.0)


def l1_ball_lstsq_pgd(XS: np.ndarray, y: np.ndarray, radius: float, n_iter: int = 20000,
                      tol: float = 1e-13) -> np.ndarray:
    """``argmin ||y - XS b||^2`` s.t. ``||b||_1 <= radius`` by accelerated projected gradient.

    FISTA on the ``s x s`` Gram matrix with the exact l1-ball projection; the
    fallback of :func:`l1_ball_lstsq` for degenerate ``XS`` and a cross-check in tests.
    """
    G = XS.T @ XS
    c = XS.T @ y
    step = 1.0 / max(np.linalg.eigvalsh(G)[-1], 1e-300)
    b = np.zeros(XS.shape[1])
    z, t = b.copy(), 1.0
    for _ in range(n_iter):
        b_new = project_l1_ball(z - step * (G @ z - c), radius)
        t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        z = b_new + ((t - 1.0) / t_new) * (b_new - b)
        done = np.max(np.abs(b_new - b)) <= tol * max(1.0, np.max(np.abs(b_new)))
        b, t = b_new, t_new
        if done:
            break
    return b


def l1_ball_lstsq(XS: np.ndarray, y: np.ndarray, radius: float) -> np.ndarray:
    """Exact ``argmin_b ||y - XS b||^2`` subject to ``||b||_1 <= radius``.

    If the (minimum-norm) least-squares solution is feasible it is optimal.
    Otherwise the constraint is active and the solution is the Lasso solution at the
    penalty where its l1 norm equals ``radius``: the Lasso path is piecewise linear
    with non-decreasing l1 norm, so it is followed by LARS-Lasso homotopy on the
    ``s x s`` Gram matrix (:func:`sklearn.linear_model.lars_path_gram`, at most a few
    times ``s`` knots) and interpolated linearly inside the segment that crosses
    ``radius`` (signs are constant there, so the l1 norm is linear). Exact up to
    rounding and ``O(n s^2 + s^3)`` per support, which is why it is used instead of
    an iterative solver or a modelling layer (cvxpy would cost milliseconds per
    call). The result is accepted only if it passes the KKT conditions; rank-deficient
    ``XS`` (where LARS drops regressors) and any failed check fall back to
    :func:`l1_ball_lstsq_pgd`.
    """
    b_ls, _, rank, _ = np.linalg.lstsq(XS, y, rcond=None)
    if np.abs(b_ls).sum() <= radius:
        return b_ls
    if rank < XS.shape[1]:
        logger.debug("l1_ball_lstsq (not private): rank-deficient X_S, using projected "
                     "gradient")
        return l1_ball_lstsq_pgd(XS, y, radius)
    G = XS.T @ XS
    c = XS.T @ y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        _, _, coefs = lars_path_gram(Xy=c, Gram=G, n_samples=XS.shape[0], method="lasso",
                                     max_iter=20 * XS.shape[1] + 20)
    l1 = np.abs(coefs).sum(axis=0)
    cross = np.flatnonzero(l1 >= radius)
    if cross.size and cross[0] > 0:
        i = cross[0]
        theta = (radius - l1[i - 1]) / (l1[i] - l1[i - 1])
        b = coefs[:, i - 1] + theta * (coefs[:, i] - coefs[:, i - 1])
        if _kkt_ok(G, c, b, radius):
            return b
    logger.debug("l1_ball_lstsq (not private): LARS path failed the optimality check, using "
                 "projected gradient")
    return l1_ball_lstsq_pgd(XS, y, radius)


def _kkt_ok(G: np.ndarray, c: np.ndarray, b: np.ndarray, radius: float, tol: float = 1e-7) -> bool:
    """KKT conditions of ``min b'Gb - 2c'b`` s.t. ``||b||_1 <= radius`` with the ball active.

    With ``g = c - G b`` (half the negative gradient) there must be ``lam >= 0`` with
    ``g_j = lam sign(b_j)`` on the support and ``|g_j| <= lam`` off it.
    """
    g = c - G @ b
    nz = b != 0
    if not nz.any():
        return False
    lam = float(np.mean(np.abs(g[nz])))
    scale = tol * max(1.0, float(np.max(np.abs(c))), lam)
    return bool(lam >= -scale and np.all(np.abs(g[nz] - lam * np.sign(b[nz])) <= scale)
                and np.all(np.abs(g[~nz]) <= lam + scale)
                and abs(np.abs(b).sum() - radius) <= 1e-9 * max(1.0, radius))


# ------------------------------------------------------------------ sampler
def _guarantee(eps, neighbour, n_iter, n_draws, bounds, delta_u=None) -> Guarantee:
    c = 1.0 if neighbour == ADD_REMOVE else 2.0
    per_draw = Guarantee(
        eps, float("nan"), neighbour,
        f"Metropolis-Hastings chain ({n_iter} steps) targeting the exponential mechanism "
        f"exp(-eps L(S) / ({c:g} Delta_u))", sensitivity=delta_u, proven=False,
        condition=f"the chain has mixed: the target is eps-DP, but the law of the state after "
                  f"{n_iter} steps is not certified to be close to it (delta unknown)")
    return finalize_guarantee(per_draw, n_draws, bounds, need_bounds=True)


@keeps_feature_names
@neighbours_argument
@validate_params({"l1_radius": POSITIVE_REAL, "n_iter": POSITIVE_INT}, shared=COMMON_CONSTRAINTS)
@with_n_jobs
@cancels_on_error
def mcmc(X, y, s: int, eps: float, bounds=None, l1_radius: float = 1.0, n_iter: int = 1000,
         neighbours: str = "replace_one", random_state=None, n_draws: int = 1,
         accountant=None,
           n_jobs: int | None = None) -> SelectionResult:
    """Metropolis-Hastings approximation of the exponential mechanism over supports.

    Parameters
    ----------
    X : array_like, shape (n, p)
    y : array_like, shape (n,)
    s : int
        Support size, ``1 <= s < p``.
    eps : float
        Privacy parameter of the target exponential mechanism (per draw).
    bounds : (b_x, b_y) or float or None
        Clipping bounds (domain knowledge; read off the data with a
        :class:`~mipdp.exceptions.PrivacyLeakWarning` when missing).
    l1_radius : float, default 1.0
        ``B`` in ``||b||_1 <= B``; must be chosen without looking at the data.
    n_iter : int, default 1000
        Fixed number of Metropolis-Hastings steps per chain (``>= 1``).
    neighbours : {"replace_one", "add_remove"}, default "replace_one"
        Neighbour notion of the guarantee (a :class:`~mipdp.Neighbour` member is
        accepted too).  The old ``neighbour="replace-one" | "add/remove"`` still works,
        with a :class:`FutureWarning`.
    random_state : None, int, SeedSequence or Generator
    n_draws : int, default 1
        Independent chains (objective values are cached and shared).
        ``epsilon = n_draws * eps``.
    accountant : BudgetAccountant, optional
        Checks the planned guarantee before the data is read and records the release; the
        guarantee is conditional, so a finite-budget accountant refuses it unless created
        with ``allow_conditional=True``.
    n_jobs : int, optional
        Threads for the independent work (scikit-learn's semantics: ``None`` means 1,
        ``-1`` all cores); the release does not depend on it (docs/algorithms.md,
        "Parallel work").

    Returns
    -------
    SelectionResult
        ``delta`` is NaN: the approximation error is not computed (see Notes); the
        guarantee is conditional (``result.is_private`` is False).
        ``info["diagnostics_not_private"]`` (acceptance rate, number of supports evaluated)
        depends on the chain's path through the data and is **not private**.

    Notes
    -----
    Target ``pi(S) ∝ exp(-eps L(S) / (c Delta_u))`` over supports of size ``s``, with
    ``L(S) = min_{||b||_1 <= B} ||y - X_S b||^2`` on clipped data and
    ``Delta_u = (B b_x + b_y)^2``: each residual satisfies
    ``|y_i - x_i^T b| <= b_y + b_x ||b||_1``, so adding, removing or replacing one row
    moves ``L(S)`` by at most ``Delta_u``. Under add/remove ``L`` only increases when a
    row is added (the utility is monotone) and ``c = 1`` (Roy & Tewari's
    formula) makes ``pi`` ``eps``-DP; under replace-one ``L`` can move both
    ways and ``c = 2`` (the standard exponential mechanism) is needed for ``pi`` to be
    ``eps``-DP. The chain starts at a uniform random support and proposes swaps
    (drop a uniform member, add a uniform non-member; symmetric), accepting with
    probability ``min(1, pi(S')/pi(S))`` in log space; after ``n_iter`` steps the
    current support is released.

    **Guarantee: approximate only.** The output has the law of the chain after
    ``n_iter`` steps, not ``pi``. If its total-variation distance to ``pi`` were at
    most ``eta`` on every dataset, the release would be
    ``(eps, eta (1 + e^eps))``-DP; Roy & Tewari bound the mixing time only with high
    probability under their model assumptions, and nothing here certifies mixing,
    so no finite ``delta`` is claimed.
    """
    t0 = time.perf_counter()
    eps = float(eps)
    neighbour = check_neighbour(neighbours)
    acc = check_release(accountant, _guarantee(eps, neighbour, n_iter, n_draws, bounds))
    X, y = check_X_y(X, y, min_samples=min_samples(neighbour == ADD_REMOVE))
    n, p = X.shape
    s = check_less_than(s, p, "s", "p", "mcmc")
    radius = float(l1_radius)
    rng = check_random_state(random_state)
    b_x, b_y = check_bounds(bounds, X, y)
    assert b_y is not None  # need_y
    Xc, yc = clip_data(X, y, b_x, b_y)
    c = 1.0 if neighbour == ADD_REMOVE else 2.0
    # scaled units (issue 39): X and y divided by m = radius b_x + b_y, the bound on a
    # residual, so the objective is at most n and its sensitivity c (the data's units:
    # at most n m^2, with sensitivity c m^2, which overflowed on a neighbour only); the
    # l1-ball least squares has the same minimiser on both scales
    with np.errstate(over="ignore", under="ignore"):
        m_res = float(np.float64(radius) * b_x + b_y)
        delta_u = float(np.float64(m_res) * m_res)          # reported (may be inf or 0)
        Xs, ys = Xc / m_res, yc / m_res
    scale_data = float(np.float64(eps) / (c * delta_u)) if delta_u > 0 else math.inf
    scale = eps / c                               # log pi(S) = -scale * L(S)/m^2 + const
    cache: dict[tuple, float] = {}

    def objective(support: np.ndarray) -> float:
        key = tuple(np.sort(support).tolist())
        val = cache.get(key)
        if val is None:
            XS = Xs[:, list(key)]
            b = l1_ball_lstsq(XS, ys, radius)
            r = np.clip(ys - XS @ b, -1.0, 1.0)  # |r| <= 1 exactly; the clip only rounds
            val = float(r @ r)
            cache[key] = val
        return val

    supports = []
    accepted = 0
    for _ in range(n_draws):
        support = np.sort(rng.choice(p, size=s, replace=False))
        in_s = np.zeros(p, dtype=bool)
        in_s[support] = True
        current = objective(support)
        for _ in range(int(n_iter)):
            pos = int(rng.integers(s))
            j = int(rng.integers(p))
            while in_s[j]:
                j = int(rng.integers(p))
            proposal = support.copy()
            proposal[pos] = j
            value = objective(proposal)
            if np.log(rng.random()) < -scale * (value - current):
                in_s[support[pos]] = False
                in_s[j] = True
                support, current = proposal, value
                accepted += 1
        supports.append(np.sort(support))
    t1 = time.perf_counter()
    logger.debug("mcmc: p=%d s=%d eps=%g n_iter=%d; not private: %d supports evaluated", p, s,
                 eps, n_iter, len(cache))
    guarantee = _guarantee(eps, neighbour, n_iter, n_draws, bounds, delta_u)
    return record_release(acc, make_result(
        supports, method="mcmc", guarantee=guarantee, epsilon_per_draw=eps,
        timings={"sampling": t1 - t0, "total": t1 - t0},
                       info={"l1_radius": radius,
                             ("bounds" if not data_derived_bounds(bounds) else
                              "bounds_not_private"): (b_x, b_y),
                             "target_scale": scale_data, "n_iter": int(n_iter),
                             "inner_solver": "least squares, else LARS-Lasso homotopy on the "
                                             "Gram matrix (exact); FISTA fallback",
                             "diagnostics_not_private": {
                                 "acceptance_rate": accepted / max(1, n_draws * n_iter),
                                 "n_supports_evaluated": len(cache)}}))
