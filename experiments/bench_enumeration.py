"""Benchmark of the enumeration layer on seed 002's synthetic data (issue 2's targets).

For each p and each installed backend: time per phase of ``private_bss`` (warm start,
optimum, top-R search, mistake classes, sampling) and the ratio of the total to a
baseline measured in the same run (one exact one-swap pass over X, i.e. s(p-s) support
objectives, which is the least any exact method does).

    python experiments/bench_enumeration.py                        # p = 100, 1000, 10000
    python experiments/bench_enumeration.py --p 100 1000 --backends highs gurobi

Targets (2-core machine): p = 100 end to end <= 1 s with HiGHS; p = 10 000 <= 60 s.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from mipdp import ConditionalPrivacyWarning, private_bss, solvers
from mipdp._validation import clip_data
from mipdp.datasets import make_bss_regression
from mipdp.losses import LeastSquares


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--p", type=int, nargs="+", default=[100, 1000, 10000])
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--s", type=int, default=5)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--backends", nargs="+", default=solvers.available_backends())
    ap.add_argument("--methods", nargs="+", default=["top_r", "mistakes"])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rows = []
    for p in args.p:
        X, y, truth = make_bss_regression(n=args.n, p=p, s=args.s, random_state=args.seed)
        Xc, yc = clip_data(X, y, 0.5, 0.5)
        obj = LeastSquares().bind(Xc, yc)
        t0 = time.perf_counter()
        obj.one_swap_values(truth)
        base = time.perf_counter() - t0
        for backend in args.backends:
            if backend == "gurobi" and p + 1 > 2000:
                print(f"p={p} backend=gurobi: skipped (size-limited pip licence: 2000 variables)")
                continue
            for method in args.methods:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConditionalPrivacyWarning)
                    res = private_bss(X, y, args.s, args.eps, bounds=(0.5, 0.5), method=method,
                                      backend=backend, random_state=args.seed)
                t = res.timings
                phases = {k: v for k, v in t.items() if k != "total"}
                solves = sum(ph["solves"] for ph in res.stats["phases"].values())
                rows.append((p, backend, method, t["total"], base, solves, res.stats["n_cuts"],
                             bool(np.array_equal(res.candidates[0], truth))))
                print(f"p={p:6d} backend={backend:7s} method={method:9s} total={t['total']:8.3f}s "
                      f"({t['total'] / base:7.1f}x one-swap pass of {base:.3f}s)  solves={solves:3d} "
                      f"cuts={res.stats['n_cuts']:3d}  optimum=truth:{rows[-1][-1]}  phases: "
                      + ", ".join(f"{k} {v:.3f}" for k, v in phases.items()), flush=True)
    print("\n| p | backend | method | total (s) | x baseline | MIP solves | cuts |")
    print("|---|---|---|---|---|---|---|")
    for p, b, m, tot, base, solves, cuts, _ in rows:
        print(f"| {p} | {b} | {m} | {tot:.2f} | {tot / base:.1f} | {solves} | {cuts} |")


if __name__ == "__main__":
    main()
