"""Exact hinge solutions on a guessed active structure, with primal and dual certificates.

For one support write ``Z`` for the rows ``z_k = y_k x_{k,S}`` and ``t_k = 1 - z_kᵀβ``.
A *structure* splits the samples into the margin set ``E`` (``t_k = 0``), the violators
``V`` (``t_k > 0``, dual weight ``a_k = 1``) and the rest (``a_k = 0``).  On a fixed
structure the KKT system of

    min_{||β|| <= r}  (1/n) Σ_k max(0, t_k)  +  (λ/n) ||β||²

is linear up to the ball multiplier: with ``c = Σ_V z_k``, ``M = Σ_E z_k z_kᵀ``,
``q = Σ_E z_k`` and ``λ' = λ + nμ``,

    Z_E β = 1,      2λ'β = c + Z_Eᵀ a_E,      a_E ∈ [0, 1]^E.

Write ``b0 = M⁺q`` (the least-norm solution of ``Z_E β = 1``) and ``b1 = (I - P_E)c / 2``
(``P_E = M⁺M``, the projector onto the span of ``E``): then ``β = b0 + b1/λ'`` and, as
``b0 ⟂ b1``, ``||β||² = ||b0||² + ||b1||²/λ'²``, so the ball gives ``λ'`` in closed form
when ``b1 ≠ 0``.  When ``b1 = 0`` (``E`` pins ``β`` down) and ``β`` lies on the sphere,
``λ' >= λ`` is free and is chosen to make the multipliers feasible.

Every candidate is scored by its duality gap ``P(β) - D(a)``:

    P(β) = (1/n) Σ max(0, t_k) + (λ/n)||β||²                       (β feasible: P >= L)
    D(a) = (1/n) Σ a_k - μ r² - ||Zᵀa||² / (4 n λ'),  λ' = max(λ, ||Zᵀa||/(2r))
                                                                  (a ∈ [0,1]^n: D <= L)

(``D`` is the Lagrangian dual with the best ``μ`` for the given ``a``), so a wrong
structure can cost time but never accuracy: only candidates whose gap is at rounding level
are accepted by the caller.
"""

from __future__ import annotations

import numpy as np

from ._newton import gather, margins

__all__ = ["hinge_primal", "hinge_dual", "polish_batch", "polish_structure", "polish_exact"]

_RANK_TOL = 1e-11


def hinge_primal(t: np.ndarray, beta: np.ndarray, lam: float, n: int) -> np.ndarray:
    """``P(β)`` from the margins ``t`` (shape (m, n)) of a feasible ``β`` (shape (m, s))."""
    return np.maximum(t, 0.0).sum(axis=1) / n + (lam / n) * np.einsum("ms,ms->m", beta, beta)


def hinge_dual(a_sum: np.ndarray, w: np.ndarray, lam: float, radius: float,
               n: int) -> tuple[np.ndarray, np.ndarray]:
    """``D(a)`` and its ``λ'`` from ``Σ_k a_k`` (m,) and ``w = Zᵀa`` (m, s), ``a ∈ [0,1]^n``."""
    nw = np.linalg.norm(w, axis=1)
    lam_p = np.maximum(lam, nw / (2.0 * radius))
    D = a_sum / n - (lam_p - lam) / n * radius ** 2 - nw * nw / (4.0 * n * lam_p)
    return D, lam_p


