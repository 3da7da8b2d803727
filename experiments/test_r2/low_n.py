"""Where the bounds-free releases stop beating the mean support (LowUtilityWarning's level).

Every real regression set of the test-R² benchmark is subsampled to ``n`` rows (a random
subset per split), split 70/30, and the default release (``bounds=None``: ranks) and the
Kendall score (``bounds="kendall"``) release from the training rows.  Their exact laws at
``ε = 1`` give every ``ε`` (the exponential mechanism's law at ``ε`` is proportional to
the law at 1 raised to the power ``ε``).  Reported per ``(n, ε)``: over sets and splits,
the median of the **gain** ``(E[test R²] − mean support) / (best training support − mean
support)`` (0: a uniform draw; 1: the best training support), and the share of sets
whose mean over splits is above the mean support's by more than 0.01.

    nice python experiments/test_r2/low_n.py --out results/test_r2/low_n.json

Every figure is an evaluation quantity computed with the data: **not private**.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy.special import logsumexp

from mipdp.experiments.real_sets import load_real_set
from mipdp.experiments.test_r2 import all_supports, random_splits, release_law, support_scores

SETS = ["CPS1985", "DoctorVisits", "NMES1988", "Workinghours", "College", "Housing", "Boston",
        "CASchools", "Carseats", "Computers", "TeachingRatings", "RecreationDemand",
        "CreditCard", "Medicaid1986"]


def rescale(law1, eps):
    lp = eps * np.log(np.maximum(law1, 1e-300))
    return np.exp(lp - logsumexp(lp))


def one(name, n, s, splits, eps_grid, methods):
    d = load_real_set(name)
    rng = np.random.default_rng(np.random.SeedSequence(7, spawn_key=(n, s)))
    sup = all_supports(d.X.shape[1], s)
    rows = []
    for k in range(splits):
        sub = np.sort(rng.choice(len(d.y), size=min(n, len(d.y)), replace=False))
        X, y = d.X[sub], d.y[sub]
        if np.any(X.std(axis=0) == 0):       # a constant column in a tiny subsample
            keep = X.std(axis=0) > 0
            if keep.sum() <= s:
                continue
        train, test = random_splits(len(y), 0.3, 1, seed=k)[0]
        test_val, train_obj = support_scores(X, y, train, test, sup)
        mean, best = float(test_val.mean()), float(test_val[int(np.argmin(train_obj))])
        rec = {"mean": mean, "best": best}
        for m in methods:
            law1, _ = release_law(m, X[train], y[train], s, 1.0, supports=sup,
                                  rng=np.random.default_rng(k))
            for e in eps_grid:
                rec[f"{m}@{e:g}"] = float(rescale(law1, e) @ test_val)
        rows.append(rec)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="results/test_r2/low_n.json")
    ap.add_argument("--ns", nargs="+", type=int, default=[20, 40, 80, 160, 320])
    ap.add_argument("--eps", nargs="+", type=float, default=[0.25, 0.5, 1.0, 2.0, 5.0])
    ap.add_argument("--s", nargs="+", type=int, default=[3, 5])
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--sets", nargs="+", default=SETS)
    ap.add_argument("--methods", nargs="+", default=["ranks", "kendall_score"])
    a = ap.parse_args(argv)
    out = Path(a.out)
    res = json.loads(out.read_text()) if out.exists() else {}
    t0 = time.perf_counter()
    import warnings
    warnings.simplefilter("ignore")
    for s in a.s:
        for n in a.ns:
            for name in a.sets:
                key = f"{name}|{n}|{s}"
                if key in res:
                    continue
                res[key] = one(name, n, s, a.splits, a.eps, a.methods)
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(json.dumps(res))
                print(key, f"{time.perf_counter() - t0:.0f}s", file=sys.stderr, flush=True)
    report(res, a)


def report(res, a):
    for s in a.s:
        print(f"\ns = {s}: median gain (E R2 - mean)/(best - mean) over sets x splits; "
              "[sets whose mean beats the mean support by > 0.01]")
        print("| n | n_train | " + " | ".join(f"{m} ε={e:g}" for m in a.methods for e in a.eps)
              + " |")
        for n in a.ns:
            cells = []
            for m in a.methods:
                for e in a.eps:
                    gains, wins, sets = [], 0, 0
                    for name in a.sets:
                        rows = res.get(f"{name}|{n}|{s}", [])
                        if not rows:
                            continue
                        sets += 1
                        g = [(r[f"{m}@{e:g}"] - r["mean"]) / max(r["best"] - r["mean"], 1e-3)
                             for r in rows]
                        gains += g
                        wins += (np.mean([r[f"{m}@{e:g}"] for r in rows])
                                 > np.mean([r["mean"] for r in rows]) + 0.01)
                    cells.append(f"{np.median(gains):.2f} [{wins}/{sets}]")
            print(f"| {n} | {n - round(0.3 * n)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
