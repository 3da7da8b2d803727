"""Utility and speed of the samplers against the exponential mechanism (issue: exact EM).

Seed 002's regression design (s = 5, rho = 0.1, SNR = 5, bounds 0.5, ridge 120, radius 1.1,
eps = 1).  For every (p, n) and trial (data seed), and every method:

* ``exponential`` (the default: the exponential mechanism over all supports, sampled
  exactly by rejection): the frequency of the true support over ``--draws`` draws, and the
  certified bounds on its probability that the sampler reports;
* ``top_r`` and ``mistakes`` (exact class minima): their exact probability of the truth;

beside the exponential mechanism's own P(release = truth), computed independently of
the sampler by :func:`mipdp.experiments.em_reference.em_truth_probability`: every support
within ``--ball`` mistakes of the truth is evaluated (the
3-mistake ball at p = 100, the 2-ball at p = 1000 and the 1-ball at p = 10 000 by default:
the 3-ball has 1.6e9 supports at p = 1000), and the rest is bounded by certified MIP class
bounds around the truth, which gives an interval ``[lo, hi]``.

Times: to the first draw (one ``private_bss`` call, everything included) and per further
draw (``mechanism.sample`` of ``--draws`` draws), and the ratio of the first-draw time to the
default top-R's, measured in the same run.

    python -m experiments.studies.bench_mechanisms                      # the issue's rows
    python -m experiments.studies.bench_mechanisms --p 100 --n 3000 --trials 2

Targets (2-core machine): p = 100: frequency within 0.03 of the EM's, first draw <= 1 s,
further draws <= 10 ms; p = 1000: within 0.03, first draw <= 10 s; p = 10 000, n = 6000:
first draw <= 60 s, frequency >= 0.9; mistakes >= 0.75 at p = 100, n = 3000 and <= 30 s at
p = 1000, n = 6000.
"""

from __future__ import annotations

import argparse
import csv
import time
import warnings

import numpy as np

from mipdp import CertificationError, ConditionalPrivacyWarning, private_bss
from mipdp.datasets import make_bss_regression
from mipdp.experiments.em_reference import em_truth_probability

B, RIDGE, RADIUS, S = 0.5, 120.0, 1.1, 5
DEFAULT_ROWS = [(100, 2000), (100, 3000), (100, 4000), (100, 6000), (1000, 3000), (1000, 6000),
                (10000, 6000)]


def run(p, n, trial, methods, draws, ball, eps, time_limit):
    X, y, truth = make_bss_regression(n=n, p=p, s=S, random_state=trial)
    ref = em_truth_probability(X, y, truth, eps, s=S, ball=ball, bounds=(B, B), ridge=RIDGE,
                               radius=RADIUS)
    em_lo, em_hi = ref["lo"], ref["hi"]
    out = []
    for method in methods:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConditionalPrivacyWarning)
            t0 = time.perf_counter()
            try:
                res = private_bss(X, y, S, eps, bounds=(B, B), ridge=RIDGE, radius=RADIUS,
                                  method=method, random_state=trial, time_limit=time_limit)
            except CertificationError:
                print(f"p={p:5d} n={n:5d} trial={trial} {method:11s} did not finish within "
                      f"time_limit = {time_limit:g} s (nothing released)", flush=True)
                out.append({"p": p, "n": n, "trial": trial, "method": method, "em_lo": em_lo,
                            "em_hi": em_hi, "p_truth_lo": np.nan, "p_truth_hi": np.nan,
                            "freq": np.nan, "first_draw_s": np.inf, "per_draw_ms": np.nan})
                continue
            first = time.perf_counter() - t0
        rng = np.random.default_rng(1000 + trial)
        t0 = time.perf_counter()
        more = res.mechanism.sample(rng, draws)
        per_draw = (time.perf_counter() - t0) / draws
        lo, hi = res.probability_bounds(truth)
        freq = float(np.mean([np.array_equal(d, truth) for d in more]))
        row = {"p": p, "n": n, "trial": trial, "method": method, "em_lo": em_lo, "em_hi": em_hi,
               "p_truth_lo": lo, "p_truth_hi": hi, "freq": freq, "first_draw_s": first,
               "per_draw_ms": 1e3 * per_draw}
        if method == "exponential":
            st = res.stats["sampler"]
            row["proposals_per_draw"] = st["n_proposals"] / max(1, st["n_accepted"])
        out.append(row)
        print(f"p={p:5d} n={n:5d} trial={trial} {method:11s} EM P(truth) in [{em_lo:.3f}, "
              f"{em_hi:.3f}]  method: P in [{lo:.3f}, {hi:.3f}], frequency {freq:.3f} over "
              f"{draws} draws; first draw {first:6.2f} s, further draws {1e3 * per_draw:6.3f} ms",
              flush=True)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--p", type=int, nargs="+", help="only these p (default: the issue's rows)")
    ap.add_argument("--n", type=int, nargs="+", help="only these n")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--methods", nargs="+", default=["exponential", "top_r", "mistakes"])
    ap.add_argument("--ball", type=int, help="mistake ball evaluated exactly (default by p)")
    ap.add_argument("--csv", help="write every row to this CSV file")
    ap.add_argument("--time-limit", type=float, default=600.0,
                    help="time_limit of each private_bss call (default 600 s)")
    args = ap.parse_args(argv)
    rows = [(p, n) for p, n in DEFAULT_ROWS
            if (args.p is None or p in args.p) and (args.n is None or n in args.n)]
    if args.p and args.n:
        rows = [(p, n) for p in args.p for n in args.n]
    results = []
    for p, n in rows:
        ball = args.ball if args.ball is not None else (3 if p <= 100 else 2 if p <= 1000 else 1)
        for trial in range(args.trials):
            methods = [m for m in args.methods if not (m == "mistakes" and p > 1000)]
            results += run(p, n, trial, methods, args.draws, ball, args.eps, args.time_limit)
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=sorted({k for r in results for k in r}))
            w.writeheader()
            w.writerows(results)
    print("\nmean over trials; EM = the exponential mechanism's exact P(release = truth) "
          "(certified interval); time ratio = first draw / top-R's first draw, same run")
    print("| p | n | method | EM P(truth) | method P(truth) | frequency | first draw (s) | "
          "further draw (ms) | time ratio to top-R |")
    print("|---|---|---|---|---|---|---|---|---|")
    for p, n in rows:
        sel = [r for r in results if r["p"] == p and r["n"] == n]
        t_top = np.mean([r["first_draw_s"] for r in sel if r["method"] == "top_r"] or [np.nan])
        for method in args.methods:
            rs = [r for r in sel if r["method"] == method]
            if not rs:
                continue
            m = {k: np.mean([r[k] for r in rs]) for k in ("em_lo", "em_hi", "p_truth_lo",
                                                           "p_truth_hi", "freq", "first_draw_s",
                                                           "per_draw_ms")}
            print(f"| {p} | {n} | {method} | {m['em_lo']:.3f}–{m['em_hi']:.3f} | "
                  f"{m['p_truth_lo']:.3f}–{m['p_truth_hi']:.3f} | {m['freq']:.3f} | "
                  f"{m['first_draw_s']:.2f} | {m['per_draw_ms']:.3f} | "
                  f"{m['first_draw_s'] / t_top:.2f} |")


if __name__ == "__main__":
    main()
