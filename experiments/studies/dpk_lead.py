"""Where DPKendall's lead on College and Boston (s = 3) comes from (issue 29; exact laws).

On the benchmark's eight real regression sets two cells at ε = 5 resist every bounds-free
joint score measured (``bounds="ranks"``, ``bounds="kendall"`` at any γ, stretched ranks,
mixtures): College and Boston at s = 3, where DPKendall's expected overlap with the
least-squares best subset is .556 and .894.  Two questions, both answered by exact laws
(every support's probability summed):

``prescreen``
    Would a pre-screen by marginal rank correlation (DPKendall-style candidates, then the
    exact EM of a joint score over them) recover it?  An *oracle* bound: the ``k`` columns
    with the largest ``|τ_a(x_j, y)|`` are taken without noise and without spending any ε,
    then the rank release (``bounds="ranks"``) and the Kendall score ``R`` (γ = 0.75) run at
    the full ε on them.  A real pre-screen can only do worse.

``ordered``
    Is it DPKendall's statistic or its sequential randomisation?  The exponential
    mechanism over supports with DPKendall's own statistic, maximised over the order of
    selection,

        Q(S) = max_π [ T_{π1} + Σ_{r≥2} ( T_{πr} − (1/(r−1)) Σ_{l<r} |T_{πr πl}| ) ],

    ``T = (n/2)|τ_a|``.  Each ordered sum moves by at most ``2 + 4(s − 1)`` between
    replace-one neighbours (DPKendall's per-round sensitivities), and a maximum of
    functions with sensitivity Δ has sensitivity Δ, so ``Δ_Q = 4s − 2``.

``ranks``
    Why the rank release misses them: its exact law's mode and expected overlap at
    ε = 5, 20, 100 with the default ball, and at ε = 5 with the ball's radius × 1.5, 2, 3
    (a larger ball raises the sensitivity).

``forward``
    Does the rank score gain by following a path?  Noisy forward selection on the ranks:
    ``s`` rounds, round ``r`` an exponential mechanism at ``ε/s`` over the columns ``j``
    not yet chosen with utility ``−F(A ∪ {j})`` (``F`` the rank release's score, its ball
    radius ``1/√s`` or twice that, ``Δ = rank_sensitivity(n, s, radius)``: every set has at
    most ``s`` columns, and ``F(A)`` is a constant of the round); ε-DP by basic
    composition.  Its exact law (a sum over the sets of every size).

    python -m experiments.studies.dpk_lead prescreen
    python -m experiments.studies.dpk_lead ordered
    python -m experiments.studies.dpk_lead ranks --sets College Boston --s 3
    python -m experiments.studies.dpk_lead forward

What it measured (docs/guide.md, "No public ranges, correlated features"): neither.  With
the noiseless top-``k`` candidates (k = s+1, s+2, s+4) the overlap at ε = 5 is .333 on
College (s = 3; the top seven marginals hold one of the three target columns) and
.61–.67 on Boston (DPKendall .556 and .894); ``Q`` gives .334 and .687.  DPKendall's lead
is its *greedy path*: chosen round by round without noise (``ε → ∞``) it is [3, 9, 13] on
College (overlap .667) and the target [5, 10, 12] on Boston, a forward selection that
follows the conditional structure, while the best support of the same statistic over all
orders is [3, 4, 9] (.333) and [5, 9, 12] (.667).  No exponential mechanism over supports
that concentrates on the best support of a score inherits a path's choices.  The rank
release: on Boston its mode is the target, but at ε = 5 it has probability .22 (overlap
.693; .954 at ε = 20): too little concentration for n = 506.  On College its mode is the
top marginals [3, 9, 10] at every ε: the ball of radius ``1/√s`` keeps the fit near the
marginals (unconstrained least squares on the ranks picks the target); radius × 1.5–3 gives
.44–.46 at ε = 5 but drops Boston to .50–.58.  Forward selection on the ranks follows
the path (without noise it picks the target on College and Boston, s = 3) but splits ε
over ``s`` rounds of a quadratic score: at ε = 5 it is below DPKendall on 9 of the 16
cells (Boston .529, College .418 at s = 3) and below the joint rank release on 13.
DPKendall's statistic is linear in a rank correlation, ``(n/2)|τ|`` against a sensitivity
of 2, where a least-squares gap is quadratic in it: for a weak signal its ratio of gap to
sensitivity is several times larger, which is what a small ``n ε`` needs.
"""
from __future__ import annotations

