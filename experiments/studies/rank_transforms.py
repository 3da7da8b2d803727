"""Monotone transforms of the rank position for the bounds-free release (issue 29).

A study, not a release: nothing here is used by :func:`mipdp.private_bss`.

``bounds="ranks"`` replaces each column by its uniform ranks ``u = (R − (n+1)/2)/n``.  Here
each column is replaced by the **average scores** of a data-free, odd, non-decreasing
sequence ``g_n(1) <= ... <= g_n(n)`` in ``[−½, ½]`` (``g_n(n+1−k) = −g_n(k)``): a row whose
value occupies the tied block of sorted positions ``lo..hi`` gets ``a = mean(g_n(lo..hi))``.
Families (``u_k = (k − (n+1)/2)/n``, ``q_k = k/(n+1)``):

* ``lin:a``   ``g = clip(a u, −½, ½)``           (``lin:1`` is today's ranks)
* ``nrm:c``   ``g = clip(c Φ⁻¹(q), −½, ½)``     (clipped normal scores)

X and y may take different transforms (``tx``, ``ty``); the score is the package's
least-squares ``F(S) = min_{||β||₂ <= r} ½||V − U_Sβ||² + (λ/2)||β||²`` with ``r = rmul/√s``
(``ρ = r√s = rmul``) and the default ridge.

Sensitivity (the ranks proof of docs/privacy.md, "Rank-based scores", generalised)
-----------------------------------------------------------------------------------
Constants of ``g_n``: ``G = max|g_n|``, ``h = max_k (g_n(k+1) − g_n(k))``, ``m₂ = mean g_n²``,
and ``L`` the Lipschitz constant of the family in ``u`` (``lin:a``: ``a``).

(G1) Every column sums to 0 (a tied block keeps its total; ``g`` odd) and ``Σ a² <= n m₂``
(Jensen on each block).
(G2) *Replace-one.*  Moving row ``k``'s value up moves every other row's ``lo`` and ``hi``
down by 0 or 1, so (``g`` non-decreasing) every other ``a_i`` moves by ``−h <= δ <= 0``
(down: one sign per column; up: the mirror).  *Add.*  Let ``ã_i`` be the mean of
``g_{n+1}`` over the old block ``lo..hi``.  Then ``ã − a ∈ [−L/(n+1), 0]`` (each position's
``u`` moves by ``−(u + ½)/(n+1)``) and ``a' − ã ∈ [0, h_{n+1}]`` (the block's ends move up by
0 or 1): two one-signed parts per column, of opposite signs.
(G3) ``e = V − U_Sβ`` sums to 0, so ``|Σ w_i e_i| <= max|w| · ½||e||₁ <= max|w| · ½√n||e||₂``
for one-signed ``w``; at a minimiser ``||e||₂² <= ||V||² <= n m₂(y)``.

Replace-one (the same steps as for ranks: the replaced row, then ``e_i t_i + ½ t_i²`` for the
others, with ``|t_i| <= H = h_y + ρ h_x``)::

    Δ_g(n) = ½ (G_y + ρ G_x)² + (n − 1) H²/2 + H n √m₂(y) / 2

(``lin:1`` gives :func:`mipdp.ranks.rank_sensitivity` exactly).  Add/remove between ``n``
and ``n + 1`` rows: both one-signed parts enter the cross term (no cancellation is used), so
it is at most twice replace-one's (:func:`transform_sensitivity_ar`; ``1.077`` for ranks at
``ρ = 1``, against the specialised ``0.955`` of the package).  A release would need its sup
over ``n >= 1`` (``n`` is private; not implemented: the study measures replace-one only).

Audit (``audit``): the lemmas (G1)–(G2) on 2 000 random tied columns (worst slack ``<= 0``,
the step and sign lemmas attained) and ``max_S |F_D(S) − F_D'(S)| / Δ`` over adversarial
neighbours (rows at ``±10⁹``, tied and duplicated rows, constant columns; replaced or
added) at ``n = 6..30``, ``p = 4``, ``s = 2``, three radii and two ridges: worst 0.53
(replace-one) and 0.39 (add/remove), never above 1.

How loose is the bound?  ``adversary`` searches tie-free data (``p = s = 2``, λ ≈ 0) by
simulated annealing for the largest replace-one ``|ΔF|``: for ranks at ``ρ = 1`` it found
0.44 / 0.51 / 0.52 at ``n = 16 / 32 / 64`` against ``Δ(n)`` = 0.84 / 0.82 / 0.80 (s = 1,
exhaustive at ``n <= 8`` and annealed up to ``n = 128``: at most 0.47, about the replaced
row's own term ``(1 + ρ)²/8``).  At a fixed ``β`` the change is exactly
``Φ_D'(β) − Φ_D(β) = Ψ(a) − Ψ(b)``, ``Ψ(a) = ½ ā² − (1/2n) Σ_i ẽ_i a_i + Σ_i a_i²/(8n²)``, with
``ẽ_i = (1/2n) Σ_{l≠k} h_il`` the residual of the other rows (``h_il = sgn(y_i − y_l) −
Σ_j β_j sgn(x_ij − x_lj)``), ``a`` / ``b`` the new / old row's kernel ``h_ki`` and ``ā =
(1/2n) Σ a_i`` its residual; ``Φ_D = ½||ẽ||² + Ψ(b)``.  The proof's two terms (the new row's
``½ ā²`` and the cross term ``(1/2n) Σ ẽ_i (b_i − a_i)``) are attained together only if the
signs of ``ẽ`` are threshold functions of ``y`` and of every selected column with opposite
orientations, which the optimality of ``β`` seems to prevent: a tighter bound (for the
default ranks too) may exist, not proven here.  What it would buy (``whatif``, ρ = 0.7,
p = 100, s = 5, ε = 1, 200 draws on 3 data sets): P(truth) .020 / .023 / .077 at n = 2000
and .29 / .56 / .82 at n = 4000 for Δ = 0.789 (today) / 0.65 / 0.52 (DPKendall: .078 /
.652), so target (b) needs a bound within about 0.55.

How the laws are computed
-------------------------
Exactly for small ``p`` (every support's ``F`` by
:func:`mipdp.losses.least_squares.ridge_ball_values`).  At ``p = 100`` by the package's
draws on the transformed data with public bounds ``(½, ½)`` at ``ε' = ε Δ_known/Δ_g``,
``Δ_known = ½ (½ + ½ρ)²`` the clipped-data sensitivity the package then uses: the same
weights ``exp(−ε F/(2Δ_g))`` (``check`` compares both routes with the exact law).

    python -m experiments.studies.rank_transforms check        # lin:1 == bounds="ranks"
    python -m experiments.studies.rank_transforms audit        # lemmas, neighbour audit
    python -m experiments.studies.rank_transforms adversary --tx lin:1 --ns 16 32 64 \
        --reps 20 --steps 6000                                       # worst |ΔF| found
    python -m experiments.studies.rank_transforms whatif --ns 2000 4000   # tighter Δ?
    python -m experiments.studies.rank_transforms tune --tx lin:1 lin:1.25 lin:1.5 \
        lin:1.75 lin:2 lin:2.5 --ty (same) --rmul 0.85 1 1.2          # five tuning sets
    python -m experiments.studies.rank_transforms tune_rho (same options)  # p = 30
    python -m experiments.studies.rank_transforms heldout --tx lin:1.5 lin:1 \
        --ty lin:1.25 lin:1 --rmul 0.85 1                            # 8 held-out sets
    python -m experiments.studies.rank_transforms rho07 --tx lin:1.5 --ty lin:1.25 \
        --rmul 0.85 --ns 2000 4000 --eps 1 5                        # p = 100, s = 5

Result (docs/guide.md, "Other transforms of the ranks"): the transform chosen on the tuning
data (``lin:1.5`` for X, ``lin:1.25`` for y, ``r = 0.85/√s``) raises P(truth) at ρ = 0.7,
p = 100, ε = 1 (n = 4000: .53 against .29 for ranks, DPKendall .65) but meets neither
target, and on the held-out sets it is 6/8 (s = 3) and 5/8 (s = 5) within DPKendall − 0.03
at ε = 5, with College (s = 5, ε = 5) below chance.
"""
from __future__ import annotations

