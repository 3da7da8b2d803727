"""Bounds-free release on ranks: ``bounds="ranks"``.

Without public ranges for the columns (and the target), :func:`mipdp.private_bss` can
replace every column of ``X`` (and ``y`` for least squares) by its **uniform ranks**

    u_ij = (R_ij − (n + 1)/2) / n,     R_ij the average rank of x_ij in column j (ties:
                                       the mean of the tied positions),

which lie in ``(−½, ½)`` whatever the data, and run the selection on them with the
public bounds ``(½, ½)``.  Nothing is estimated and no ``ε`` is spent on ranges; the
price is a larger sensitivity, because changing one row moves every other row's rank.

Sensitivity (docs/privacy.md, "Rank-based scores (bounds="ranks")")
-------------------------------------------------------------------
With ``F(S) = min_{||β||₂ <= r} Σ_i ℓ(u_iᵀβ, v_i) + (λ/2)||β||²`` the sum-form score on the
ranks and ``ρ = r √s`` (so ``||β||₁ <= ρ``):

* least squares, replace-one (``n`` public)::

      Δ(n) = (1 + ρ)² (n − 1)(n + 3) / (8 n²) + (1 + ρ) √(n² − 1) / (4 √3 n)
           -> (1 + ρ)²/8 + (1 + ρ)/(4√3)   as n grows (0.789 at ρ = 1, against 0.5 on
                                            clipped data; 0.87 at n = 10)

* least squares, add/remove (``n`` private; a bound uniform in ``n >= 2``)::

      Δ = max( (1 + ρ)²/6 + (1 + ρ)/(4√3),
               5/32 + (3/2)^{3/2} (1 + ρ)/(4√3) + (1 + ρ)²/16 )     (0.955 at ρ = 1)

* hinge loss (labels ``±1`` are not transformed), both notions: ``Δ = 1 + 3ρ/2``.

The score on ranks is not monotone under add/remove, so the samplers use the full ``Δ``
(not the halved scale of :data:`mipdp.selection.ADD_REMOVE_SCALE`).

Memory and input types
----------------------
The ranks are computed column by column (one column of ``X`` read at a time: a memmap
or a dask array is never loaded whole; a sparse column is densified one at a time, since
its zeros get a tied, non-zero rank).  The output is a dense float64 ``(n, p)`` array,
``8 n p`` bytes: the rank design is dense whatever the input.
"""

from __future__ import annotations

import logging
import math

import numpy as np
from scipy.stats import rankdata

from ._param_validation import InvalidParameterError

logger = logging.getLogger(__name__)

__all__ = ["RANKS", "RANK_BOUNDS", "RANK_LOSSES", "is_ranks", "check_ranks_options",
           "uniform_ranks", "rank_design", "rank_sensitivity"]

#: the ``bounds=`` value of the rank release
RANKS = "ranks"
#: the public bounds of the rank-transformed data
RANK_BOUNDS = (0.5, 0.5)
#: losses with a proven rank sensitivity
RANK_LOSSES = ("least_squares", "hinge")
_SQRT3 = math.sqrt(3.0)


def is_ranks(bounds) -> bool:
    """Whether ``bounds`` asks for the rank release."""
    return isinstance(bounds, str) and bounds == RANKS


def check_ranks_options(loss_name: str, prescreen) -> None:
    """Refuse, before the data is read, what the rank release does not support."""
    if loss_name not in RANK_LOSSES:
        raise InvalidParameterError(
            f"bounds: bounds='ranks' (what bounds=None means) is proven for loss in "
            f"{list(RANK_LOSSES)} only, got loss={loss_name!r}; pass public "
            "bounds=(b_x, b_y), or bounds='private' (ranges released with part of eps)")
    if prescreen is not None:
        name = prescreen[0] if isinstance(prescreen, (tuple, list)) and prescreen else None
        if name != "kendall":
            raise InvalidParameterError(
                f"prescreen: with bounds='ranks' (what bounds=None means) only the 'kendall' "
                f"pre-screen is available "
                f"(it depends on ranks only); the others assume rows that change alone under "
                f"a neighbour, which ranks do not; got prescreen={prescreen!r}: pass public "
                "bounds=(b_x, b_y) for it")


def uniform_ranks(v: np.ndarray) -> np.ndarray:
    """``(R − (n + 1)/2) / n`` with ``R`` the average ranks of ``v`` (1-D), in ``(−½, ½)``."""
    v = np.asarray(v, dtype=np.float64).ravel()
    n = v.size
    return (rankdata(v, method="average") - 0.5 * (n + 1)) / n


def _column(X, j: int) -> np.ndarray:
    from .data import is_sparse
    if is_sparse(X):
        return X[:, [j]].toarray().ravel()
    return np.asarray(X[:, j], dtype=np.float64)


def rank_design(X) -> np.ndarray:
    """The uniform ranks of every column of ``X``, column by column (dense float64).

    ``X``: a numpy array or memmap (any numeric dtype), a scipy sparse matrix (CSC is the
    fast format) or a dask array; one column is read at a time.
    """
    from .data import is_sparse
    if is_sparse(X):
        X = X.tocsc()
    n, p = X.shape
    out = np.empty((n, p), dtype=np.float64, order="F")
    for j in range(p):
        out[:, j] = uniform_ranks(_column(X, j))
    return out


def _rho(s: int, radius: float) -> float:
    return float(radius) * math.sqrt(s)


def rank_sensitivity(loss_name: str, n: int | None, s: int, radius: float,
                     neighbours: str = "replace_one") -> float:
    """Sensitivity ``Δ`` of the sum-form score ``F(S)`` on uniform ranks.

    Parameters
    ----------
    loss_name : {"least_squares", "hinge"}
    n : int or None
        Number of rows; used only under replace-one (it is public then).  Under add/remove
        the bound is uniform in ``n >= 2`` and ``n`` is ignored.
    s : int
    radius : float
        ``r`` of the coefficient ball (``||β||₁ <= r √s``).
    neighbours : {"replace_one", "add_remove"}

    Returns
    -------
    float
        ``Δ`` with ``|F_D(S) − F_D'(S)| <= Δ`` for every support ``S`` and neighbours
        ``D, D'`` (docs/privacy.md, "Rank-based scores (bounds="ranks")").
    """
    rho = _rho(s, radius)
    if loss_name == "hinge":
        return 1.0 + 1.5 * rho
    if loss_name != "least_squares":
        raise InvalidParameterError(f"loss: no rank sensitivity for {loss_name!r}")
    if neighbours == "add_remove":
        t1 = (1 + rho) ** 2 / 6.0 + (1 + rho) / (4 * _SQRT3)
        t2 = 5.0 / 32.0 + 1.5 ** 1.5 * (1 + rho) / (4 * _SQRT3) + (1 + rho) ** 2 / 16.0
        return max(t1, t2)
    n = int(n)
    return ((1 + rho) ** 2 * (n - 1) * (n + 3) / (8.0 * n * n)
            + (1 + rho) * math.sqrt(n * n - 1.0) / (4 * _SQRT3 * n))
