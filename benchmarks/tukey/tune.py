"""Tuning sweep for the Tukey mechanism's data-free constants (rows per model, target depth).

Synthetic linear data; reports the pass rate of the test and the test R^2 of the release
(refusal counts as R^2 = 0, the constant predictor) against OLS on the same columns.
Usage: python benchmarks/tukey/tune.py OUT.json
"""
import itertools
import json
import math
import sys
import time

import numpy as np

from mipdp.tukey import (
    _threshold,
    fit_part_models,
    ptr_distance,
    sample_tukey,
    split_parts,
    tukey_levels,
)


def make(n, k, rng, tail):
    X = rng.normal(size=(n, k))
    if tail == "skewx":
        X = np.exp(X / 1.5)
    beta = np.linspace(1.0, 0.3, k)
    f = X @ beta
    noise = rng.standard_t(3, size=n) if tail == "t3" else rng.normal(size=n)
    y = f + noise * np.std(f) * 1.0 + 3.0
    return X, y


def r2(Xt, yt, coef, icpt):
    pred = Xt @ coef + icpt
    return 1 - np.mean((yt - pred) ** 2) / np.var(yt)


def run(n, k, eps, rho, alpha, tail, reps, seed, share=0.5):
    rng = np.random.default_rng(seed)
    d = k + 1
    eps_t = 0.9 * eps
    eps_ptr, eps_em = share * eps_t, (1 - share) * eps_t
    delta = 1e-5
    out = []
    for _ in range(reps):
        X, y = make(n, k, rng, tail)
        Xt, yt = make(20000, k, rng, tail)
        Z = np.hstack([np.ones((n, 1)), X])
        m = int(n // (d + math.ceil(rho))) if rho < 1 else int(n // math.ceil(rho * d))
        K = math.ceil(_threshold(eps_ptr, delta) + 2 / eps_ptr)
        t = K + 1 + max(1, int(alpha * m))
        ols = np.linalg.lstsq(Z, y, rcond=None)[0]
        base = r2(Xt, yt, ols[1:], ols[0])
        if t + K > m // 2:
            out.append((0, 0.0, base))
            continue
        labels = split_parts(n, m, rng, add_remove=False)
        lv = tukey_levels(fit_part_models(Z, y, labels, m))
        A = ptr_distance(lv, t, eps_em, delta)
        if A + rng.laplace(0, 1 / eps_ptr) < _threshold(eps_ptr, delta):
            out.append((0, 0.0, base))
            continue
        b = sample_tukey(lv, t, eps_em, rng)
        out.append((1, max(r2(Xt, yt, b[1:], b[0]), -1.0), base))
    a = np.array(out)
    return {"pass": a[:, 0].mean(), "r2": a[:, 1].mean(), "ols": a[:, 2].mean()}


def main2(path):
    rows = []
    t0 = time.time()
    for n, k, tail in itertools.product([1000, 2000, 3000, 4000], [3, 5], ["normal", "t3"]):
        for rho, alpha, share in itertools.product([1.0, 1.1, 1.25, 1.5], [0.0, 0.01, 0.02, 0.05],
                                                   [0.4, 0.5, 0.6]):
            r = run(n, k, 1.0, rho, alpha, tail, 8, 2, share)
            rows.append({"n": n, "k": k, "eps": 1.0, "tail": tail, "rho": rho,
                         "alpha": alpha, "share": share, **r})
        with open(path, "w") as f:
            json.dump(rows, f)
        print(n, k, tail, round(time.time() - t0), flush=True)


def main3(path):
    rows = []
    t0 = time.time()
    for n, k, tail in itertools.product([2000, 3000, 5000], [3, 5], ["normal", "t3"]):
        for rho, alpha, share in itertools.product([0, 0.9], [0.02, 0.05, 0.1],
                                                   [0.3, 0.35, 0.4, 0.5]):
            r = run(n, k, 1.0, rho, alpha, tail, 10, 3, share)
            rows.append({"n": n, "k": k, "eps": 1.0, "tail": tail, "rho": rho,
                         "alpha": alpha, "share": share, **r})
        with open(path, "w") as f:
            json.dump(rows, f)
        print(n, k, tail, round(time.time() - t0), flush=True)


def main(path):
    rows = []
    t0 = time.time()
    for n, k, eps, tail in itertools.product([2000, 4000, 10000], [3, 5], [1.0, 5.0],
                                             ["normal", "t3"]):
        for rho, alpha in itertools.product([1.25, 2, 3, 5], [0.02, 0.05, 0.1, 0.2]):
            r = run(n, k, eps, rho, alpha, tail, 6, 1)
            rows.append({"n": n, "k": k, "eps": eps, "tail": tail, "rho": rho,
                         "alpha": alpha, **r})
        with open(path, "w") as f:
            json.dump(rows, f)
        print(n, k, eps, tail, round(time.time() - t0), flush=True)


if __name__ == "__main__":
    {"1": main, "2": main2, "3": main3}[sys.argv[2] if len(sys.argv) > 2 else "1"](sys.argv[1])
