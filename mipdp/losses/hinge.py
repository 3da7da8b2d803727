"""Hinge loss (sparse linear classification) with ridge and an ℓ2-ball constraint.

    L(S) = min_{||β||_2 <= r}  (1/n) Σ_k max(0, 1 - y_k x_{k,S}ᵀβ)  +  (λ/n) ||β||²

Labels ``y_k ∈ {-1, +1}``; write ``z_k = y_k x_{k,S}`` (rows of ``Z = diag(y) X_S``).

Dual and certificate
--------------------
With hinge multipliers ``a ∈ [0, 1]^n`` and a ball multiplier ``μ >= 0``, minimising the
Lagrangian over ``β`` gives ``β = w / (2λ')``, ``w = Zᵀa``, ``λ' = λ + nμ`` and

    D(a, μ) = (1/n) Σ_k a_k  -  μ r²  -  ||w||² / (4 n λ')   <=  L(S)   for every a, μ.

For fixed ``a`` the best ``μ`` is closed form, ``λ' = max(λ, ||w|| / (2r))``.  Every
value returned here comes with a feasible ``β`` (primal value ``P >= L``) and a dual
point (``D <= L``); the gap ``P - D`` is the certified accuracy.

Solver (batched over many supports)
------------------------------------
All supports of a batch are solved together on one ``(m, s, n)`` block of the rows
``z_k`` (features by samples, so each pass over the data is one batched matrix product).

1. *Closed form*: if no sample reaches the margin (``t_k > 0`` for all k, typical with a
   strong ridge) the solution is ``β = c / (2λ')``, ``c = Σ_k z_k``, from column sums
   alone.  Its structure is checked exactly like every other candidate (step 3).
2. *Smoothing continuation*: the hinge is replaced by ``h_γ`` (``t²/2γ`` on ``[0, γ]``)
   for ``γ = 10⁻², 10⁻³, …`` and each smoothed problem is minimised by the batched
   projected Newton method of :mod:`mipdp.losses._newton` (exact trust-region steps on
   the ball, exact line search; finite once the pieces settle), warm-started from the
   previous level.  After the first level only a *working set* of samples near the
   margin takes part (the others enter through their fixed linear piece, checked
   exactly afterwards), so a Newton step costs ``O(|W| s²)`` instead of ``O(n s²)``.
3. *Exact structure solve* (:mod:`mipdp.losses._hinge_active_set`): after each stage the
   structure (margin set ``E``, violators ``V``) is read off the iterate and the KKT
   system of that structure is solved exactly, batched; a candidate is accepted when its
   duality gap ``P - D`` is at most ``1e-12 · max(1, P)``.
4. *Exact fallback*: for a support whose least-norm multipliers leave ``[0, 1]`` (ties:
   duplicated or clipped rows put more samples on the margin than ``s``), the multipliers
   and ``λ'`` are found by bounded least squares on the same structure.
   It tries wider margin windows too, then every window again with a finer rank
   tolerance (nearly parallel margin rows).
5. A support that no structure certifies to ``1e-12 · max(1, P)`` is accepted at
   ``1e-12 · max(ℓ_S, P)``, ``ℓ_S = 1 + r · max_k ||z_{k,S}||`` the support's loss scale
   (the largest loss of one sample at a feasible ``β``, at most the public ``B``: margins
   are computed with an error of about ``ε_mach · ℓ_S``); one that not even this certifies
   raises :class:`~mipdp.exceptions.CertificationError` (nothing uncertified is ever
   returned; the message names neither the support nor the gap, which are data).

Every returned value is the primal ``P`` of a feasible ``β`` (so ``P >= L(S)``), with the
dual bound ``D <= L(S)`` of an explicit ``a ∈ [0, 1]^n`` and ``P - D <= 1e-12 max(1, P)``
(or ``1e-12 max(ℓ_S, P)`` from the fallback, step 5).

Outer-approximation cut (SPEC §3), certified
---------------------------------------------
For any ``a ∈ [0, 1]^n`` and ``μ >= 0`` (optimal or not) put ``w = Xᵀ(a∘y)`` (all ``p``
columns) and ``λ' = λ + nμ``.  For every support ``T``, ``max(0, x) >= a_k x`` and
minimising the Lagrangian of the problem on ``T`` over ``β_T`` (minimiser ``w_T/(2λ')``)
give weak duality

    L(T) >= φ(a, μ, 1_T) := (1/n) Σ_k a_k - μ r² - Σ_{i ∈ T} w_i² / (4nλ').

``φ(a, μ, ·)`` is linear in the indicator ``1_T``, so with ``D(a, μ) = φ(a, μ, 1_S)``

    L(T) >= D(a, μ) + gᵀ(1_T - 1_S),      g_i = -w_i² / (4nλ')   for every i,

for every support ``T``: the cut ``η >= D + gᵀ(z - 1_S)`` is a global lower bound on
``L`` over all supports whatever the accuracy of ``(a, μ)``, which only decides how tight
it is.  (The perspective relaxation with the ball written ``Σ β_i²/z_i <= r²`` is the
maximum of these linear functions over ``(a, μ)``, so at the optimal dual point this is
its gradient at ``1_S``; on ``S``, ``g_i = -(λ'/n) β_i²``.)  The enumeration therefore
uses the certified dual bound ``D`` as the cut constant and the primal value ``P`` as
the recorded objective.
"""

