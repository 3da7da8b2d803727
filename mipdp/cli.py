"""Command line: ``mipdp demo``, ``mipdp backends``."""

from __future__ import annotations

import argparse
import logging
import sys
import warnings

import numpy as np

__all__ = ["main"]


def _demo(args: argparse.Namespace) -> int:
    from .datasets import make_bss_classification, make_bss_regression
    from .exceptions import ConditionalPrivacyWarning
    from .selection import private_bss

    make = make_bss_classification if args.loss == "hinge" else make_bss_regression
    X, y, truth = make(n=args.n, p=args.p, s=args.s, random_state=args.seed)
    bounds = (args.bound, None if args.loss == "hinge" else args.bound)
    print(f"seed 002 synthetic data: n={args.n}, p={args.p}, s={args.s}, rho=0.1, SNR=5, "
          f"loss={args.loss}, eps={args.eps}, bounds={bounds}, backend={args.backend}")
    print(f"true support: {truth.tolist()}")
    for method in args.methods:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConditionalPrivacyWarning)
            res = private_bss(X, y, args.s, args.eps, bounds=bounds, loss=args.loss,
                              ridge=args.ridge, radius=args.radius, method=method,
                              backend=args.backend, n_draws=args.draws,
                              random_state=args.seed)
        hits = np.mean([np.array_equal(S, truth) for S in res.supports])
        phases = ", ".join(f"{k} {v:.2f}s" for k, v in res.timings.items())
        print(f"\n[{method}] released support: {res.support.tolist()}  "
              f"equals truth: {bool(np.array_equal(res.support, truth))}"
              + (f"  (exact recovery in {hits:.0%} of {args.draws} draws)" if args.draws > 1 else ""))
        print(f"  non-private optimum: {res.candidates[0].tolist()}  "
              f"(certified: {res.stats['certified']}, gap {res.stats['optimality_gap']:.1e}, "
              f"{res.stats['n_cuts']} cuts, {res.stats['n_nogoods']} no-goods)")
        print(f"  guarantee: {res.guarantee}")
        print(f"  time: {phases}")
    return 0


def _backends(args: argparse.Namespace) -> int:
    from solvers import BACKENDS, available_backends
    have = available_backends()
    for name, (_, _, pkg, extra) in BACKENDS.items():
        print(f"{name:8s} {'installed' if name in have else 'missing  '}  (package {pkg}; "
              f"pip install {extra})")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``mipdp`` command."""
    parser = argparse.ArgumentParser(prog="mipdp", description=__doc__)
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run both samplers on seed 002's synthetic data")
    demo.add_argument("--n", type=int, default=3000)
    demo.add_argument("--p", type=int, default=100)
    demo.add_argument("--s", type=int, default=5)
    demo.add_argument("--eps", type=float, default=1.0)
    demo.add_argument("--loss", default="least_squares", choices=["least_squares", "hinge", "huber"])
    demo.add_argument("--ridge", type=float, default=120.0)
    demo.add_argument("--radius", type=float, default=1.1)
    demo.add_argument("--bound", type=float, default=0.5, help="clipping bound for X and y")
    demo.add_argument("--backend", default="highs")
    demo.add_argument("--methods", nargs="+", default=["top_r", "mistakes"])
    demo.add_argument("--draws", type=int, default=1)
    demo.add_argument("--seed", type=int, default=0)
    demo.set_defaults(func=_demo)
    back = sub.add_parser("backends", help="list the MIP backends and whether they are installed")
    back.set_defaults(func=_backends)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``mipdp`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
