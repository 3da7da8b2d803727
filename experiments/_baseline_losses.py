"""Frozen copy of the hinge and Huber solvers before the batched rewrite (for benchmarks).

Not part of the package: ``experiments/bench_losses.py`` imports it to measure the old
code beside the new one in the same run.  Copied from ``mipdp/losses/hinge.py`` and
``mipdp/losses/huber.py`` at commit 4ef9137 with only the class scaffolding changed
(the value and cut methods are left out; only ``solve``/``values`` are benchmarked).
"""

from __future__ import annotations

import logging

import numpy as np

from mipdp.losses.least_squares import ridge_ball_values

logger = logging.getLogger("baseline_losses")

__all__ = ["BaselineHinge", "BaselineHuber"]

_GAMMAS = tuple(10.0 ** -k for k in range(0, 10))
_CERT_TOL = 1e-13
_CHUNK = 4_000_000


class _Bound:
    def __init__(self, X, y):
        self.X, self.y = X, y
        self.n, self.p = X.shape
        self.n_evaluations = 0


def ball_newton(fgh, beta: np.ndarray, radius: float, n: int, *, max_iter: int = 200,
                tol: float = 1e-15) -> np.ndarray:
    """Batched projected Newton method on ``||β|| <= r`` for piecewise-quadratic objectives.

    Parameters
    ----------
    fgh : callable
        ``fgh(beta, idx, order)`` for the batch members ``idx``: ``order=0`` returns the
        values ``f`` (m,), ``order=2`` returns ``(f, g, H)`` (gradients (m, s), Hessians
        (m, s, s), positive definite).
    beta : ndarray, shape (m, s)
        Feasible starting points (modified copy returned).
    radius : float
    n : int
        Scale used for the trust-region solve (any positive number works).

    Returns
    -------
    ndarray, shape (m, s)
        The minimisers.  Each step minimises the quadratic model exactly over the ball,
        so the direction is a feasible descent direction; Armijo backtracking makes the
        method globally convergent and it is finite once the active piece is found.
    """
    beta = np.array(beta, dtype=float)
    idx = np.arange(beta.shape[0])
    for _ in range(max_iter):
        if idx.size == 0:
            break
        f, g, H = fgh(beta[idx], idx, 2)
        b = np.einsum("mij,mj->mi", H, beta[idx]) - g
        _, u, _ = ridge_ball_values(n * H, n * b, 0.0, n, radius, return_coef=True)
        d = u - beta[idx]
        slope = np.einsum("ms,ms->m", g, d)
        go = slope < -tol * (1.0 + np.abs(f))
        idx, d, f, slope = idx[go], d[go], f[go], slope[go]
        alpha = np.ones(idx.size)
        pending = np.arange(idx.size)
        for _ in range(60):
            if pending.size == 0:
                break
            trial = beta[idx[pending]] + alpha[pending, None] * d[pending]
            ok = fgh(trial, idx[pending], 0) <= f[pending] + 1e-4 * alpha[pending] * slope[pending]
            beta[idx[pending[ok]]] = trial[ok]
            pending = pending[~ok]
            alpha[pending] *= 0.5
        if pending.size:  # no decrease possible at machine precision: converged
            keep = np.ones(idx.size, bool)
            keep[pending] = False
            idx = idx[keep]
    return beta



def _huber(r: np.ndarray, delta: float) -> np.ndarray:
    a = np.abs(r)
    return np.where(a <= delta, 0.5 * r * r, delta * (a - 0.5 * delta))



