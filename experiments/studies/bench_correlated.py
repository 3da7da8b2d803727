"""Correlated designs: time and certified P(truth) interval of the exponential mechanism.

Seed 002's design (``mipdp.datasets.make_bss_regression``, AR(1) columns
``corr(x_i, x_j) = ρ^|i-j|``, s = 5, ε = 1 per draw, b_x = b_y = 0.5, the default score),
``--draws`` draws per data set.  Each configuration runs twice in the same invocation, each
time in a fresh subprocess:

* ``split`` — the envelope as shipped: a mistake class whose MIP bound stays below its
  level is bounded by explicit search at the level (members below it exact, the rest a
  region with holes bounded by it; ``enumeration_options={"envelope_split": True}``);
* ``mip`` — MIP bounds only (``envelope_split=False``), the envelope before explicit
  searches at the level;
* ``plain`` — the plain least-squares cuts (``shifted_cuts=False``), the cuts before the
  certified diagonal under ``XᵀX`` (docs/algorithms.md, "Shifted cuts");
* ``constant`` — constant region envelopes only (``linear_envelopes=False``, no sampling
  from the cuts' linear envelopes);
* ``before`` — neither shifted cuts nor linear envelopes (the code before both).

``split`` is what ships (it also has the shifted cuts).  Reported per run: wall-clock time
(s), the phases above 0.05 s, the frequency of the true support among the draws, and the
sampler's certified interval on P(release = truth) with its width.  The ratio rows are
baseline / split, measured in the same run.

    python -m experiments.studies.bench_correlated  # p = 100, n = 1000..8000
    python -m experiments.studies.bench_correlated --p 1000 --n 4000 --rho 0.7
    python -m experiments.studies.bench_correlated --n 4000 --rho 0.7 \
        --method permute_and_flip
    python -m experiments.studies.bench_correlated --baselines before plain constant
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

#: enumeration options of each variant
_VARIANTS = {"split": {}, "mip": {"envelope_split": False}, "plain": {"shifted_cuts": False},
             "constant": {"linear_envelopes": False},
             "before": {"shifted_cuts": False, "linear_envelopes": False}}



def _checkout() -> str:
    """The checkout holding this file (the parent of ``experiments/``)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))


def _child(spec: dict) -> dict:
    import warnings

    from mipdp import private_bss
    from mipdp.datasets import make_bss_regression
    X, y, truth = make_bss_regression(n=spec["n"], p=spec["p"], s=5, rho=spec["rho"],
                                      random_state=spec["seed"])
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = private_bss(X, y, 5, 1.0, bounds=(0.5, 0.5), n_draws=spec["draws"],
                          random_state=spec["seed"], time_limit=3600, method=spec["method"],
                          enumeration_options=_VARIANTS[spec["variant"]])
    out = dict(spec, time=time.perf_counter() - t0,
               phases={k: round(v, 2) for k, v in res.timings.items()},
               freq=float(np.mean([set(S.tolist()) == set(truth.tolist())
                                   for S in res.supports])))
    lo, hi = res.probability_bounds(truth)
    out["p_truth"] = [float(lo), float(hi)]
    return out


def _run(spec: dict) -> dict:
    src = _checkout()
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child",
                           json.dumps(spec)], capture_output=True, text=True, env=env, cwd=src)
    if proc.returncode != 0:
        return dict(spec, error=proc.stderr.strip().splitlines()[-1:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--p", nargs="*", type=int, default=[100])
    ap.add_argument("--n", nargs="*", type=int, default=[1000, 2000, 4000, 8000])
    ap.add_argument("--rho", nargs="*", type=float, default=[0.1, 0.7])
    ap.add_argument("--draws", type=int, default=100)
    ap.add_argument("--seeds", type=int, default=1, help="data sets per configuration")
    ap.add_argument("--method", default="exponential",
                    help="exponential (default) or permute_and_flip: both sample the envelope")
    ap.add_argument("--baselines", nargs="*", default=["mip"],
                    choices=["mip", "plain", "constant", "before"],
                    help="variants run beside split (default: mip)")
    ap.add_argument("--child")
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(_child(json.loads(a.child))))
        return
    print("| p | n | ρ | seed | variant | time (s) | phases (s) | freq(truth) | "
          "certified P(truth) | width |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for p in a.p:
        for rho in a.rho:
            for n in a.n:
                for seed in range(a.seeds):
                    res = {}
                    for v in ["split", *a.baselines]:
                        r = res[v] = _run(dict(p=p, n=n, rho=rho, seed=p + 7 + seed,
                                               draws=a.draws, variant=v, method=a.method))
                        head = f"| {p} | {n} | {rho} | {seed} | {v} |"
                        if "error" in r:
                            print(head + f" error: {r['error']} |||||", flush=True)
                            continue
                        ph = {k: x for k, x in r["phases"].items() if x >= 0.05 and k != "total"}
                        lo, hi = r["p_truth"]
                        print(head + f" {r['time']:.2f} | {ph} | {r['freq']:.2f} | "
                              f"[{lo:.3f}, {hi:.3f}] | {hi - lo:.3f} |", flush=True)
                    for v in a.baselines:
                        if "time" in res[v] and "time" in res["split"]:
                            print(f"| {p} | {n} | {rho} | {seed} | ratio {v}/split | "
                                  f"{res[v]['time'] / res['split']['time']:.2f} |||||",
                                  flush=True)


if __name__ == "__main__":
    main()