from __future__ import annotations

import math
from typing import cast

import numpy as np

from .._validation import check_labels_pm1
from ..exceptions import CertificationError
from ._batched import BatchedCertifiedSolves
from ._hinge_active_set import (
    hinge_dual,
    polish_batch,
    polish_exact,
    polish_structure,
    qp_candidates,
)
from ._newton import SmoothedHinge, ball_newton, gather, margins
from ._tangents import ball_tangent_cuts
from .base import Loss, SupportObjective

__all__ = ["Hinge", "HingeObjective", "encode_labels"]

#: labels whose sign is fixed wherever they occur: a one-class y of these keeps its side
_NEGATIVE_LABELS = (-1, 0)        # False == 0
_POSITIVE_LABELS = (1,)           # True == 1


def encode_labels(y) -> tuple[np.ndarray | None, np.ndarray]:
    """``(classes, y_pm1)``: any two-class labels as ``-1`` / ``+1``, in sorted order.

    ``classes = np.unique(y)`` (sorted, as scikit-learn's ``LabelEncoder``):
    ``classes[0] → -1`` and ``classes[1] → +1``; so ``0/1`` and ``False/True`` become
    ``-1/+1``, ``±1`` is unchanged, and for strings the later one in sorted order is
    ``+1``.  One class only is a valid dataset (a neighbour of a two-class one), so it
    runs: ``-1``, ``0`` and ``False`` stay on the ``-1`` side, ``1`` and ``True`` on the
    ``+1`` side (as they would beside a second class), any other label becomes ``+1``.
    Which class is ``+1`` cannot change the release's law: the hinge objective is
    invariant under flipping every label (``β → -β`` maps the ball and the ridge onto
    themselves).  The shape of ``y`` is kept (a column vector stays one).

    A numeric ``y`` with NaN or inf is returned unchanged (``classes`` ``None``) for the
    data checks to refuse with their own message.  The errors name no label value found
    in the data.
    """
    y = np.asarray(y)
    if y.dtype.kind in "fc" and not np.all(np.isfinite(y)):
        return None, y
    try:
        classes = np.unique(y)
    except TypeError:             # e.g. str and int mixed in an object array
        raise ValueError("y: loss='hinge' expected labels of one type (all strings or all "
                         "numbers) with exactly two classes.") from None
    if classes.size > 2:
        raise ValueError("y: loss='hinge' expected exactly two classes, found more. "
                         "Binarize y first (e.g. one class against the rest).")
    if classes.size == 2:
        positive = classes[1]
    elif classes.size == 1 and _is_label_in(classes[0], _NEGATIVE_LABELS):
        return classes, -np.ones(y.shape)
    else:
        return classes, np.ones(y.shape)
    return classes, np.where(y == positive, 1.0, -1.0)


def _is_label_in(label, values) -> bool:
    if isinstance(label, (str, bytes, np.str_, np.bytes_)):
        return False
    try:
        return any(bool(label == v) for v in values)
    except (TypeError, ValueError):
        return False