import argparse
import itertools

import numpy as np
from scipy.special import logsumexp

from .rank_redundancy import (
    HELDOUT,
    _heldout_loader,
    _real_cells,
    em_law,
    kendall_parts,
    ranks_law,
    supports_of,
)

__all__ = ["ordered_scores", "ordered_law", "greedy_path", "ranks", "forward_law", "main"]


def ordered_scores(t: np.ndarray, T: np.ndarray, sup: np.ndarray) -> np.ndarray:
    """``Q(S)`` for every row of ``sup``: DPKendall's statistic maximised over orders."""
    s = sup.shape[1]
    best = np.full(len(sup), -np.inf)
    for perm in itertools.permutations(range(s)):
        cols = sup[:, perm]
        v = t[cols[:, 0]].copy()
        for r in range(1, s):
            v += t[cols[:, r]] - T[cols[:, r][:, None], cols[:, :r]].sum(1) / r
        np.maximum(best, v, out=best)
    return best


def ordered_law(t: np.ndarray, T: np.ndarray, sup: np.ndarray, eps: float) -> np.ndarray:
    """The exponential mechanism's exact law on ``Q`` (replace-one, ``Δ_Q = 4s − 2``)."""
    s = sup.shape[1]
    w = eps * ordered_scores(t, T, sup) / (2.0 * (4 * s - 2))
    return np.exp(w - logsumexp(w))


def prescreen(sets=HELDOUT, ss=(3, 5), eps_values=(1.0, 5.0)) -> None:
    for X, y, sup, ov, row, dpk in _real_cells(sets, _heldout_loader, ss):
        t, T = kendall_parts(X, y)
        s, p = sup.shape[1], X.shape[1]
        order = np.argsort(-t, kind="stable")
        target = sup[ov == 1][0]                      # the best subset itself
        for e in eps_values:
            parts = [f"{row['set']} s={s} eps={e:g} chance={row['chance']:.3f} "
                     f"DPK={dpk(e):.3f}"]
            for k in (s + 1, s + 2, s + 4):
                if k >= p:
                    continue
                C = np.sort(order[:k])
                sub = supports_of(k, s)
                ov_k = np.isin(C[sub], target).sum(1) / s
                r_ranks = float(ranks_law(X[:, C], y, s, e, sub) @ ov_k)
                r_R = float(em_law(t[C], T[np.ix_(C, C)], sub, 0.75, e) @ ov_k)
                parts.append(f"top{k}: ranks {r_ranks:.3f} R {r_R:.3f}")
            print("  ".join(parts), flush=True)


def greedy_path(t: np.ndarray, T: np.ndarray, s: int) -> list[int]:
    """DPKendall's choices without noise (``ε → ∞``): round by round the largest score."""
    chosen: list[int] = []
    for r in range(s):
        score = t.copy() if r == 0 else t - T[:, chosen].sum(1) / r
        score[chosen] = -np.inf
        chosen.append(int(np.argmax(score)))
    return chosen


def ordered(sets=HELDOUT, ss=(3, 5), eps_values=(1.0, 5.0)) -> None:
    for X, y, sup, ov, row, dpk in _real_cells(sets, _heldout_loader, ss):
        t, T = kendall_parts(X, y)
        s = sup.shape[1]
        target = sup[ov == 1][0]
        path = greedy_path(t, T, s)
        qbest = sup[int(np.argmax(ordered_scores(t, T, sup)))]
        print(f"{row['set']} s={s} target {target.tolist()}: greedy path {sorted(path)} "
              f"(overlap {np.isin(path, target).mean():.3f}), best Q {qbest.tolist()} "
              f"(overlap {np.isin(qbest, target).mean():.3f})", flush=True)
        print(f"{row['set']} s={s} chance={row['chance']:.3f}  " + "  ".join(
            f"eps={e:g}: DPK {dpk(e):.3f} R0.75 {em_law(t, T, sup, 0.75, e) @ ov:.3f} "
            f"Q {ordered_law(t, T, sup, e) @ ov:.3f}" for e in eps_values), flush=True)


