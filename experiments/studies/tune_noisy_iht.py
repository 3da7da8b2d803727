"""Choose noisy_iht's defaults (n_iter, step, residual bound) on seed 002's design.

Measures P(release = truth) of :func:`mipdp.comparators.noisy_iht` over a grid of
``n_iter`` T, step ``eta * b_x**2`` and residual bound ``c / b_y`` on
:func:`mipdp.datasets.make_bss_regression` (p = 100, s = 5, rho = 0.1 and 0.7; bounds 0.5),
data seeds 10_000 + trial (disjoint from the runner's).  Prints a markdown table.

    python -m experiments.studies.tune_noisy_iht [--trials 10] [--draws 10]
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np

from mipdp.comparators.noisy_iht import noisy_iht
from mipdp.datasets import make_bss_regression


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--draws", type=int, default=10)
    ap.add_argument("--ns", type=int, nargs="+", default=[1000, 2000, 4000])
    ap.add_argument("--eps", type=float, nargs="+", default=[1.0, 5.0])
    ap.add_argument("--rho", type=float, default=0.1)
    ap.add_argument("--T", type=int, nargs="+", default=[1, 2, 3, 5, 10])
    ap.add_argument("--step", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    ap.add_argument("--c", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    args = ap.parse_args(argv)
    data = {(n, t): make_bss_regression(n, 100, 5, rho=args.rho, random_state=10_000 + t)
            for n in args.ns for t in range(args.trials)}
    cols = [(n, e) for n in args.ns for e in args.eps]
    print("| T | eta b_x^2 | c / b_y | " + " | ".join(f"n={n}, eps={e:g}" for n, e in cols)
          + " | mean |")
    print("|---" * (4 + len(cols)) + "|")
    for T, st, c in itertools.product(args.T, args.step, args.c):
        vals = []
        for n, e in cols:
            hits = 0
            for t in range(args.trials):
                X, y, S = data[n, t]
                r = noisy_iht(X, y, 5, e, bounds=(0.5, 0.5), n_iter=T, step=st / 0.25,
                              residual_bound=c * 0.5, random_state=t, n_draws=args.draws)
                hits += int(np.sum(np.all(r.supports == S, axis=1)))
            vals.append(hits / (args.trials * args.draws))
        print(f"| {T} | {st:g} | {c:g} | " + " | ".join(f"{v:.2f}" for v in vals)
              + f" | {np.mean(vals):.3f} |", flush=True)


if __name__ == "__main__":
    main()