#: smoothing levels of the continuation and the Newton iterations allowed at each
_LEVELS = ((1e-2, 100), (1e-3, 100), (1e-4, 100), (1e-5, 100), (1e-6, 100), (1e-8, 100),
           (1e-10, 100))
#: accepted duality gap, relative to max(1, P)
CERT_TOL = 1e-12
#: primal-dual active-set rounds after each structure read off an iterate
_REFINE_ROUNDS = 1
#: Newton steps on all samples at the first level, then working sets of this half-width
_FIRST_ITERS = 3
_FIRST_OMEGA = 0.3
#: half-widths of the wider margin windows the exact fallback also tries: at a tiny ridge
#: the continuation can stall with a margin sample at ``t ≈ γ`` of an earlier level
#: (its weight near 1), which the last level's window puts among the violators
_WIDER_HALF_WIDTHS = (1e-9, 1e-8, 1e-7, 1e-6, 1e-5)
#: relative eigenvalue tolerance of the margin rows' Gram matrix in the fallback's second
#: pass (the first uses the default of :mod:`._hinge_active_set`, 1e-11)
_FINE_RANK_TOL = 1e-14


def _WIDER_WINDOWS(t):
    """``(t, lo, hi)`` structure windows of the exact fallback beyond the level's own:
    one-sided (``[-1e-12, h]``) and symmetric (``[-h, h]``), narrow to wide."""
    return [(t, lo, h) for h in _WIDER_HALF_WIDTHS for lo in (-1e-12, -h)]


def _loss_scale(Zt: np.ndarray, radius: float) -> np.ndarray:
    """``1 + r · max_k ||z_{k,S}||`` per support (``Zt``: (m, s, n)): the largest loss of a
    sample at a feasible ``β`` on the support, at most the public ``B = 1 + b_x r √s``."""
    if Zt.shape[2] == 0:
        return np.ones(Zt.shape[0])
    return 1.0 + radius * np.sqrt(np.max(np.einsum("msn,msn->mn", Zt, Zt), axis=1))


class Hinge(Loss):
    """Hinge loss ``(1/n) Σ max(0, 1 - y_k x_kᵀβ)`` with ridge ``(λ/n)||β||²`` on ``||β|| <= r``.

    Sensitivity (replace-one neighbours, ``|x_ij| <= b_x``, labels ``±1``): for a
    feasible ``β`` on a size-``s`` support, ``|y_k x_{k,S}ᵀβ| <= ||x_{k,S}||·||β|| <=
    b_x √s r``, so each sample's loss lies in ``[0, 1 + b_x r √s]``; the ridge term is
    data-free, hence ``Δ = (1 + b_x r √s) / n``.  No bound on ``y`` is needed.

    Parameters
    ----------
    ridge : float, optional
        ``λ > 0``; default: the rule of :func:`mipdp.losses.default_score`.
    radius : float, optional
        ``r > 0`` (finite: the sensitivity depends on it); default: the rule of
        :func:`mipdp.losses.default_score`, ``1 / (b_x √s)``.
    """

    name = "hinge"
    needs_y_bound = False

    def __init__(self, ridge: float | None = None, radius: float | None = None) -> None:
        super().__init__(ridge, radius)

    @classmethod
    def default_radius(cls, s: int, b_x: float, b_y: float | None = None) -> float:
        """The default rule's radius ``1 / (b_x √s)``: the margin ``y xᵀβ`` ranges over
        ``[-1, 1]``; a margin beyond 1 earns no lower loss but inflates ``B``."""
        return 1.0 / (float(b_x) * math.sqrt(s))

    def sample_bound(self, s: int, b_x: float, b_y: float | None = None) -> float:
        return 1.0 + b_x * cast(float, self.radius) * np.sqrt(s)

    def encode_targets(self, y):
        """Any two-class labels as ``±1`` (:func:`encode_labels`), before the data checks."""
        return encode_labels(y)[1]

    def check_targets(self, y: np.ndarray) -> np.ndarray:
        """Labels must be exactly ``-1`` / ``+1`` (any counts, one class included)."""
        return check_labels_pm1(np.asarray(y, dtype=float), "y")

    def bind(self, X: np.ndarray, y: np.ndarray) -> HingeObjective:
        y = self.check_targets(y)
        return HingeObjective(self, X, y)