import argparse
import itertools
import math
import time
import warnings
from typing import Any

import numpy as np
from scipy.special import logsumexp
from scipy.stats import norm, rankdata

__all__ = ["grid", "grid_constants", "score_columns", "block_average", "check_lemmas",
           "transform_sensitivity", "transform_sensitivity_ar", "known_sensitivity",
           "em_law_transform"]

DEFAULT_RIDGE = 5.0


# ------------------------------------------------------------------ the transforms
def grid(n: int, spec: str) -> np.ndarray:
    """``g_n(1..n)`` of the family ``spec`` (``"lin:a"`` or ``"nrm:c"``)."""
    kind, _, par = spec.partition(":")
    a = float(par)
    k = np.arange(1.0, n + 1.0)
    if kind == "lin":
        g = np.clip(a * (k - 0.5 * (n + 1)) / n, -0.5, 0.5)
    elif kind == "nrm":
        g = np.clip(a * norm.ppf(k / (n + 1.0)), -0.5, 0.5)
    else:
        raise ValueError(spec)
    return 0.5 * (g - g[::-1])          # exactly odd (the rounding of ppf symmetrised)


def grid_constants(n: int, spec: str) -> tuple[float, float, float]:
    """``(G, h, m₂)``: max |g|, max step, mean square of ``g_n``."""
    g = grid(n, spec)
    h = float(np.max(np.diff(g))) if n > 1 else 0.0
    return float(np.max(np.abs(g))), h, float(np.mean(g * g))


