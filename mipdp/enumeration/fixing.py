"""Exact column fixing from the cut store: features no support below a level can hold.

Every cut ``t`` of the store (:class:`~mipdp.enumeration.cuts.CutStore`) reads
``L(T) >= a_t + Σ_{i∈T} G_{t,i}`` for *every* support ``T`` (a certified lower bound).
A search (the optimum, a mistake class, a sub-region) only looks at the supports of a
*pattern*: a set ``F`` of forced features (``z_i = 1``) and groups ``C_1, C_2, ...`` of free
columns from which exactly ``m_g`` features are chosen (a mistake class: the free centre
features and the free outside features; no region: one group of every free column).

For a column ``j`` of group ``g`` the best bound cut ``t`` allows over the pattern's supports
holding ``j`` is

    LB_t(j) = a_t + Σ_{i∈F} G_{t,i} + Σ_h low_{m_h}(G_{t,C_h}) + max(0, G_{t,j} - θ_{t,g})

with ``low_m`` the sum of the ``m`` smallest entries and ``θ_{t,g}`` the ``m_g``-th smallest
entry of ``G_{t,C_g}``: the cheapest completion of ``j`` takes the ``m_h`` smallest of every
other group and the ``m_g - 1`` smallest of ``C_g \\ {j}`` — which is the ``m_g`` smallest with
``j`` in place of the ``m_g``-th when ``j`` is not among them, and the ``m_g`` smallest
themselves when it is.  Every such support ``T`` has ``L(T) >= max_t LB_t(j)``.

Claim: if ``max_t LB_t(j) > c`` then no support of the pattern holding ``j`` has
``L <= c``, so fixing ``z_j = 0`` in a search for the supports with ``L <= c`` loses none
of them.  With ``c`` the search's cutoff plus its margin (the master's ``η <= c``), the
reduced master allows exactly the supports the full one allows, so its infeasibility, its
optimum and its dual bound are those of the full master — every certificate of the
searches holds unchanged.  (A relaxed pattern — fewer groups, a range instead of a count
on the region row — only weakens the bound, so it stays valid.)

Rounding: ``LB`` is a sum of at most ``s + 2`` floating-point terms of the cut store;
:func:`screened_columns` requires it to pass ``c`` by twice the store's rounding bound
(:meth:`CutStore.slack`).  Cost: ``O(T p)`` per call (one partition per cut and group).
"""

from __future__ import annotations

import numpy as np

__all__ = ["screened_columns", "pattern_bounds", "aggregated_cut"]

_EPS = np.finfo(float).eps


def pattern_bounds(a: np.ndarray, G: np.ndarray, forced: np.ndarray,
                   groups: list[tuple[np.ndarray, int]], *, chunk: int = 8192) -> np.ndarray:
    """``max_t LB_t(j)`` for every column of every group (``inf`` elsewhere).

    Parameters
    ----------
    a : ndarray, shape (T,)
    G : ndarray, shape (T, p)
        Cuts ``L(T) >= a_t + Σ_{i∈T} G[t, i]``.
    forced : int array
        Columns in every support of the pattern.
    groups : list of (int array, int)
        Disjoint free columns and how many of each group a support of the pattern holds.

    Returns
    -------
    ndarray, shape (p,)
        The bound of the best pattern support holding ``j`` (``+inf`` where ``j`` is in no
        group, or a group with ``m_g = 0``; ``-inf`` without cuts).
    """
    T, p = G.shape
    out = np.full(p, np.inf)
    if T == 0:
        for cols, m in groups:
            if m > 0:
                out[np.asarray(cols, dtype=np.intp)] = -np.inf
        return out
    forced = np.asarray(forced, dtype=np.intp)
    base = a + G[:, forced].sum(axis=1)
    thetas: list[np.ndarray | None] = []
    for cols, m in groups:
        cols = np.asarray(cols, dtype=np.intp)
        if m <= 0:
            thetas.append(None)
            continue
        if m > cols.size:  # the pattern is empty: no support holds any column
            return out
        # one cut at a time: a (T, |C_g|) copy of the cuts is 0.8 GB at T = 100, p = 10⁶
        low, theta = np.empty(T), np.empty(T)
        for t in range(T):
            part = np.partition(G[t, cols], m - 1)[:m]
            low[t] = part.sum()
            theta[t] = part.max()  # the m-th smallest
        base = base + low
        thetas.append(theta)
    for (cols, _m), th in zip(groups, thetas, strict=True):   # one theta per group
        if th is None:
            continue
        cols = np.asarray(cols, dtype=np.intp)
        for lo in range(0, cols.size, chunk):
            c = cols[lo:lo + chunk]
            lb = base[:, None] + np.maximum(G[:, c] - th[:, None], 0.0)
            out[c] = lb.max(axis=0)
    return out


