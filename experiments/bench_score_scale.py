"""The default score at large p: time of the first release and frequency of the truth.

Seed 002's design (s = 5, ρ = 0.1, ε = 1, b = 0.5), one data set per p, ``--draws`` exact
draws from one envelope (further draws are cheap), the default score and (``--seed-score``)
the seed's λ = 120, r = 1.1 beside it.

    python experiments/bench_score_scale.py --p 10000 100000 --n 3000
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from mipdp import private_bss
from mipdp.datasets import make_bss_regression


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--p", nargs="+", type=int, default=[10_000, 100_000])
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--seed-score", action="store_true")
    ap.add_argument("--time-limit", type=float, default=1800.0)
    a = ap.parse_args(argv)
    for p in a.p:
        X, y, truth = make_bss_regression(n=a.n, p=p, s=5, random_state=p)
        scores = [("default", {})] + ([("seed", dict(ridge=120.0, radius=1.1))]
                                      if a.seed_score else [])
        for tag, kw in scores:
            t0 = time.perf_counter()
            try:
                res = private_bss(X, y, 5, 1.0, bounds=(0.5, 0.5), n_draws=a.draws,
                                  random_state=0, time_limit=a.time_limit, **kw)
            except Exception as exc:  # noqa: BLE001 - report and go on
                print(f"p={p} n={a.n} {tag}: {type(exc).__name__}: {exc}", flush=True)
                continue
            wall = time.perf_counter() - t0
            freq = float(np.mean([np.array_equal(S, truth) for S in res.supports]))
            phases = {k: round(v, 1) for k, v in res.timings.items() if v >= 0.5}
            print(f"p={p} n={a.n} {tag}: first release (all {a.draws} draws) {wall:.1f} s, "
                  f"frequency of the truth {freq:.3f}; phases {phases}", flush=True)


if __name__ == "__main__":
    main()
