"""Benchmark of the batched hinge and Huber support objectives against the old solvers.

For each problem, the time per support of ``SupportObjective.values`` for batches of
random supports (default sizes 1, 100 and 10 000) and for one whole one-swap
neighbourhood (``one_swap_values``), for the new code and for the solvers as they were
before the batched rewrite (``experiments/_baseline_losses.py``, a frozen copy), measured
in the same run, with their ratio.  Problems:

* ``seed002``  — seed 002's classification design (``make_bss_classification``, n = 3000,
  p = 100, s = 5, b_x = 0.5, hinge, λ = 120, r = 1.1); one-swaps of the true support.
* ``cancer``   — scikit-learn breast cancer (569 × 30, standardised, clipped to 0.5,
  hinge, λ = 1, r = 2, s = 5); one-swaps of the IHT support.
* ``digits``   — scikit-learn digits 3 vs 8 (357 × 64, pixels/16 - 0.5, hinge, λ = 1,
  r = 2, s = 5); one-swaps of the IHT support.
* ``huber``    — seed 002's regression design (``make_bss_regression``, n = 3000,
  p = 100, s = 5, b_x = b_y = 0.5, Huber δ = 1, λ = 120, r = 1.1).

The old code is slow on large batches, so it is timed on the first ``--old-max``
supports of each batch (the table says on how many); both times are per support, the
best of ``--repeats`` runs, old and new interleaved so that both see the same load.
Every new value is certified (``P - D <= 1e-12 max(1, P)``); the table also shows the
largest difference to the old values on the common supports.

    python experiments/bench_losses.py
    python experiments/bench_losses.py --problems cancer digits --batches 1 100 --old-max 100

Target (issue 11): >= 10x faster per support on batches of >= 100 supports.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _baseline_losses import BaselineHinge, BaselineHuber  # noqa: E402

from mipdp._validation import clip_data  # noqa: E402
from mipdp.datasets import make_bss_classification, make_bss_regression  # noqa: E402
from mipdp.enumeration.warm_start import iht_support  # noqa: E402
from mipdp.losses import Hinge, Huber  # noqa: E402


def problem(name: str):
    """``(X, y, new_loss, old_loss, centre, s)`` of a named problem."""
    s = 5
    if name == "seed002":
        X, y, truth = make_bss_classification(n=3000, p=100, s=s, random_state=0)
        X, _ = clip_data(X, None, 0.5, None)
        return X, y, Hinge(120.0, 1.1), BaselineHinge(120.0, 1.1), np.sort(truth), s
    if name == "huber":
        X, y, truth = make_bss_regression(n=3000, p=100, s=s, random_state=0)
        X, y = clip_data(X, y, 0.5, 0.5)
        return X, y, Huber(120.0, 1.1, 1.0), BaselineHuber(120.0, 1.1, 1.0), np.sort(truth), s
    from sklearn.datasets import load_breast_cancer, load_digits
    if name == "cancer":
        d = load_breast_cancer()
        X = (d.data - d.data.mean(axis=0)) / d.data.std(axis=0)
        X, _ = clip_data(X, None, 0.5, None)
        y = np.where(d.target == 1, 1.0, -1.0)
    elif name == "digits":
        d = load_digits()
        keep = np.isin(d.target, (3, 8))
        X = d.data[keep] / 16.0 - 0.5
        y = np.where(d.target[keep] == 3, 1.0, -1.0)
    else:
        raise ValueError(f"unknown problem {name!r}")
    centre = np.sort(iht_support(X, y, s, 1.0))
    return X, y, Hinge(1.0, 2.0), BaselineHinge(1.0, 2.0), centre, s


def random_supports(rng: np.random.Generator, m: int, p: int, s: int) -> np.ndarray:
    return np.sort(np.argsort(rng.random((m, p)), axis=1)[:, :s], axis=1)


def one_swaps(centre: np.ndarray, p: int) -> np.ndarray:
    outside = np.setdiff1d(np.arange(p), centre)
    rows = [np.sort(np.r_[np.delete(centre, a), j]) for a in range(centre.size) for j in outside]
    return np.array(rows, dtype=np.intp)


def per_support(obj, supports: np.ndarray, single: bool) -> tuple[float, np.ndarray]:
    """Seconds per support and the values (``single``: one call per support)."""
    t0 = time.perf_counter()
    if single:
        vals = np.concatenate([obj.values(S[None]) for S in supports])
    else:
        vals = obj.values(supports)
    return (time.perf_counter() - t0) / supports.shape[0], vals


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", nargs="+", default=["seed002", "cancer", "digits", "huber"])
    ap.add_argument("--batches", type=int, nargs="+", default=[1, 100, 10_000])
    ap.add_argument("--singles", type=int, default=20,
                    help="supports timed one call each for the batch size 1")
    ap.add_argument("--old-max", type=int, default=500,
                    help="time the old code on at most this many supports of each batch")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1,
                    help="BLAS threads for both codes (threadpoolctl); 1 keeps timings stable "
                         "on a shared machine")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    logging.getLogger("baseline_losses").setLevel(logging.ERROR)  # the old fallback's warnings
    from threadpoolctl import threadpool_limits
    with threadpool_limits(limits=args.threads):
        run(args)


def run(args) -> None:
    header = (f"{'problem':8} {'batch':>14} {'new ms/supp':>12} {'old ms/supp':>12} "
              f"{'old/new':>8} {'old on':>7} {'max|new-old|':>13} {'max gap':>9}")
    print(header)
    print("-" * len(header))
    for name in args.problems:
        X, y, new_loss, old_loss, centre, s = problem(name)
        p = X.shape[1]
        new = new_loss.bind(X, y)
        new.values(centre[None])  # one-time caches (Gram matrix, transposed data)
        rng = np.random.default_rng(args.seed)
        jobs = [(f"{b}", random_supports(rng, args.singles if b == 1 else b, p, s), b == 1)
                for b in args.batches]
        jobs.append((f"one-swap {s * (p - s)}", one_swaps(centre, p), False))
        for label, sup, single in jobs:
            old = old_loss.bind(X, y)
            k = min(sup.shape[0], args.old_max)
            t_new = t_old = np.inf
            for _ in range(args.repeats):
                tn, v_new = per_support(new, sup, single)
                to, v_old = per_support(old, sup[:k], single)
                t_new, t_old = min(t_new, tn), min(t_old, to)
            _, lower, _, _ = new.solve(sup[: args.old_max])
            gap = float(np.max(v_new[: args.old_max] - lower))
            diff = float(np.max(np.abs(v_new[:k] - v_old)))
            print(f"{name:8} {label:>14} {1e3 * t_new:12.4f} {1e3 * t_old:12.4f} "
                  f"{t_old / t_new:8.1f} {k:7d} {diff:13.2e} {gap:9.1e}", flush=True)


if __name__ == "__main__":
    main()
