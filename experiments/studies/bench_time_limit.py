"""How far past ``time_limit`` does a release raise?  (issue 20, finding 2)

For each size and limit, run :func:`mipdp.private_bss` (least squares, the default
exponential mechanism, HiGHS) with ``time_limit`` and report the wall time until the
:class:`~mipdp.exceptions.TimeLimitError` (or the release, when it finishes in time), the
overshoot past the limit, its ratio to the limit, the phase named in the message, and
whether the target ``overshoot <= max(1 s, 10 % of the limit)`` holds.  The baseline is the
limit itself, in the same run.

Usage::

    python -m experiments.studies.bench_time_limit  # n = 3000, p = 20 000; limits 3, 10
    python -m experiments.studies.bench_time_limit --n 1000 --p 5000 --limits 1 3

Timings depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import time

from mipdp import TimeLimitError, private_bss
from mipdp.datasets import make_bss_regression


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--p", type=int, default=20_000)
    ap.add_argument("--s", type=int, default=5)
    ap.add_argument("--limits", type=float, nargs="+", default=[3.0, 10.0])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    X, y, _ = make_bss_regression(n=args.n, p=args.p, s=args.s, random_state=args.seed)
    print(f"n = {args.n}, p = {args.p}, s = {args.s}; least squares, exponential, HiGHS")
    print(f"{'limit':>7} {'wall':>7} {'over':>7} {'over/limit':>10} {'target':>7}  outcome")
    for limit in args.limits:
        t0 = time.perf_counter()
        try:
            private_bss(X, y, args.s, 1.0, bounds=0.5, time_limit=limit,
                        random_state=args.seed)
            outcome = "released in time"
        except TimeLimitError as exc:
            outcome = f"TimeLimitError ({getattr(exc, 'phase', '?')}): {exc}"
        wall = time.perf_counter() - t0
        over = max(0.0, wall - limit)
        ok = over <= max(1.0, 0.1 * limit)
        print(f"{limit:7.1f} {wall:7.2f} {over:7.2f} {over / limit:10.3f} "
              f"{'met' if ok else 'MISSED':>7}  {outcome}", flush=True)


if __name__ == "__main__":
    main()