def score_columns(M: np.ndarray, spec: str) -> np.ndarray:
    """Average scores of every column of ``M`` (1-D or 2-D): the mean of ``g_n`` over the
    tied block of sorted positions of each value."""
    M = np.asarray(M, dtype=float)
    one = M.ndim == 1
    M2 = M[:, None] if one else M
    n = M2.shape[0]
    C = np.concatenate([[0.0], np.cumsum(grid(n, spec))])
    lo = rankdata(M2, method="min", axis=0).astype(int)     # first position (1-based)
    hi = rankdata(M2, method="max", axis=0).astype(int)     # last position
    out = (C[hi] - C[lo - 1]) / (hi - lo + 1)
    return out[:, 0] if one else out


def transform_sensitivity(n: int, tx: str, ty: str, rho: float) -> float:
    """Replace-one ``Δ_g(n)`` of ``F`` on average scores (module docstring)."""
    Gx, hx, _ = grid_constants(n, tx)
    Gy, hy, m2y = grid_constants(n, ty)
    H = hy + rho * hx
    return 0.5 * (Gy + rho * Gx) ** 2 + (n - 1) * H * H / 2 + H * n * math.sqrt(m2y) / 2


def transform_sensitivity_ar(n: int, tx: str, ty: str, rho: float) -> float:
    """Add/remove bound between ``n`` and ``n + 1`` rows (``n >= 1``), the generic proof:
    the old rows move by a part ``<= 0`` (the grid's rescaling ``n → n + 1``) and a part
    ``>= 0`` (the shift of positions), each one-signed and ``<= h(n+1)`` per column, so the
    centred cross term is at most twice replace-one's."""
    Gx, hx, _ = grid_constants(n + 1, tx)
    Gy, hy, m2y1 = grid_constants(n + 1, ty)
    m2y0 = grid_constants(n, ty)[2]
    # per-row moves: the rescaling part is bounded by the Lipschitz constant of the
    # family in u times 1/(n+1); the shift part by the step of the n+1 grid
    Lx, Ly = _lip(tx, n), _lip(ty, n)
    Hd = (Ly + rho * Lx) / (n + 1)               # rescaling part (one sign: down)
    Hu = hy + rho * hx                           # shift part (one sign: up)
    # |t_i| per column: the two parts have opposite signs
    Hm = max(Ly / (n + 1), hy) + rho * max(Lx / (n + 1), hx)
    cross_a = (Hd + Hu) * 0.5 * math.sqrt(n) * math.sqrt(n * m2y0)
    cross_b = (Hd + Hu) * 0.5 * math.sqrt(n + 1) * math.sqrt((n + 1) * m2y1)
    return 0.5 * (Gy + rho * Gx) ** 2 + n * Hm * Hm / 2 + max(cross_a, cross_b)


def known_sensitivity(rho: float) -> float:
    """The clipped-data ``Δ = ½ (b_y + b_x ρ)²`` the package uses at bounds ``(½, ½)``."""
    return 0.5 * (0.5 + 0.5 * rho) ** 2


