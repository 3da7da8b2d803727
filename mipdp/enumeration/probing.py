"""Variable fixing for the region searches, from the cuts alone.

Every cut ``t`` reads ``η >= c_t + G_tᵀ z``.  For a feature ``j``, the smallest value
cut ``t`` can take over the supports of the region that contain ``j`` is found by
sorting (pick the cheapest remaining ``s - 1`` coordinates subject to how many may
come from the centre).  ``max_t`` of these minima is a valid lower bound on ``L`` over
all such supports (max-min ≤ min-max), so when it exceeds the search cutoff no
support that contains ``j`` can be below the cutoff and ``z_j = 0`` may be fixed.
The bound is exact for each cut and costs O(T p s); it only removes columns that
cannot matter, so the search stays exact.
"""

from __future__ import annotations

import numpy as np

__all__ = ["probe_lower_bounds"]


def _prefix(sorted_vals: np.ndarray, upto: int) -> np.ndarray:
    """``P[q] = sum of the q smallest`` for ``q = 0..upto`` (``inf`` past the length)."""
    P = np.full(upto + 1, np.inf)
    P[0] = 0.0
    k = min(upto, sorted_vals.size)
    P[1:k + 1] = np.cumsum(sorted_vals[:k])
    return P


def probe_lower_bounds(const: np.ndarray, grad: np.ndarray, center: np.ndarray, s: int,
                       m_lo: int, m_hi: int) -> np.ndarray:
    """Lower bound on ``max_t cut_t(z)`` over region supports containing each feature.

    Parameters
    ----------
    const : ndarray, shape (T,)
    grad : ndarray, shape (T, p)
        Cuts ``η >= const[t] + grad[t] @ z``.
    center : ndarray of int, shape (s,)
    s : int
    m_lo, m_hi : int
        The region: ``m_lo <= |S ∩ center| <= m_hi``.

    Returns
    -------
    ndarray, shape (p,)
        ``inf`` for features that no region support can contain.
    """
    T, p = grad.shape
    inside = np.zeros(p, dtype=bool)
    inside[center] = True
    out_idx = np.flatnonzero(~inside)
    lb = np.full(p, -np.inf)
    m_lo, m_hi = max(m_lo, 0), min(m_hi, s)
    for t in range(T):
        g = grad[t]
        gin = np.sort(g[center])
        gout_order = np.argsort(g[out_idx], kind="stable")
        gout = g[out_idx][gout_order]
        rank = np.empty(out_idx.size, dtype=np.intp)
        rank[gout_order] = np.arange(out_idx.size)
        Pin = _prefix(gin, s)
        Pout = _prefix(gout, s)
        best_out = np.full(out_idx.size, np.inf)  # j outside the centre
        best_in = np.full(center.size, np.inf)  # j in the centre
        for m in range(m_lo, m_hi + 1):
            q = s - 1 - m  # j outside: m from the centre, q more outside besides j
            if q >= 0 and m <= center.size and q <= out_idx.size - 1:
                excl = np.where(rank >= q, Pout[q], Pout[min(q + 1, s)] - gout[rank])
                best_out = np.minimum(best_out, Pin[m] + excl)
            mm = m - 1  # j inside: m - 1 more from the centre besides j, s - m outside
            q = s - m
            if mm >= 0 and q <= out_idx.size:
                rank_in = np.searchsorted(gin, g[center], side="left")
                # sum of the mm smallest centre values excluding j itself
                excl_in = np.where(rank_in >= mm, Pin[mm], Pin[min(mm + 1, s)] - g[center])
                best_in = np.minimum(best_in, excl_in + Pout[q])
        val = np.empty(p)
        val[out_idx] = const[t] + g[out_idx] + best_out
        val[center] = const[t] + g[center] + best_in
        lb = np.maximum(lb, val)
    return lb
