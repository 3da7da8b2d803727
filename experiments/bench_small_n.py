"""Very few rows (n ≪ p): time of one default release (docs/guide.md §7).

Uniform data in [-1/2, 1/2], s = 5, ε = 1, least squares, the default method; prints the
released support, the wall time and the time per phase (not private).

    python experiments/bench_small_n.py
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from mipdp import private_bss

SIZES = [(10, 500), (10, 5000), (20, 1000), (30, 1000)]


def main() -> None:
    warnings.simplefilter("ignore")
    for n, p in SIZES:
        rng = np.random.default_rng(0)
        X = rng.uniform(-0.5, 0.5, (n, p))
        y = rng.uniform(-0.5, 0.5, n)
        t = time.perf_counter()
        res = private_bss(X, y, 5, 1.0, bounds=(0.5, 0.5), random_state=0, time_limit=900)
        phases = {k: round(v, 2) for k, v in res.timings.items()}
        print(f"n={n} p={p} support={res.support.tolist()} {time.perf_counter() - t:.2f} s "
              f"optimum certified: {res.stats.get('optimum_certified')} {phases}", flush=True)


if __name__ == "__main__":
    main()
