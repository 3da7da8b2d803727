"""Batched Newton method on ``||β|| <= r`` for sums of piecewise-quadratic 1-D losses.

Shared by the hinge (smoothed) and Huber solvers.  For many supports at once it minimises

    f(β) = (1/n) Σ_k φ(o_k - z_kᵀβ)  +  (κ/2) ||β||²     over  ||β||_2 <= r,

where ``φ`` is convex, C¹ and piecewise quadratic (:class:`PiecewiseLoss`) and the rows
``z_k`` of one support are held as a block ``Zt[m]`` of shape ``(s, n)`` (features by
samples, so that every pass over the data is one batched matrix product).

Each step minimises the quadratic model exactly over the ball (a trust-region subproblem
solved by eigendecomposition, :func:`~mipdp.losses.least_squares.ridge_ball_values`), so
the direction is feasible and a descent direction; an *exact* line search on ``[0, 1]``
follows (``f`` is piecewise quadratic along the ray, so its derivative is piecewise
linear and monotone: a bracketed secant search finds the minimiser).  Once the step no
longer changes which piece each sample is on, the iterate is the exact minimiser of that
piece over the ball, hence of ``f``: the method terminates finitely.
"""

from __future__ import annotations

import numpy as np

from .least_squares import ridge_ball_values

__all__ = ["PiecewiseLoss", "SmoothedHinge", "HuberPiece", "ball_newton", "pad_index",
           "masked_gram", "margins"]


class PiecewiseLoss:
    """A convex, C¹, piecewise-quadratic 1-D loss ``φ`` with constant curvature ``c`` on its
    quadratic pieces and zero curvature elsewhere."""

    curvature: float = 1.0

    def value(self, t: np.ndarray) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def deriv(self, t: np.ndarray) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def piece(self, t: np.ndarray) -> np.ndarray:  # pragma: no cover - interface
        """Integer label of the piece each entry is on (1 = the quadratic piece)."""
        raise NotImplementedError


class SmoothedHinge(PiecewiseLoss):
    """``h_γ(t) = 0`` (t <= 0), ``t²/2γ`` (0 < t < γ), ``t - γ/2`` (t >= γ)."""

    def __init__(self, gamma: float) -> None:
        self.gamma = float(gamma)
        self.curvature = 1.0 / self.gamma

    def value(self, t):
        u = np.clip(t, 0.0, self.gamma)
        return u * (u / (2.0 * self.gamma)) + np.maximum(t - self.gamma, 0.0)

    def deriv(self, t):
        return np.clip(t * self.curvature, 0.0, 1.0)

    def piece(self, t):
        return (t > 0).view(np.int8) + (t >= self.gamma).view(np.int8)


class HuberPiece(PiecewiseLoss):
    """``ℓ_δ(ρ) = ρ²/2`` (|ρ| <= δ), ``δ(|ρ| - δ/2)`` otherwise."""

    curvature = 1.0

    def __init__(self, delta: float) -> None:
        self.delta = float(delta)

    def value(self, t):
        a = np.abs(t)
        return np.where(a <= self.delta, 0.5 * t * t, self.delta * (a - 0.5 * self.delta))

    def deriv(self, t):
        return np.clip(t, -self.delta, self.delta)

    def piece(self, t):
        return (t >= -self.delta).view(np.int8) + (t > self.delta).view(np.int8)


def margins(Zt: np.ndarray, beta: np.ndarray, offset) -> np.ndarray:
    """``o - Zᵀβ`` for every batch member: shape ``(m, n)`` (one pass over ``Zt``)."""
    return offset - np.matmul(beta[:, None, :], Zt)[:, 0, :]


