"""Seed designs: exact P(release = truth) of the bounds-free releases and DPKendall.

Prastakos et al.'s design (``make_bss_regression``, ``design="seed002"``) at ``ρ`` and
``n``; p = 20, s = 5 as the overlap benchmark's synthetic rows; mean over ``--trials`` data
sets.  ``ranks``: ``bounds=None`` today; ``kendall_score``: ``bounds="kendall"``;
``dpkendall``: DPKendall's exact law.

    nice python experiments/test_r2/seed002.py --rho 0.7 --ns 500 1000 2000 4000
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from mipdp import private_bss
from mipdp.datasets import make_bss_regression
from mipdp.experiments.real_bench import kendall_law


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rho", type=float, default=0.7)
    ap.add_argument("--ns", nargs="+", type=int, default=[500, 1000, 2000, 4000])
    ap.add_argument("--eps", nargs="+", type=float, default=[1.0, 5.0])
    ap.add_argument("--p", type=int, default=20)
    ap.add_argument("--s", type=int, default=5)
    ap.add_argument("--trials", type=int, default=3)
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    print(f"rho = {a.rho}, p = {a.p}, s = {a.s}: P(truth), mean ± se over {a.trials} data sets")
    print("| n | ε | ranks | kendall_score | dpkendall |\n|---|---|---|---|---|")
    for n in a.ns:
        for eps in a.eps:
            got: dict = {"ranks": [], "kendall_score": [], "dpkendall": []}
            for t in range(a.trials):
                X, y, truth = make_bss_regression(n=n, p=a.p, s=a.s, rho=a.rho,
                                                  random_state=np.random.default_rng([t, n]))
                truth = np.sort(truth)
                got["ranks"].append(private_bss(X, y, a.s, eps, random_state=0)
                                    .probability(truth))
                got["kendall_score"].append(private_bss(X, y, a.s, eps, bounds="kendall",
                                                        random_state=0).probability(truth))
                sup, pr = kendall_law(X, y, a.s, eps)
                got["dpkendall"].append(float(pr[np.all(sup == truth, axis=1)].sum()))
            cells = [f"{np.mean(v):.3f} ± {np.std(v, ddof=1) / np.sqrt(len(v)):.3f}"
                     for v in got.values()]
            print(f"| {n} | {eps:g} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
