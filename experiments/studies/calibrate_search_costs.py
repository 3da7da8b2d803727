"""Calibration of the explicit search's cost model (:mod:`mipdp.enumeration.costs`).

The explicit search of a region (:func:`mipdp.enumeration.explicit.explicit_search`)
chooses between evaluating members and taking a cut, and sizes its batches, from the
*ratio* of the cost of one cut (an evaluation with its dual, its row added to the master)
to the cost of one value in a batch.  That ratio is a deterministic function of sizes
(:func:`mipdp.enumeration.costs.search_costs`); this script measures both costs on seed
002's design for a grid of sizes and losses and prints them beside the model's
prediction::

    python -m experiments.studies.calibrate_search_costs

For every case: an enumerator is built (HiGHS master, no exhaustive table), its warm start
run, and the members of the class-2 region around the centre are used as supports (the
ones an explicit search evaluates).  ``t_val`` is the time per support of
``objective.values`` on batches of 256 (after one batch to warm the Gram columns), the
median of 5 batches; ``t_cut`` the median time of ``_evaluate_cut(S, add_to_master=True)``
on 9 members not cut before.  Figures depend on the machine and its load: run on a quiet
machine, they set the constants of :mod:`mipdp.enumeration.costs` once; the search never
reads a clock.  Every figure is computed from the data without noise: **not private**.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np

__all__ = ["main", "measure"]


def measure(loss_name: str, n: int, p: int, s: int = 5, seed: int = 0) -> dict:
    """Measured ``t_val``, ``t_cut`` (seconds) and the model's, for one case."""
    from mipdp.datasets import make_bss_regression
    from mipdp.enumeration import SupportEnumerator
    from mipdp.enumeration.costs import search_costs
    from mipdp.enumeration.explicit import RegionTable
    from mipdp.losses import Hinge, Huber, LeastSquares
    from mipdp.mechanisms.regions import Region

    X, y, _ = make_bss_regression(n, p, s, rho=0.5, random_state=seed)
    X = np.clip(X, -0.5, 0.5)
    y = np.clip(y, -0.5, 0.5)
    if loss_name == "hinge":
        y = np.where(y > 0, 1.0, -1.0)
    loss = {"least_squares": LeastSquares(), "huber": Huber(),
            "hinge": Hinge()}[loss_name].resolve(s, 0.5, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        obj = loss.bind(X, y)
        scale = loss.sensitivity(n, s, 0.5, 0.5)
        enum = SupportEnumerator(obj, s, scale=scale, backend="highs", exhaustive_max=0)
        center, _ = enum.warm_center()
        region = Region(center, 2, p)
        table = RegionTable(region)
        rng = np.random.default_rng(seed)
        idx = rng.choice(table.size, size=min(table.size, 6 * 256 + 10), replace=False)
        rows = table.rows((idx // table.nA).astype(np.int32), (idx % table.nA).astype(np.int32))
        obj.values(rows[:256])
        vals = []
        for b in range(1, 6):
            part = rows[256 * b:256 * (b + 1)]
            t0 = time.perf_counter()
            obj.values(part)
            vals.append((time.perf_counter() - t0) / max(1, part.shape[0]))
        cuts = []
        for S in rows[-9:]:
            t0 = time.perf_counter()
            enum._evaluate_cut(S, add_to_master=True)
            cuts.append(time.perf_counter() - t0)
    model = search_costs(enum, region)
    return {"loss": loss_name, "n": n, "p": p, "s": s, "t_val": statistics.median(vals),
            "t_cut": statistics.median(cuts), "model_val": model.value, "model_cut": model.cut}


CASES = [("least_squares", 30, 1000), ("least_squares", 300, 100),
         ("least_squares", 300, 1000), ("least_squares", 3000, 100),
         ("least_squares", 1000, 1000), ("least_squares", 3000, 1000),
         ("least_squares", 3000, 10_000),
         ("huber", 100, 100), ("huber", 300, 100), ("huber", 1000, 200),
         ("huber", 3000, 1000), ("hinge", 300, 100), ("hinge", 1000, 200),
         ("hinge", 3000, 1000)]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--s", type=int, default=5)
    ap.add_argument("--cases", nargs="*", type=int, default=None,
                    help="indices into CASES (default: all)")
    args = ap.parse_args(argv)
    print(f"{'loss':14s} {'n':>5s} {'p':>6s} {'t_val µs':>9s} {'model':>8s} "
          f"{'t_cut ms':>9s} {'model':>8s} {'ratio':>7s} {'model':>7s}")
    for i, (loss, n, p) in enumerate(CASES):
        if args.cases is not None and i not in args.cases:
            continue
        r = measure(loss, n, p, args.s)
        print(f"{loss:14s} {n:5d} {p:6d} {1e6 * r['t_val']:9.2f} {1e6 * r['model_val']:8.2f} "
              f"{1e3 * r['t_cut']:9.3f} {1e3 * r['model_cut']:8.3f} "
              f"{r['t_cut'] / r['t_val']:7.0f} {r['model_cut'] / r['model_val']:7.0f}",
              flush=True)


if __name__ == "__main__":
    main()
