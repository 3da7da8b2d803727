"""Noisy IHT as a pre-screener: how often k = 50 candidates keep the true support.

Seed 002's design at p = 1000, s = 5 (bounds 0.5), data seeds 20 000 + trial, 10 trials;
screening budgets 0.3 and 1.5 (a fraction 0.3 of eps = 1 and 5).  DP-SIS screens with
gamma = 0, as private_bss does.  Prints ``n eps_screen method fraction_kept``.

    python -m mipdp.experiments.studies.noisy_iht_prescreen
"""

from __future__ import annotations

import warnings

from mipdp.comparators import prescreen
from mipdp.datasets import make_bss_regression


def main(argv=None) -> None:
    warnings.simplefilter("ignore")
    for n in (2000, 4000):
        for eps in (0.3, 1.5):
            for name in ("dp_sis", "kendall", "noisy_iht"):
                kept = 0
                for t in range(10):
                    X, y, S = make_bss_regression(n, 1000, 5, random_state=20_000 + t)
                    extra = {"gamma": 0.0} if name == "dp_sis" else {}
                    r = prescreen(name, X, y, 50, eps, bounds=(0.5, 0.5), random_state=t,
                                  **extra)
                    kept += set(S.tolist()) <= set(r.support.tolist())
                print(n, eps, name, kept / 10, flush=True)


if __name__ == "__main__":
    main()
