"""``mipdp demo`` and ``mipdp backends``.

Part of :mod:`mipdp.cli`.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

from .progress import _overall_bar, _progress_bar

#: plain-words meaning of the demo's diagnostic lines (printed once, at the end)
DEMO_LEGEND = """\
what the lines mean:
  equals truth / truth in k of N draws: whether the released support is the true one.
    Each draw is a separate private release; N draws together spend N times eps.
  P(one draw = truth): the mechanism's exact probability of releasing the truth on this
    data (or certified lower and upper bounds on it).  It is computed from the data, so
    it is not private: a diagnostic for this demo, never something to publish.
  time: seconds per phase of the search that certifies the mechanism's scores (not
    private: the work each phase does depends on the data):
    exhaustive: every support evaluated directly (small problems);
    warm_start / warm_cuts: a first good support and the first linear bounds (cuts);
    optimum: the best support; class_k: the supports that differ from the best one in
    exactly k features (k "mistakes"); top_r: the R best supports; sampling: the draws.
  cuts: linear lower bounds on the objective added to the mixed-integer program.
  no-goods: constraints that exclude supports the search has already listed.
  proposals / accepted: the exponential mechanism is sampled by rejection; a proposal
    is a support drawn from an upper envelope of the weights, accepted with probability
    (weight / envelope).  Few proposals per accepted draw = a tight envelope.
  clipping: the demo clips X and y to |.| <= --bound (0.5) on purpose: the paper's design
    has standard-normal columns, so most entries are clipped.  Clipping is monotone, so
    the true features still fit y best and are recovered; on your own data choose
    bounds that fit its range (docs/guide.md, section 2)."""


def _demo(args: argparse.Namespace) -> int:
    from ..datasets import make_bss_classification, make_bss_regression
    from ..exceptions import ClippingWarning, ConditionalPrivacyWarning
    from ..selection import private_bss

    make = make_bss_classification if args.loss == "hinge" else make_bss_regression
    X, y, truth = make(n=args.n, p=args.p, s=args.s, random_state=args.seed)
    bounds = (args.bound, None if args.loss == "hinge" else args.bound)
    print(f"Prastakos et al. 2025 data: n={args.n}, p={args.p}, s={args.s}, rho=0.1, SNR=5, "
          f"loss={args.loss}, eps={args.eps}, bounds={bounds}, backend={args.backend}")
    print(f"true support: {truth.tolist()}")
    rows = []
    clipped = None
    overall = _overall_bar(len(args.methods), "demo")
    for method in args.methods:
        if overall is not None:
            overall.set_description(f"demo [{method}]")
        callback, close = _progress_bar(method, position=1)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConditionalPrivacyWarning)
                warnings.simplefilter("ignore", ClippingWarning)   # explained in the legend
                res = private_bss(X, y, args.s, args.eps, bounds=bounds, loss=args.loss,
                                  ridge=args.ridge, radius=args.radius, method=method,
                                  backend=args.backend, n_draws=args.draws,
                                  random_state=args.seed,
                                  enumeration_options={"progress": callback})
        finally:
            close()
        if overall is not None:
            overall.update(1)
        clipped = res.info.get("clipped_fraction_not_private", clipped)
        n_hits = int(sum(np.array_equal(S, truth) for S in res.supports))
        phases = ", ".join(f"{k} {v:.2f}s" for k, v in res.timings.items())
        lo, hi = res.probability_bounds(truth)
        p_truth = f"{lo:.3f}" if hi - lo <= 5e-4 else f"between {lo:.3f} and {hi:.3f} (certified)"
        rows.append((method, p_truth, res.timings["total"]))
        print(f"\n[{method}] released support: {res.support.tolist()}  "
              f"equals truth: {bool(np.array_equal(res.support, truth))}"
              + (f"  (truth in {n_hits} of {args.draws} draws, {n_hits / args.draws:.0%})"
                 if args.draws > 1 else ""))
        print(f"  P(one draw = truth): {p_truth}  (not private: computed from the data)")
        print(f"  guarantee: {res.guarantee}")
        print(f"  time (not private): {phases}")
        stats = res.stats
        best = ("optimum" if stats.get("optimum_certified") in (None, True)
                else "best support found (not certified optimal)")
        print(f"  not private, for diagnostics: {best} {res.candidates[0].tolist()} "
              f"(gap {stats['optimality_gap']:.1e}), {stats['n_cuts']} cuts, "
              f"{stats['n_nogoods']} no-goods"
              + (f", {stats['sampler']['n_proposals']} proposals for "
                 f"{stats['sampler']['n_accepted']} accepted" if "sampler" in stats else ""))
    if overall is not None:
        overall.close()
    if len(rows) > 1:
        print("\nprobability that one draw releases the true support (not private), wall "
              "time (not private):")
        for method, p_truth, t in rows:
            print(f"  {method:12s} {p_truth:40s} {t:6.2f} s")
    if clipped is not None:
        y_txt = "" if clipped["y"] is None else f" and {clipped['y']:.0%} of y"
        print(f"\nclipped to the bound {args.bound:g}: {clipped['X']:.0%} of X{y_txt} "
              "(not private; see 'clipping' below)")
    print("\n" + DEMO_LEGEND)
    return 0


def _backends(args: argparse.Namespace) -> int:
    from mipdp.solvers import BACKENDS, available_backends
    have = available_backends()
    for name, (_, _, pkg, extra) in BACKENDS.items():
        if name in have:
            print(f"{name:8s} installed  (package {pkg})")
        else:
            print(f"{name:8s} missing    (package {pkg}; install with: pip install \"{extra}\")")
    return 0