def pad_index(mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Column indices of the ``True`` entries of each row of ``mask``, padded.

    Returns ``(idx, valid)``, both of shape ``(m, k)`` with ``k`` the largest row count
    (at least 1); padded slots hold index 0 and ``valid = False``.
    """
    cnt = mask.sum(axis=1)
    k = max(1, int(cnt.max(initial=0)))
    rows, cols = np.nonzero(mask)
    pos = np.arange(rows.size) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    idx = np.zeros((mask.shape[0], k), dtype=np.intp)
    valid = np.zeros((mask.shape[0], k), dtype=bool)
    idx[rows, pos] = cols
    valid[rows, pos] = True
    return idx, valid


def gather(Zt: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The columns of each ``Zt[m]`` selected by ``mask[m]``, zero-padded: ``(m, s, k)``."""
    idx, valid = pad_index(mask)
    return np.take_along_axis(Zt, idx[:, None, :], axis=2) * valid[:, None, :], valid


def masked_gram(Zt: np.ndarray, mask: np.ndarray, G: np.ndarray) -> np.ndarray:
    """``Σ_{k: mask} z_k z_kᵀ`` for each member (``G`` is the sum over all samples).

    Gathers the selected columns (or their complement) when they are few, otherwise
    one dense weighted product.
    """
    n = mask.shape[1]
    cnt = mask.sum(axis=1)
    if int(cnt.max(initial=0)) <= n // 8:
        ZE, _ = gather(Zt, mask)
        return np.matmul(ZE, ZE.transpose(0, 2, 1))
    if int(cnt.min(initial=n)) >= n - n // 8:
        ZE, _ = gather(Zt, ~mask)
        return G - np.matmul(ZE, ZE.transpose(0, 2, 1))
    return np.matmul(Zt * mask[:, None, :], Zt.transpose(0, 2, 1))


def _line_search(loss: PiecewiseLoss, t, sd, beta, d, kappa, n, slope0, ld, iters: int = 60):
    """Exact minimiser over ``α ∈ [0, 1]`` of ``f(β + α d)`` for every member.

    ``t`` are the margins at ``β``, ``sd = Zᵀd`` and ``ld = lᵀd`` (linear term); ``f'`` along
    the ray is piecewise
    linear and increasing, so a bracketed secant search (Illinois) is exact once both
    ends lie on one piece.  Returns the lower end of the bracket (``f' <= 0`` there, so
    the step never increases ``f``).
    """
    bd = np.einsum("ms,ms->m", beta, d) + ld / kappa
    dd = np.einsum("ms,ms->m", d, d)

    def dphi(alpha, tt, ss, bdr, ddr):
        u = loss.deriv(tt - alpha[:, None] * ss)
        return -np.einsum("mn,mn->m", ss, u) / n + kappa * (bdr + alpha * ddr)

    m = t.shape[0]
    alpha = np.ones(m)
    d1 = dphi(alpha, t, sd, bd, dd)
    todo = np.flatnonzero(d1 > 0)
    if todo.size == 0:
        return alpha
    tt, ss, bdr, ddr = t[todo], sd[todo], bd[todo], dd[todo]
    lo, hi = np.zeros(todo.size), np.ones(todo.size)
    flo, fhi = slope0[todo].copy(), d1[todo]
    side = np.zeros(todo.size, dtype=np.int8)
    for _ in range(iters):
        x = lo - flo * (hi - lo) / (fhi - flo)
        bad = ~((x > lo) & (x < hi))
        x[bad] = 0.5 * (lo[bad] + hi[bad])
        fx = dphi(x, tt, ss, bdr, ddr)
        neg = fx <= 0
        lo[neg], flo[neg] = x[neg], fx[neg]
        hi[~neg], fhi[~neg] = x[~neg], fx[~neg]
        # Illinois: halve the retained end's value when the same end moves twice
        flo[(~neg) & (side == -1)] *= 0.5
        fhi[neg & (side == 1)] *= 0.5
        side = np.where(neg, np.int8(1), np.int8(-1))
        # stop once f' at the lower end is within 1e-2 of its start (a near-exact step)
        done = (hi - lo <= 1e-14 * hi) | (neg & (fx >= 1e-2 * slope0[todo]))
        if np.any(done):
            alpha[todo[done]] = lo[done]
            keep = ~done
            if not np.any(keep):
                return alpha
            todo, tt, ss, bdr, ddr = todo[keep], tt[keep], ss[keep], bdr[keep], ddr[keep]
            lo, hi, flo, fhi, side = lo[keep], hi[keep], flo[keep], fhi[keep], side[keep]
    alpha[todo] = lo
    return alpha


def ball_newton(Zt: np.ndarray, offset, G: np.ndarray, loss: PiecewiseLoss, kappa: float,
                radius: float, beta: np.ndarray, *, n: int | None = None,
                lin: np.ndarray | None = None, max_iter: int = 100,
                tol: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Minimise ``(1/n) Σ φ(o - Zᵀβ) + lᵀβ + (κ/2)||β||²`` on ``||β|| <= r`` for every member.

    Parameters
    ----------
    Zt : ndarray, shape (m, s, n)
        Data blocks (one per support).
    offset : float or ndarray, shape (n,)
        ``o`` (1 for the hinge, ``y`` for Huber).
    G : ndarray, shape (m, s, s)
        ``Σ_k z_k z_kᵀ`` per member (used to form Hessians from the smaller sample set).
    loss : PiecewiseLoss
    kappa : float
        Ridge curvature ``κ > 0`` (strong convexity).
    radius : float
    beta : ndarray, shape (m, s)
        Feasible starting points.
    n : int, optional
        The ``n`` of ``1/n`` (default: the number of columns of ``Zt``; a working set
        passes the full sample size).
    lin : ndarray, shape (m, s), optional
        Linear term ``l`` (e.g. the samples left out of a working set whose piece is
        linear and fixed).  Zero-padded columns of ``Zt`` contribute nothing to the
        gradient and the Hessian as long as ``φ`` is linear at ``o``.
    max_iter : int
    tol : float
        Stop when the directional derivative of the step is above ``-tol·max(1, |f|)``.
        The default 0 relies on the finite-termination test (a full step that keeps every
        sample on its piece lands on the exact minimiser) and on steps too small to move
        ``β``: along flat directions (tiny ridge) the slope is far below any useful
        threshold while ``β``, and with it the dual certificate, can still be off.

    Returns
    -------
    beta : ndarray, shape (m, s)
    converged : ndarray of bool, shape (m,)
        Whether the member stopped by a criterion (exact piece minimiser or vanishing
        slope) rather than by ``max_iter``.
    """
    m, s, n_cols = Zt.shape
    n = n_cols if n is None else n
    lin = np.zeros((m, s)) if lin is None else lin
    beta = np.array(beta, dtype=float)
    converged = np.zeros(m, dtype=bool)
    act = np.arange(m)
    Za, Ga, off, la = Zt, G, offset, lin
    prev_piece = None
    prev_full = np.zeros(m, dtype=bool)
    nu = np.zeros(m)  # trust-region multipliers, warm-started across iterations
    eye = np.eye(s)
    for _ in range(max_iter):
        if act.size == 0:
            break
        b = beta[act]
        t = margins(Za, b, off)
        piece = loss.piece(t)
        stop = np.zeros(act.size, dtype=bool)
        if prev_piece is not None:
            stop = prev_full & np.all(piece == prev_piece, axis=1)
        psi = loss.deriv(t)
        g = -np.matmul(Za, psi[:, :, None])[:, :, 0] / n + kappa * b + la
        H = masked_gram(Za, piece == 1, Ga) * (loss.curvature / n) + kappa * eye
        rhs = np.einsum("mij,mj->mi", H, b) - g
        _, u, nu_a = ridge_ball_values(n * H, n * rhs, 0.0, n, radius, return_coef=True,
                                       nu0=nu[act])
        nu[act] = nu_a
        d = u - b
        slope = np.einsum("ms,ms->m", g, d)
        # a Newton step below rounding level: already at the minimiser of the piece
        stop |= np.linalg.norm(d, axis=1) <= 1e-14 * np.maximum(np.linalg.norm(b, axis=1), 1e-300)
        if tol > 0:
            f = (loss.value(t).sum(axis=1) / n + 0.5 * kappa * np.einsum("ms,ms->m", b, b)
                 + np.einsum("ms,ms->m", la, b))
            stop |= ~(slope < -tol * np.maximum(1.0, np.abs(f)))
        else:
            stop |= ~(slope < 0)
        converged[act[stop]] = True
        go = ~stop
        if not np.any(go):
            break
        if not np.all(go):  # compact the batch to the members still moving
            act, b, d, t, piece, slope = act[go], b[go], d[go], t[go], piece[go], slope[go]
            Za, Ga, la = Za[go], Ga[go], la[go]
            if np.ndim(off) == 2:
                off = off[go]
        sd = np.matmul(d[:, None, :], Za)[:, 0, :]
        alpha = _line_search(loss, t, sd, b, d, kappa, n, slope, np.einsum("ms,ms->m", la, d))
        step = alpha[:, None] * d
        nb = np.linalg.norm(b + step, axis=1)
        new = b + step
        over = nb > radius
        new[over] *= (radius / nb[over])[:, None]
        moved = np.linalg.norm(new - b, axis=1) > 1e-15 * np.linalg.norm(b, axis=1)
        converged[act[~moved]] = True
        beta[act] = new
        prev_piece, prev_full = piece, alpha == 1.0
        if not np.all(moved):
            act, prev_piece, prev_full = act[moved], piece[moved], prev_full[moved]
            Za, Ga, la = Za[moved], Ga[moved], la[moved]
            if np.ndim(off) == 2:
                off = off[moved]
    return beta, converged