def screened_columns(a: np.ndarray, G: np.ndarray, forced: np.ndarray,
                     groups: list[tuple[np.ndarray, int]], cutoff: float, slack: float,
                     *, lagrangian: bool = True) -> np.ndarray:
    """Mask of the columns that no support of the pattern with ``L <= cutoff`` holds.

    ``slack`` bounds the rounding error of one cut bound (:meth:`CutStore.slack`); a column
    is fixed only when its bound passes ``cutoff + 2 slack``.  ``cutoff = inf`` fixes none.

    Two rounds: each stored cut alone, then (``lagrangian``) the best convex combination
    of the cuts (:func:`aggregated_cut`) on the pattern restricted to the columns the first
    round left.  The second round is valid on the full pattern: a support holding a column
    of the first round already has ``L > cutoff``, so only supports of the restricted
    pattern can be below it.
    """
    p = G.shape[1]
    mask = np.zeros(p, dtype=bool)
    if not np.isfinite(cutoff) or G.shape[0] == 0:
        return mask
    in_group = np.zeros(p, dtype=bool)
    for cols, m in groups:
        if m > 0:
            in_group[np.asarray(cols, dtype=np.intp)] = True
    lb = pattern_bounds(a, G, forced, groups)
    mask = in_group & (lb > cutoff + 2.0 * slack)
    if not lagrangian or G.shape[0] < 2 or mask.sum() == in_group.sum():
        return mask
    rest = [(np.asarray(cols, dtype=np.intp)[~mask[np.asarray(cols, dtype=np.intp)]], m)
            for cols, m in groups]
    if any(m > cols.size for cols, m in rest):  # every pattern support holds a fixed column
        return in_group
    agg = aggregated_cut(a, G, forced, rest)
    if agg is None:
        return mask
    a_bar, g_bar, _ = agg
    # rounding of the combination (T + s + 4 terms of at most the store's magnitude) and of
    # Σμ = 1 (a relative error T u on L): a generous bound
    slack_agg = 16.0 * (G.shape[0] + len(forced) + sum(m for _, m in groups) + 4) * _EPS * (
        slack / (16.0 * _EPS) + abs(cutoff) + 1.0)
    lb2 = pattern_bounds(np.array([a_bar]), g_bar[None, :], forced, rest)
    return mask | (in_group & (lb2 > cutoff + 2.0 * slack_agg))


def _pattern_argmin(g: np.ndarray, forced: np.ndarray,
                    groups: list[tuple[np.ndarray, int]]) -> np.ndarray:
    """The pattern support minimising ``Σ_{i∈T} g_i`` (the ``m_h`` smallest of each group)."""
    parts = [np.asarray(forced, dtype=np.intp)]
    for cols, m in groups:
        cols = np.asarray(cols, dtype=np.intp)
        if m > 0:
            parts.append(cols[np.argpartition(g[cols], m - 1)[:m]])
    return np.concatenate(parts)