def _lip(spec: str, n: int) -> float:
    """Lipschitz constant in ``u`` of the family (``lin:a``: ``a``); normal scores: the
    largest slope of ``c Φ⁻¹(½ + u·n/(n+1))`` before the clip."""
    kind, _, par = spec.partition(":")
    a = float(par)
    if kind == "lin":
        return a
    z = min(0.5 / a, 40.0)
    return a * (n / (n + 1.0)) / norm.pdf(z)


# ------------------------------------------------------------------ exact laws
def _supports(p, s):
    return np.array(list(itertools.combinations(range(p), s)), dtype=np.intp)


def score_values(U, V, sup, rmul=1.0, ridge=DEFAULT_RIDGE):
    """``F(S) = n L(S)`` for every support (the package's least-squares score)."""
    from mipdp.losses.least_squares import ridge_ball_values
    n = U.shape[0]
    s = sup.shape[1]
    G = U.T @ U
    A = G[sup[:, :, None], sup[:, None, :]] + ridge * np.eye(s)
    b = (U.T @ V)[sup]
    return n * ridge_ball_values(A, b, float(V @ V), n, rmul / math.sqrt(s))


def em_law_transform(X, y, sup, eps, tx, ty, rmul=1.0):
    n = X.shape[0]
    U, V = score_columns(X, tx), score_columns(y, ty)
    F = score_values(U, V, sup, rmul)
    d = transform_sensitivity(n, tx, ty, rmul)
    w = -eps * F / (2 * d)
    return np.exp(w - logsumexp(w)), d


def _check(args):
    """``lin:1`` at ``rmul = 1`` against ``private_bss(bounds="ranks")``'s exact law."""
    from mipdp.datasets import make_bss_regression
    from mipdp.ranks import rank_sensitivity
    from mipdp.selection import private_bss
    X, y, _ = make_bss_regression(300, 8, 3, rho=0.7, random_state=1)
    X[:, 2] = np.round(X[:, 2])          # ties
    sup = _supports(8, 3)
    law, d = em_law_transform(X, y, sup, 1.0, "lin:1", "lin:1")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = private_bss(X, y, 3, 1.0, bounds="ranks", random_state=0)
    lp = np.array([r.log_probability(S) for S in sup])
    ref = np.exp(lp - logsumexp(lp))
    d_ranks = rank_sensitivity("least_squares", 300, 3, 1 / math.sqrt(3))
    print(f"max |law - ranks law| = {np.max(np.abs(law - ref)):.2e}; "
          f"Δ = {d:.6f} vs rank_sensitivity {d_ranks:.6f}")
    # the p = 100 route: the package on the transformed data at ε' = ε Δ_known / Δ_g
    tx, ty, rm = "lin:1.5", "lin:1.25", 0.85
    law, d = em_law_transform(X, y, sup, 1.0, tx, ty, rm)
    U, V = score_columns(X, tx), score_columns(y, ty)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = private_bss(U, V, 3, known_sensitivity(rm) / d, bounds=(0.5, 0.5),
                        radius=rm / math.sqrt(3), random_state=0)
    lp = np.array([r.log_probability(S) for S in sup])
    ref = np.exp(lp - logsumexp(lp))
    print(f"{tx}/{ty}/r{rm:g}: max |law - package law at eps'| = {np.max(np.abs(law - ref)):.2e}")


