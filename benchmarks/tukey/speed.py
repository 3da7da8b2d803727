"""Wall time of tukey_regression at n = 1e5, k = 5 columns (d = 6 with the intercept).

With ``--selection``: also the time of ``private_bss`` (its default release) at n = 1e5,
p = 100, s = 5, and the ratio (selection + fit) / selection.
Usage: python benchmarks/tukey/speed.py [--selection]
"""
import sys
import time

import numpy as np

from mipdp.tukey import (
    centred_part_statistics,
    ptr_distance,
    sample_tukey,
    split_parts,
    tukey_levels,
    tukey_regression,
)

rng = np.random.default_rng(0)
n, k = 100_000, 5
X = rng.normal(size=(n, k))
y = X @ np.linspace(1, 0.2, k) + rng.normal(size=n)
times = []
for seed in range(5):
    t0 = time.perf_counter()
    res = tukey_regression(X, y, 1.0, 1e-5, random_state=seed)
    times.append(time.perf_counter() - t0)
print(f"tukey_regression n={n} d={k + 1} m={res.m}: median {np.median(times):.3f} s "
      f"(min {min(times):.3f}, max {max(times):.3f})")
t0 = time.perf_counter()
labels = split_parts(n, res.m, rng, add_remove=False)
t1 = time.perf_counter()
models = centred_part_statistics(X, y, labels, res.m)
t2 = time.perf_counter()
lv = tukey_levels(models)
t3 = time.perf_counter()
ptr_distance(lv, res.info["target_depth"], 0.5, 1e-5)
sample_tukey(lv, res.info["target_depth"], 0.5, rng)
t4 = time.perf_counter()
print(f"phases: split {t1 - t0:.3f} s, models {t2 - t1:.3f} s, boxes {t3 - t2:.3f} s, "
      f"test+draw {t4 - t3:.3f} s")

if "--selection" in sys.argv:
    import warnings

    from mipdp import private_bss
    from mipdp.datasets import make_bss_regression
    warnings.simplefilter("ignore")
    X, y, _ = make_bss_regression(n=100_000, p=100, s=5, random_state=0)
    for rep in range(2):
        t0 = time.perf_counter()
        sel = private_bss(X, y, 5, 0.5, random_state=rep)
        t1 = time.perf_counter()
        fit = tukey_regression(X[:, sel.support], y, 0.5, 1e-5, random_state=rep)
        t2 = time.perf_counter()
        print(f"private_bss n=1e5 p=100 s=5: {t1 - t0:.2f} s; tukey_regression on its support "
              f"{t2 - t1:.3f} s (m={fit.m}); (selection + fit) / selection = "
              f"{(t2 - t0) / (t1 - t0):.3f}", flush=True)
