"""Scale benchmark: time per phase and peak RSS of one release, with and without the fixing.

Seed 002's design (``mipdp.datasets.make_bss_regression``: s = 5, ε = 1, b_x = b_y = 0.5,
the default score), the exponential mechanism, one data set per configuration:

* large p — p = 10⁴ and 10⁵ at n = 3000 and 6000 (``--p``, ``--n``), ρ = 0.1;
* correlated designs — ρ = 0.7 at p = 100 and 1000, n = 4000 (``--rho-p``, ``--rho-n``),
  with ``--draws`` draws and the sampler's certified interval on ``P(release = truth)``.

Every configuration runs twice in the same invocation: with the column fixing of
:mod:`mipdp.enumeration.fixing` (the default) and without it (``screening=False``: the
baseline) and, with ``--main-src``, the code of another checkout (the release before this
work), each in a fresh subprocess so that its peak RSS (``resource.getrusage``) is its
own.  ``abess`` (non-private best subset selection, if installed) runs on the same data
for comparison.  Timings are wall-clock on whatever machine runs this; the ratio column
is baseline / fixing measured in the same run.

    python experiments/bench_scale.py                       # everything below
    python experiments/bench_scale.py --p 10000 --n 3000 --rho-p 100
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import numpy as np


def _data(p: int, n: int, rho: float):
    from mipdp.datasets import make_bss_regression
    seed = p if rho == 0.1 else p + 7
    return make_bss_regression(n=n, p=p, s=5, rho=rho, random_state=seed)


def _child(spec: dict) -> dict:
    """One run (in a subprocess): ``spec`` = p, n, rho, draws, variant."""
    import resource
    X, y, truth = _data(spec["p"], spec["n"], spec["rho"])
    import mipdp
    out = {**spec, "mipdp": mipdp.__file__}
    t0 = time.perf_counter()
    if spec["variant"] == "abess":
        from abess import LinearRegression
        model = LinearRegression(support_size=5, fit_intercept=False)
        model.fit(X, y)
        S = np.sort(np.flatnonzero(model.coef_))
        out["time"] = time.perf_counter() - t0
        out["truth"] = bool(np.array_equal(S, np.sort(truth)))
    else:
        from mipdp import private_bss
        opts = ({} if spec["variant"] == "main"
                else {"enumeration_options": {"screening": spec["variant"] == "fixing"}})
        res = private_bss(X, y, 5, 1.0, bounds=(0.5, 0.5), n_draws=spec["draws"],
                          random_state=0, time_limit=3600, **opts)
        out["time"] = time.perf_counter() - t0
        out["phases"] = {k: round(v, 2) for k, v in res.timings.items()}
        out["freq"] = float(np.mean([np.array_equal(np.sort(S), np.sort(truth))
                                     for S in res.supports]))
        if res.probability_bounds is not None:
            lo, hi = res.probability_bounds(truth)
            out["p_truth"] = [float(lo), float(hi)]
        ph = res.stats.get("phases", {})
        out["screened"] = max((v.get("screened", 0) for v in ph.values()), default=0)
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def _run(spec: dict, src: str | None = None) -> dict:
    import os
    env = dict(os.environ)
    # this checkout (the parent of experiments/), or another one (e.g. the main branch),
    # first on the path of the child
    src = src or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", json.dumps(spec)],
                          capture_output=True, text=True, env=env, cwd=src)
    if proc.returncode != 0:
        return {**spec, "error": proc.stderr.strip().splitlines()[-1:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _fmt(r: dict) -> str:
    if "error" in r:
        return f"| {r['variant']} | error: {r['error']} |"
    if r["variant"] == "abess":
        return (f"| abess | {r['time']:.1f} | – | {r['peak_rss_mb']:.0f} | "
                f"truth: {r['truth']} |")
    ph = {k: v for k, v in r["phases"].items() if v >= 0.05 and k != "total"}
    pt = r.get("p_truth")
    pts = f"P(truth) ∈ [{pt[0]:.3f}, {pt[1]:.3f}]" if pt else ""
    return (f"| {r['variant']} | {r['time']:.1f} | {ph} | {r['peak_rss_mb']:.0f} | "
            f"freq {r['freq']:.2f} {pts} |")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--p", nargs="*", type=int, default=[10_000, 100_000])
    ap.add_argument("--n", nargs="*", type=int, default=[3000, 6000])
    ap.add_argument("--rho-p", nargs="*", type=int, default=[100, 1000])
    ap.add_argument("--rho-n", type=int, default=4000)
    ap.add_argument("--draws", type=int, default=100)
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--no-abess", action="store_true")
    ap.add_argument("--main-src", help="a checkout of the code before this change (variant "
                    "'main', run from there in the same invocation)")
    ap.add_argument("--child")
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(_child(json.loads(a.child))))
        return
    variants = ["fixing"] + ([] if a.no_baseline else ["baseline"])
    variants += ["main"] if a.main_src else []
    try:
        import abess  # noqa: F401
        if not a.no_abess:
            variants.append("abess")
    except ImportError:
        pass
    configs = [(p, n, 0.1, 1) for p in a.p for n in a.n]
    configs += [(p, a.rho_n, 0.7, a.draws) for p in a.rho_p]
    print("| config | variant | time (s) | phases (s) | peak RSS (MB) | outcome |")
    print("|---|---|---|---|---|---|")
    for p, n, rho, draws in configs:
        res = {}
        for v in variants:
            r = _run(dict(p=p, n=n, rho=rho, draws=draws, variant=v),
                     a.main_src if v == "main" else None)
            res[v] = r
            print(f"| p={p} n={n} ρ={rho} draws={draws} " + _fmt(r), flush=True)
        for ref in ("baseline", "main"):
            if ref in res and "time" in res[ref] and "time" in res["fixing"]:
                print(f"| p={p} n={n} ρ={rho} | ratio {ref}/fixing "
                      f"{res[ref]['time'] / res['fixing']['time']:.2f} | | | | |", flush=True)


if __name__ == "__main__":
    main()