# ------------------------------------------------------------------ audit
def _audit(args):
    """Exact neighbour audit: ``max_S |F_D(S) − F_D'(S)| / Δ`` over adversarial pairs."""
    rng = np.random.default_rng(0)
    worst = {}
    for spec in args.specs:
        tx, _, ty = spec.partition("/")
        ty = ty or tx
        for n in (6, 8, 10, 15, 30):
            p, s = 4, 2
            sup = _supports(p, s)
            for rmul in (1.0, 0.5, 2.0):
                rho = rmul
                d1 = transform_sensitivity(n, tx, ty, rho)
                d2 = transform_sensitivity_ar(n, tx, ty, rho)
                for rep in range(args.reps):
                    kind = rep % 4
                    if kind == 0:
                        X = rng.standard_normal((n, p))
                    elif kind == 1:
                        X = rng.integers(0, 3, (n, p)).astype(float)
                    elif kind == 2:
                        X = np.repeat(rng.standard_normal((n // 2 + 1, p)), 2, axis=0)[:n]
                        X[:, 3] = 1.0
                    else:
                        X = rng.standard_normal((n, p))
                    y = (X[:, 0] if kind == 3 else X @ rng.standard_normal(p)
                         + rng.standard_normal(n) * rng.uniform(0, 2))
                    if kind == 1:
                        y = np.round(y)
                    new = _adversarial_row(rng, X, y)
                    for ridge in (DEFAULT_RIDGE, 1e-3):
                        F0 = score_values(score_columns(X, tx), score_columns(y, ty), sup,
                                          rmul, ridge)
                        k = rng.integers(n)
                        X1, y1 = X.copy(), y.copy()
                        X1[k], y1[k] = new
                        F1 = score_values(score_columns(X1, tx), score_columns(y1, ty), sup,
                                          rmul, ridge)
                        X2, y2 = np.vstack([X, new[0]]), np.append(y, new[1])
                        F2 = score_values(score_columns(X2, tx), score_columns(y2, ty), sup,
                                          rmul, ridge)
                        key = (spec, ridge)
                        r1 = np.max(np.abs(F1 - F0)) / d1
                        r2 = np.max(np.abs(F2 - F0)) / d2
                        w = worst.setdefault(key, [0.0, 0.0])
                        w[0], w[1] = max(w[0], r1), max(w[1], r2)
        for ridge in (DEFAULT_RIDGE, 1e-3):
            w = worst[(spec, ridge)]
            print(f"{spec} ridge={ridge:g}: worst |ΔF|/Δ replace-one {w[0]:.3f}, "
                  f"add/remove {w[1]:.3f}", flush=True)


def block_average(col: np.ndarray, m: int, spec: str) -> np.ndarray:
    """The mean of ``g_m`` over each value's tied block of positions **in ``col``** (``m``
    may exceed ``len(col)``: the old blocks read in a longer grid, the add/remove lemma)."""
    C = np.concatenate([[0.0], np.cumsum(grid(m, spec))])
    lo = rankdata(col, method="min").astype(int)
    hi = rankdata(col, method="max").astype(int)
    return (C[hi] - C[lo - 1]) / (hi - lo + 1)


def check_lemmas(specs=("lin:1", "lin:1.25", "lin:1.5", "lin:2", "nrm:0.35"), reps=2000,
                 seed=0) -> dict:
    """The proof's lemmas on random columns with ties: returns the worst slack of each
    (all must be <= 0 up to rounding).

    * sum: every column of average scores sums to 0; Jensen: ``Σ a² <= n m₂``;
    * replace-one: the other rows move by at most ``h(n)``, all with one sign;
    * add: old rows move by ``(ã − a) + (a' − ã)`` with ``ã`` the old blocks read in the
      ``n + 1`` grid, ``ã − a ∈ [−L/(n+1), 0]`` and ``a' − ã ∈ [0, h(n+1)]``.
    """
    rng = np.random.default_rng(seed)
    worst = {k: -np.inf for k in ("sum", "jensen", "step", "sign", "down", "up")}
    for r in range(reps):
        spec = specs[r % len(specs)]
        n = int(rng.integers(2, 40))
        col = rng.integers(0, int(rng.integers(2, 2 * n)), n).astype(float)
        a = score_columns(col, spec)
        G, h, m2 = grid_constants(n, spec)
        worst["sum"] = max(worst["sum"], abs(a.sum()) - 1e-12)
        worst["jensen"] = max(worst["jensen"], a @ a - n * m2 - 1e-12)
        k = int(rng.integers(n))
        col1 = col.copy()
        col1[k] = rng.choice([col.min() - 1, col.max() + 1, col[rng.integers(n)],
                              rng.integers(0, 2 * n) + 0.5])
        d = np.delete(score_columns(col1, spec) - a, k)
        worst["step"] = max(worst["step"], np.max(np.abs(d)) - h - 1e-12)
        worst["sign"] = max(worst["sign"], min(d.max(), -d.min()) - 1e-12)
        alpha = rng.choice([col.min() - 1, col.max() + 1, col[rng.integers(n)],
                            rng.integers(0, 2 * n) + 0.5])
        a2 = score_columns(np.append(col, alpha), spec)[:n]
        at = block_average(col, n + 1, spec)
        _, h1, _ = grid_constants(n + 1, spec)
        L = _lip(spec, n)
        down, up = at - a, a2 - at
        worst["down"] = max(worst["down"], down.max() - 1e-12, -down.min() - L / (n + 1) - 1e-12)
        worst["up"] = max(worst["up"], -up.min() - 1e-12, up.max() - h1 - 1e-12)
    return worst


def _adversarial_row(rng, X, y):
    p = X.shape[1]
    c = rng.integers(4)
    if c == 0:
        return rng.choice([-1e9, 1e9], p), float(rng.choice([-1e9, 1e9]))
    if c == 1:
        i = rng.integers(X.shape[0])
        return X[i].copy(), float(y[i])
    if c == 2:
        return X[rng.integers(X.shape[0], size=p), np.arange(p)], float(y[rng.integers(y.size)])
    return rng.standard_normal(p) * 3, float(rng.standard_normal() * 3)


# ------------------------------------------------------------------ adversary
def _insert(ranks: np.ndarray, k: int, slot: int) -> np.ndarray:
    """Positions (0-based) after row ``k`` of a tie-free column moves to ``slot``."""
    n = ranks.size
    others = np.r_[0:k, k + 1:n]
    o = ranks[others] - (ranks[others] > ranks[k])
    out = np.empty(n, dtype=int)
    out[others] = np.where(o >= slot, o + 1, o)
    out[k] = slot
    return out


def adversary(n: int, tx: str, ty: str, rmul: float = 1.0, restarts: int = 12,
              steps: int = 3000, ridge: float = 1e-9, seed: int = 0) -> float:
    """Largest replace-one ``|F_D(S) − F_D'(S)|`` found by simulated annealing over tie-free
    data with ``p = s = 2`` (the two columns' orders, ``y``'s order fixed, the replaced row
    and its three new positions).  A lower bound on the true sensitivity, to compare
    with ``Δ_g(n)``."""
    rng = np.random.default_rng(seed)
    gx, gy = grid(n, tx), grid(n, ty)
    r = rmul / math.sqrt(2)
    from mipdp.losses.least_squares import ridge_ball_values

    def F(U, v):
        A = (U.T @ U + ridge * np.eye(2))[None]
        return float(n * ridge_ball_values(A, (U.T @ v)[None], float(v @ v), n, r)[0])

    def value(st):
        p1, p2, k, a1, a2, b = st
        F0 = F(np.column_stack([gx[p1], gx[p2]]), gy)
        F1 = F(np.column_stack([gx[_insert(p1, k, a1)], gx[_insert(p2, k, a2)]]),
               gy[_insert(np.arange(n), k, b)])
        return abs(F1 - F0)

    best = 0.0
    for _ in range(restarts):
        cols = []
        for _ in range(2):
            z = rng.uniform(-1, 1) * np.arange(n) + rng.standard_normal(n) * rng.uniform(0, n)
            cols.append(np.argsort(np.argsort(z)))
        st: list[Any] = [*cols, *(int(v) for v in rng.integers(n, size=4))]
        cur, temp = value(st), 0.02
        for _ in range(steps):
            new = [st[0].copy(), st[1].copy()] + st[2:]
            m = int(rng.integers(6))
            if m < 2:
                i, j = rng.integers(n, size=2)
                new[m][[i, j]] = new[m][[j, i]]
            else:
                new[m] = int(rng.integers(n))
            v = value(new)
            if v >= cur or rng.random() < math.exp((v - cur) / temp):
                st, cur = new, v
            temp *= 0.998
            best = max(best, cur)
    return best


def _whatif(ns, deltas, trials, draws, p=100, s=5):
    """P(truth) of ``bounds="ranks"`` had its sensitivity been ``Δ_h`` instead of ``Δ(n)``
    (the package at ``ε' = Δ(n)/Δ_h``, ε = 1; not a release: the value of a tighter bound)."""
    from mipdp.datasets import make_bss_regression
    from mipdp.ranks import rank_sensitivity
    from mipdp.selection import private_bss

    from .ranks_rho07 import hit_rate
    rows = []
    for n in ns:
        d = rank_sensitivity("least_squares", n, s, 1 / math.sqrt(s))
        for dh in deltas:
            hits = []
            for trial in range(trials):
                X, y, truth = make_bss_regression(n, p, s, rho=0.7, random_state=trial)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    r = private_bss(X, y, s, d / dh, bounds="ranks", n_draws=draws,
                                    random_state=trial)
                hits.append(hit_rate(r.supports, truth))
            rows.append({"n": str(n), "Δ": f"{dh:g}", "P(truth), ε = 1": float(np.mean(hits))})
            print(_fmt_row(rows[-1]), flush=True)
    print_table(rows)


# ------------------------------------------------------------------ tables
def _fmt_row(row: dict) -> str:
    return "  ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}"
                     for k, v in row.items())


def print_table(rows: list[dict]) -> None:
    """A markdown table of ``rows`` (dicts with the same keys; floats to 3 decimals)."""
    print("| " + " | ".join(rows[0]) + " |")
    print("|" + "---|" * len(rows[0]))
    for r in rows:
        print("| " + " | ".join(f"{v:.3f}" if isinstance(v, float) else str(v)
                                for v in r.values()) + " |")


def _real_rows(sets, loader, ss, specs, eps_values, rmuls):
    from .rank_redundancy import _fmt, _real_cells
    rows = []
    for X, y, sup, ov, row, dpk in _real_cells(sets, loader, ss):
        for e in eps_values:
            row[f"DPK@{e:g}"] = dpk(e)
        for tx, ty in specs:
            for rm in rmuls:
                for e in eps_values:
                    law, _ = em_law_transform(X, y, sup, e, tx, ty, rm)
                    row[f"{tx}/{ty}/r{rm:g}@{e:g}"] = float(law @ ov)
        print(_fmt(row), flush=True)
        rows.append(row)
    if rows:
        print_table(rows)


def _tune_rho(ns, specs, rmuls, eps_values, seeds, p=30, s=3):
    from mipdp.datasets import make_bss_regression

    from .rank_redundancy import kendall_parts, kendall_truth_probability
    sup = _supports(p, s)
    rows: list[dict] = []
    for n in ns:
        acc = {}
        for seed in seeds:
            X, y, truth = make_bss_regression(n, p, s, rho=0.7, random_state=seed)
            hit = np.all(sup == np.sort(truth), axis=1)
            t, T = kendall_parts(X, y)
            for e in eps_values:
                acc.setdefault(f"DPK@{e:g}", []).append(kendall_truth_probability(t, T, truth, e))
            for tx, ty in specs:
                for rm in rmuls:
                    for e in eps_values:
                        law, _ = em_law_transform(X, y, sup, e, tx, ty, rm)
                        acc.setdefault(f"{tx}/{ty}/r{rm:g}@{e:g}", []).append(float(law[hit].sum()))
        print(f"rho=0.7 p={p} s={s} n={n} seeds={list(seeds)}: "
              + "  ".join(f"{k}={np.mean(v):.3f}" for k, v in acc.items()), flush=True)
        rows.append({"n": str(n), **{k: float(np.mean(v)) for k, v in acc.items()}})
    print_table(rows)


def _rho07(ns, tx, ty, rmul, eps_values, trials, draws, p=100, s=5):
    """P(truth) at seed 002's design by the package's draws on the transformed data
    (module docstring), beside bounds="ranks", the known bounds and DPKendall."""
    from mipdp.comparators import dp_kendall
    from mipdp.datasets import make_bss_regression
    from mipdp.selection import private_bss

    from .ranks_rho07 import hit_rate
    rows: list[dict] = []
    for n in ns:
        for eps in eps_values:
            acc: dict[str, list[float]] = {"g": [], "ranks": [], "known": [], "kendall": []}
            tt = {"g": 0.0, "ranks": 0.0, "known": 0.0}
            for trial in range(trials):
                X, y, truth = make_bss_regression(n, p, s, rho=0.7, random_state=trial)
                rho = rmul
                dg = transform_sensitivity(n, tx, ty, rho)
                dk = known_sensitivity(rho)
                t0 = time.perf_counter()
                U, V = score_columns(X, tx), score_columns(y, ty)
                r = private_bss(U, V, s, eps * dk / dg, bounds=(0.5, 0.5),
                                radius=rmul / math.sqrt(s), n_draws=draws, random_state=trial)
                tt["g"] += time.perf_counter() - t0
                acc["g"].append(hit_rate(r.supports, truth))
                for key, b in (("ranks", "ranks"), ("known", (0.5, 0.5))):
                    t0 = time.perf_counter()
                    r = private_bss(X, y, s, eps, bounds=b, n_draws=draws, random_state=trial)
                    tt[key] += time.perf_counter() - t0
                    acc[key].append(hit_rate(r.supports, truth))
                k = dp_kendall(X, y, s, eps, n_draws=draws, random_state=trial)
                acc["kendall"].append(hit_rate(k.supports, truth))
            print(f"n={n} eps={eps:g} g={tx}/{ty}/r{rmul:g}: "
                  + "  ".join(f"{k}={np.mean(v):.3f}" for k, v in acc.items())
                  + "  time g/ranks/known = " + "/".join(f"{v:.1f}" for v in tt.values())
                  + " s", flush=True)
            rows.append({"n": str(n), "eps": f"{eps:g}", "transform": f"{tx}/{ty}/r{rmul:g}",
                         **{k: float(np.mean(v)) for k, v in acc.items()},
                         "time g/ranks/known (s)": "/".join(f"{v:.1f}" for v in tt.values())})
    print_table(rows)


def _pairs(a):
    tys = a.ty if a.ty else a.tx
    if a.ty is None:
        return list(zip(a.tx, tys, strict=True))
    return [(x, y) for x in a.tx for y in tys]


def main(argv=None):
    from .rank_redundancy import HELDOUT, TUNING, _heldout_loader, load_tuning
    ap = argparse.ArgumentParser()
    ap.add_argument("what", choices=["check", "audit", "tune", "tune_rho", "heldout", "rho07",
                                     "delta", "adversary", "whatif"])
    ap.add_argument("--tx", nargs="+", default=["lin:1", "lin:1.5", "lin:2", "nrm:0.25"])
    ap.add_argument("--ty", nargs="+", default=None)
    ap.add_argument("--rmul", type=float, nargs="+", default=[1.0])
    ap.add_argument("--eps", type=float, nargs="+", default=[1.0, 5.0])
    ap.add_argument("--ns", type=int, nargs="+", default=[1000, 2000])
    ap.add_argument("--specs", nargs="+",
                    default=["lin:1", "lin:1.5/lin:1.25", "lin:2", "nrm:0.35"])
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--deltas", type=float, nargs="+", default=[0.789, 0.65, 0.52])
    a = ap.parse_args(argv)
    if a.what == "check":
        _check(a)
    elif a.what == "audit":
        print("lemmas (worst slack, <= 0):", {k: f"{v:.2e}" for k, v in check_lemmas().items()},
              flush=True)
        _audit(a)
    elif a.what == "whatif":
        _whatif(a.ns, a.deltas, a.trials, a.draws)
    elif a.what == "adversary":
        rows = []
        for tx, ty in _pairs(a):
            for n in a.ns:
                worst = adversary(n, tx, ty, a.rmul[0], restarts=a.reps, steps=a.steps)
                d = transform_sensitivity(n, tx, ty, a.rmul[0])
                rows.append({"n": str(n), "transform": f"{tx}/{ty}/r{a.rmul[0]:g}",
                             "worst dF found": worst, "Δ_g(n)": d, "ratio": worst / d})
                print(_fmt_row(rows[-1]), flush=True)
        print_table(rows)
    elif a.what == "delta":
        for tx, ty in _pairs(a):
            for rm in a.rmul:
                print(f"{tx}/{ty}/r{rm:g}: " + "  ".join(
                    f"n={n}: {transform_sensitivity(n, tx, ty, rm):.3f}/"
                    f"{transform_sensitivity_ar(n, tx, ty, rm):.3f}"
                    for n in (10, 100, 1000, 10000)) + "  (replace-one/add-remove)")
    elif a.what == "tune":
        _real_rows(TUNING, load_tuning, [3], _pairs(a), a.eps, a.rmul)
    elif a.what == "tune_rho":
        _tune_rho(a.ns, _pairs(a), a.rmul, a.eps, range(2000, 2003))
    elif a.what == "heldout":
        _real_rows(HELDOUT, _heldout_loader, [3, 5], _pairs(a), a.eps, a.rmul)
    else:
        _rho07(a.ns, a.tx[0], (a.ty or a.tx)[0], a.rmul[0], a.eps, a.trials, a.draws)


if __name__ == "__main__":
    main()