def ranks(sets=HELDOUT, ss=(3, 5), eps_values=(5.0, 20.0, 100.0),
          radius_mults=(1.5, 2.0, 3.0)) -> None:
    for X, y, sup, ov, row, _ in _real_cells(sets, _heldout_loader, ss):
        s = sup.shape[1]
        target = sup[ov == 1][0].tolist()
        runs = [(e, 1.0) for e in eps_values] + [(eps_values[0], m) for m in radius_mults]
        for e, m in runs:
            P = ranks_law(X, y, s, e, sup, radius=m / np.sqrt(s))
            print(f"{row['set']} s={s} eps={e:g} radius x{m:g}: overlap {P @ ov:.3f}, mode "
                  f"{sup[int(np.argmax(P))].tolist()} with P {P.max():.3f} (target {target})",
                  flush=True)


def _rank_stats(X, y):
    from mipdp.ranks import rank_design, uniform_ranks
    U = np.asarray(rank_design(np.asarray(X, dtype=float)), dtype=float)
    v = uniform_ranks(np.asarray(y, dtype=float))
    return U.shape[0], U.T @ U, U.T @ v, float(v @ v)


def _rank_values(G, c, yy, n, sets, radius, ridge=5.0):
    """The rank release's score ``F(S)`` (sum form) of every row of ``sets``."""
    from mipdp.losses.least_squares import ridge_ball_values
    sets = np.asarray(sets)
    A = G[sets[:, :, None], sets[:, None, :]] + ridge * np.eye(sets.shape[1])
    return n * ridge_ball_values(A, c[sets], yy, n, radius)


def forward_law(X, y, s: int, eps: float, radius: float):
    """Exact law of noisy forward selection on ranks: ``(supports, probabilities)``."""
    from mipdp.ranks import rank_sensitivity
    n, G, c, yy = _rank_stats(X, y)
    p = G.shape[0]
    scale = (eps / s) / (2.0 * rank_sensitivity("least_squares", n, s, radius))
    logp: dict[tuple, float] = {(): 0.0}
    for _ in range(s):
        new: dict[tuple, float] = {}
        for A, la in logp.items():
            cand = [j for j in range(p) if j not in A]
            sets = [tuple(sorted(A + (j,))) for j in cand]
            w = -scale * _rank_values(G, c, yy, n, sets, radius)
            w -= logsumexp(w)
            for S, lw in zip(sets, w, strict=True):
                new[S] = float(np.logaddexp(new.get(S, -np.inf), la + lw))
        logp = new
    return np.array(list(logp)), np.exp(np.array(list(logp.values())))


def forward(sets=HELDOUT, ss=(3, 5), eps_values=(1.0, 5.0), radius_mults=(1.0, 2.0)) -> None:
    for X, y, sup, ov, row, dpk in _real_cells(sets, _heldout_loader, ss):
        s = sup.shape[1]
        target = sup[ov == 1][0]
        cells = [f"{row['set']} s={s} chance={row['chance']:.3f}"]
        for e in eps_values:
            part = [f"DPK@{e:g} {dpk(e):.3f}"]
            for m in radius_mults:
                fs, fp = forward_law(X, y, s, e, m / np.sqrt(s))
                part.append(f"forward r x{m:g} {fp @ (np.isin(fs, target).sum(1) / s):.3f}")
            cells.append(" ".join(part))
        print("  |  ".join(cells), flush=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("what", choices=["prescreen", "ordered", "ranks", "forward"])
    ap.add_argument("--sets", nargs="+", default=list(HELDOUT))
    ap.add_argument("--s", type=int, nargs="+", default=[3, 5])
    a = ap.parse_args(argv)
    {"prescreen": prescreen, "ordered": ordered, "ranks": ranks,
     "forward": forward}[a.what](a.sets, a.s)


if __name__ == "__main__":
    main()
