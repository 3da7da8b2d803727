"""The exponential mechanism's own probability of releasing the truth, certified.

``P_EM(T) = w(T) / Σ_S w(S)`` with ``w(S) = exp(-ε L(S) / (2Δ))`` over all ``C(p, s)``
supports.  Computed here independently of any sampler:

* every support within ``ball`` mistakes of the truth ``T`` (``|S \\ T| <= ball``) is
  evaluated exactly (vectorised batches of the objective);
* every farther mistake class ``k`` (a :class:`~mipdp.mechanisms.regions.Region` around
  ``T``) gets a certified lower bound ``ℓ_k`` on its minimum by outer approximation
  (:meth:`~mipdp.enumeration.SupportEnumerator.region_bound`), stopping at a level where the
  class weighs less than ``e^-12`` of the truth.

That gives ``Z_in <= Σ w <= Z_in + Σ_k |class k| exp(-ε ℓ_k / (2Δ))`` and so a certified
interval ``[lo, hi]`` on ``P_EM(T)``; when ``C(p, s) <= exact_max`` every support is
evaluated and ``lo == hi``.

This is an evaluation quantity of the experiments, computed from the data and the truth
without noise: **not private**.
"""

from __future__ import annotations

import math
import time

import numpy as np
from scipy.special import logsumexp

__all__ = ["em_truth_probability", "EMReference", "default_ball"]

#: at most this many supports: evaluate all of them (exact probability)
EXACT_MAX = 200_000


class EMReference(dict):
    """``{"lo", "hi", "ball", "evaluated", "time_s"}``: certified ``P_EM(truth) ∈ [lo, hi]``."""


def default_ball(p: int, s: int, loss: str = "least_squares") -> int:
    """Mistake ball evaluated exactly by default: about a million supports of least
    squares (2 at p <= 200, else 1), the 1-ball for the slower non-smooth losses."""
    if loss != "least_squares":
        return 1
    return 2 if p <= 200 else 1


def em_truth_probability(X, y, truth, eps: float, *, s: int | None = None, ball: int | None = None,
                         loss: str = "least_squares", bounds=(0.5, 0.5),
                         ridge: float | None = None, radius: float | None = None,
                         backend: str = "highs") -> EMReference:
    """Certified ``[lo, hi]`` on the exponential mechanism's ``P(release = truth)``.

    Parameters
    ----------
    X, y : arrays
        The data the mechanism sees (clipped here exactly as
        :func:`mipdp.selection.private_bss` clips them).
    truth : array of int
        The support whose probability is wanted.
    eps : float
        ``ε`` of one draw.
    s : int, optional
        Support size (default ``len(truth)``).
    ball : int, optional
        Mistake classes evaluated exactly (default :func:`default_ball`).
    loss, bounds, ridge, radius, backend
        As in :func:`~mipdp.selection.private_bss` (``ridge``/``radius`` ``None``: the
        default score derived from the bounds).

    Returns
    -------
    EMReference
        ``lo``, ``hi`` (certified bounds), ``ball``, ``evaluated`` (supports evaluated) and
        ``time_s``.  **Not private.**
    """
    from ..enumeration import SupportEnumerator
    from ..mechanisms.regions import Region, region_members
    from .metrics import SupportLoss

    t0 = time.perf_counter()
    truth = np.sort(np.asarray(truth, dtype=np.intp))
    s = truth.size if s is None else int(s)
    sl = SupportLoss(X, y, s, loss=loss, bounds=bounds, ridge=ridge, radius=radius)
    obj = sl.objective
    p = X.shape[1]
    delta = sl.loss.sensitivity(sl.n, s, sl.b_x, sl.b_y)
    coef = float(eps) / (2.0 * delta)
    kmax = min(s, p - s)
    exact = math.comb(p, s) <= EXACT_MAX
    if ball is None:
        ball = kmax if exact else default_ball(p, s, loss)
    ball = min(int(ball), kmax)
    LT = float(obj.values(truth[None])[0])
    parts, evaluated = [], 0
    for k in range(ball + 1):
        for rows in region_members(Region(truth, k, p)):
            parts.append(float(logsumexp(-coef * (obj.values(rows) - LT))))
            evaluated += rows.shape[0]
    inside = float(logsumexp(parts))
    rest = []
    if ball < kmax:
        enum = SupportEnumerator(obj, s, scale=delta, backend=backend, exhaustive_max=0)
        enum.optimum()
        for k in range(ball + 1, kmax + 1):
            R = Region(truth, k, p)
            level = LT + (R.log_size + 12.0) / coef  # beyond: the class weighs < e^-12 of T
            rb = enum.region_bound(R, level=level, abs_tol=0.5 / coef, max_solves=20)
            rest.append(R.log_size - coef * (rb.lower - LT))
    total_up = float(logsumexp([inside] + rest))
    return EMReference(lo=math.exp(-total_up), hi=math.exp(-inside), ball=ball,
                       evaluated=evaluated, time_s=time.perf_counter() - t0)
