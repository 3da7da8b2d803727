"""Combined rank score: the rank LS objective minus a marginal rank-correlation term.

    F_c(S) = F_ranks(S) − c Σ_{j∈S} k_j,    Δ_c <= Δ_F + c s Δ_k

The exponential mechanism on F_c with the scale Δ_c is a geometric mixture of the two
scores' mechanisms: writing ``a = c s Δ_k / Δ_c`` (the share of the sensitivity spent on
the marginal part), ``−ε F_c / (2Δ_c) = (ε/2)[(1 − a)(−F/Δ_F) + a (K/(sΔ_k))]``.  So
the data-free parameter is ``a`` and ``c = a Δ_F / ((1 − a) s Δ_k)``.

Exact laws by brute force (every support) at small p; the same measures as
experiments/ranks_scores.py (expected overlap with the exhaustive LS best subset, s = 3,
on the five tuning sets; P(truth) on seed 002's design at rho = 0.7, p = 12).

    python -m experiments.studies.ranks_combined --real --synthetic
    python -m experiments.studies.ranks_combined --redundancy --real --synthetic
    python -m experiments.studies.ranks_combined --redundancy --p30
"""
from __future__ import annotations

import argparse

import numpy as np

from mipdp.comparators.kendall import kendall_tau
from mipdp.ranks import rank_sensitivity

from .ranks_scores import (
    em_law,
    kendall_law,
    load,
    ls_target,
    overlap,
    print_table,
    score_A,
    supports_of,
    uniform_ranks,
)


def marginals(X, y, kind):
    """Per-feature marginal statistic k_j (sum form) and its replace-one sensitivity."""
    n = X.shape[0]
    if kind == "kendall":      # (n/2)|tau_a|: |Δ tau_a| <= 4/n
        return (n / 2.0) * np.abs(kendall_tau(X, y)), 2.0
    if kind == "spearman":
        # |Σ_i u_ij v_i| on uniform ranks.  Replace-one, a sketch (used for this measurement
        # only): the replaced row's product moves by <= 2·(1/2)² = 1/2; for the others
        # δu_i v_i + u_i δv_i + δu_i δv_i with nδu, nδv in [−1, 1] of one sign per column and
        # Σ v = Σ u = 0, so each cross sum is <= (1/n)·½||v||₁ <= 1/8, and Σ|δu δv| <= 1/n.
        # Spearman was behind Kendall at every share even with this bound.
        U, V = uniform_ranks(X), uniform_ranks(y)
        return np.abs(U.T @ V), 0.5 + 0.25 + 1.0 / n
    raise KeyError(kind)


def laws(X, y, s, sup, shares, kinds, eps):
    n = X.shape[0]
    uF = score_A(X, y, sup, s) / rank_sensitivity("least_squares", n, s, 1 / np.sqrt(s))
    out = {"ranks": em_law(uF, 1.0, eps)}
    for kind in kinds:
        k, dk = marginals(X, y, kind)
        uK = k[sup].sum(1) / (s * dk)
        for a in shares:
            out[f"{kind[0].upper()}{a:g}"] = em_law((1 - a) * uF + a * uK, 1.0, eps)
    return out


def real(a):
    s = 3
    rows = []
    for name in ["fair", "airquality", "diabetes", "Wages", "Baseball"]:
        X, y = load(name)
        n, p = X.shape
        sup = supports_of(p, s)
        ov = overlap(sup, ls_target(X, y, s), s)
        line = {"data": f"{name}({n},{p})", "chance": s / p}
        for eps in a.eps:
            line[f"DPK@{eps:g}"] = float(kendall_law(X, y, s, eps, sup) @ ov)
            for key, law in laws(X, y, s, sup, a.shares, a.kinds, eps).items():
                line[f"{key}@{eps:g}"] = float(law @ ov)
        rows.append(line)
        print(name, flush=True)
    print_table(rows)


def synthetic(a):
    from mipdp.datasets import make_bss_regression
    s, p = 3, 12
    sup = supports_of(p, s)
    for n in a.ns:
        acc = {}
        for t in range(a.trials):
            X, y, truth = make_bss_regression(n, p, s, rho=0.7, random_state=1000 + t)
            hit = np.all(sup == np.sort(truth), axis=1).astype(float)
            for eps in a.eps:
                acc.setdefault(f"DPK@{eps:g}", []).append(
                    float(kendall_law(X, y, s, eps, sup) @ hit))
                for key, law in laws(X, y, s, sup, a.shares, a.kinds, eps).items():
                    acc.setdefault(f"{key}@{eps:g}", []).append(float(law @ hit))
        print(f"rho=0.7 p=12 n={n}: " + "  ".join(f"{k}={np.mean(v):.3f}" for k, v in acc.items()),
              flush=True)


