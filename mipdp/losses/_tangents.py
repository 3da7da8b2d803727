"""Extra outer-approximation cuts: tangents of a loss's dual at larger ball multipliers.

Every loss here certifies its cut by weak duality with a multiplier ``Λ >= λ`` on the
ridge-and-ball term: for a fixed dual point ``a`` (``w = Xᵀ a``, ``c2 = w ∘ w``) and every
support ``T``,

    L(T) >= (base - α (Λ - λ) r² - Σ_{i∈T} c2_i / (β Λ)) / n        for every Λ >= λ

(least squares and Huber: ``α = 1/2, β = 2``; hinge: ``α = 1, β = 4``), linear in the
indicator of ``T``.  The cut of :meth:`~mipdp.losses.base.SupportObjective.value_and_cut`
takes the ``Λ`` best for ``S``; the best for ``T`` is ``Λ_T = √(W_T / (αβ)) / r`` with
``W_T = Σ_{i∈T} c2_i``, so supports with a much larger ``W_T`` (the ones region bounds
are made of) are bounded weakly when ``λ`` is small.  :func:`ball_tangent_cuts` returns
two more tangents, at ``W`` the largest possible ``W_T`` (the ``s`` largest ``c2_i``) and
at the geometric mean of it and the ``W`` where the cut's own ``Λ`` is best — each a valid
global lower bound whatever ``a`` (tested against brute force for every loss).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["ball_tangent_cuts"]


def ball_tangent_cuts(base: float, c2: np.ndarray, support, lam: float, lam_used: float,
                      radius: float, n: int, alpha: float, beta: float,
                      shift: np.ndarray | None = None) -> list[tuple[float, np.ndarray]]:
    """``[(lower, g), ...]``: cuts ``η >= lower + gᵀ(z - 1_S)`` at larger ``Λ`` (module notes).

    ``lower`` is the bound at ``1_S`` (``<= L(S)`` by weak duality); empty when the radius
    is infinite or no larger ``W_T`` exists.  With ``shift`` (least squares' certified
    diagonal ``d``, and ``base``, ``c2`` of the shifted cut) the denominators are
    ``Λ + d_i``: the shifted cut's bound at ball multiplier ``Λ - λ``, valid for every
    ``Λ >= λ`` in the same way.
    """
    if not np.isfinite(radius):
        return []
    S = np.asarray(support, dtype=np.intp)
    s = S.size
    d = np.zeros(c2.size) if shift is None else np.asarray(shift, dtype=float)
    d_ref = float(np.median(d)) if shift is not None else 0.0
    wsw = float(c2[S].sum())
    w_max = float(np.sum(np.partition(c2, -s)[-s:])) if c2.size > s else float(c2.sum())
    t = (lam_used + d_ref) * radius
    w_lo = max(wsw, alpha * beta * t * t)     # t ** 2 raised OverflowError at bounds 1e100
    if not (math.isfinite(w_lo) and math.isfinite(w_max) and w_max > 1.5 * w_lo):
        return []                              # (no cut is valid too: these are extras)
    out = []
    for W in (math.sqrt(w_lo * w_max), w_max):
        lam_k = max(lam, math.sqrt(W / (alpha * beta)) / radius - d_ref)
        den = lam_k + d
        lower = (base - alpha * (lam_k - lam) * radius * radius
                 - float(np.sum(c2[S] / (beta * den[S])))) / n
        g = -c2 / (beta * n * den)
        if math.isfinite(lower) and np.all(np.isfinite(g)):
            out.append((float(lower), g))
    return out
