"""The exponential mechanism under replace-one and add/remove neighbours (issue 19, item 4).

Seed 002's regression design (p = 100, s = 5, rho = 0.1, SNR = 5, bounds 0.5, eps = 1).
For every n, trial (data seed) and neighbour notion, one ``private_bss`` call
(``method="exponential"``, ``n_draws = --draws`` independent draws from one enumeration)
gives:

* ``freq``: the frequency of the true support over the draws;
* ``cert``: the certified bounds ``result.probability_bounds(truth)`` on the probability
  of the truth (from the sampler's envelope; loose where the envelope is loose);
* ``law``: the law the notion prescribes, computed independently of the sampler by
  :func:`mipdp.experiments.em_reference.em_truth_probability`: the replace-one EM
  ``exp(-ε L/(2B/n))`` at ``ε``, and the monotone add/remove EM ``exp(-ε n L / B)``,
  which is the same formula at ``2ε`` (every support within 3 mistakes of the truth
  evaluated, the rest bounded by certified class bounds: an interval ``[lo, hi]``);
* ``both``: the intersection of the two certified intervals (both bound the same
  probability; where the reference's 3-ball leaves a wide interval the sampler's envelope
  is usually tighter, and conversely);
* ``z``: the distance of ``freq`` from ``both`` in binomial standard errors
  (``sqrt(q(1-q)/draws)``, ``q`` the nearest end; 0 inside): ``|z| <= 3`` is "within
  sampling error".

    python -m experiments.studies.bench_neighbours  # default score
    python -m experiments.studies.bench_neighbours --ridge 5 --radius 0.45
    python -m experiments.studies.bench_neighbours --ridge 120 --radius 1.1

Targets (issue 19): the add/remove frequency at n = 1000 matches the monotone law within
sampling error and is >= 0.9 with the default score.
"""

from __future__ import annotations

import argparse
import csv
import math
import time

import numpy as np

from mipdp import private_bss
from mipdp.datasets import make_bss_regression
from mipdp.experiments.em_reference import em_truth_probability

B, S, P = 0.5, 5, 100
NS = (500, 1000, 1500, 2000, 3000)
NOTIONS = ("replace_one", "add_remove")


def _z(freq: float, lo: float, hi: float, draws: int) -> float:
    if lo <= freq <= hi:
        return 0.0
    q = lo if freq < lo else hi
    se = math.sqrt(max(q * (1 - q), 1.0 / draws) / draws)
    return (freq - q) / se


def run(n: int, trial: int, draws: int, eps: float, ridge, radius, ball: int) -> list[dict]:
    X, y, truth = make_bss_regression(n=n, p=P, s=S, random_state=trial)
    out = []
    for notion in NOTIONS:
        law_eps = eps if notion == "replace_one" else 2.0 * eps   # monotone: exponent doubled
        ref = em_truth_probability(X, y, truth, law_eps, s=S, ball=ball, bounds=(B, B),
                                   ridge=ridge, radius=radius)
        t0 = time.perf_counter()
        res = private_bss(X, y, S, eps, bounds=(B, B), ridge=ridge, radius=radius,
                          neighbours=notion, n_draws=draws, random_state=trial)
        secs = time.perf_counter() - t0
        freq = float(np.mean([np.array_equal(d, truth) for d in res.supports]))
        lo, hi = res.probability_bounds(truth)
        both_lo, both_hi = max(lo, ref["lo"]), min(hi, ref["hi"])
        row = {"n": n, "trial": trial, "neighbours": notion, "ridge": res.info["ridge"],
               "radius": res.info["radius"], "law_lo": ref["lo"], "law_hi": ref["hi"],
               "cert_lo": lo, "cert_hi": hi, "both_lo": both_lo, "both_hi": both_hi,
               "freq": freq, "draws": draws,
               "z": _z(freq, both_lo, both_hi, draws), "seconds": secs}
        out.append(row)
        print(f"n={n:5d} trial={trial} {notion:11s} law [{ref['lo']:.3f}, {ref['hi']:.3f}] "
              f"certified [{lo:.3f}, {hi:.3f}] frequency {freq:.3f} (z {row['z']:+.2f}) "
              f"{secs:.2f} s", flush=True)
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, nargs="+", default=list(NS))
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--draws", type=int, default=400)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--ridge", type=float, help="default: the package's default score")
    ap.add_argument("--radius", type=float, help="default: the package's default score")
    ap.add_argument("--ball", type=int, default=3, help="mistake ball evaluated exactly")
    ap.add_argument("--csv", help="write every row to this CSV file")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    rows = []
    for n in args.n:
        for trial in range(args.trials):
            rows += run(n, trial, args.draws, args.eps, args.ridge, args.radius, args.ball)
    if args.csv:
        with open(args.csv, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
    r0 = rows[0]
    print(f"\nridge {r0['ridge']:g}, radius {r0['radius']:.3g}, eps {args.eps:g}, "
          f"{args.trials} trial(s), {args.draws} draws each; mean over trials; "
          f"max |z| over trials; total {time.perf_counter() - t0:.0f} s")
    print("| n | neighbours | law P(truth), reference | certified bounds, sampler | "
          "intersection | frequency | max abs z | time (s) |")
    print("|---|---|---|---|---|---|---|---|")
    for n in args.n:
        for notion in NOTIONS:
            rs = [r for r in rows if r["n"] == n and r["neighbours"] == notion]
            m = {k: np.mean([r[k] for r in rs]) for k in ("law_lo", "law_hi", "cert_lo",
                                                           "cert_hi", "both_lo", "both_hi",
                                                           "freq", "seconds")}
            zmax = max(abs(r["z"]) for r in rs)
            print(f"| {n} | {notion} | {m['law_lo']:.3f}–{m['law_hi']:.3f} | "
                  f"{m['cert_lo']:.3f}–{m['cert_hi']:.3f} | "
                  f"{m['both_lo']:.3f}–{m['both_hi']:.3f} | {m['freq']:.3f} | {zmax:.2f} | "
                  f"{m['seconds']:.2f} |")


if __name__ == "__main__":
    main()
