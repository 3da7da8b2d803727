"""Permute-and-flip against the exponential mechanism (issue 19, items 1 and 4).

Seed 002's regression design (``make_bss_regression``: p = 100, s = 5, SNR 5), bounds
``b_x = b_y = 0.5``, ε = 1, the package's default score (ridge/radius derived from the
bounds), both neighbour notions.  Per cell (ρ, n, data set, notion):

* ``EM law`` / ``PF law``: P(release = truth) of each mechanism restricted to the
  supports within ``--ball`` (default 3) mistakes of the truth, every one evaluated
  exactly (about 1.4 million at p = 100): the EM by its normaliser, permute-and-flip by the
  one-dimensional integral ``mipdp.mechanisms.permute_flip.pf_log_probability_bounds``.
  Leaving the farther supports out can only raise either probability, so each is an
  upper bound on the full mechanism's; the farther supports weigh little here.
* ``EM cert`` / ``PF cert``: the full mechanism's certified bounds from the sampler run
  (``result.probability_bounds(truth)``).
* ``EM freq`` / ``PF freq``: frequency of the truth over ``1 + --draws`` draws of the
  real samplers (``private_bss`` with one draw, then ``--draws`` further draws of the
  same mechanism).
* times: the first draw is the whole ``private_bss`` call (envelope included); a further
  draw is ``result.mechanism.sample`` divided by the number of draws.

``--timing`` instead times the first draw of both methods at p = 100, 1000, 10 000 (seed
002's design, ρ = 0.1, n = ``--timing-n``), and prints the ratio PF / EM measured in the
same run.

    python -m experiments.studies.bench_permute_flip --trials 1 --draws 200
    python -m experiments.studies.bench_permute_flip --timing

Targets (issue 19): PF >= EM in every cell and >= EM + 0.06 at n = 1000 (ρ = 0.1); first
draw within 2x the EM's at p = 100, 1000, 10 000.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from scipy.special import logsumexp

from mipdp import private_bss
from mipdp.datasets import make_bss_regression
from mipdp.experiments.metrics import SupportLoss
from mipdp.mechanisms.permute_flip import pf_log_probability_bounds
from mipdp.mechanisms.regions import Region, region_members
from mipdp.selection import neighbour_scale_factor

B, S, P, EPS = 0.5, 5, 100, 1.0
NS = (500, 1000, 1500, 2000, 3000)
NOTIONS = ("replace_one", "add_remove")


def ball_values(sl: SupportLoss, truth: np.ndarray, p: int, ball: int) -> np.ndarray:
    """``L(S) - L(truth)`` for every support within ``ball`` mistakes (truth first)."""
    LT = float(sl.objective.values(truth[None])[0])
    out = []
    for k in range(ball + 1):
        for rows in region_members(Region(truth, k, p)):
            out.append(sl.objective.values(rows) - LT)
    return np.concatenate(out)


def ball_laws(d: np.ndarray, coef: float) -> tuple[float, float]:
    """EM and PF P(truth) over the ball (``d[0] = 0`` is the truth)."""
    q = -coef * d
    em = math.exp(-float(logsumexp(q)))
    lo, hi = pf_log_probability_bounds(0.0, q[1:], grid=800)
    return em, 0.5 * (math.exp(lo) + math.exp(hi))


def one_method(X, y, truth, method, notion, draws, seed):
    t0 = time.perf_counter()
    res = private_bss(X, y, S, EPS, bounds=(B, B), method=method, neighbours=notion,
                      random_state=seed)
    first = time.perf_counter() - t0
    hits = int(np.array_equal(res.support, truth))
    further = float("nan")
    if draws:
        t1 = time.perf_counter()
        more = res.mechanism.sample(np.random.default_rng(seed + 1), draws)
        further = (time.perf_counter() - t1) / draws
        hits += int(sum(np.array_equal(np.sort(m), truth) for m in more))
    lo, hi = res.probability_bounds(truth)
    return {"freq": hits / (1 + draws), "cert": (lo, hi), "first": first, "further": further}


def utility(rhos, ns, trials, draws, ball, laws_only=False):
    rows = []
    for rho in rhos:
        for n in ns:
            for trial in trials:
                X, y, truth = make_bss_regression(n=n, p=P, s=S, rho=rho, random_state=trial)
                sl = SupportLoss(X, y, S, bounds=(B, B))
                t0 = time.perf_counter()
                d = ball_values(sl, truth, P, ball)
                t_ball = time.perf_counter() - t0
                for notion in NOTIONS:
                    delta = neighbour_scale_factor("exponential", notion) * \
                        sl.loss.sensitivity(n, S, B, B)
                    em_law, pf_law = ball_laws(d, EPS / (2 * delta))
                    if laws_only:   # no sampler runs (their columns are NaN)
                        em = pf = {"freq": math.nan, "cert": (math.nan, math.nan),
                                   "first": math.nan, "further": math.nan}
                    else:
                        em = one_method(X, y, truth, "exponential", notion, draws, 10 * trial)
                        pf = one_method(X, y, truth, "permute_and_flip", notion, draws,
                                        10 * trial)
                    row = dict(rho=rho, n=n, trial=trial, notion=notion, em_law=em_law,
                               pf_law=pf_law, em=em, pf=pf, t_ball=t_ball)
                    rows.append(row)
                    print(f"rho={rho:g} n={n} trial={trial} {notion}: law EM {em_law:.3f} "
                          f"PF {pf_law:.3f} (diff {pf_law - em_law:+.3f}); freq EM "
                          f"{em['freq']:.3f} PF {pf['freq']:.3f}; cert EM "
                          f"{em['cert'][0]:.3f}-{em['cert'][1]:.3f} PF "
                          f"{pf['cert'][0]:.3f}-{pf['cert'][1]:.3f}; first draw EM "
                          f"{em['first']:.2f}s PF {pf['first']:.2f}s; further EM "
                          f"{1e3 * em['further']:.3f}ms PF {1e3 * pf['further']:.3f}ms", flush=True)
    print()
    print(f"| ρ | n | neighbours | EM P(truth), {ball}-ball law | PF P(truth), {ball}-ball law | "
          "PF − EM | EM freq | PF freq | EM certified | PF certified | first draw EM / PF (s) | "
          "further draw EM / PF (ms) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        em, pf = r["em"], r["pf"]
        if math.isnan(em["first"]):      # laws only: no sampler columns
            runs = ["—"] * 6
        else:
            runs = [f"{em['freq']:.3f}", f"{pf['freq']:.3f}",
                    f"{em['cert'][0]:.3f}–{em['cert'][1]:.3f}",
                    f"{pf['cert'][0]:.3f}–{pf['cert'][1]:.3f}",
                    f"{em['first']:.2f} / {pf['first']:.2f}",
                    f"{1e3 * em['further']:.3f} / {1e3 * pf['further']:.3f}"]
        print(f"| {r['rho']:g} | {r['n']} | {r['notion']} | {r['em_law']:.3f} | "
              f"{r['pf_law']:.3f} | {r['pf_law'] - r['em_law']:+.3f} | " + " | ".join(runs)
              + " |")
    return rows


def _p(p: int) -> str:
    return f"{p:,}".replace(",", " ") if p >= 10_000 else str(p)


def timing(ps, n, trials):
    many = len(trials) > 1
    print("| p | n | " + ("data set | " if many else "") + "EM first draw (s) | "
          "PF first draw (s) | PF / EM |")
    print("|---|---|" + ("---|" if many else "") + "---|---|---|")
    for p in ps:
        for trial in trials:
            X, y, truth = make_bss_regression(n=n, p=p, s=S, random_state=trial)
            t = {}
            for method in ("exponential", "permute_and_flip"):
                t0 = time.perf_counter()
                private_bss(X, y, S, EPS, bounds=(B, B), method=method, random_state=trial)
                t[method] = time.perf_counter() - t0
            print(f"| {_p(p)} | {n} | " + (f"{trial} | " if many else "")
                  + f"{t['exponential']:.2f} | {t['permute_and_flip']:.2f} | "
                  f"{t['permute_and_flip'] / t['exponential']:.2f} |", flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rho", type=float, nargs="+", default=[0.1, 0.7])
    ap.add_argument("--n", type=int, nargs="+", default=list(NS))
    ap.add_argument("--trials", type=int, default=1)
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--ball", type=int, default=3)
    ap.add_argument("--timing", action="store_true")
    ap.add_argument("--laws-only", action="store_true",
                    help="only the ball laws (no sampler runs: quick)")
    ap.add_argument("--timing-p", type=int, nargs="+", default=[100, 1000, 10000])
    ap.add_argument("--timing-n", type=int, default=6000)
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    if a.timing:
        timing(a.timing_p, a.timing_n, range(a.trials))
    else:
        utility(a.rho, a.n, range(a.trials), a.draws, a.ball, a.laws_only)
    print(f"\n{time.perf_counter() - t0:.0f} s (shared 2-core machine)")


if __name__ == "__main__":
    main()
