"""Least squares with ridge and an ℓ2-ball constraint: closed-form support objective.

    L(S) = min_{||β||_2 <= r}  (1/2n) ||y - X_S β||²  +  (λ/2n) ||β||²

With ``A = X_SᵀX_S + λI`` and ``b = X_Sᵀy`` the unconstrained minimiser is ``A⁻¹b``;
when its norm exceeds ``r`` the minimiser is ``(A + νI)⁻¹ b`` with ``ν > 0`` the root of
the trust-region secular equation ``||(A + νI)⁻¹ b|| = r``.  Both are computed from an
eigendecomposition of the ``s × s`` matrix ``A``, batched over many supports, with
Newton's method on ``1/||β(ν)|| - 1/r`` (concave and increasing, so Newton from
``ν = 0`` converges monotonically; Moré & Sorensen 1983).  The value is exact up to
floating-point rounding: no iterative optimiser is involved.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, cast

import numpy as np

from .._parallel import parallel_map

if TYPE_CHECKING:
    from ..data import ClippedDesign

from ._gram_shift import SHIFT_MAX_P, gram_shift
from ._tangents import ball_tangent_cuts
from .base import Loss, SupportObjective

__all__ = ["LeastSquares", "GramLeastSquaresObjective", "ridge_ball_values"]

_GRAM_MAX_P = 2048  # cache XᵀX when it is at most this many columns wide


def ridge_ball_values(A: np.ndarray, b: np.ndarray, yty: float, n: int, radius: float,
                      return_coef: bool = False, nu0: np.ndarray | None = None):
    """Batched exact values of ``min_{||β|| <= r} (yᵀy - 2bᵀβ + βᵀAβ) / 2n``.

    Parameters
    ----------
    A : ndarray, shape (m, s, s)
        ``X_SᵀX_S + λI`` for each of ``m`` supports (symmetric positive semi-definite;
        it may be singular in floating point, e.g. a tiny ``λ`` next to a Gram matrix of
        clipped columns at ``±b_x`` with ``b_x`` large).
    b : ndarray, shape (m, s)
        ``X_Sᵀy``.
    yty : float
        ``yᵀy``.
    n : int
        Number of samples.
    radius : float
        Ball radius ``r`` (``inf`` for none).
    return_coef : bool
        Also return the minimisers ``β`` (shape (m, s)) and the multipliers ``ν``.
    nu0 : ndarray, shape (m,), optional
        Starting multipliers (e.g. from a previous, nearby problem).  Any start is safe:
        the secular function is concave and increasing, so one Newton step from above
        the root lands below it, and from below Newton increases monotonically.

    Returns
    -------
    values : ndarray, shape (m,)

    Notes
    -----
    Without ``return_coef`` the unconstrained minimisers ``A⁻¹b`` are computed first by a
    batched LU solve (about 10x cheaper than an ``s × s`` eigendecomposition); the supports
    whose minimiser lies in the ball get ``(yᵀy - bᵀA⁻¹b) / 2n`` (the ball is inactive, the
    same value as below with ``ν = 0``) and only the others go through the secular equation.
    LU with partial pivoting is backward stable: the value is that of ``A + E`` with
    ``||E|| = O(ε_mach ||A||)``, within ``||E|| r²/2n`` of the true one on the ball.  A
    batch whose LU fails (``A`` singular in floating point) or gives a non-finite solution
    goes through the eigendecomposition instead.

    The eigendecomposition path is scale-free and backward stable.  Each ``(A, b)`` is
    divided by ``c = max_k A_kk`` (the minimiser is unchanged; the value is
    ``(yᵀy + c·m̃)/2n`` with ``m̃`` the minimum of the scaled quadratic), so that no square
    of an eigenvalue of a Gram matrix at bounds like ``1e100`` overflows.  Eigenvalues
    below zero (rounding of a singular ``A``) are set to zero, a perturbation of
    ``O(ε_mach ||A||)``; a direction with eigenvalue zero and no component of ``b`` adds
    nothing (the pseudo-inverse), one with a component makes the ball active.  The ball
    multiplier solves the secular equation by Newton's method from the lower bound
    ``ν_lo = max(0, max_k (|q_k|/r - w_k))`` (``q = Qᵀb``), at or below the root; from
    there every ``|q_k|/(w_k + ν) <= r``, so nothing overflows or divides by zero.
    """
    if not return_coef and A.shape[0]:
        with np.errstate(all="ignore"):
            try:
                beta = np.linalg.solve(A, b[..., None])[..., 0]
            except np.linalg.LinAlgError:    # singular in floating point: eigh below
                beta = None
            if beta is not None:
                out = (yty - np.einsum("ms,ms->m", b, beta)) / (2.0 * n)
                bad = ~(np.all(np.isfinite(beta), axis=1) & np.isfinite(out))
                if np.isfinite(radius):
                    bad |= np.einsum("ms,ms->m", beta, beta) > radius * radius
        if beta is not None:
            if np.any(bad):
                out[bad] = ridge_ball_values(A[bad], b[bad], yty, n, radius, return_coef=True,
                                             nu0=None if nu0 is None else nu0[bad])[0]
            return out
    with np.errstate(all="ignore"):
        w, Q = np.linalg.eigh(A)
        bad = ~np.all(np.isfinite(w), axis=1) | (w[:, 0] <= 0.0) | (w[:, -1] > 1e100)
        if np.any(bad):   # singular in floating point, or squares that overflow
            w = np.where(bad[:, None], 1.0, w)
        values, beta, nu = _plain_eigh_path(w, Q, b, yty, n, radius, nu0)
    bad |= ~(np.isfinite(values) & np.all(np.isfinite(beta), axis=1) & np.isfinite(nu))
    if np.any(bad):
        rv, rb, rn = _robust_eigh_path(A[bad], b[bad], yty, n, radius,
                                       None if nu0 is None else nu0[bad])
        values, beta, nu = values.copy(), beta.copy(), nu.copy()
        values[bad], beta[bad], nu[bad] = rv, rb, rn
    if return_coef:
        return values, beta, nu
    return values


def _plain_eigh_path(w, Q, b, yty, n, radius, nu0):
    """``(values, β, ν)`` from the eigendecomposition ``(w, Q)`` of a well-conditioned ``A``
    (every ``w > 0``, no overflow): the secular equation by Newton from ``nu0`` or 0."""
    q = np.einsum("mks,mk->ms", Q, b)
    q2 = q * q
    nu = np.zeros(w.shape[0])
    if np.isfinite(radius):
        r2 = radius * radius
        active = np.einsum("ms,ms->m", q2, 1.0 / (w * w)) > r2
        if np.any(active):
            qa, wa = q2[active], w[active]
            v = np.zeros(qa.shape[0]) if nu0 is None else np.maximum(nu0[active], 0.0)
            last = np.full(qa.shape[0], np.inf)
            todo = np.arange(qa.shape[0])
            # the stopping tests are relative to ν or to A's scale (its largest eigenvalue)
            # when that is below 1: an absolute 1e-15 stopped Newton after one step when
            # A and b are tiny (bounds 1e-8: values 2% below L(S), found by review2)
            unit = np.minimum(1.0, wa[:, -1])
            for _ in range(100):
                d = wa[todo] + v[todo, None]
                q_t = qa[todo]
                n2 = np.sum(q_t / (d * d), axis=1)
                norm = np.sqrt(n2)
                phi = 1.0 / norm - 1.0 / radius
                dphi = np.sum(q_t / (d * d * d), axis=1) / (norm * n2)
                v_new = np.maximum(v[todo] - phi / dphi, 0.0)
                move = np.abs(v_new - v[todo])
                # converged, or down to rounding noise: tiny steps that stopped shrinking
                ref = np.maximum(unit[todo], v_new)
                tiny = move <= 1e-11 * ref
                done = (move <= 1e-15 * ref) | (tiny & (move >= last[todo]))
                v[todo] = v_new
                last[todo] = move
                todo = todo[~done]
                if todo.size == 0:
                    break
            nu[active] = v
    d = w + nu[:, None]
    explained = np.sum(q2 * (w + 2.0 * nu[:, None]) / (d * d), axis=1)
    values = (yty - explained) / (2.0 * n)
    beta = np.einsum("mks,ms->mk", Q, q / d)
    return values, beta, nu


def _robust_eigh_path(A, b, yty, n, radius, nu0):
    """``(values, β, ν)`` for the members the plain path flags: scale-free and backward
    stable for a singular ``A`` (see :func:`ridge_ball_values`)."""
    m, s = b.shape
    # scale-free: A/c and b/c have the same minimiser; c > 0 (A is positive semi-definite
    # with a positive ridge on its diagonal; the guard keeps a zero A harmless)
    c = np.max(np.diagonal(A, axis1=1, axis2=2), axis=1, initial=0.0) if s else np.ones(m)
    c = np.where(np.isfinite(c) & (c > 0), c, 1.0)
    w, Q = np.linalg.eigh(A / c[:, None, None])
    w = np.maximum(w, 0.0)
    q = np.einsum("mks,mk->ms", Q, b / c[:, None])
    aq = np.abs(q)
    nu = np.zeros(m)                 # multipliers of the scaled problem
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if np.isfinite(radius):
            inv0 = np.where(aq > 0, aq / w, 0.0)       # |q|/w: inf where w = 0 < |q|
            active = np.einsum("ms,ms->m", inv0, inv0) > radius * radius
            if np.any(active):
                qa, wa = q[active], w[active]
                lo = np.maximum(np.max(np.abs(qa) / radius - wa, axis=1, initial=0.0), 0.0)
                v = lo.copy() if nu0 is None else np.maximum(nu0[active] / c[active], lo)
                last = np.full(qa.shape[0], np.inf)
                todo = np.arange(qa.shape[0])
                for _ in range(100):
                    d = wa[todo] + v[todo, None]
                    q_t = qa[todo]
                    t = np.where(q_t != 0, q_t / d, 0.0)
                    n2 = np.sum(t * t, axis=1)
                    norm = np.sqrt(n2)
                    phi = 1.0 / norm - 1.0 / radius
                    dphi = np.sum(np.where(t != 0, t * t / d, 0.0), axis=1) / (norm * n2)
                    v_new = np.maximum(v[todo] - phi / dphi, lo[todo])
                    v_new = np.where(np.isfinite(v_new), v_new, v[todo])
                    move = np.abs(v_new - v[todo])
                    # converged, or down to rounding noise: tiny steps that stopped shrinking
                    tiny = move <= 1e-11 * np.maximum(1.0, v_new)
                    done = ((move <= 1e-15 * np.maximum(1.0, v_new))
                            | (tiny & (move >= last[todo])))
                    v[todo] = v_new
                    last[todo] = move
                    todo = todo[~done]
                    if todo.size == 0:
                        break
                nu[active] = v
        d = w + nu[:, None]
        t = np.where(q != 0, q / d, 0.0)               # the scaled minimiser, eigenbasis
        explained = c * np.sum(t * t * (w + 2.0 * nu[:, None]), axis=1)
    values = (yty - explained) / (2.0 * n)
    beta = np.einsum("mks,ms->mk", Q, t)
    return values, beta, c * nu


class LeastSquares(Loss):
    """Squared loss ``(1/2n)||y - X_S β||²`` with ridge ``(λ/2n)||β||²`` on the ball ``||β|| <= r``.

    Sensitivity (replace-one neighbours, rows clipped to ``|x_ij| <= b_x``,
    ``|y_i| <= b_y``): each sample's loss at a feasible ``β`` lies in
    ``[0, (b_y + b_x r √s)² / 2]`` and the ridge term is data-free, so
    ``Δ = (b_y + b_x r √s)² / (2n)``.

    Parameters
    ----------
    ridge : float, optional
        ``λ > 0``; default: the rule of :func:`mipdp.losses.default_score`.
    radius : float, optional
        ``r > 0`` (finite: the sensitivity depends on it); default: the rule of
        :func:`mipdp.losses.default_score`, ``b_y / (b_x √s)``.
    """

    name = "least_squares"
    needs_y_bound = True
    sufficient_statistics = True

    def __init__(self, ridge: float | None = None, radius: float | None = None) -> None:
        super().__init__(ridge, radius)

    def sample_bound(self, s: int, b_x: float, b_y: float | None) -> float:
        return 0.5 * (b_y + b_x * cast(float, self.radius) * np.sqrt(s)) ** 2

    def bind(self, X: np.ndarray, y: np.ndarray | None) -> LeastSquaresObjective:
        """The objective on ``(X, y)``; ``X`` a :class:`mipdp.statistics.GramDesign`
        (``y`` then unused: ``ycᵀyc`` and ``Xcᵀyc`` are the design's)."""
        if getattr(X, "kind", None) == "statistics":
            return GramLeastSquaresObjective(self, X)
        if y is None:
            raise ValueError("y: the targets are needed unless X is a GramDesign")
        return LeastSquaresObjective(self, X, y)


class LeastSquaresObjective(SupportObjective):
    """:class:`LeastSquares` on fixed data."""

    cheap_values = True
    cost_kind = "least_squares"
    #: entries of the ``(m, s, s)`` one-swap systems solved in one batch
    _SWAP_BATCH = 2 ** 21

    def __init__(self, loss: LeastSquares, X: np.ndarray | ClippedDesign, y: np.ndarray) -> None:
        super().__init__(loss, X, y)
        assert loss.ridge is not None and loss.radius is not None  # checked by super()
        self.lam = loss.ridge
        self.radius = loss.radius
        self.yty = float(y @ y)
        X = self.X
        self.Xty = X.rmatvec(y)
        self.col_sq = X.col_sq()
        self._gram: np.ndarray | None = None
        self._shift: np.ndarray | Literal[False] | None = False   # not computed yet (cut_shift)

    def _gram_blocks(self, supports: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        m, s = supports.shape
        if self.p <= _GRAM_MAX_P and (self._gram is not None or m >= 4 * s):
            if self._gram is None:
                self._gram = self.X.gram()
            A = self._gram[supports[:, :, None], supports[:, None, :]]
        else:
            A = self.X.gram_blocks(supports)   # chunked gather (dense) or sparse products
        A = A + self.lam * np.eye(s)
        return A, self.Xty[supports]

    def values(self, supports: np.ndarray) -> np.ndarray:
        supports = np.atleast_2d(np.asarray(supports, dtype=np.intp))
        self.n_evaluations += supports.shape[0]
        A, b = self._gram_blocks(supports)
        return ridge_ball_values(A, b, self.yty, self.n, self.radius)

    def value_and_cut(self, support: np.ndarray) -> tuple[float, float, np.ndarray]:
        """``(L(S), lower, g)``: the closed-form value, a certified dual bound and the cut.

        With ``a = ρ = y - X_S β`` (residual), ``w = Xᵀρ`` and the ball multiplier ``ν``
        of the closed form (``λ'' = λ + ν``), weak duality for the ridge-and-ball problem
        of any support ``T`` (multipliers ``a`` on the residual, ``ν`` on the ball) gives

            L(T) >= ψ(1_T),   ψ(z) = (1/n)(aᵀy - ||a||²/2) - ν r²/(2n) - Σ_i z_i w_i² / (2nλ'')

        (minimise ``-aᵀX_Tβ + (λ''/2)||β||²`` over ``β`` in closed form).  ``ψ`` is
        *linear* in ``z``, so with ``lower = ψ(1_S)`` (``<= L(S)``, equal up to
        rounding) and ``g_i = -w_i² / (2nλ'')`` for every ``i`` the cut
        ``η >= lower + gᵀ(z - 1_S) = ψ(z)`` is a global lower bound on ``L`` at every
        support, whatever the accuracy of ``(a, ν)``.

        This is the chord of the perspective relaxation's dual
        ``φ(a, ν, z) = ... - Σ_i w_i² z_i / (2n(λ + ν z_i))`` (SPEC §3), which agrees
        with ``ψ`` on binary ``z``; its tangent at ``1_S`` (the cut used before) has
        slope ``-w_i²/(2nλ)`` off ``S`` and is below ``ψ`` at every other support, by
        a factor ``λ''/λ`` on the entering features — the difference that matters
        when the ridge is small and the ball is active (the default score).

        **Shifted cut** (when :meth:`cut_shift` gives ``d``, i.e. ``XᵀX - diag(d) ⪰ 0``
        is certified).  ``Q(β) = ||y - Xβ||² - βᵀDβ`` is then convex on all of ``R^p``,
        so ``Q(β) >= Q(β_S) - 2uᵀ(β - β_S)`` with ``u = Xᵀρ + Dβ_S``; putting this under
        ``||y - X_Tβ||² + λ||β||² = Q(β) + βᵀ(λI + D)β`` (``β`` supported on ``T``) and
        minimising coordinate by coordinate, with the multiplier ``ν`` on the ball, gives

            L(T) >= (1/n)(aᵀy - ||a||²/2 + β_SᵀDβ_S/2) - ν r²/(2n)
                    - Σ_i z_i u_i² / (2n(λ'' + d_i)),

        again linear in ``z``, valid for any ``β_S`` and ``ν >= 0``, and exact at ``1_S``
        at the closed-form optimum (``u_i = (λ'' + d_i)β_i`` on ``S``).  Entering features
        are credited ``u_i²/(2n(λ'' + d_i))`` instead of ``w_i²/(2nλ'')`` and leaving
        ones lose ``(λ'' + d_i)β_i²/(2n)`` instead of ``λ''β_i²/(2n)``: much tighter
        away from ``S`` when the ridge is small or the columns are correlated.
        """
        S = np.asarray(support, dtype=np.intp)
        n, lam = self.n, self.lam
        self.n_evaluations += 1
        XS, G_SS = self._support_columns(S)
        A = G_SS + lam * np.eye(S.size)
        val, beta, nu = ridge_ball_values(A[None], self.Xty[S][None], self.yty, n,
                                          self.radius, return_coef=True)
        beta, lam_pp = beta[0], lam + float(nu[0])
        # Xᵀρ = Xᵀy - XᵀX_S β from the kept Gram columns (mipdp.column_gram): a pass
        # over X only for features no earlier support had
        corr = self.Xty - self.X.column_gram.product(S, beta)
        ball = (lam_pp - lam) * self.radius ** 2 if np.isfinite(self.radius) else 0.0
        base = self._residual_base(S, XS, G_SS, beta)
        d = self.cut_shift()
        if d is None:
            u, den = corr, np.full(self.p, lam_pp)
        else:   # shifted cut (docs/algorithms.md, "Shifted cuts"): u = Xᵀρ + Dβ
            u = corr.copy()
            u[S] += d[S] * beta
            base += 0.5 * float(beta @ (d[S] * beta))
            den = lam_pp + d
        c2 = u * u
        lower = (base - 0.5 * ball - 0.5 * float(np.sum(c2[S] / den[S]))) / n
        g = -c2 / (2.0 * n * den)
        self._extra = (tuple(S.tolist()), base, c2, lam_pp, d)
        return float(val[0]), min(float(lower), float(val[0])), g

    def _support_columns(self, S: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
        """``(Xc_S, Xc_SᵀXc_S)`` of one support."""
        XS = self.X.columns(S)
        return XS, XS.T @ XS

    def _residual_base(self, S, XS, G_SS, beta) -> float:
        """``ρᵀy - ‖ρ‖²/2`` for the residual ``ρ = y - Xc_S β``."""
        rho = self.y - XS @ beta
        return rho @ self.y - 0.5 * (rho @ rho)

    def cut_shift(self) -> np.ndarray | None:
        """The certified diagonal ``d`` under ``XᵀX`` of the shifted cuts, or ``None``.

        Computed once, when ``shifted_cuts`` is on and ``p <= min(n, 2048)``
        (:func:`mipdp.losses._gram_shift.gram_shift`); ``None`` means the plain cuts.
        """
        if not self.shifted_cuts or self.p > min(self.n, SHIFT_MAX_P):
            return None
        if self._shift is False:
            self._shift = gram_shift(self.X.gram(), self.n)
        return self._shift

    def prepare_supports(self, supports: np.ndarray) -> None:
        """Compute the Gram columns of every feature of ``supports`` (one pass over ``X``
        for those not kept yet), before their cuts are evaluated one by one."""
        feats = np.unique(np.asarray(supports, dtype=np.intp))
        if feats.size <= self.X.column_gram.max_columns:
            self.X.column_gram.get(feats)

    def extra_cuts(self, support: np.ndarray) -> list[tuple[float, np.ndarray]]:
        """Tangents of the same dual at larger ball multipliers (:mod:`._tangents`)."""
        ext = getattr(self, "_extra", None)
        if ext is None or ext[0] != tuple(int(i) for i in np.asarray(support)):
            return []
        _, base, c2, lam_pp, d = ext
        return ball_tangent_cuts(base, c2, support, self.lam, lam_pp, self.radius, self.n,
                                 0.5, 2.0, shift=d)

    def one_swap_values(self, support: np.ndarray) -> np.ndarray:
        """All one-swap objectives from ``s`` batched ``(p - s)``-wide Gram updates.

        One pass over ``X`` (``C = X_SᵀX``, O(n p s)) for the features of ``S`` whose Gram
        columns are not kept yet (:mod:`mipdp.column_gram`), then an ``s × s``
        eigendecomposition per neighbour: no neighbour touches ``X`` again.
        """
        S = np.asarray(support, dtype=np.intp)
        s = S.size
        C = self.X.column_gram.get(S).T  # (s, p)
        out = np.full((s, self.p), np.inf)
        outside_all = np.setdiff1d(np.arange(self.p), S)
        self.n_evaluations += s * outside_all.size
        # batches of neighbours: the (m, s, s) systems and the solver's copies of them stay
        # ~100 MB (1.5 GB at p = 10⁶ in one batch); each neighbour's value is computed on
        # its own, so the batching changes nothing
        step = max(1, self._SWAP_BATCH // (s * s))
        # and at least 4 batches per left-out feature, so that the workers share the s
        # feature loops evenly (the batches do not depend on n_jobs)
        step = max(1, min(step, -(-outside_all.size // 4)))

        def piece(job):          # one batch; the batches run on the call's workers
            a, lo = job
            rest = np.delete(np.arange(s), a)
            outside = outside_all[lo:lo + step]
            m = outside.size
            A = np.empty((m, s, s))
            A[:, :s - 1, :s - 1] = C[np.ix_(rest, S[rest])] + self.lam * np.eye(s - 1)
            cross = C[rest][:, outside].T  # (m, s-1)
            A[:, :s - 1, s - 1] = cross
            A[:, s - 1, :s - 1] = cross
            A[:, s - 1, s - 1] = self.col_sq[outside] + self.lam
            b = np.empty((m, s))
            b[:, :s - 1] = self.Xty[S[rest]]
            b[:, s - 1] = self.Xty[outside]
            out[a, outside] = ridge_ball_values(A, b, self.yty, self.n, self.radius)

        parallel_map(piece, [(a, lo) for a in range(s)
                             for lo in range(0, outside_all.size, step)])
        return out


class GramLeastSquaresObjective(LeastSquaresObjective):
    """:class:`LeastSquares` on data known through its sufficient statistics.

    ``X`` is a :class:`mipdp.statistics.GramDesign` (``XcᵀXc``, ``Xcᵀyc``, ``ycᵀyc``,
    ``n``: tall dask data summarised in one pass on the cluster).  Every value, cut and
    one-swap neighbourhood is the same closed form as in :class:`LeastSquaresObjective`
    with ``Xc_SᵀXc_S`` read from the Gram matrix and, in the cut,

        ρᵀy - ‖ρ‖²/2 = (ycᵀyc - βᵀXc_SᵀXc_S β) / 2,     ρ = yc - Xc_S β,

    so the objective (and hence the sensitivity and the guarantee) is that of the
    in-memory path, equal up to floating-point summation order.
    """

    cost_kind = "least_squares_statistics"

    def __init__(self, loss: LeastSquares, X) -> None:
        loss._check_resolved("binding to data")
        assert loss.ridge is not None and loss.radius is not None  # checked just above
        self.loss = loss
        self.X = X
        self.y = None  # type: ignore[assignment]  # no rows here: ycᵀyc, Xcᵀyc come with X
        self.n, self.p = X.shape
        self.n_evaluations = 0
        self.lam = loss.ridge
        self.radius = loss.radius
        self.yty = X.yty
        self.Xty = X.xty
        self.col_sq = X.col_sq()
        self._G: np.ndarray = X.gram()
        self._gram = self._G
        self._shift = False

    def _support_columns(self, S: np.ndarray) -> tuple[None, np.ndarray]:
        return None, self._G[np.ix_(S, S)]

    def _residual_base(self, S, XS, G_SS, beta) -> float:
        return 0.5 * (self.yty - float(beta @ (G_SS @ beta)))
