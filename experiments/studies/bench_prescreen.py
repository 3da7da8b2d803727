"""Benchmark: ``private_bss`` with a private pre-screen at large ``p`` (seed 002's design).

Generates ``make_bss_regression(n, p, s, random_state=seed)`` (its AR(1) loop over
columns takes ~10-20 s at p = 100 000, n = 2 000; an equivalent loop over the rows
of the transpose was tried and was not faster), then runs
``private_bss(X, y, s, eps, bounds=..., prescreen=(method, k, fraction), n_draws=draws)``
``--reps`` times per method, each repetition a full independent pipeline (fresh
pre-screen, fresh enumeration, ``draws`` draws) with ``random_state = seed + 1000 + rep``
on the same data. Prints the time per phase, the fraction of draws equal to the true
support (within a run and over runs), whether every true feature survived the
pre-screen, and ratios against baselines timed in the same process: one pass
``X.T @ y`` and DP-SIS alone (``prescreen("dp_sis", ...)``).

``--sweep`` instead measures, on seed 002's design at p = 100 (``--sweep-n`` 1000, ε = 1,
b_x = b_y = 0.5, ρ = 0.1) over ``--datasets`` independent data sets, P(truth ⊂ candidates)
and P(release = truth) of ``prescreen=("dp_sis", k, fraction)`` + the exponential
mechanism against ``k`` and the ε fraction, for the screen's canonical Lipschitz top-k at
``gamma = 0`` (the pre-screen's rule) and at seed 000's ``gamma = 0.5`` (the rule before),
beside the exponential mechanism alone on the same data (same process)::

    python -m experiments.studies.bench_prescreen --sweep --datasets 20 --draws 20 \
        --sweep-k 10 20 40 --sweep-fraction 0.1 0.2 0.4

Example::

    python -m experiments.studies.bench_prescreen --p 100000 --n 2000 --s 5 --eps 10 \\
        --k 1000 \\
        --fraction 0.2 --draws 20 --reps 3 --methods dp_sis kendall --seed 0
"""

from __future__ import annotations

import argparse
import platform
import time
from typing import Any

import numpy as np

from mipdp import private_bss
from mipdp.comparators import prescreen
from mipdp.datasets import make_bss_regression
from mipdp.exceptions import CertificationError