def aggregated_cut(a: np.ndarray, G: np.ndarray, forced: np.ndarray,
                   groups: list[tuple[np.ndarray, int]], *, iters: int = 40,
                   tol: float = 1e-9) -> tuple[float, np.ndarray, float] | None:
    """A convex combination of the cuts that is best on the pattern (Lagrangian fixing).

    For weights ``μ >= 0`` with ``Σ μ_t = 1``, ``ā + Σ_{i∈T} ḡ_i`` with ``ā = μᵀa`` and
    ``ḡ = μᵀG`` is again a lower bound of ``L(T)`` at every support (a convex combination
    of lower bounds).  The best ``μ`` for the pattern maximises
    ``φ(μ) = ā + min_T Σ_{i∈T} ḡ_i`` (``T`` over the pattern's supports): the value of the
    master's LP relaxation on the pattern (its polytope — cardinalities per group and
    bounds — is integral).  Found by Kelley's cutting planes on ``μ`` (a ``T + 1``-variable
    LP per iteration, one ``μᵀG`` product and a partition per group for the subgradient).
    Fixing with this cut is reduced-cost fixing at the LP optimum, certified: the cut is
    recomputed from the stored cuts, so only ``μ``'s optimality depends on the LP solver,
    never the cut's validity.

    Returns
    -------
    (ā, ḡ, φ) or None
        ``None`` when there are fewer than two cuts or the small LP fails.
    """
    T = a.size
    if T < 2:
        return None
    H = []  # subgradients h_k = a + G(T_k)
    mu = np.zeros(T)
    mu[int(np.argmax(a + G[:, _pattern_argmin(G[int(np.argmax(a))], forced, groups)].sum(1)))] = 1.0
    best = (-np.inf, None)
    for _ in range(iters):
        g = mu @ G
        Tk = _pattern_argmin(g, forced, groups)
        h = a + G[:, Tk].sum(axis=1)
        val = float(mu @ h)
        if val > best[0]:
            best = (val, mu.copy())
        H.append(h)
        # max w  s.t.  w <= μᵀh_k,  Σμ = 1,  μ >= 0   (variables μ, w; minimise -w)
        sol = _kelley_lp(np.array(H))
        if sol is None:
            break
        upper, x = sol
        mu = np.clip(x, 0.0, None)
        mu /= mu.sum()
        if upper - best[0] <= tol * max(1.0, abs(upper)):
            break
    if best[1] is None:
        return None
    mu = best[1]
    return float(mu @ a), mu @ G, best[0]


def _kelley_lp(H: np.ndarray) -> tuple[float, np.ndarray] | None:
    """``max w  s.t.  w <= μᵀh_k (rows h_k of H),  Σμ = 1,  μ >= 0``: ``(w, μ)``, or
    ``None`` if HiGHS does not report an optimum.

    Solved with highspy directly (the backend's library, already loaded): importing
    :mod:`scipy.optimize` for ``linprog`` took 0.44 s of the first release of a process.
    """
    import highspy

    from ..solvers.highs import _new_highs
    K, T = H.shape
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = T + 1, K + 1
    lp.col_cost_ = np.r_[np.zeros(T), -1.0]
    lp.col_lower_ = np.r_[np.zeros(T), -highspy.kHighsInf]
    lp.col_upper_ = np.full(T + 1, highspy.kHighsInf)
    lp.row_lower_ = np.r_[np.full(K, -highspy.kHighsInf), 1.0]
    lp.row_upper_ = np.r_[np.zeros(K), 1.0]
    A = np.zeros((K + 1, T + 1))
    A[:K, :T] = -H
    A[:K, T] = 1.0
    A[K, :T] = 1.0
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.arange(0, (K + 2) * (T + 1), T + 1, dtype=np.int32)
    lp.a_matrix_.index_ = np.tile(np.arange(T + 1, dtype=np.int32), K + 1)
    lp.a_matrix_.value_ = A.ravel()
    h = _new_highs()
    h.setOptionValue("output_flag", False)
    if h.passModel(lp) == highspy.HighsStatus.kError:
        return None
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None
    x = np.asarray(h.getSolution().col_value, dtype=float)
    return -float(h.getInfo().objective_function_value), x[:T]
