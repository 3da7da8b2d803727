"""Private clipping ranges vs known numeric bounds: P(release = truth) and cost in p.

Seed 002's design (``make_bss_regression``: p = 100, s = 5, ρ = 0.1, SNR 5), ε = 1, the
exponential mechanism with the default score, on the **raw** data (standard Gaussian
columns, y in its own units: nothing pre-scaled into [−½, ½]).  Columns:

* ``b=0.5``: the seed's numeric bounds ``(0.5, 0.5)`` (clips the raw data hard);
* ``oracle IQR``: numeric bounds from the design's population quartiles, ``b_x = 0.674``,
  ``b_y = 0.674 sd(y)`` with ``sd(y)`` the population value (computed on an independent
  sample: public) — what the private ranges estimate;
* ``private f``: ``bounds=PrivateBounds(fraction=f)`` (ranges released with ``f ε``, the
  selection on ``(1 − f) ε``), defaults: quartiles, widen 1, one shared range for X.

A release that does not finish within ``--time-limit`` seconds (noisy ranges flatten the
objective and the MIP certifying its optimum slows down) counts as P(truth) = 0 and is
reported as a failure.  So does a ``ValueError("set_variable_bounds: lb > ub")`` raised by
the enumeration on nearly constant mapped data (ranges far off at small ``n ε``; an
enumeration issue reproducible with numeric bounds on the same mapped data, reported
separately).

For each cell: P(one draw = truth), the mean over ``--datasets`` data sets × ``--reps``
releases (new ranges each) of the certified probability of the truth given the ranges
(``result.probability_bounds(truth)``; the midpoint, the bounds' gap is printed).  Then the
cost of the ranges stage alone at p = 100 and p = 10⁴ (n = 3000), and of one whole release at
``--p-big`` with numeric vs private bounds (a ratio measured in the same run).

    python -m experiments.studies.bench_private_bounds
    python -m experiments.studies.bench_private_bounds --n 1000 2000 4000 \
        --fractions 0.05 0.1 0.2
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from mipdp import private_bss
from mipdp.datasets import make_bss_regression
from mipdp.exceptions import TimeLimitError
from mipdp.private_ranges import PrivateBounds, estimate_ranges


def population_sd_y(p: int, s: int) -> float:
    _, y, _ = make_bss_regression(n=200_000, p=p, s=s, random_state=12345)
    return float(np.std(y))


def p_truth(X, y, truth, s, eps, bounds, seed, time_limit):
    try:
        res = private_bss(X, y, s, eps, bounds=bounds, random_state=seed, time_limit=time_limit)
    except (TimeLimitError, ValueError) as exc:    # ValueError: see the module docstring
        print(f"    release failed: {type(exc).__name__}: {str(exc)[:120]}", flush=True)
        return 0.0, 0.0, "timed out" if isinstance(exc, TimeLimitError) else "failed"
    lo, hi = res.probability_bounds(truth)
    return 0.5 * (lo + hi), hi - lo, res


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", nargs="+", type=int, default=[1000, 2000, 4000])
    ap.add_argument("--p", type=int, default=100)
    ap.add_argument("--s", type=int, default=5)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--fractions", nargs="+", type=float, default=[0.05, 0.1, 0.2])
    ap.add_argument("--datasets", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5, help="range releases per data set")
    ap.add_argument("--p-big", type=int, default=10_000)
    ap.add_argument("--n-big", type=int, default=3000)
    ap.add_argument("--no-big", dest="big", action="store_false")
    ap.add_argument("--time-limit", type=float, default=30.0)
    a = ap.parse_args(argv)
    sd_y = population_sd_y(a.p, a.s)
    print(f"design: p={a.p}, s={a.s}, rho=0.1, eps={a.eps}; population sd(y) = {sd_y:.3f}")
    cols: list[tuple[str, Any]] = [("numeric `b = 0.5`", (0.5, 0.5)),
            ("numeric, population IQR", (0.674, 0.674 * sd_y))]
    cols += [(f"private f = {f:g}", PrivateBounds(fraction=f)) for f in a.fractions]
    rows = []
    for n in a.n:
        row = {"n": n}
        for tag, bounds in cols:
            vals, gaps, widths, t, timeouts = [], [], [], 0.0, 0
            bad = {"failed": 0, "timed out": 0}
            for d in range(a.datasets):
                X, y, truth = make_bss_regression(n=n, p=a.p, s=a.s, random_state=1000 + d)
                reps = a.reps if isinstance(bounds, PrivateBounds) else 1
                for r in range(reps):
                    t0 = time.perf_counter()
                    v, g, res = p_truth(X, y, truth, a.s, a.eps, bounds, r, a.time_limit)
                    t += time.perf_counter() - t0
                    vals.append(v)
                    gaps.append(g)
                    if isinstance(res, str):
                        timeouts += 1
                        bad[res] += 1
                        continue
                    pr = res.info.get("private_ranges")
                    if pr is not None:
                        widths.append((pr["x_range"][0, 1] - pr["x_range"][0, 0],
                                       pr["y_range"][1] - pr["y_range"][0]))
            row[tag] = float(np.mean(vals))
            row[tag + " note"] = "".join(f" ({k} of {len(vals)} {why})"
                                         for why, k in bad.items() if k)
            extra = ""
            if widths:
                w = np.array(widths)
                extra = (f"; X range width {np.median(w[:, 0]):.2f} "
                         f"[{w[:, 0].min():.2f}, {w[:, 0].max():.2f}] (IQR 1.35), "
                         f"y width {np.median(w[:, 1]):.2f} [{w[:, 1].min():.2f}, "
                         f"{w[:, 1].max():.2f}] (IQR {1.349 * sd_y:.2f})")
            print(f"n={n} {tag}: P(truth) = {row[tag]:.3f} (min {min(vals):.3f}, max "
                  f"{max(vals):.3f}, certificate gap <= {max(gaps):.1e}; {len(vals)} releases, "
                  f"{timeouts} failed, "
                  f"{t / len(vals):.2f} s each){extra}", flush=True)
        rows.append(row)
    print("\n| n | " + " | ".join(t for t, _ in cols) + " |")
    print("|---|" + "---|" * len(cols))
    for row in rows:
        print(f"| {row['n']} | " + " | ".join(f"{row[t]:.3f}{row[t + ' note']}" for t, _ in cols)
              + " |")

    # -- cost of the ranges stage in p ------------------------------------------------------------
    print("\ncost of the ranges stage alone (n = 3000; per column = shared=False):")
    for p in (100, a.p_big):
        X, y, _ = make_bss_regression(n=3000, p=p, s=a.s, random_state=7)
        for shared in (True, False):
            spec = PrivateBounds(shared=shared)
            t0 = time.perf_counter()
            rg = estimate_ranges(X, y, spec, 0.1, np.random.default_rng(0))
            dt = time.perf_counter() - t0
            w = rg.x_range[:, 1] - rg.x_range[:, 0]
            print(f"  p={p} {'shared' if shared else 'per column'}: {dt:.3f} s; X range width "
                  f"median {np.median(w):.3g}, 5-95% [{np.quantile(w, 0.05):.3g}, "
                  f"{np.quantile(w, 0.95):.3g}] (IQR 1.35)", flush=True)
    if a.big:
        X, y, truth = make_bss_regression(n=a.n_big, p=a.p_big, s=a.s, random_state=a.p_big)
        times = {}
        big: list[tuple[str, Any]] = [("b=0.5", (0.5, 0.5)), ("private 0.1", PrivateBounds())]
        for tag, bounds in big:
            t0 = time.perf_counter()
            res = private_bss(X, y, a.s, a.eps, bounds=bounds, random_state=0)
            times[tag] = time.perf_counter() - t0
            print(f"p={a.p_big} n={a.n_big} {tag}: one release {times[tag]:.1f} s (ranges "
                  f"{res.timings.get('private_ranges', 0.0):.2f} s), released = truth: "
                  f"{np.array_equal(res.support, truth)}", flush=True)
        print(f"ratio private / numeric: {times['private 0.1'] / times['b=0.5']:.2f}")


if __name__ == "__main__":
    main()