def _fmt(t: float) -> str:
    return f"{t:8.2f}"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--p", type=int, default=100_000)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--s", type=int, default=5)
    ap.add_argument("--eps", type=float, default=10.0)
    ap.add_argument("--k", type=int, default=1000, help="candidates kept by the pre-screen")
    ap.add_argument("--k-kendall", type=int, default=None,
                    help="candidates for the kendall pre-screen (default --k); DPKendall's "
                         "cost grows like k^2 correlations")
    ap.add_argument("--k-two-stage", type=int, default=None, help="candidates for two_stage")
    ap.add_argument("--fraction", type=float, default=0.2, help="share of eps for the screen")
    ap.add_argument("--draws", type=int, default=20, help="n_draws per private_bss run")
    ap.add_argument("--reps", type=int, default=1, help="independent full pipeline runs")
    ap.add_argument("--methods", nargs="+", default=["dp_sis", "kendall"],
                    choices=["dp_sis", "kendall", "two_stage"])
    ap.add_argument("--bounds", type=float, nargs=2, default=(0.5, 0.5), metavar=("BX", "BY"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-limit", type=float, default=None,
                    help="time_limit for the enumeration (seconds); a run that hits it "
                         "releases nothing and is reported as not certified")
    ap.add_argument("--sweep", action="store_true",
                    help="P(truth kept), P(release = truth) against k and the fraction at p=100")
    ap.add_argument("--datasets", type=int, default=20, help="data sets of the sweep")
    ap.add_argument("--sweep-n", type=int, default=1000)
    ap.add_argument("--sweep-k", type=int, nargs="+", default=[10, 20, 40])
    ap.add_argument("--sweep-fraction", type=float, nargs="+", default=[0.1, 0.2, 0.4])
    ap.add_argument("--sweep-gamma", type=float, nargs="+", default=[0.0, 0.5])
    ap.add_argument("--containment", action="store_true",
                    help="P(truth ⊂ top-k) of DP-SIS's top-k rules alone (no MIP), one draw "
                         "per data set, against eps, k and gamma")
    args = ap.parse_args(argv)
    if args.containment:
        containment(args)
        return
    if args.sweep:
        sweep(args)
        return

    print(f"# {platform.node()} python {platform.python_version()} numpy {np.__version__}")
    print(f"# args: {vars(args)}")
    t = time.perf_counter()
    X, y, support = make_bss_regression(n=args.n, p=args.p, s=args.s, random_state=args.seed)
    t_gen = time.perf_counter() - t
    print(f"data: n={args.n} p={args.p} s={args.s} true support {support.tolist()}; "
          f"generated in {t_gen:.2f} s ({X.nbytes / 2**30:.2f} GiB)")

    # baselines, same process
    t = time.perf_counter()
    X.T @ y
    t_xty = time.perf_counter() - t
    t = time.perf_counter()
    sis = prescreen("dp_sis", X, y, args.k, args.fraction * args.eps, bounds=tuple(args.bounds),
                    random_state=args.seed)
    t_sis = time.perf_counter() - t
    print(f"baselines: X.T @ y {t_xty:.3f} s; DP-SIS alone (k={args.k}) {t_sis:.3f} s "
          f"(all true kept: {bool(np.isin(support, sis.support).all())})")

    ks = {"dp_sis": args.k, "kendall": args.k_kendall or args.k,
          "two_stage": args.k_two_stage or args.k}
    rows = []
    for method in args.methods:
        for rep in range(args.reps):
            k = ks[method]
            t = time.perf_counter()
            try:
                res = private_bss(X, y, args.s, args.eps, bounds=tuple(args.bounds),
                                  prescreen=(method, k, args.fraction), n_draws=args.draws,
                                  time_limit=args.time_limit,
                                  random_state=args.seed + 1000 + rep)
            except CertificationError as exc:
                wall = time.perf_counter() - t
                # nothing was released; redo the pre-screen alone with the stream
                # private_bss gives it (first of three spawned generators) to report it
                t = time.perf_counter()
                rng_screen = np.random.default_rng(args.seed + 1000 + rep).spawn(3)[0]
                scr = prescreen(method, X, y, k, args.fraction * args.eps,
                                bounds=tuple(args.bounds), random_state=rng_screen)
                t_pre = time.perf_counter() - t
                kept = bool(np.isin(support, scr.support).all())
                print(f"{method:9s} k={k:5d} rep={rep}: wall {wall:7.2f} s, enumeration NOT "
                      f"certified within --time-limit | pre-screen alone {t_pre:.2f} s, true "
                      f"kept {kept} ({int(np.isin(support, scr.support).sum())}/{support.size}) "
                      f"| {str(exc)[:120]}", flush=True)
                rows.append({"method": method, "k": k, "rep": rep, "wall": wall, "kept": kept,
                             "hits": 0.0, "first_exact": False,
                             "phases": {"prescreen": t_pre}, "failed": True})
                continue
            wall = time.perf_counter() - t
            cols = np.asarray(res.info["prescreen"]["columns"])
            kept = bool(np.isin(support, cols).all())
            hits = float(np.mean([np.array_equal(d, support) for d in res.supports]))
            phases = {key: v for key, v in res.timings.items() if key not in ("total",)}
            rows.append({"method": method, "k": k, "rep": rep, "wall": wall, "kept": kept,
                         "hits": hits, "first_exact": bool(np.array_equal(res.support, support)),
                         "phases": phases})
            ph = ", ".join(f"{key} {v:.2f}" for key, v in phases.items())
            print(f"{method:9s} k={k:5d} rep={rep}: wall {wall:7.2f} s "
                  f"({wall / t_xty:8.0f}x X.T@y, {wall / t_sis:6.1f}x DP-SIS) | true kept {kept} | "
                  f"draws = truth {hits:.2f} | phases: {ph}", flush=True)

    print("\nsummary (mean over reps)")
    print("method     k      reps  wall[s]  prescreen[s]  enum+sample[s]  kept  "
          "draws=truth  runs(first draw)=truth  not-certified")
    for method in args.methods:
        rs = [r for r in rows if r["method"] == method]
        pre = np.mean([r["phases"].get("prescreen", 0.0) for r in rs])
        wall = np.mean([r["wall"] for r in rs])
        print(f"{method:9s} {rs[0]['k']:5d} {len(rs):5d} {_fmt(wall)} {_fmt(pre)}      "
              f"{_fmt(wall - pre)}     {np.mean([r['kept'] for r in rs]):.2f}   "
              f"{np.mean([r['hits'] for r in rs]):.2f}         "
              f"{np.mean([r['first_exact'] for r in rs]):.2f}                   "
              f"{sum(r.get('failed', False) for r in rs)}")


def containment(args) -> None:
    """P(truth ⊂ private top-k of the DP-SIS scores) for several rules (no MIP)."""
    from mipdp.mechanisms.topk import canonical_lipschitz_topk, gumbel_peeling_topk
    rng = np.random.default_rng(args.seed)
    rules: dict[str, Any] = {
        f"canonical gamma={g:g}": (lambda sc, k, e, g=g: canonical_lipschitz_topk(
            sc, k, e, 0.5, rng, gamma=g)) for g in (0.0, 0.25, 0.5, 1.0)}
    rules["peeling"] = lambda sc, k, e: gumbel_peeling_topk(sc, k, e, 0.5, rng)
    hits: dict = {}
    for i in range(args.datasets):
        X, y, support = make_bss_regression(n=args.sweep_n, p=100, s=5, rho=0.1,
                                            random_state=args.seed + i)
        sc = np.abs(np.clip(X, -0.5, 0.5).T @ np.clip(y, -0.5, 0.5))   # Δ = 2·0.5·0.5
        for e in (0.1, 0.2, 0.4):
            for k in args.sweep_k:
                for name, f in rules.items():
                    hits.setdefault((e, k, name), []).append(
                        bool(np.isin(support, f(sc, k, e)).all()))
    print(f"# seed 002 design n={args.sweep_n} p=100 s=5; {args.datasets} data sets, one draw each")
    print("eps    k  rule                      P(truth ⊂ top-k)")
    for (e, k, name), v in sorted(hits.items()):
        print(f"{e:4.1f} {k:3d}  {name:24s}  {np.mean(v):.3f}")


def sweep(args) -> None:
    """P(truth ⊂ candidates) and P(release = truth) against k, the fraction and gamma."""
    from tqdm import tqdm

    import mipdp.prescreen as pre_mod
    s, eps, p = 5, 1.0, 100
    bounds = (0.5, 0.5)
    print(f"# seed 002 design: n={args.sweep_n} p={p} s={s} rho=0.1 eps={eps} bounds={bounds}; "
          f"{args.datasets} data sets x {args.draws} draws; timings under load (2 shared cores)")
    em: list = []
    cells: dict = {}
    t0 = time.perf_counter()
    for i in tqdm(range(args.datasets)):
        X, y, support = make_bss_regression(n=args.sweep_n, p=p, s=s, rho=0.1,
                                            random_state=args.seed + i)
        res = private_bss(X, y, s, eps, bounds=bounds, n_draws=args.draws,
                          random_state=args.seed + 5000 + i)
        em.append(np.mean([np.array_equal(d, support) for d in res.supports]))
        for gamma in args.sweep_gamma:
            pre_mod.DP_SIS_SCREEN_GAMMA = gamma
            for k in args.sweep_k:
                for frac in args.sweep_fraction:
                    res = private_bss(X, y, s, eps, bounds=bounds, n_draws=args.draws,
                                      prescreen=("dp_sis", k, frac),
                                      random_state=args.seed + 9000 + i)
                    kept = bool(np.isin(support, res.info["prescreen"]["columns"]).all())
                    hit = np.mean([np.array_equal(d, support) for d in res.supports])
                    cells.setdefault((gamma, k, frac), []).append((kept, hit))
    pre_mod.DP_SIS_SCREEN_GAMMA = 0.0
    wall = time.perf_counter() - t0
    se = np.std(em) / np.sqrt(len(em))
    print(f"\nexponential mechanism alone (eps = {eps}): P(release = truth) = {np.mean(em):.3f} "
          f"± {se:.3f}")
    print("gamma   k  fraction  P(truth ⊂ candidates)  P(release = truth)  ratio to EM alone")
    for (gamma, k, frac), v in sorted(cells.items()):
        kept = np.mean([a for a, _ in v])
        hit = np.mean([b for _, b in v])
        print(f"{gamma:5.2f} {k:3d}  {frac:8.2f}  {kept:21.2f}  {hit:18.3f}  "
              f"{hit / max(np.mean(em), 1e-12):17.2f}")
    print(f"# wall {wall:.0f} s")


if __name__ == "__main__":
    main()
