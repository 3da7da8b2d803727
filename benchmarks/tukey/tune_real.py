"""Check of the Tukey mechanism's constants on real sets (n >= 2000) of the real-data
benchmark: the best OLS subset of size s (non-private, for this check only), 10 random
90/10 splits, test R^2 (a refusal counts as the constant predictor, R^2 = 0).
Usage: python benchmarks/tukey/tune_real.py OUT.json
"""
import itertools
import json
import math
import sys
import time

import numpy as np

from mipdp.experiments import real_bench
from mipdp.experiments.real_sets import load_real_set
from mipdp.tukey import (
    _threshold,
    fit_part_models,
    models_wanted,
    ptr_distance,
    sample_tukey,
    split_parts,
    target_depth,
    tukey_levels,
)


def best_subset(X, y, s):
    """The exhaustive least-squares best subset (OLS with an intercept), as a list."""
    return [int(j) for j in real_bench.best_subset(X, y, s)[0]]


def r2(yt, pred, ytrain):
    return 1 - np.mean((yt - pred) ** 2) / np.mean((yt - ytrain.mean()) ** 2)


EPS, RULES, SHARES = [1.0, 5.0], ["d", "d+1", "2d", "4d"], [0.35, 0.4, 0.5]


def main(path):
    rows = []
    t0 = time.time()
    for name in ["DoctorVisits", "NMES1988", "Workinghours"]:
        data = load_real_set(name)
        X, y = data.X, data.y
        for s in (3, 5):
            S = best_subset(X, y, s)
            d = s + 1
            rng = np.random.default_rng(0)
            splits = [rng.permutation(len(y)) for _ in range(10)]
            for eps, rows_rule, alpha, share in itertools.product(
                    EPS, RULES, [0.05], SHARES):
                vals, ols, passed = [], [], 0
                for perm in splits:
                    cut = int(0.9 * len(y))
                    tr, te = perm[:cut], perm[cut:]
                    Z = np.hstack([np.ones((cut, 1)), X[tr][:, S]])
                    Zt = np.hstack([np.ones((len(te), 1)), X[te][:, S]])
                    b = np.linalg.lstsq(Z, y[tr], rcond=None)[0]
                    ols.append(r2(y[te], Zt @ b, y[tr]))
                    eps_t = 0.9 * eps
                    e1, e2 = share * eps_t, (1 - share) * eps_t
                    K = math.ceil(_threshold(e1, 1e-5) + 2 / e1)
                    if isinstance(rows_rule, str):
                        r_per = {"d": d, "d+1": d + 1, "2d": 2 * d, "4d": 4 * d}[rows_rule]
                        m = cut // r_per
                    else:     # margin over models_wanted
                        m = min(cut // (d + 1),
                                math.ceil(rows_rule * models_wanted(d, e1, e2, 1e-5)))
                    t = target_depth(m, e1, 1e-5)
                    if t + K > m // 2:
                        vals.append(0.0)
                        continue
                    lab = split_parts(cut, m, rng, add_remove=False)
                    lv = tukey_levels(fit_part_models(Z, y[tr], lab, m))
                    A = ptr_distance(lv, t, e2, 1e-5)
                    if A + rng.laplace(0, 1 / e1) < _threshold(e1, 1e-5):
                        vals.append(0.0)
                        continue
                    passed += 1
                    beta = sample_tukey(lv, t, e2, rng)
                    vals.append(r2(y[te], Zt @ beta, y[tr]))
                rows.append({"set": name, "s": s, "eps": eps, "rows": rows_rule, "alpha": alpha,
                             "share": share, "r2": float(np.mean(vals)),
                             "r2_median": float(np.median(vals)), "pass": passed / 10,
                             "ols": float(np.mean(ols))})
            with open(path, "w") as f:
                json.dump(rows, f)
            print(name, s, round(time.time() - t0), flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 2:    # the margin sweep
        EPS, RULES, SHARES = [1.0, 2.0, 5.0], [1.0, 1.5, 2.0, 3.0, 5.0], [0.4, 0.5]
    main(sys.argv[1])