def redundancy_laws(X, y, s, sup, gammas, shares, eps):
    """K_red(S) = (n/2)[Σ_j |τ_j| − γ/(s−1) Σ_{j<l∈S} |τ_jl|], sensitivity s(2 + γ)
    (every τ_a moves by at most 4/n); pure (share 1) and mixed with the rank LS score."""
    n, p = X.shape
    uF = score_A(X, y, sup, s) / rank_sensitivity("least_squares", n, s, 1 / np.sqrt(s))
    t = np.abs(kendall_tau(X, y))
    T = np.abs(np.column_stack([kendall_tau(X, X[:, j]) for j in range(p)]))
    out = {}
    for g in gammas:
        pair = sum(T[sup[:, i], sup[:, j]] for i in range(s) for j in range(i + 1, s))
        uK = (n / 2.0) * (t[sup].sum(1) - g / (s - 1) * pair) / (s * (2 + g))
        for a in shares:
            out[f"R{g:g}/{a:g}"] = em_law((1 - a) * uF + a * uK, 1.0, eps)
    return out


def real_redundancy(gammas, shares, eps_values=(1.0, 5.0)):
    s = 3
    for name in ["fair", "airquality", "diabetes", "Wages", "Baseball"]:
        X, y = load(name)
        p = X.shape[1]
        sup = supports_of(p, s)
        ov = overlap(sup, ls_target(X, y, s), s)
        out = []
        for eps in eps_values:
            for key, law in redundancy_laws(X, y, s, sup, gammas, shares, eps).items():
                out.append(f"{key}@{eps:g}={law @ ov:.3f}")
        print(name, "  ".join(out), flush=True)




def synthetic_redundancy(gammas, shares, ns=(2000, 4000), trials=5, eps_values=(1.0, 5.0)):
    from mipdp.datasets import make_bss_regression
    s, p = 3, 12
    sup = supports_of(p, s)
    for n in ns:
        acc = {}
        for t in range(trials):
            X, y, truth = make_bss_regression(n, p, s, rho=0.7, random_state=1000 + t)
            hit = np.all(sup == np.sort(truth), axis=1).astype(float)
            for eps in eps_values:
                for key, law in redundancy_laws(X, y, s, sup, gammas, shares, eps).items():
                    acc.setdefault(f"{key}@{eps:g}", []).append(float(law @ hit))
        print(f"rho=0.7 p=12 n={n}: " + "  ".join(f"{k}={np.mean(v):.3f}" for k, v in acc.items()),
              flush=True)




def p30_redundancy(n=2000, trials=3, eps_values=(1.0, 5.0)):
    """Seed 002's design at rho = 0.7, p = 30, s = 3 (4060 supports, exact laws)."""
    from mipdp.datasets import make_bss_regression
    s, p = 3, 30
    sup = supports_of(p, s)
    acc = {}
    for t in range(trials):
        X, y, truth = make_bss_regression(n, p, s, rho=0.7, random_state=2000 + t)
        hit = np.all(sup == np.sort(truth), axis=1).astype(float)
        for eps in eps_values:
            acc.setdefault(f"DPK@{eps:g}", []).append(float(kendall_law(X, y, s, eps, sup) @ hit))
            for key, law in laws(X, y, s, sup, [0.05], ["kendall"], eps).items():
                acc.setdefault(f"{key}@{eps:g}", []).append(float(law @ hit))
            for key, law in redundancy_laws(X, y, s, sup, [0.5], [1.0], eps).items():
                acc.setdefault(f"{key}@{eps:g}", []).append(float(law @ hit))
    print(f"rho=0.7 p={p} n={n}: " + "  ".join(f"{k}={np.mean(v):.3f}" for k, v in acc.items()),
          flush=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--real", action="store_true")
    ap.add_argument("--synthetic", action="store_true")
    ap.add_argument("--shares", type=float, nargs="*", default=[0.1, 0.25, 0.5, 0.75, 1.0])
    ap.add_argument("--kinds", nargs="*", default=["kendall", "spearman"])
    ap.add_argument("--eps", type=float, nargs="*", default=[1.0, 5.0])
    ap.add_argument("--ns", type=int, nargs="*", default=[2000, 4000])
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--redundancy", action="store_true", help="pairwise-penalised Kendall part")
    ap.add_argument("--p30", action="store_true", help="with --redundancy: rho = 0.7, p = 30")
    a = ap.parse_args(argv)
    if a.real and not a.redundancy:
        real(a)
    if a.synthetic and not a.redundancy:
        synthetic(a)
    if a.redundancy and a.p30:
        for n_rows in (1000, 2000):
            p30_redundancy(n_rows)
    elif a.redundancy:
        if a.real:
            real_redundancy([0.5, 1.0, 2.0], [0.05, 0.25, 1.0])
        if a.synthetic:
            synthetic_redundancy([0.5, 1.0], [0.05, 1.0], ns=a.ns, trials=a.trials)


if __name__ == "__main__":
    main()