def _structure_beta(ZE, valid, c, lam, radius, rank_tol=_RANK_TOL):
    """``β``, ``λ'``, the least-norm multipliers ``a_E`` (not clipped; zero on padding) and
    whether ``λ'`` is free (``β`` pinned by ``E`` on the sphere), for each structure."""
    m, s, _ = ZE.shape
    M = np.matmul(ZE, ZE.transpose(0, 2, 1))
    q = ZE.sum(axis=2)
    ev, Q = np.linalg.eigh(M)
    keep = ev > rank_tol * np.maximum(ev[:, -1:], 1e-300)
    inv = np.where(keep, 1.0 / np.where(keep, ev, 1.0), 0.0)
    Mp = np.einsum("mij,mj,mkj->mik", Q, inv, Q)
    PE = np.einsum("mij,mj,mkj->mik", Q, keep.astype(float), Q)
    b0 = np.einsum("mij,mj->mi", Mp, q)
    b1 = 0.5 * (c - np.einsum("mij,mj->mi", PE, c))
    nb0 = np.einsum("ms,ms->m", b0, b0)
    nb1 = np.einsum("ms,ms->m", b1, b1)
    r2 = radius * radius
    pinned = nb1 <= (1e-26 * (1.0 + np.einsum("ms,ms->m", c, c)))
    inside = nb0 + nb1 / lam / lam <= r2     # lam ** 2 overflows (OverflowError) past 1e154
    with np.errstate(divide="ignore", invalid="ignore"):
        lam_p = np.where(inside | pinned, lam, np.sqrt(nb1 / (r2 - nb0)))
    lam_p = np.where(np.isfinite(lam_p) & (lam_p >= lam), lam_p, lam)
    beta = np.where(pinned[:, None], b0, b0 + b1 / lam_p[:, None])
    # one step of iterative refinement on Z_E β = 1 (rounding in b0, and in b1 amplified
    # by 1/λ' when λ is tiny, would otherwise leave the margin points off the margin)
    res = (1.0 - np.einsum("msk,ms->mk", ZE, beta)) * valid
    beta = beta + np.einsum("mij,mj->mi", Mp, np.einsum("msk,mk->ms", ZE, res))
    # multipliers a_E(λ') = λ' u + v (least-norm solution of Z_Eᵀ a_E = 2λ'β - c)
    u = np.einsum("msk,ms->mk", ZE, np.einsum("mij,mj->mi", Mp, 2.0 * beta)) * valid
    v = -np.einsum("msk,ms->mk", ZE, np.einsum("mij,mj->mi", Mp, c)) * valid
    # β pinned by E on (or next to) the sphere: λ' is free in [λ, ∞); pick it to make
    # a_E feasible, preferring λ' = λ (the only consistent choice if β is inside)
    free = pinned & (nb0 >= r2 * (1.0 - 1e-6))
    if np.any(free):
        uf, vf, vl = u[free], v[free], valid[free]
        with np.errstate(divide="ignore", invalid="ignore"):
            lo_k = np.where(uf > 0, -vf / uf, np.where(uf < 0, (1.0 - vf) / uf, -np.inf))
            hi_k = np.where(uf > 0, (1.0 - vf) / uf, np.where(uf < 0, -vf / uf, np.inf))
        lo = np.maximum(lam, np.max(np.where(vl, lo_k, -np.inf), axis=1))
        hi = np.min(np.where(vl, hi_k, np.inf), axis=1)
        mid = np.where(np.isfinite(hi), 0.5 * (lo + hi), 2.0 * lo)
        pick = np.where(lo <= lam, lam, np.where(hi > lo, mid, lo))
        lam_p[free] = np.where(np.isfinite(pick), pick, lam)
    raw = (lam_p[:, None] * u + v) * valid
    return beta, lam_p, raw, free


def polish_batch(Zt: np.ndarray, t: np.ndarray, lo: float | np.ndarray, hi: float | np.ndarray,
                 lam: float, radius: float):
    """Exact candidates for the structures ``E = {lo <= t <= hi}``, ``V = {t > hi}``.

    Parameters
    ----------
    Zt : ndarray, shape (m, s, n)
    t : ndarray, shape (m, n)
        Margins of the current iterates (the structure is read off them).
    lo, hi : float or ndarray, shape (m, 1)

    Returns
    -------
    As :func:`polish_structure`.
    """
    return polish_structure(Zt, (t >= lo) & (t <= hi), t > hi, lam, radius)


