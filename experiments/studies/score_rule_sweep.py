"""Choose the default score ``(ridge, radius)`` by measurement.

For each design of the study (seed 002's ρ = 0.1, ρ = 0.7, sign cancellation), each n,
a grid of ridges ``λ`` and radii ``r = m · b_y / (b_x √s)`` (``m`` the multiplier of the
balanced radius), prints the exponential mechanism's ``P(release = truth)``: the
frequency of the truth over ``--draws`` exact draws of the sampler and the sampler's
certified bounds (``result.probability_bounds``), averaged over data sets, and the time
of the first release; the seed's score (λ = 120, r = 1.1) beside it.  The rule
shipped in :func:`mipdp.losses.default_score` is the best cell of this sweep that holds
on every design (docs/guide.md, "The default score").

    python -m experiments.studies.score_rule_sweep --trials 2 \
        --out results/score_rule_sweep.csv
"""

from __future__ import annotations

import argparse
import csv
import itertools
import math
import time
from typing import Any

import numpy as np

from mipdp import private_bss
from mipdp.datasets import make_bss_regression

DESIGNS: dict[str, dict[str, Any]] = {"rho0.1": dict(design="seed002", rho=0.1),
                                      "rho0.7": dict(design="seed002", rho=0.7),
           "cancel": dict(design="cancel", rho=0.7)}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--designs", nargs="+", default=list(DESIGNS))
    ap.add_argument("--n", nargs="+", type=int, default=[1000, 2000, 4000])
    ap.add_argument("--ridges", nargs="+", type=float, default=[1.0, 5.0, 20.0])
    ap.add_argument("--multipliers", nargs="+", type=float, default=[0.75, 1.0, 1.25])
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--trials", type=int, default=2)
    ap.add_argument("--p", type=int, default=100)
    ap.add_argument("--s", type=int, default=5)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    b_x = b_y = 0.5
    r0 = b_y / (b_x * math.sqrt(a.s))
    cells = [(120.0, 1.1, "seed"), (120.0, r0, "m=1")] + [(lam, m * r0, f"m={m:g}") for lam, m in
                                     itertools.product(a.ridges, a.multipliers)]
    rows = []
    for dname in a.designs:
        for n in a.n:
            data = [make_bss_regression(n=n, p=a.p, s=a.s, random_state=1000 * t + n,
                                        **DESIGNS[dname]) for t in range(a.trials)]
            for lam, r, tag in cells:
                freq, lo, hi, secs = [], [], [], []
                for t, (X, y, T) in enumerate(data):
                    t0 = time.perf_counter()
                    res = private_bss(X, y, a.s, a.eps, bounds=(b_x, b_y), ridge=lam, radius=r,
                                      n_draws=a.draws, random_state=t)
                    secs.append(time.perf_counter() - t0)
                    freq.append(float(np.mean([np.array_equal(S, T) for S in res.supports])))
                    b = res.probability_bounds(T)
                    lo.append(b[0])
                    hi.append(b[1])
                rows.append(dict(design=dname, n=n, ridge=lam, radius=round(r, 4), cell=tag,
                                 freq=float(np.mean(freq)), lo=float(np.mean(lo)),
                                 hi=float(np.mean(hi)), time_s=float(np.mean(secs))))
                print(f"{dname:7s} n={n:5d} ridge={lam:6g} r={r:.3f} ({tag:5s}) freq "
                      f"{rows[-1]['freq']:.3f}  certified {rows[-1]['lo']:.3f}-"
                      f"{rows[-1]['hi']:.3f}  [{rows[-1]['time_s']:.1f} s/release]", flush=True)
    if a.out:
        with open(a.out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