class _OldHingeObjective(_Bound):
    """:class:`Hinge` on fixed data.

    Attributes
    ----------
    max_gap : float
        Largest certified duality gap ``P - D`` of any evaluation so far.
    n_fallback : int
        Evaluations that could not be polished (gap ``<= 5e-10`` instead).
    """

    def __init__(self, ridge, radius, X, y) -> None:
        super().__init__(X, y)
        self.lam = ridge
        self.radius = radius
        self.max_gap = 0.0
        self.n_fallback = 0

    # -- smoothed objective ------------------------------------------------------------
    def _fgh(self, Z: np.ndarray, gamma: float):
        n, lam = self.n, self.lam

        def fgh(beta, idx, order):
            Zi = Z[idx]
            t = 1.0 - np.matmul(Zi, beta[:, :, None])[:, :, 0]
            u = np.clip(t, 0.0, gamma)
            f = ((u * u).sum(axis=1) / (2 * gamma) + np.maximum(t - gamma, 0.0).sum(axis=1)) / n
            f += (lam / n) * np.einsum("ms,ms->m", beta, beta)
            if order == 0:
                return f
            g = -np.matmul(u[:, None, :], Zi)[:, 0, :] / (gamma * n) + (2 * lam / n) * beta
            wq = ((t > 0) & (t < gamma)) / (gamma * n)
            H = np.matmul(Zi.transpose(0, 2, 1) * wq[:, None, :], Zi)
            H += (2 * lam / n) * np.eye(beta.shape[1])
            return f, g, H

        return fgh

    # -- certificates --------------------------------------------------------------------
    def _primal(self, Z: np.ndarray, beta: np.ndarray) -> float:
        return float(np.maximum(0.0, 1.0 - Z @ beta).mean() + (self.lam / self.n) * (beta @ beta))

    def _dual(self, Z: np.ndarray, a: np.ndarray) -> float:
        w = Z.T @ a
        nw = float(np.linalg.norm(w))
        lam_p = max(self.lam, nw / (2.0 * self.radius))
        mu = (lam_p - self.lam) / self.n
        return float(a.mean() - mu * self.radius ** 2 - nw * nw / (4.0 * self.n * lam_p))

    def _feasible(self, beta: np.ndarray) -> np.ndarray:
        nb = np.linalg.norm(beta)
        return beta * (self.radius / nb) if nb > self.radius else beta

    def _polish(self, Z: np.ndarray, beta: np.ndarray, gamma: float):
        """Exact solve on the active structure read off a smoothed solution."""
        t = 1.0 - Z @ beta
        best = None
        for lo, hi in ((-1e-12, gamma * (1 + 1e-9)), (-gamma, 2 * gamma)):
            E = (t >= lo) & (t <= hi)
            V = t > hi
            c = Z[V].sum(axis=0)
            ZE = Z[E]
            if ZE.shape[0]:
                Gp = np.linalg.pinv(ZE @ ZE.T, rcond=1e-13, hermitian=True)
                u = 2.0 * Gp.sum(axis=1)
                v = -Gp @ (ZE @ c)
                b0, b1 = ZE.T @ u / 2.0, (c + ZE.T @ v) / 2.0
            else:
                u = v = np.zeros(0)
                b0, b1 = np.zeros(Z.shape[1]), c / 2.0
            cands = [1.0 / self.lam]
            if np.linalg.norm(b0 + b1 / self.lam) > self.radius:
                qa, qb, qc = b1 @ b1, 2 * b0 @ b1, b0 @ b0 - self.radius ** 2
                roots = np.roots([qa, qb, qc]) if qa > 0 else np.array([-qc / qb]) if qb else []
                cands = [float(x.real) for x in np.atleast_1d(roots)
                         if abs(x.imag) < 1e-12 and 0 < x.real <= 1.0 / self.lam * (1 + 1e-12)]
            for tt in cands:
                lam_p = 1.0 / tt
                b = self._feasible(b0 + b1 * tt)
                a = np.zeros(self.n)
                a[V] = 1.0
                a[E] = np.clip(lam_p * u + v, 0.0, 1.0)
                P, D = self._primal(Z, b), self._dual(Z, a)
                if best is None or P - D < best[2] - best[3]:
                    best = (b, a, P, D)
            if best is not None and best[2] - best[3] <= _CERT_TOL * max(1.0, abs(best[2])):
                return best
        return best

    def _solve_chunk(self, supports: np.ndarray, want_dual: bool):
        m, s = supports.shape
        Z = (self.X[:, supports] * self.y[:, None, None]).transpose(1, 0, 2)  # (m, n, s)
        beta = np.zeros((m, s))
        P, D = np.full(m, np.nan), np.full(m, np.nan)
        B = np.zeros((m, s))
        A = np.zeros((m, self.n)) if want_dual else None
        todo = np.arange(m)
        gamma = _GAMMAS[0]
        for gamma in _GAMMAS:
            beta[todo] = ball_newton(self._fgh(Z[todo], gamma), beta[todo], self.radius, self.n)
            if gamma > 1e-2:
                continue
            left = []
            for k in todo:
                res = self._polish(Z[k], beta[k], gamma)
                if res is not None and res[2] - res[3] <= _CERT_TOL * max(1.0, abs(res[2])):
                    B[k], P[k], D[k] = res[0], res[2], res[3]
                    if want_dual:
                        A[k] = res[1]
                else:
                    left.append(k)
            todo = np.array(left, dtype=np.intp)
            if todo.size == 0:
                break
        for k in todo:  # fallback: the smoothed solution and its own dual
            b = self._feasible(beta[k])
            a = np.clip((1.0 - Z[k] @ b) / gamma, 0.0, 1.0)
            B[k], P[k], D[k] = b, self._primal(Z[k], b), self._dual(Z[k], a)
            if want_dual:
                A[k] = a
            self.n_fallback += 1
            logger.warning("hinge: support %s not polished; certified gap %.3g", supports[k],
                           P[k] - D[k])
        self.max_gap = max(self.max_gap, float(np.max(P - D)))
        return P, D, B, A

    def solve(self, supports: np.ndarray, want_dual: bool = False):
        """Primal values, dual bounds, minimisers (and dual weights) of many supports."""
        supports = np.atleast_2d(np.asarray(supports, dtype=np.intp))
        m, s = supports.shape
        self.n_evaluations += m
        step = max(1, _CHUNK // (self.n * s))
        parts = [self._solve_chunk(supports[lo:lo + step], want_dual) for lo in range(0, m, step)]
        P = np.concatenate([q[0] for q in parts])
        D = np.concatenate([q[1] for q in parts])
        B = np.concatenate([q[2] for q in parts])
        A = np.concatenate([q[3] for q in parts]) if want_dual else None
        return P, D, B, A

    def values(self, supports: np.ndarray) -> np.ndarray:
        return self.solve(supports)[0]



class _OldHuberObjective(_Bound):
    """:class:`Huber` on fixed data (``max_gap``: largest certified suboptimality)."""

    def __init__(self, ridge, radius, huber_delta, X, y) -> None:
        super().__init__(X, y)
        self.lam = ridge
        self.radius = radius
        self.hd = huber_delta
        self.max_gap = 0.0

    def _fgh(self, XS: np.ndarray):
        n, lam, hd, y = self.n, self.lam, self.hd, self.y

        def fgh(beta, idx, order):
            Xi = XS[idx]
            rho = y - np.einsum("mns,ms->mn", Xi, beta)
            f = _huber(rho, hd).mean(axis=1) + lam / (2 * n) * np.einsum("ms,ms->m", beta, beta)
            if order == 0:
                return f
            g = -np.einsum("mn,mns->ms", np.clip(rho, -hd, hd), Xi) / n + (lam / n) * beta
            wq = (np.abs(rho) <= hd) / n
            H = np.matmul(Xi.transpose(0, 2, 1) * wq[:, None, :], Xi)
            H += (lam / n) * np.eye(beta.shape[1])
            return f, g, H

        return fgh

    def solve(self, supports: np.ndarray):
        """Values ``L(S)``, minimisers ``β`` and Frank–Wolfe gaps for many supports."""
        supports = np.atleast_2d(np.asarray(supports, dtype=np.intp))
        m, s = supports.shape
        self.n_evaluations += m
        step = max(1, _CHUNK // (self.n * s))
        vals, betas, gaps = [], [], []
        for lo in range(0, m, step):
            XS = self.X[:, supports[lo:lo + step]].transpose(1, 0, 2)  # (m, n, s)
            fgh = self._fgh(XS)
            beta = ball_newton(fgh, np.zeros((XS.shape[0], s)), self.radius, self.n)
            norm = np.linalg.norm(beta, axis=1)
            over = norm > self.radius
            beta[over] *= (self.radius / norm[over])[:, None]
            f, g, _ = fgh(beta, np.arange(beta.shape[0]), 2)
            gap = np.einsum("ms,ms->m", g, beta) + self.radius * np.linalg.norm(g, axis=1)
            vals.append(f)
            betas.append(beta)
            gaps.append(np.maximum(gap, 0.0))
        gaps = np.concatenate(gaps)
        self.max_gap = max(self.max_gap, float(gaps.max()))
        return np.concatenate(vals), np.concatenate(betas), gaps

    def values(self, supports: np.ndarray) -> np.ndarray:
        return self.solve(supports)[0]



class BaselineHinge:
    """The old hinge solver: ``BaselineHinge(ridge, radius).bind(X, y).values(supports)``."""

    def __init__(self, ridge=120.0, radius=1.1):
        self.ridge, self.radius = ridge, radius

    def bind(self, X, y):
        return _OldHingeObjective(self.ridge, self.radius, X, y)


class BaselineHuber:
    """The old Huber solver."""

    def __init__(self, ridge=120.0, radius=1.1, huber_delta=1.0):
        self.ridge, self.radius, self.huber_delta = ridge, radius, huber_delta

    def bind(self, X, y):
        return _OldHuberObjective(self.ridge, self.radius, self.huber_delta, X, y)
