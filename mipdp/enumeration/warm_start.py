"""Warm starts for the outer approximation: IHT, then one-swap local search.

Iterative hard thresholding (Prastakos et al., 2025, App. B.2): ``β ← H_s(β - ∇f(β)/L)`` on the
ridge least-squares objective, ``H_s`` keeping the ``s`` largest ``|β_j|``, ``L`` the
largest eigenvalue of ``(XᵀX + λI)/n`` (power iteration).  Its support is then improved
by best-improvement one-swaps of the exact support objective until no swap helps, so
the outer approximation starts at a one-swap local optimum (usually the optimum).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..data import ClippedDesign, as_design
from ..losses.base import SupportObjective

__all__ = ["iht_support", "local_search"]


def _top_s(v: np.ndarray, s: int) -> np.ndarray:
    return np.sort(np.argpartition(-np.abs(v), s - 1)[:s])


def iht_support(X: np.ndarray | ClippedDesign, y: np.ndarray, s: int, ridge: float, *,
                n_iter: int = 30, power_iter: int = 10,
                check: Callable[[], object] | None = None) -> np.ndarray:
    """Support found by iterative hard thresholding on ridge least squares.

    Deterministic (power iteration starts from a data-free vector), so a warm start
    never consumes randomness.  Used for every loss as a cheap linear-model guess; a
    few iterations suffice because the one-swap local search that follows polishes it.
    Passes over ``X``: one per power iteration (:meth:`mipdp.data.ClippedDesign.gram_matvec`
    by row blocks, or ``Xᵀ(Xv)`` and the next ``Xv`` together by column blocks,
    :meth:`~mipdp.data.ClippedDesign.rmatvec_matvec`) and one per batch of features new to
    the iterates (their Gram columns, :mod:`mipdp.column_gram`; ``Xᵀy`` is the design's).
    ``check()``, if given, is called before every iteration (a deadline raises from it).
    """
    check = check or (lambda: None)
    X = as_design(X)
    n, p = X.shape
    v = np.ones(p) / np.sqrt(p)
    lip = 1.0
    row_pass = getattr(X, "row_major_pass", False)
    u = None if row_pass else X @ v
    for it in range(power_iter):
        check()
        # w = Xᵀ(X v) + λ v in one pass over X: by row blocks of an in-memory C-ordered
        # array, else by column blocks that also give the next X v = X w / ‖w‖
        if row_pass:
            w, z = X.gram_matvec(v, ridge * v), None
        else:
            w, z = X.rmatvec_matvec(u, ridge * v, matvec=it + 1 < power_iter)
        lip = float(np.linalg.norm(w))
        if lip == 0.0:
            break
        v = w / lip
        if z is not None:
            u = z / lip
    lip = max(lip, 1e-12) / n
    # Xᵀy: kept by a design known through its statistics (mipdp.statistics.GramDesign)
    xty = getattr(X, "xty", None)
    Xty = xty if xty is not None else X.rmatvec(y)
    beta = np.zeros(p)
    support = _top_s(Xty, s)
    for it in range(n_iter):
        check()
        # Xᵀ(X β - y) = XᵀX_B β_B - Xᵀy (B: the s features of β) from kept Gram columns
        B = np.flatnonzero(beta)
        grad = (X.column_gram.product(B, beta[B]) - Xty + ridge * beta) / n
        full = beta - grad / lip
        new = _top_s(full, s)
        beta = np.zeros(p)
        beta[new] = full[new]
        if np.array_equal(new, support) and it >= 2:
            break
        support = new
    return support


def local_search(objective: SupportObjective, support: np.ndarray, *,
                 max_passes: int = 50, check: Callable[[], object] | None = None
                 ) -> tuple[np.ndarray, float, np.ndarray]:
    """Best-improvement one-swap descent on the exact objective.

    ``check()``, if given, is called before every pass (a deadline raises from it).

    Returns
    -------
    support : ndarray
        A one-swap local optimum (sorted).
    value : float
        Its objective.
    swaps : ndarray, shape (s, p)
        Its one-swap objectives (see :meth:`SupportObjective.one_swap_values`).
    """
    S = np.sort(np.asarray(support, dtype=np.intp))
    value = float(objective.values(S[None])[0])
    for _ in range(max_passes):
        if check is not None:
            check()
        swaps = objective.one_swap_values(S)
        a, j = np.unravel_index(np.argmin(swaps), swaps.shape)
        if not swaps[a, j] < value - 1e-12 * max(1.0, abs(value)):
            return S, value, swaps
        S = np.sort(np.r_[np.delete(S, a), j])
        value = float(swaps[a, j])
    return S, value, objective.one_swap_values(S)
