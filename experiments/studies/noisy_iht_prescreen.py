"""Noisy IHT as a pre-screener: how often k = 50 candidates keep the true support.

Seed 002's design at p = 1000, s = 5 (bounds 0.5), data seeds 20 000 + trial, 10 trials;
screening budgets 0.3 and 1.5 (a fraction 0.3 of eps = 1 and 5).  DP-SIS screens with
gamma = 0, as private_bss does.  Prints ``n eps_screen method fraction_kept``.

    python -m experiments.studies.noisy_iht_prescreen
"""

from __future__ import annotations

import warnings

from mipdp.comparators import prescreen
from mipdp.datasets import make_bss_regression


def main(argv=None) -> None:
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[2000, 4000])
    ap.add_argument("--eps", type=float, nargs="+", default=[0.3, 1.5],
                    help="screening budgets")
    ap.add_argument("--p", type=int, default=1000)
    ap.add_argument("--k", type=int, default=50, help="candidates kept")
    ap.add_argument("--trials", type=int, default=10)
    a = ap.parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in a.n:
            for eps in a.eps:
                for name in ("dp_sis", "kendall", "noisy_iht"):
                    kept = 0
                    for t in range(a.trials):
                        X, y, S = make_bss_regression(n, a.p, 5, random_state=20_000 + t)
                        extra = {"gamma": 0.0} if name == "dp_sis" else {}
                        r = prescreen(name, X, y, a.k, eps, bounds=(0.5, 0.5), random_state=t,
                                      **extra)
                        kept += set(S.tolist()) <= set(r.support.tolist())
                    print(n, eps, name, kept / a.trials, flush=True)

if __name__ == "__main__":
    main()