class HingeObjective(BatchedCertifiedSolves, SupportObjective):
    """:class:`Hinge` on fixed data.

    Attributes
    ----------
    max_gap : float
        Largest certified duality gap ``P - D`` of any evaluation so far.
    n_fallback : int
        Evaluations certified by the bounded-least-squares fallback (still exact).
    """

    cost_kind = "hinge"

    def __init__(self, loss: Hinge, X: np.ndarray, y: np.ndarray) -> None:
        super().__init__(loss, X, y)
        assert loss.ridge is not None and loss.radius is not None  # checked by super()
        self.lam = loss.ridge
        self.radius = loss.radius
        self.max_gap = 0.0
        self.n_fallback = 0
        self._colsum = self.X.rmatvec(y)   # Σ_k z_k, z_k = y_k x_k
        self._gram: np.ndarray | None = None

    @property
    def _ZT(self) -> _SignedRows:
        """Rows ``z_k = y_k x_k`` as columns, ``(p, n)``, gathered per support on demand."""
        return _SignedRows(self.X, self.y)

    # -- batch pieces --------------------------------------------------------------------
    def _closed_form(self, supports: np.ndarray) -> np.ndarray:
        """``β`` if every sample violates the margin: ``c/(2λ')``, ``c = Σ_k z_k``."""
        c = self._colsum[supports]
        lam_p = np.maximum(self.lam, np.linalg.norm(c, axis=1) / (2.0 * self.radius))
        return c / (2.0 * lam_p[:, None])

    def _working_set_level(self, Zt, supports, beta, t, gamma, omega, iters):
        """Minimise the ``γ``-smoothed problem on working sets (exact).

        Only the samples with margins ``t ∈ [-ω, γ + ω]`` (at the start) are kept; those
        above are replaced by their linear piece (``h_γ(t) = t - γ/2``), those below by 0.
        Both replacements are tangents of ``h_γ``, so the reduced objective lies below the
        full one and equals it where no left-out sample has changed piece: a reduced
        minimiser at which every left-out sample is still on its piece (checked on all
        samples) is the full minimiser.  Members that fail the check are redone from their
        new margins; after three rounds the remaining ones run on all samples.
        """
        n, lam, r = self.n, self.lam, self.radius
        loss = SmoothedHinge(gamma)
        beta, t = beta.copy(), t.copy()
        todo = np.arange(beta.shape[0])
        for _ in range(3):
            above, below = t[todo] > gamma + omega, t[todo] < -omega
            size = np.count_nonzero(~(above | below), axis=1)
            # members grouped by working-set size (within a factor 2), so that padding to
            # the largest set of a group costs at most twice the work
            bucket = np.ceil(np.log2(np.maximum(size, 1))).astype(int)
            ok = np.ones(todo.size, dtype=bool)
            for kb in np.unique(bucket):
                sel = np.flatnonzero(bucket == kb)
                rows = todo[sel]
                Zk, ab, be = Zt[rows], above[sel], below[sel]
                ZW, _ = gather(Zk, ~(ab | be))
                lin = -np.matmul(Zk, ab[:, :, None].astype(float))[:, :, 0] / n
                GW = np.matmul(ZW, ZW.transpose(0, 2, 1))
                b, _ = ball_newton(ZW, 1.0, GW, loss, 2.0 * lam / n, r, beta[rows], n=n,
                                   lin=lin, max_iter=iters)
                tn = margins(Zk, b, 1.0)
                ok[sel] = ~np.any((ab & (tn < gamma)) | (be & (tn > 0.0)), axis=1)
                beta[rows], t[rows] = b, tn
            todo = todo[~ok]
            if todo.size == 0:
                return beta, t
        b, _ = ball_newton(Zt[todo], 1.0, self._grams(supports[todo], Zt[todo]), loss,
                           2.0 * lam / n, r, beta[todo], max_iter=iters)
        beta[todo], t[todo] = b, margins(Zt[todo], b, 1.0)
        return beta, t

    def _solve_chunk(self, supports: np.ndarray, want_dual: bool):
        m, s = supports.shape
        n, lam, r = self.n, self.lam, self.radius
        Zt = self._ZT[supports]  # (m, s, n): only the supports' columns
        P, D = np.full(m, np.nan), np.full(m, np.nan)
        B = np.zeros((m, s))
        A = np.zeros((m, n)) if want_dual else None
        todo = np.arange(m)

        # a support the strict tolerance cannot certify is accepted by the exact fallback
        # at the same relative tolerance of its loss scale (module notes)
        ref = _loss_scale(Zt, r)

        def accept(rows, beta, Pc, Dc, a):
            ok = Pc - Dc <= CERT_TOL * np.maximum(1.0, np.abs(Pc))
            k = rows[ok]
            P[k], D[k], B[k] = Pc[ok], Dc[ok], beta[ok]
            if want_dual:
                A[k] = a[ok]
            return rows[~ok], ~ok

        def refine(rows, cand, t):
            """Primal-dual active-set rounds from the candidates that did not certify."""
            rows, left = accept(rows, *cand[:4])
            t, cand_t = t[left], cand[4][left]
            E, V = cand[5][left], cand[6][left]
            for _ in range(_REFINE_ROUNDS):
                if rows.size == 0:
                    break
                cand = polish_structure(Zt[rows], E, V, lam, r)
                rows, left = accept(rows, *cand[:4])
                t, cand_t, E, V = t[left], cand[4][left], cand[5][left], cand[6][left]
            return rows, t, cand_t

        beta = self._closed_form(supports)
        t = margins(Zt, beta, 1.0)
        todo, t, cand_t = refine(todo, polish_batch(Zt, t, -1e-12, 1e-12, lam, r), t)
        # the first level runs on all samples; later ones on working sets of half-width
        # 10 × the previous γ (see _working_set_level)
        gamma, omega = _LEVELS[0][0], None
        for gamma, iters in _LEVELS:
            if todo.size == 0:
                break
            if omega is None:  # first level: a few steps on all samples, then a working set
                beta[todo], _ = ball_newton(Zt[todo], 1.0, self._grams(supports[todo], Zt[todo]),
                                            SmoothedHinge(gamma), 2.0 * lam / n, r, beta[todo],
                                            max_iter=_FIRST_ITERS)
                t = margins(Zt[todo], beta[todo], 1.0)
                beta[todo], t = self._working_set_level(Zt[todo], supports[todo], beta[todo],
                                                        t, gamma, _FIRST_OMEGA, iters)
            else:
                beta[todo], t = self._working_set_level(Zt[todo], supports[todo], beta[todo],
                                                        t, gamma, omega, iters)
            omega = 10.0 * gamma
            todo, t, cand_t = refine(todo, polish_batch(Zt[todo], t, -1e-12, gamma * (1 + 1e-9),
                                                        lam, r), t)
        for j, k in enumerate(todo):  # exact fallback, one support at a time
            best: tuple | None = None
            windows = ((t[j], -1e-12, gamma * (1 + 1e-9)), (t[j], -gamma, 2.0 * gamma),
                       (cand_t[j], -1e-9, 1e-9), (cand_t[j], -1e-7, 1e-7),
                       *_WIDER_WINDOWS(t[j]))
            # the level's windows first (as before), then the wider ones, then all of them
            # again with a finer rank tolerance: margin rows that are nearly parallel (rows
            # equal up to the 6th digit) span a direction the default tolerance drops
            # last, the structures of an LP/QP solve of the support's problem (HiGHS)
            tries = ([(w, None) for w in windows] + [(w, _FINE_RANK_TOL) for w in windows],
                     lambda Zk=Zt[k]: [((tq, lo, hi), rt)
                                       for tq in qp_candidates(Zk, lam, r)
                                       for lo, hi in ((-1e-9, 1e-9), (-1e-6, 1e-6),
                                                      (-0.5, 0.5))
                                       for rt in (None, _FINE_RANK_TOL)])
            for group in tries:
                for (tt, lo, hi), rank_tol in (group if isinstance(group, list) else group()):
                    res = polish_exact(Zt[k], tt, lo, hi, lam, r,
                                       **({} if rank_tol is None else {"rank_tol": rank_tol}))
                    if best is None or res[1] - res[2] < best[1] - best[2]:
                        best = res
                    if best[1] - best[2] <= CERT_TOL * max(1.0, abs(best[1])):
                        break
                if best is not None and best[1] - best[2] <= CERT_TOL * max(ref[k],
                                                                           abs(best[1])):
                    break
            assert best is not None  # the loop above runs at least once
            b, Pk, Dk, a, _ = best
            if not Pk - Dk <= CERT_TOL * max(ref[k], abs(Pk)):
                # the message names no support and no gap: both are data (a neighbour
                # would run), and an exception must not carry them
                raise CertificationError(
                    f"hinge: could not certify the objective of a support to a duality gap "
                    f"of {CERT_TOL:g} times its loss scale; nothing was released. Please "
                    "report this data set.")
            P[k], D[k], B[k] = Pk, Dk, b
            if want_dual:
                assert A is not None
                A[k] = a
            self.n_fallback += 1
        return P, D, B, A

    def solve(self, supports: np.ndarray, want_dual: bool = False):
        """Certified values of many supports.

        Returns
        -------
        P : ndarray, shape (m,)
            Primal values ``P >= L(S)`` (of the feasible minimisers ``B``).
        D : ndarray, shape (m,)
            Dual bounds ``D <= L(S)``, with ``P - D <= 1e-12 max(1, P)`` (or
            ``1e-12 max(ℓ_S, P)`` from the exact fallback; module notes).
        B : ndarray, shape (m, s)
            Minimisers.
        A : ndarray, shape (m, n) or None
            Dual weights ``a ∈ [0, 1]^n`` behind ``D`` (``want_dual=True``).

        Raises
        ------
        CertificationError
            If a support cannot be certified to that accuracy.
        """
        return self._solve_batched(supports, want_dual)

    def values(self, supports: np.ndarray) -> np.ndarray:
        return self.solve(supports)[0]

    def value_bounds(self, supports: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        P, D, _, _ = self.solve(supports)
        return P, D

    def value_and_cut(self, support: np.ndarray) -> tuple[float, float, np.ndarray]:
        """``(P, D, g)``: value, certified lower bound and cut gradient (module notes).

        ``g_i = -w_i² / (4nλ')`` with ``w = Xᵀ(a∘y)`` from the certified dual weights ``a``
        and ``λ' = max(λ, ||w_S||/(2r))``; ``D = D(a, μ)`` with the same ``λ' = λ + nμ``,
        so ``η >= D + gᵀ(z - 1_S)`` is a global lower bound on ``L``.
        """
        S = np.asarray(support, dtype=np.intp)
        P, _, _, A = self.solve(S[None], want_dual=True)
        a = A[0]
        w = self.X.rmatvec(a * self.y)
        D, lam_p = hinge_dual(np.array([a.sum()]), w[S][None], self.lam, self.radius, self.n)
        lower = min(float(D[0]), float(P[0]))
        self._extra = (tuple(S.tolist()), float(a.sum()), w * w, float(lam_p[0]))
        return float(P[0]), lower, -(w * w) / (4.0 * self.n * float(lam_p[0]))

    def extra_cuts(self, support: np.ndarray) -> list[tuple[float, np.ndarray]]:
        """Tangents of the same dual at larger ``λ'`` (:mod:`._tangents`, ``α = 1, β = 4``)."""
        ext = getattr(self, "_extra", None)
        if ext is None or ext[0] != tuple(int(i) for i in np.asarray(support)):
            return []
        _, base, c2, lam_p = ext
        return ball_tangent_cuts(base, c2, support, self.lam, lam_p, self.radius, self.n,
                                 1.0, 4.0)



class _SignedRows:
    """``Zᵀ`` with ``Z = diag(y) X`` (shape ``(p, n)``) without forming it: ``Zᵀ[idx]``
    gathers the columns ``idx`` of the design only."""

    def __init__(self, design, y: np.ndarray) -> None:
        self._d, self._y = design, y

    def __getitem__(self, idx) -> np.ndarray:
        return self._d.rows_T(idx) * self._y

    def __matmul__(self, a) -> np.ndarray:
        return self._d.rmatvec(np.asarray(a) * self._y)
