"""Time of the bounds-free releases against the known-bounds release, same data, same run.

Seed 002's design (rho = 0.1, s = 5, eps = 1, one draw, n = 3000): known bounds (0.5, 0.5),
``bounds="ranks"`` and ``bounds="kendall"``, each ``--reps`` times in alternation after a
warm-up call (imports); the median wall-clock time and its ratio to the known-bounds
release (the machine is shared: compare ratios, not seconds).  ``--phases``: also the
median of each of the release's own phase timings (``result.timings``, not private).
``--n-jobs``: the workers of every release (the rank transform's groups of columns, the
class searches, ... run on them; default one).

    PYTHONPATH=. python -m experiments.studies.bounds_free_speed --p 100 10000 --reps 3
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

KINDS = {"known": (0.5, 0.5), "ranks": "ranks", "kendall": "kendall"}


def main(argv=None):
    from mipdp.datasets import make_bss_regression
    from mipdp.selection import private_bss
    ap = argparse.ArgumentParser()
    ap.add_argument("--p", type=int, nargs="+", default=[100, 10_000])
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--s", type=int, default=5)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--kinds", nargs="+", default=list(KINDS))
    ap.add_argument("--phases", action="store_true")
    ap.add_argument("--n-jobs", type=int, default=None,
                    help="n_jobs of every release (default None: one worker)")
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    X0, y0, _ = make_bss_regression(200, 20, a.s, random_state=1)
    for k in a.kinds:                                    # warm-up: imports, solver start
        private_bss(X0, y0, a.s, 1.0, bounds=KINDS[k], random_state=0, n_jobs=a.n_jobs)
    for p in a.p:
        X, y, truth = make_bss_regression(a.n, p, a.s, rho=0.1, random_state=0)
        t = {k: [] for k in a.kinds}
        hit = {k: 0 for k in a.kinds}
        phases: dict = {k: {} for k in a.kinds}
        for rep in range(a.reps):
            for k in a.kinds:
                t0 = time.perf_counter()
                r = private_bss(X, y, a.s, 1.0, bounds=KINDS[k], random_state=rep,
                                n_jobs=a.n_jobs)
                t[k].append(time.perf_counter() - t0)
                for name, v in r.timings.items():
                    phases[k].setdefault(name, []).append(v)
                hit[k] += int(np.array_equal(np.sort(r.support), np.sort(truth)))
        base = float(np.median(t["known"])) if "known" in t else float("nan")
        print(f"p={p} n={a.n} n_jobs={a.n_jobs}: " + "  ".join(
            f"{k} {np.median(v):.2f} s ({np.median(v) / base:.2f}x, truth {hit[k]}/{a.reps})"
            for k, v in t.items()), flush=True)
        if a.phases:
            for k in a.kinds:
                print(f"  {k}: " + ", ".join(f"{name} {np.median(v):.3f}"
                                              for name, v in phases[k].items()), flush=True)


if __name__ == "__main__":
    main()
