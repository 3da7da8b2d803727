"""The exponential mechanism for quantiles over a public candidate grid.

Given a public, data-independent, strictly increasing grid ``g_1 < ... < g_m`` and a level
``q ∈ (0, 1)``, the mechanism releases one grid point ``g_k`` with probability

    P(g_k) ∝ exp( ε u(D, g_k) / (2 Δu) ),     u(D, g) = −| C_D(g) − q n |,

where ``C_D(g)`` is the (row-averaged) count of values ``<= g``:

* one variable (a column ``v`` of ``n`` values): ``C_D(g) = #{i : v_i <= g}``;
* ``k`` variables pooled (an ``n × k`` block ``V``, one shared range for all of them):
  ``C_D(g) = (1/k) Σ_j #{i : V_ij <= g}``, which also lies in ``[0, n]``.

Sensitivity (``Δu = 1`` under both neighbour notions)
-----------------------------------------------------
*Replace-one* (``n`` fixed and public): replacing one row changes each of the ``k`` counts
``#{i : V_ij <= g}`` by at most 1, so ``C_D(g)`` moves by at most 1 and ``q n`` not at
all: ``|u(D, g) − u(D', g)| <= 1``.

*Add/remove-one* (``n`` not public): adding a row moves ``C_D(g)`` by an amount in
``[0, 1]`` and the target ``q n`` by exactly ``q``; their difference moves by at most
``max(q, 1 − q) <= 1``.

With ``Δu = 1`` the release is pure ``ε``-DP under either notion (the exponential
mechanism, McSherry & Talwar 2007): for neighbours ``D, D'`` each weight changes by a
factor in ``[e^{−ε/2}, e^{ε/2}]`` and so does the normaliser, so every probability changes
by a factor in ``[e^{−ε}, e^{ε}]`` (docs/privacy.md, "Private clipping ranges").  The
grid must not depend on the data.  The law is computed exactly
(:func:`quantile_log_probabilities`) and sampled by the Gumbel-max trick.

Cost: ``O(n k log m)`` to place the values on the grid, ``O(m)`` per release.
"""

from __future__ import annotations

import numpy as np

from .exponential import log_normalize

__all__ = ["QUANTILE_SENSITIVITY", "grid_counts", "quantile_log_probabilities",
           "column_grid_counts", "private_quantile_index"]

#: ``Δu`` of the quantile utility ``−|C_D(g) − q n|`` under replace-one and add/remove-one
QUANTILE_SENSITIVITY = 1.0


def grid_counts(V: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """``C_D(g)`` at every grid point: the count of values ``<= g``, averaged over columns.

    Parameters
    ----------
    V : ndarray, shape (n,) or (n, k)
        One variable, or ``k`` variables pooled.
    grid : ndarray, shape (m,)
        Strictly increasing public grid.

    Returns
    -------
    ndarray, shape (m,)
        ``(1/k) Σ_j #{i : V_ij <= g}`` for each grid point ``g`` (in ``[0, n]``).
    """
    V = np.asarray(V, dtype=float)
    k = 1 if V.ndim == 1 else V.shape[1]
    flat = np.sort(V.ravel())
    return np.searchsorted(flat, grid, side="right").astype(float) / k


def column_grid_counts(X: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """:func:`grid_counts` of every column of ``X`` separately, shape ``(p, m)``.

    ``O(n p log m)`` time and ``O(p m)`` memory: each entry is placed on the grid once.
    """
    X = np.asarray(X, dtype=float)
    n, p = X.shape
    m = grid.size
    # index of the first grid point >= x: x <= g_k  <=>  idx <= k
    idx = np.searchsorted(grid, X, side="left")                    # (n, p) in [0, m]
    flat = idx + (m + 1) * np.arange(p)[None, :]
    hist = np.bincount(flat.ravel(), minlength=p * (m + 1)).reshape(p, m + 1)
    return np.cumsum(hist, axis=1)[:, :m].astype(float)


def quantile_log_probabilities(counts: np.ndarray, n: int, q: float,
                               epsilon: float) -> np.ndarray:
    """Exact log-law of the quantile mechanism over the grid.

    Parameters
    ----------
    counts : ndarray, shape (m,) or (p, m)
        ``C_D(g)`` from :func:`grid_counts` (or one row per variable from
        :func:`column_grid_counts`).
    n : int
        Number of rows of the data (the target is ``q n``).
    q : float
        Quantile level in ``(0, 1)``.
    epsilon : float
        Privacy parameter of this one release (per row of ``counts``).

    Returns
    -------
    ndarray, same shape as ``counts``
        ``log P(g_k)`` (each row normalised).
    """
    u = -np.abs(np.asarray(counts, dtype=float) - q * float(n))
    lw = epsilon * u / (2.0 * QUANTILE_SENSITIVITY)
    if lw.ndim == 1:
        return log_normalize(lw)
    return np.vstack([log_normalize(row) for row in lw]) if lw.shape[0] else lw


def private_quantile_index(counts: np.ndarray, n: int, q: float, epsilon: float,
                           rng: np.random.Generator) -> np.ndarray | int:
    """Draw grid indices from the quantile mechanism (one per row of ``counts``).

    Pure ``epsilon``-DP per row under replace-one and add/remove-one neighbours
    (sensitivity :data:`QUANTILE_SENSITIVITY`, module docstring).  Sampled exactly by the
    Gumbel-max trick from the unnormalised log-weights ``ε u / 2``.
    """
    # lw = ε u / (2 Δu), u = −|C − q n|, computed in place: with one row per column (p rows
    # of m grid points) each (p, m) temporary is 8 p m bytes (233 MB at p = 10⁵)
    lw = np.subtract(np.asarray(counts, dtype=float), q * float(n))
    np.abs(lw, out=lw)
    np.negative(lw, out=lw)
    np.multiply(lw, epsilon, out=lw)
    np.divide(lw, 2.0 * QUANTILE_SENSITIVITY, out=lw)
    lw += rng.gumbel(size=lw.shape)
    idx = np.argmax(lw, axis=-1)
    return int(idx) if lw.ndim == 1 else idx
