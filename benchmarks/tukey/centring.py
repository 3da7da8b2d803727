"""Centred coordinates against (intercept, slopes) for tukey_regression on real sets.

The real-data benchmark's regression sets with n >= 2000, the best least-squares subset of
size s (non-private: this compares two releases on the same columns), 10 random 90/10
splits, Tukey budget eps in {0.9, 1.8} (a total of 1 and 2 less a 10 % selection share),
delta = 1e-5.  Test R^2; a refusal counts as the constant predictor (R^2 = 0).
Usage: python benchmarks/tukey/centring.py
"""

import numpy as np

from mipdp.exceptions import PTRRefusedError
from mipdp.experiments import real_bench
from mipdp.experiments.real_sets import load_real_set
from mipdp.tukey import tukey_regression


def best_subset(X, y, s):
    """The exhaustive least-squares best subset (OLS with an intercept), as a list."""
    return [int(j) for j in real_bench.best_subset(X, y, s)[0]]


def r2(yt, pred, ytrain):
    return 1 - np.mean((yt - pred) ** 2) / np.mean((yt - ytrain.mean()) ** 2)


def main():
    print("| set | s | eps | OLS | centred | (intercept, slopes) |")
    print("|---|---|---|---|---|---|")
    for name in ["DoctorVisits", "NMES1988", "Workinghours"]:
        data = load_real_set(name)
        X, y = data.X, data.y
        for s in (3, 5):
            S = best_subset(X, y, s)
            for eps in (0.9, 1.8):
                rng = np.random.default_rng(0)
                res = {"ols": [], True: [], False: []}
                for rep in range(10):
                    perm = rng.permutation(len(y))
                    cut = int(0.9 * len(y))
                    tr, te = perm[:cut], perm[cut:]
                    A, At = X[tr][:, S], X[te][:, S]
                    Z = np.hstack([np.ones((cut, 1)), A])
                    b = np.linalg.lstsq(Z, y[tr], rcond=None)[0]
                    res["ols"].append(r2(y[te], At @ b[1:] + b[0], y[tr]))
                    for centred in (True, False):
                        try:
                            f = tukey_regression(A, y[tr], eps, 1e-5, centred=centred,
                                                 random_state=rep)
                            res[centred].append(r2(y[te], At @ f.coef + f.intercept, y[tr]))
                        except PTRRefusedError:
                            res[centred].append(0.0)
                mean = {k: float(np.mean(v)) for k, v in res.items()}
                print(f"| {name} | {s} | {eps} | {mean['ols']:.3f} | {mean[True]:.3f} | "
                      f"{mean[False]:.3f} |", flush=True)


if __name__ == "__main__":
    main()
