"""Does the DP-SIS pre-screen keep the truth at p = 10⁵–10⁶?  (no MIP; the screen alone)

On one data set of seed 002's design (``make_bss_regression``-like, s = 5, ρ = 0.1, true
support {1, 3, 5, 7, 9}), in memory or as a float32 ``.npy`` memmap written by
``experiments/bench_scale.py --memmap DIR --keep-memmap`` (``X_{n}x{p}.npy`` with its
``.y.npy``), computes the DP-SIS scores ``|clip(X)ᵀ clip(y)|`` once (b_x = b_y = 0.5,
one chunked pass: :class:`mipdp.data.ClippedDesign`), then draws the pre-screen's private
top-k (:func:`mipdp.mechanisms.topk.canonical_lipschitz_topk`, γ = 0, sensitivity
``2 b_x b_y`` under replace-one: what ``private_bss(..., prescreen=("dp_sis", k, f))``
runs with ``f·ε``) ``--reps`` times per ``(ε_screen, k)`` and prints P(truth ⊂ top-k),
beside the heuristic of docs/screening.md §7: the screen keeps the truth when
``ε_screen·(min true − max null)/2`` (scores in units of the sensitivity) clears
``log(C(p, k)/C(p − s, k − s))``.

    python -m experiments.studies.prescreen_large_p --memmap /tmp/bench/X_2000x1000000.npy
    python -m experiments.studies.prescreen_large_p --p 100000 --n 2000
    python -m experiments.studies.prescreen_large_p --memmap /tmp/bench/X_2000x1000000.npy \
        --eps-screen 0.6 --k 20 --pipeline 20 0.6 --pipeline 10 0.8 --reps 20

With ``--pipeline K F`` the whole release ``private_bss(..., prescreen=("dp_sis", K, F))``
runs ``--reps`` times (``random_state`` = seed + r): the share of releases whose
candidates hold the truth, the share equal to the truth, and the mean of the exact
conditional probability of the truth given the candidates (the exponential mechanism's law
over the ``C(K, 5)`` candidate supports; 0 when the truth was screened out), whose mean
estimates P(release = truth) with less noise than the frequency.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memmap", help="float32 .npy file of X (its y in FILE.y.npy)")
    ap.add_argument("--p", type=int, default=100_000)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--eps-screen", type=float, nargs="+", default=[0.2, 0.4, 0.6, 0.8])
    ap.add_argument("--k", type=int, nargs="+", default=[10, 20, 50, 200])
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--pipeline", nargs=2, action="append", default=[], metavar=("K", "F"),
                    help="also run private_bss(X, y, 5, 1, prescreen=('dp_sis', K, F)) --reps "
                    "times (repeatable): truth kept, frequency of the truth, and the mean of "
                    "its exact probability given the candidates")
    a = ap.parse_args(argv)

    from mipdp.data import ClippedDesign
    from mipdp.mechanisms.topk import canonical_lipschitz_topk

    t0 = time.perf_counter()
    if a.memmap:
        X = np.load(a.memmap, mmap_mode="r")
        y = np.load(a.memmap + ".y.npy")
    else:
        from mipdp.datasets import make_bss_regression
        X, y, _ = make_bss_regression(n=a.n, p=a.p, s=5, rho=0.1, random_state=a.p)
    truth = np.arange(1, 10, 2)
    n, p = X.shape
    bx = by = 0.5
    sens = 2 * bx * by
    scores = np.abs(ClippedDesign(X, bx).rmatvec(np.clip(y, -by, by)))
    t_scores = time.perf_counter() - t0
    head = scores[truth] / sens
    null = np.delete(scores, truth) / sens
    print(f"# n={n} p={p}: scores in {t_scores:.1f} s; true scores / Δ "
          f"{np.round(np.sort(head), 1).tolist()}, largest null {null.max():.1f}, "
          f"gap x_(s) − x_(s+1) = {head.min() - null.max():.1f}; top-5 = truth: "
          f"{bool(np.array_equal(np.sort(np.argsort(scores)[-5:]), truth))}")
    rng = np.random.default_rng(a.seed)
    print("eps_screen     k   P(truth ⊂ top-k)   heuristic margin   time/draw (s)")
    for e in a.eps_screen:
        for k in a.k:
            count = (math.lgamma(p + 1) - math.lgamma(k + 1) - math.lgamma(p - k + 1)
                     - math.lgamma(p - 5 + 1) + math.lgamma(k - 5 + 1)
                     + math.lgamma(p - k + 1))
            margin = e * (head.min() - null.max()) / 2 - count
            t = time.perf_counter()
            hits = [bool(np.isin(truth, canonical_lipschitz_topk(scores, k, e, sens, rng,
                                                                gamma=0.0)).all())
                    for _ in range(a.reps)]
            dt = (time.perf_counter() - t) / a.reps
            print(f"{e:10.2f} {k:5d}   {np.mean(hits):16.2f}   {margin:16.1f}   {dt:10.2f}",
                  flush=True)
    if a.pipeline:
        import warnings

        from mipdp import private_bss
        print("\nprivate_bss(X, y, 5, eps=1, bounds=(0.5, 0.5), prescreen=('dp_sis', k, f)), "
              f"{a.reps} independent releases")
        print("    k     f   truth kept   release = truth   mean P(truth | candidates)   "
              "time/release (s)")
        for k, f in a.pipeline:
            k, f = int(k), float(f)
            kept, hit, prob, times = [], [], [], []
            for r in range(a.reps):
                t = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = private_bss(X, y, 5, 1.0, bounds=(bx, by),
                                      prescreen=("dp_sis", k, f), random_state=a.seed + r)
                times.append(time.perf_counter() - t)
                cols = np.asarray(res.info["prescreen"]["columns"])
                kept.append(bool(np.isin(truth, cols).all()))
                hit.append(bool(np.array_equal(np.sort(res.support), truth)))
                prob.append(res.probability_bounds(truth)[0] if kept[-1] else 0.0)
            print(f"{k:5d} {f:5.2f}   {np.mean(kept):10.2f}   {np.mean(hit):15.2f}   "
                  f"{np.mean(prob):26.3f}   {np.mean(times):16.1f}", flush=True)


if __name__ == "__main__":
    main()
