"""Exact neighbour audit of ``bounds="ranks"``: score changes against the proven Δ.

For small data sets (adversarial: continuous, heavy ties, duplicated rows, a constant
column, a perfect monotone fit) and many neighbours (a row replaced by an extreme, tied,
duplicated or random row; a row removed; a row added), computes the sum-form score
``F(S) = n L(S)`` of every support on the uniform ranks and reports the worst
``max_S |F_D(S) − F_D'(S)| / Δ`` (must be <= 1), and the worst log-ratio of the exact
exponential-mechanism law ``∝ exp(−ε F / (2Δ))`` over the pairs (must be <= ε).

    python -m experiments.studies.ranks_audit --pairs 20000
"""
from __future__ import annotations

import argparse
import itertools

import numpy as np

from mipdp.losses import get_loss
from mipdp.losses.least_squares import ridge_ball_values
from mipdp.ranks import RANK_BOUNDS, rank_design, rank_sensitivity, uniform_ranks


def base_data(kind: str, n: int, p: int, rng):
    X = rng.standard_normal((n, p))
    if kind == "ties":
        X = rng.integers(0, 3, size=(n, p)).astype(float)
        y = (X[:, 0] + rng.integers(0, 2, size=n)).astype(float)
    elif kind == "duplicates":
        X[n // 2:] = X[: n - n // 2]
        y = X[:, 0] + 0.3 * rng.standard_normal(n)
        y[n // 2:] = y[: n - n // 2]
    elif kind == "constant":
        X[:, -1] = 1.0
        y = X[:, 0] + X[:, 1] + 0.2 * rng.standard_normal(n)
    elif kind == "monotone":
        y = X[:, 0].copy()
    else:
        y = X @ rng.standard_normal(p) + rng.standard_normal(n)
    return X, y


def candidate_rows(X, y, rng, m: int):
    """Rows to insert: extremes, values tied with the data, duplicates, random."""
    n, p = X.shape
    rows = []
    big = 1e6
    for _ in range(m):
        r = rng.random()
        if r < 0.35:                                  # extremes, any sign pattern
            row = rng.choice([-big, big], size=p + 1)
        elif r < 0.6:                                 # ties with existing values
            row = np.array([X[rng.integers(n), j] for j in range(p)] + [y[rng.integers(n)]])
        elif r < 0.75:                                # a duplicate of an existing row
            i = rng.integers(n)
            row = np.r_[X[i], y[i]]
        else:
            row = np.r_[rng.standard_normal(p) * 2, rng.standard_normal() * 2]
        rows.append(row)
    return rows


def score_table(X, y, s: int, loss_name: str, sup, ridge=None):
    """``F(S) = n L(S)`` of every support on the uniform ranks (the package's objective)."""
    n = X.shape[0]
    U = rank_design(X)
    loss = get_loss(loss_name, ridge=ridge).resolve(s, *RANK_BOUNDS)
    if loss_name == "least_squares":
        V = uniform_ranks(y)
        G = U.T @ U
        assert loss.ridge is not None and loss.radius is not None   # resolved above
        A = G[sup[:, :, None], sup[:, None, :]] + loss.ridge * np.eye(s)
        b = (U.T @ V)[sup]
        return n * ridge_ball_values(A, b, float(V @ V), n, loss.radius), loss
    return n * loss.bind(U, y).values(sup), loss


def em_log_law(F, eps, delta):
    lw = -eps * (F - F.min()) / (2 * delta)
    return lw - np.log(np.exp(lw).sum())


def audit(loss_name: str, neighbours: str, n_pairs: int, eps: float = 1.0, p: int = 4,
          s: int = 2, ns=(6, 8, 10, 15, 30, 60), seed: int = 0, ridge=None):
    rng = np.random.default_rng(seed)
    sup = np.array(list(itertools.combinations(range(p), s)), dtype=np.intp)
    kinds = ["random", "ties", "duplicates", "constant", "monotone"]
    worst_ratio, worst_lr, done = 0.0, 0.0, 0
    worst_case = None
    while done < n_pairs:
        kind = kinds[rng.integers(len(kinds))]
        n = int(rng.choice(list(ns)))
        X, y = base_data(kind, n, p, rng)
        if loss_name == "hinge":
            y = np.where(y > np.median(y), 1.0, -1.0)
        F, loss = score_table(X, y, s, loss_name, sup, ridge)
        for row in candidate_rows(X, y, rng, 12):
            xr, yr = row[:p], row[p]
            if loss_name == "hinge":
                yr = 1.0 if yr > 0 else -1.0
            if neighbours == "replace_one":
                i = rng.integers(n)
                X2, y2 = X.copy(), y.copy()
                X2[i], y2[i] = xr, yr
                d = rank_sensitivity(loss_name, n, s, loss.radius, "replace_one")
            else:
                if rng.random() < 0.5:
                    X2, y2 = np.vstack([X, xr]), np.r_[y, yr]
                else:
                    i = rng.integers(n)
                    X2, y2 = np.delete(X, i, 0), np.delete(y, i)
                    if X2.shape[0] < 2:
                        continue
                d = rank_sensitivity(loss_name, None, s, loss.radius, "add_remove")
            F2, _ = score_table(X2, y2, s, loss_name, sup, ridge)
            ratio = float(np.max(np.abs(F2 - F))) / d
            lr = float(np.max(np.abs(em_log_law(F, eps, d) - em_log_law(F2, eps, d))))
            if ratio > worst_ratio:
                worst_ratio, worst_case = ratio, (kind, n)
            worst_lr = max(worst_lr, lr)
            done += 1
    return {"loss": loss_name, "ridge": loss.ridge, "neighbours": neighbours, "pairs": done,
            "worst |dF|/Delta": round(worst_ratio, 4), "at": worst_case,
            "worst log-ratio": round(worst_lr, 4), "eps": eps}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=20000)
    ap.add_argument("--hinge-pairs", type=int, default=2000)
    a = ap.parse_args(argv)
    for nb in ("replace_one", "add_remove"):
        for ridge in (None, 1e-3):       # the default ridge, and almost none (Δ holds for any)
            print(audit("least_squares", nb, a.pairs, ridge=ridge))
            print(audit("hinge", nb, a.hinge_pairs, ridge=ridge))


if __name__ == "__main__":
    main()
