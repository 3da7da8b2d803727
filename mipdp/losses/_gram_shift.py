"""A certified diagonal under the Gram matrix, for stronger least-squares cuts.

The outer-approximation cut of least squares (:mod:`mipdp.losses.least_squares`) bounds
the gain of adding feature ``i`` by ``(x_iᵀρ)² / (2nλ'')``: the ridge alone holds the
coefficients back, so with a small ridge every entering feature is credited far more than
it can explain, and correlated features are credited the same gain many times over.
If ``XᵀX - D ⪰ 0`` for a diagonal ``D = diag(d) >= 0``, part of the Gram matrix can be
moved into the separable term (the *diagonal perspective* strengthening of Frangioni &
Gentile 2006 and Dong, Chen & Linderoth 2015): the cut then credits
``u_i² / (2n(λ'' + d_i))`` instead, and is still exact at its own support
(docs/algorithms.md, "Shifted cuts", has the derivation).

:func:`gram_shift` returns ``d = t · diag(XᵀX)`` with ``t`` a certified lower bound on
the smallest eigenvalue of the correlation matrix ``C = S XᵀX S`` (``S = diag(XᵀX)^{-1/2}``
over the non-zero columns).  ``t`` is the computed eigenvalue less a margin for the
rounding of the Gram matrix (``|ΔC_ij| <= n u`` entrywise, so ``||ΔC||₂ <= q n u`` for
``q`` columns) and of the symmetric eigensolver (backward stable: its eigenvalues are
those of ``C + F`` with ``||F||₂ <= c(q) u ||C||₂`` and ``||C||₂ <= tr C = q``), taken
with a factor 8 and a relative ``10⁻⁶``.  Then ``C - tI ⪰ 0``, i.e. ``XᵀX - D ⪰ 0``.
A zero column gets ``d_i = 0`` (its row and column of ``XᵀX`` are zero).

Only when ``p <= n`` can ``XᵀX`` be positive definite; above that, and when the smallest
eigenvalue is not clearly positive, there is no shift (``None``).  The shift depends on
the data, like every cut: it only changes how tight the certified bounds are, never their
validity, so it changes the running time and not the law of any mechanism.
"""

from __future__ import annotations

import logging

import numpy as np
import scipy.linalg

logger = logging.getLogger(__name__)

__all__ = ["gram_shift", "SHIFT_MAX_P"]

#: widest design whose Gram matrix is decomposed for a shift (an O(p³) eigensolve)
SHIFT_MAX_P = 2048
#: smallest useful ``t``: below it the cuts gain nothing worth the bookkeeping
_MIN_T = 1e-6


def gram_shift(gram: np.ndarray, n: int) -> np.ndarray | None:
    """Per-feature ``d >= 0`` with ``XᵀX - diag(d) ⪰ 0`` certified, or ``None``.

    Parameters
    ----------
    gram : ndarray, shape (p, p)
        ``XᵀX`` of the (clipped) design, as computed in floating point.
    n : int
        Number of rows of ``X`` (the Gram matrix's rounding grows with it).

    Returns
    -------
    ndarray of shape (p,) or None
        ``d = t · diag(XᵀX)`` with ``t > 0`` a certified lower bound on the smallest
        eigenvalue of the correlation matrix; ``None`` when ``p > n`` or ``t`` is not
        clearly positive (no shift).
    """
    G = np.asarray(gram, dtype=float)
    p = G.shape[0]
    if G.ndim != 2 or G.shape != (p, p):
        raise ValueError("gram: a square (p, p) matrix expected")
    diag = np.diag(G).copy()
    nz = np.flatnonzero(diag > 0)
    q = nz.size
    if q < 1 or q > n or not np.all(np.isfinite(diag)):
        return None
    scale = 1.0 / np.sqrt(diag[nz])
    C = G[np.ix_(nz, nz)] * scale[:, None] * scale[None, :]
    C = 0.5 * (C + C.T)
    lam = float(scipy.linalg.eigvalsh(C, subset_by_index=[0, 0], check_finite=False)[0])
    u = np.finfo(float).eps
    t = lam * (1.0 - 1e-6) - 8.0 * q * (n + q) * u
    if not t > _MIN_T:
        logger.debug("gram shift: smallest correlation eigenvalue %.3g, no shift (not "
                     "private)", lam)
        return None
    d = np.zeros(p)
    d[nz] = t * diag[nz]
    logger.debug("gram shift: t = %.4g (smallest correlation eigenvalue %.4g; not private)",
                 t, lam)
    return d