def polish_structure(Zt: np.ndarray, E: np.ndarray, V: np.ndarray, lam: float, radius: float):
    """Exact candidates for given structures (boolean masks ``E``, ``V`` of shape (m, n)).

    Returns
    -------
    beta : ndarray, shape (m, s)
        Feasible coefficients.
    P, D : ndarray, shape (m,)
        Primal value (``>= L``) and dual bound (``<= L``).
    a : ndarray, shape (m, n)
        The dual weights behind ``D`` (in ``[0, 1]``).
    t_new : ndarray, shape (m, n)
        Margins at ``beta``.
    E_next, V_next : ndarray of bool, shape (m, n)
        The structure suggested by the candidate (see :func:`_next_structure`).
    """
    n = E.shape[1]
    c = np.matmul(Zt, V[:, :, None].astype(float))[:, :, 0]
    ZE, valid = gather(Zt, E)
    beta, _, raw, _ = _structure_beta(ZE, valid, c, lam, radius)
    aE = np.clip(raw, 0.0, 1.0)
    nb = np.linalg.norm(beta, axis=1)
    over = nb > radius
    beta[over] *= (radius / nb[over])[:, None]
    t_new = margins(Zt, beta, 1.0)
    P = hinge_primal(t_new, beta, lam, n)
    w = c + np.einsum("msk,mk->ms", ZE, aE)
    D, _ = hinge_dual(V.sum(axis=1) + aE.sum(axis=1), w, lam, radius, n)
    a = V.astype(float)
    rows, cols = np.nonzero(E)
    a[rows, cols] = aE[valid]
    E_next, V_next = _next_structure(E, V, rows, cols, raw[valid], t_new)
    return beta, P, D, a, t_new, E_next, V_next


def _next_structure(E, V, rows, cols, raw, t_new, tol: float = 1e-12):
    """One primal-dual active-set step from a candidate that did not certify.

    Margin samples whose least-norm multiplier leaves ``[0, 1]`` leave ``E`` (to ``V``
    above 1, to the rest below 0), and samples off the margin that the candidate puts on
    the wrong side of it (``V`` with ``t < 0``, the rest with ``t > 0``) join ``E``.
    (Only a guess: whatever it proposes is certified or rejected by its duality gap.)
    """
    E, V = E.copy(), V.copy()
    up, down = raw > 1.0 + 1e-9, raw < -1e-9
    E[rows[up | down], cols[up | down]] = False
    V[rows[up], cols[up]] = True
    wrong = (V & ~E & (t_new < -tol)) | (~V & ~E & (t_new > tol))
    E |= wrong
    V &= ~E
    return E, V


def polish_exact(Z: np.ndarray, t: np.ndarray, lo: float, hi: float, lam: float,
                 radius: float, rank_tol: float = _RANK_TOL):
    """One support: the structure's ``β`` with multipliers from bounded least squares.

    When ``E`` has more rows than its rank (ties, duplicated or clipped rows) the
    least-norm multipliers can leave ``[0, 1]`` although feasible ones exist; here
    ``(a_E, λ')`` solve ``min ||Z_Eᵀ a_E - 2λ'β + c||`` over ``a_E ∈ [0, 1]``, ``λ' >= λ``
    (``λ' = λ`` if the ball is inactive, fixed by the ball if ``β`` is not pinned by
    ``E``) with :func:`scipy.optimize.lsq_linear` (``method="bvls"``, an exact
    active-set method).

    Parameters
    ----------
    Z : ndarray, shape (s, n)
        ``Zt`` of the support.
    t : ndarray, shape (n,)

    Returns
    -------
    beta, P, D, a, t_new  (as :func:`polish_batch`, for one support, scalars for P, D)
    """
    from scipy.optimize import lsq_linear

    n = t.size
    E = (t >= lo) & (t <= hi)
    V = t > hi
    c = Z[:, V].sum(axis=1)
    ZE = Z[:, E]
    beta, lam_p, _, free = _structure_beta(ZE[None], np.ones((1, ZE.shape[1]), bool), c[None],
                                           lam, radius, rank_tol)
    beta, lam_p = beta[0], float(lam_p[0])
    nb = float(np.linalg.norm(beta))
    if nb > radius:
        beta *= radius / nb
    k = ZE.shape[1]
    if k == 0:
        aE = np.zeros(0)
    elif free[0]:  # λ' free in [λ, ∞)
        A = np.hstack([ZE, -2.0 * beta[:, None]])
        res = lsq_linear(A, -c, bounds=(np.r_[np.zeros(k), lam], np.r_[np.ones(k), np.inf]),
                         method="bvls", tol=1e-15)
        aE = res.x[:k]
    else:
        res = lsq_linear(ZE, 2.0 * lam_p * beta - c, bounds=(0.0, 1.0), method="bvls",
                         tol=1e-15)
        aE = res.x
    aE = np.clip(aE, 0.0, 1.0)
    t_new = 1.0 - beta @ Z
    P = float(hinge_primal(t_new[None], beta[None], lam, n)[0])
    w = c + ZE @ aE
    D = float(hinge_dual(np.array([V.sum() + aE.sum()]), w[None], lam, radius, n)[0][0])
    a = V.astype(float)
    a[E] = aE
    return beta, P, D, a, t_new


