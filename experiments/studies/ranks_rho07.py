"""bounds="ranks" on seed 002's design at rho = 0.7 (p = 100, s = 5): P(truth) and time.

Beside the known-bounds default release (bounds (0.5, 0.5)) and DPKendall, estimated from
``--draws`` draws per data set (one enumeration each), mean over ``--trials`` data sets.
Times are under load on a shared machine: compare the ratio ranks / known bounds.

    python -m experiments.studies.ranks_rho07 --ns 2000 4000 --eps 1 --trials 3
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from mipdp import private_bss
from mipdp.comparators import dp_kendall
from mipdp.datasets import make_bss_regression


def hit_rate(supports, truth):
    return float(np.mean(np.all(np.sort(supports, axis=1) == np.sort(truth), axis=1)))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ns", type=int, nargs="+", default=[2000, 4000])
    ap.add_argument("--p", type=int, default=100)
    ap.add_argument("--s", type=int, default=5)
    ap.add_argument("--eps", type=float, nargs="+", default=[1.0])
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--rho", type=float, default=0.7)
    a = ap.parse_args(argv)
    for n in a.ns:
        for eps in a.eps:
            acc: dict[str, list[float]] = {"ranks": [], "known": [], "kendall": []}
            t = {"ranks": 0.0, "known": 0.0}
            for trial in range(a.trials):
                X, y, truth = make_bss_regression(n, a.p, a.s, rho=a.rho, random_state=trial)
                for key, b in (("ranks", "ranks"), ("known", (0.5, 0.5))):
                    t0 = time.perf_counter()
                    r = private_bss(X, y, a.s, eps, bounds=b, n_draws=a.draws, random_state=trial)
                    t[key] += time.perf_counter() - t0
                    acc[key].append(hit_rate(r.supports, truth))
                k = dp_kendall(X, y, a.s, eps, n_draws=a.draws, random_state=trial)
                acc["kendall"].append(hit_rate(k.supports, truth))
            print(f"n={n} eps={eps:g}: "
                  + "  ".join(f"{k}={np.mean(v):.3f}" for k, v in acc.items())
                  + f"  time ranks/known = {t['ranks']:.1f}/{t['known']:.1f} s", flush=True)


if __name__ == "__main__":
    main()
