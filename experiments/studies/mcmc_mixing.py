"""Is MCMC's chain mixed?  Frequency of the truth against the chain length (docs/experiments.md).

Seed 002's design (p = 100, s = 5, ρ = 0.1), least squares, ε = 1, one data set per n:
``--chains`` independent chains of Roy & Tewari's Metropolis–Hastings sampler
(:func:`mipdp.comparators.mcmc.mcmc`) for each number of steps, beside the exact
exponential mechanism sampler's frequency over the same number of draws.  If the
frequency of the truth keeps moving with the number of steps, the default 1000-step chain
has not reached its target.  **Not private** evaluation figures.

    python -m experiments.studies.mcmc_mixing --n 4000 --steps 300 1000 3000 10000 --chains 50
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from sklearn import config_context

from mipdp import private_bss
from mipdp.comparators.mcmc import mcmc
from mipdp.datasets import make_bss_regression


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, nargs="+", default=[4000])
    ap.add_argument("--steps", type=int, nargs="+", default=[300, 1000, 3000, 10000])
    ap.add_argument("--chains", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    print("| n | sampler | steps per chain | draws | frequency of the truth | mean F1 | time (s) |")
    print("|---|---|---|---|---|---|---|")
    for n in args.n:
        X, y, truth = make_bss_regression(n=n, p=100, s=5, random_state=args.seed)
        t0 = time.perf_counter()
        res = private_bss(X, y, 5, 1.0, bounds=(0.5, 0.5), n_draws=args.chains,
                          random_state=args.seed)
        S = np.sort(res.supports, axis=1)
        f1 = np.isin(S, truth).sum(axis=1) / 5
        print(f"| {n} | exact EM | — | {args.chains} | {np.mean(np.all(S == truth, axis=1)):.2f} "
              f"| {f1.mean():.3f} | {time.perf_counter() - t0:.1f} |", flush=True)
        for steps in args.steps:
            t0 = time.perf_counter()
            with warnings.catch_warnings(), config_context(skip_parameter_validation=True):
                warnings.simplefilter("ignore")
                r = mcmc(X, y, 5, 1.0, bounds=(0.5, 0.5), n_iter=steps, n_draws=args.chains,
                         random_state=args.seed + steps)
            S = np.sort(r.supports, axis=1)
            f1 = np.isin(S, truth).sum(axis=1) / 5
            print(f"| {n} | MCMC | {steps} | {args.chains} | "
                  f"{np.mean(np.all(S == truth, axis=1)):.2f} | {f1.mean():.3f} | "
                  f"{time.perf_counter() - t0:.1f} |", flush=True)


if __name__ == "__main__":
    main()