def qp_candidates(Z: np.ndarray, lam: float, radius: float) -> list[np.ndarray]:
    """Margin vectors ``t`` whose structures the exact fallback should try, from one LP/QP
    solve of the support's problem by HiGHS (``[]`` if it fails).

    The problem is solved in scaled variables (``Z / c``, ``c = max |Z|``; ``λ/c²``; the
    ball replaced by the box ``|β_j| <= r/√s`` inside it; the ridge dropped when it is
    below HiGHS's resolution): ``min Σ ξ_k + λ||β||²`` over ``ξ_k >= 1 - z_kᵀβ``,
    ``ξ >= 0``.  Its solution only proposes structures: the margins at its ``β``, and the
    structure of its dual weights (``0 < a_k < 1`` on the margin, ``a_k = 1`` violators).
    Whatever it proposes is certified or rejected by the caller's duality gap, so a wrong
    or inaccurate solve costs time, never validity.  Active-set and simplex solutions are
    basic: on nearly parallel margin rows they pick the rows that pin ``β`` down, which
    the smoothing continuation's iterates (every such row at ``t ≈ 0``) do not.
    """
    import highspy
    from scipy import sparse

    from mipdp.solvers.highs import _new_highs  # without highspy's first-use banner

    s, n = Z.shape
    c = float(np.max(np.abs(Z))) if Z.size else 0.0
    if not (np.isfinite(c) and c > 0.0):
        return []
    Zs = Z / c
    lam_s = lam / (c * c)
    box = radius * c / np.sqrt(s)
    h = _new_highs()
    h.setOptionValue("output_flag", False)
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_ = s + n
    lp.num_row_ = n
    lp.col_cost_ = np.r_[np.zeros(s), np.ones(n)]
    b = box if box < 1e15 else inf
    lp.col_lower_ = np.r_[np.full(s, -b), np.zeros(n)]
    lp.col_upper_ = np.r_[np.full(s, b), np.full(n, inf)]
    lp.row_lower_ = np.ones(n)
    lp.row_upper_ = np.full(n, inf)
    A = sparse.hstack([sparse.csc_matrix(Zs.T), sparse.identity(n, format="csc")]).tocsc()
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = A.indptr.astype(np.int32)
    lp.a_matrix_.index_ = A.indices.astype(np.int32)
    lp.a_matrix_.value_ = A.data
    try:
        h.passModel(lp)
        if lam_s * min(box, 1e15) ** 2 > 1e-9 and lam_s > 1e-12:
            h.passHessian(s + n, s, int(highspy.HessianFormat.kTriangular),
                          np.arange(s + 1, dtype=np.int32), np.arange(s, dtype=np.int32),
                          np.full(s, 2.0 * lam_s))
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return []
        sol = h.getSolution()
    except Exception:   # a candidate generator only: any failure just proposes nothing
        return []
    beta = np.asarray(sol.col_value[:s], dtype=float) / c
    a = np.clip(np.asarray(sol.row_dual, dtype=float), 0.0, 1.0)
    if not (np.all(np.isfinite(beta)) and np.all(np.isfinite(a))):
        return []
    out = [1.0 - beta @ Z]
    for tol in (1e-9, 1e-6):
        frac = (a > tol) & (a < 1.0 - tol)
        out.append(np.where(frac, 0.0, np.where(a >= 1.0 - tol, 1.0, -1.0)))
    return out
