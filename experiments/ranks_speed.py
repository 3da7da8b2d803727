"""Time of bounds="ranks" against the known-bounds release, same data, same run.

Seed 002's design (rho = 0.1, s = 5, eps = 1, one draw), known bounds (0.5, 0.5) against
ranks; each configuration ``--reps`` times alternating, median wall-clock time and the
ratio ranks / known (the machine is shared: compare the ratio, not the seconds).

    PYTHONPATH=. python experiments/ranks_speed.py --p 100 10000 --n 3000
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from mipdp import private_bss
from mipdp.datasets import make_bss_regression


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--p", type=int, nargs="+", default=[100, 10_000])
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--s", type=int, default=5)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--rho", type=float, default=0.1)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    for p in a.p:
        X, y, truth = make_bss_regression(a.n, p, a.s, rho=a.rho, random_state=0)
        t = {"known": [], "ranks": []}
        hit = {"known": 0, "ranks": 0}
        for rep in range(a.reps):
            for key, b in (("known", (0.5, 0.5)), ("ranks", "ranks")):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t0 = time.perf_counter()
                    r = private_bss(X, y, a.s, a.eps, bounds=b, random_state=rep)
                    t[key].append(time.perf_counter() - t0)
                hit[key] += int(np.array_equal(np.sort(r.support), np.sort(truth)))
                if key == "ranks":
                    t_rank = r.timings.get("ranks", 0.0)
        mk, mr = np.median(t["known"]), np.median(t["ranks"])
        print(f"p={p} n={a.n}: known {mk:.2f} s, ranks {mr:.2f} s (transform {t_rank:.2f} s), "
              f"ratio {mr / mk:.2f}; truth released known {hit['known']}/{a.reps}, "
              f"ranks {hit['ranks']}/{a.reps}", flush=True)


if __name__ == "__main__":
    main()
