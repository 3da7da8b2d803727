"""Utility of the score: the exponential mechanism with the seed's and the default score,
beside the private comparators, on the three designs of the study.

For each design (seed 002's ρ = 0.1, ρ = 0.7, sign cancellation), each n and each data set:

* ``em_default`` / ``em_seed``: :func:`mipdp.private_bss` (exponential mechanism) with the
  default score (derived from the bounds, :func:`mipdp.losses.default_score`) and with the
  seed's (λ = 120, r = 1.1): the certified reference ``P(release = truth)``
  (:func:`~mipdp.experiments.em_reference.em_truth_probability`, independent of the
  sampler; ``--no-reference`` skips it), the frequency of the truth over ``--draws`` exact
  draws, and the time of the release (first draw);
* ``mcmc`` (1000 steps, its default) and ``mcmc3000``; ``kendall`` (DPKendall),
  ``dp_sis`` and ``samp_agg`` (Two-Stage): the frequency of the truth over
  ``--comparator-draws`` releases.

Every method spends ε = 1 per release, b_x = b_y = 0.5, p = 100, s = 5.  Prints a
markdown table of means over the data sets (and writes every row with ``--csv``).

    python -m experiments.studies.bench_utility --trials 3 --csv results/bench_utility.csv
"""

from __future__ import annotations

import argparse
import csv
import time
import warnings
from typing import Any

import numpy as np

from mipdp import private_bss
from mipdp.comparators import mcmc
from mipdp.datasets import make_bss_regression
from mipdp.experiments.em_reference import em_truth_probability
from mipdp.experiments.methods import get_adapter
from mipdp.losses import SEED_RADIUS, SEED_RIDGE

DESIGNS: dict[str, dict[str, Any]] = {"rho0.1": dict(design="seed002", rho=0.1),
                                      "rho0.7": dict(design="seed002", rho=0.7),
           "cancel": dict(design="cancel", rho=0.7)}
SCORES = {"em_default": {}, "em_seed": dict(ridge=SEED_RIDGE, radius=SEED_RADIUS)}
COMPARATORS = ("mcmc", "mcmc3000", "kendall", "dp_sis", "samp_agg")


def _hits(supports, truth) -> float:
    return float(np.mean([np.array_equal(np.sort(S), truth) for S in supports]))


def run_cell(X, y, truth, a, seed: int) -> dict:
    out = {}
    bounds = (0.5, 0.5)
    for name, kw in SCORES.items():
        t0 = time.perf_counter()
        res = private_bss(X, y, a.s, a.eps, bounds=bounds, n_draws=a.draws, random_state=seed,
                          time_limit=a.time_limit, **kw)
        out[f"{name}_time"] = res.timings["total"]
        out[f"{name}_freq"] = _hits(res.supports, truth)
        lo, hi = res.probability_bounds(truth)
        out[f"{name}_sampler_lo"], out[f"{name}_sampler_hi"] = lo, hi
        if a.reference:
            ref = em_truth_probability(X, y, truth, a.eps, bounds=bounds,
                                       ridge=res.info["ridge"], radius=res.info["radius"])
            out[f"{name}_ref_lo"], out[f"{name}_ref_hi"] = ref["lo"], ref["hi"]
        out[f"{name}_wall"] = time.perf_counter() - t0
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in COMPARATORS:
            t0 = time.perf_counter()
            k = a.mcmc_draws if name.startswith("mcmc") else a.comparator_draws
            if name == "mcmc3000":
                sup = mcmc(X, y, a.s, a.eps, bounds=bounds, n_iter=3000, random_state=rng,
                           n_draws=k).supports
            else:
                sup = get_adapter(name)(X, y, a.s, a.eps, rng, k, bounds=bounds).supports
            out[f"{name}_freq"] = _hits(sup, truth)
            out[f"{name}_time"] = (time.perf_counter() - t0) / k
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--designs", nargs="+", default=list(DESIGNS))
    ap.add_argument("--n", nargs="+", type=int, default=[1000, 1500, 2000, 4000])
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--draws", type=int, default=500, help="draws of each EM (default 500)")
    ap.add_argument("--comparator-draws", type=int, default=50)
    ap.add_argument("--mcmc-draws", type=int, default=20)
    ap.add_argument("--p", type=int, default=100)
    ap.add_argument("--s", type=int, default=5)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--time-limit", type=float, default=600.0)
    ap.add_argument("--no-reference", dest="reference", action="store_false")
    ap.add_argument("--csv", default=None)
    a = ap.parse_args(argv)
    rows = []
    for dname in a.designs:
        for n in a.n:
            for t in range(a.trials):
                X, y, truth = make_bss_regression(n=n, p=a.p, s=a.s, random_state=7919 * t + n,
                                                  **DESIGNS[dname])
                row = dict(design=dname, n=n, trial=t, **run_cell(X, y, np.sort(truth), a, t))
                rows.append(row)
                print(dname, n, t, {k: round(v, 3) for k, v in row.items()
                                    if k.endswith(("freq", "lo", "hi", "time"))}, flush=True)
            if a.csv:
                with open(a.csv, "w", newline="") as f:
                    keys = sorted({k for r in rows for k in r}, key=lambda k: list(rows[0]).index(k)
                                  if k in rows[0] else 999)
                    w = csv.DictWriter(f, fieldnames=keys)
                    w.writeheader()
                    w.writerows(rows)
    print_table(rows, a.reference)


def print_table(rows, reference: bool = True) -> None:
    """Markdown table: means over the data sets of each (design, n)."""
    ref = "reference P(truth) [lo, hi]; " if reference else ""
    print(f"\n| design | n | EM default: {ref}freq; first release (s) | EM seed: {ref}freq; "
          "first release (s) | MCMC | MCMC 3000 | DPKendall | DP-SIS | Samp-Agg |")
    print("|---|---|---|---|---|---|---|---|---|")
    keys = sorted({(r["design"], r["n"]) for r in rows},
                  key=lambda k: (list(DESIGNS).index(k[0]), k[1]))
    for d, n in keys:
        cell = [r for r in rows if r["design"] == d and r["n"] == n]

        def m(k, cell=cell):
            return float(np.mean([r[k] for r in cell]))
        em = []
        for name in SCORES:
            txt = f"[{m(name + '_ref_lo'):.3f}, {m(name + '_ref_hi'):.3f}]; " if reference else ""
            em.append(f"{txt}{m(name + '_freq'):.3f}; {m(name + '_time'):.2f}")
        comp = [f"{m(c + '_freq'):.2f}" for c in COMPARATORS]
        print(f"| {d} | {n} | " + " | ".join(em + comp) + " |")


if __name__ == "__main__":
    main()
