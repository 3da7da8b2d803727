"""Scale benchmark: time per phase and peak RSS of one release, against the code before a change.

Seed 002's design (``mipdp.datasets.make_bss_regression``: s = 5, ε = 1, b_x = b_y = 0.5,
the default score), the exponential mechanism, one data set per configuration:

* large p — p = 10⁴ and 10⁵ at n = 3000 and 6000 (``--p``, ``--n``), ρ = 0.1;
* correlated designs — ρ = 0.7 at p = 100 and 1000, n = 4000 (``--rho-p``, ``--rho-n``),
  with ``--draws`` draws and the sampler's certified interval on ``P(release = truth)``.

Every configuration runs this checkout (variant ``default``) and, with ``--main-src``, the
code of another checkout (variant ``main``: the release before this work, the baseline),
each in a fresh subprocess so that its peak RSS (``VmHWM``) is its
own.  ``abess`` (non-private best subset selection, if installed) runs on the same data
for comparison.  Timings are wall-clock on whatever machine runs this; the ratio column
is main / default measured in the same run.

With ``--memmap DIR`` the large-p designs are float32 ``.npy`` files under ``DIR`` (C
order, as ``np.save`` writes them), generated column chunk by column chunk in a separate
process (never whole in memory: same distribution as seed 002's design, another random
stream), opened with ``np.load(..., mmap_mode="r")`` by every variant and deleted at the
end.  abess is skipped when a float64 copy of ``X`` (what it is given) would not fit in
``--abess-max-gb``.  Each row reports the time outside the phases (``setup``: checking,
clipping, first products) and the peak RSS (``VmHWM``) against the file's size.

    python -m experiments.studies.bench_scale                       # everything below
    python -m experiments.studies.bench_scale --p 10000 --n 3000 --rho-p 100
    python -m experiments.studies.bench_scale --p 1000000 --n 2000 --rho-p \
        --memmap /tmp/bench \
        --draws 1
    python -m experiments.studies.bench_scale --p 1000000 --n 2000 --rho-p \
        --memmap /tmp/bench \
        --draws 1 --no-default --no-abess --prescreen dp_sis 20 0.8

``--prescreen METHOD K FRACTION`` adds the variant ``private_bss(..., prescreen=(METHOD, K,
FRACTION))`` (the number of true features the screen kept is reported); ``--no-default``
skips the exponential mechanism over all supports.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

if __package__:
    from ._memmap import write_ar1_memmap
else:  # run as a file by a child process, with another checkout's mipdp on the path
    from _memmap import write_ar1_memmap  # type: ignore[import-not-found,no-redef]



def _checkout() -> str:
    """The checkout holding this file (the parent of ``experiments/``)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))


def _data(p: int, n: int, rho: float, path: str | None = None):
    if path is not None:
        X = np.load(path, mmap_mode="r")
        return X, np.load(path + ".y.npy"), np.arange(1, 10, 2)
    from mipdp.datasets import make_bss_regression
    seed = p if rho == 0.1 else p + 7
    return make_bss_regression(n=n, p=p, s=5, rho=rho, random_state=seed)


def _write_memmap(path: str, n: int, p: int, rho: float, seed: int, chunk: int = 4096,
                  snr: float = 5.0) -> None:
    """Seed 002's design (AR(1) columns, ρ; β* = 1/√5 on 1, 3, ..., 9; noise at the SNR of
    ``make_bss_regression``) as a float32 C-ordered ``.npy`` memmap, written column chunk
    by column chunk (peak memory: one float64 chunk of ``n × chunk``)."""
    rng = np.random.default_rng(seed)
    X = write_ar1_memmap(path, n, p, rho, rng, chunk)
    signal = np.asarray(X[:, 1:10:2], dtype=np.float64) @ np.full(5, 1.0 / np.sqrt(5))
    del X
    noise = rng.standard_normal(n)
    noise *= np.linalg.norm(signal) / (np.sqrt(snr) * np.linalg.norm(noise))
    np.save(path + ".y.npy", signal + noise)


def _peak_rss_mb() -> float:
    """Peak RSS of this process (``VmHWM``, MiB): mapped pages of a memmap count."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _child(spec: dict) -> dict:
    """One run (in a subprocess): ``spec`` = p, n, rho, draws, variant."""
    X, y, truth = _data(spec["p"], spec["n"], spec["rho"], spec.get("path"))
    import mipdp
    out = {**spec, "mipdp": mipdp.__file__}
    t0 = time.perf_counter()
    if spec["variant"] == "abess":
        from abess import LinearRegression
        model = LinearRegression(support_size=5, fit_intercept=False)
        model.fit(np.asarray(X, dtype=np.float64) if spec.get("path") else X, y)
        S = np.sort(np.flatnonzero(model.coef_))
        out["time"] = time.perf_counter() - t0
        out["truth"] = bool(np.array_equal(S, np.sort(truth)))
    else:
        from mipdp import private_bss
        done: dict = {}
        last: dict = {}

        def progress(ev):   # phases finished so far (reported if the time limit stops the call)
            last.update(phase=ev["phase"], at=round(time.perf_counter() - t0, 1))
            if ev["event"] == "done":   # the first end (a sampler's refinement reuses names)
                done.setdefault(ev["phase"], round(ev["elapsed"], 2))

        extra = {}
        if spec["variant"].startswith("prescreen"):   # "prescreen:method:k:fraction"
            _, method, k, frac = spec["variant"].split(":")
            extra["prescreen"] = (method, int(k), float(frac))
        try:
            res = private_bss(X, y, 5, 1.0, bounds=(0.5, 0.5), n_draws=spec["draws"],
                              random_state=0, time_limit=spec.get("time_limit", 3600),
                              enumeration_options={"progress": progress}, **extra)
        except Exception as exc:  # noqa: BLE001 - report how far it got
            return {**out, "error": [f"{type(exc).__name__} after "
                                     f"{time.perf_counter() - t0:.0f} s in phase "
                                     f"{last.get('phase')}; phases done {done}"],
                    "peak_rss_mb": _peak_rss_mb()}
        out["time"] = time.perf_counter() - t0
        out["phases"] = {k: round(v, 2) for k, v in res.timings.items()}
        out["phases"]["setup"] = round(res.timings["total"] - sum(
            v for k, v in res.timings.items() if k != "total"), 2)
        out["freq"] = float(np.mean([np.array_equal(np.sort(S), np.sort(truth))
                                     for S in res.supports]))
        if res.probability_bounds is not None:
            lo, hi = res.probability_bounds(truth)
            out["p_truth"] = [float(lo), float(hi)]
        if "prescreen" in res.info:
            cols = np.asarray(res.info["prescreen"]["columns"])
            out["kept"] = int(np.isin(truth, cols).sum())
        ph = res.stats.get("phases", {})
        out["screened"] = max((v.get("screened", 0) for v in ph.values()), default=0)
    out["peak_rss_mb"] = _peak_rss_mb()
    return out


def _run(spec: dict, src: str | None = None) -> dict:
    env = dict(os.environ)
    # this checkout (the parent of experiments/), or another one (e.g. the main branch),
    # first on the path of the child
    src = src or _checkout()
    env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", json.dumps(spec)],
                          capture_output=True, text=True, env=env, cwd=src)
    if proc.returncode != 0:
        return {**spec, "error": proc.stderr.strip().splitlines()[-1:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _fmt(r: dict) -> str:
    if "error" in r:
        rss = f" peak RSS {r['peak_rss_mb']:.0f} MB" if "peak_rss_mb" in r else ""
        return f"| {r['variant']} | error: {r['error']}{rss} |"
    if r["variant"] == "abess":
        return (f"| abess | {r['time']:.1f} | – | {r['peak_rss_mb']:.0f} | "
                f"truth: {r['truth']} |")
    ph = {k: v for k, v in r["phases"].items() if v >= 0.05 and k != "total"}
    pt = r.get("p_truth")
    pts = f"P(truth) ∈ [{pt[0]:.3f}, {pt[1]:.3f}]" if pt else ""
    rss = f"{r['peak_rss_mb']:.0f}"
    if r.get("file_mb"):
        rss += f" ({r['peak_rss_mb'] / r['file_mb']:.2f} × file)"
    kept = f"; true features kept by the screen {r['kept']}/5" if "kept" in r else ""
    return (f"| {r['variant']} | {r['time']:.1f} | {ph} | {rss} | "
            f"freq {r['freq']:.2f} {pts}{kept} |")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--p", nargs="*", type=int, default=[10_000, 100_000])
    ap.add_argument("--n", nargs="*", type=int, default=[3000, 6000])
    ap.add_argument("--rho-p", nargs="*", type=int, default=[100, 1000])
    ap.add_argument("--rho-n", type=int, default=4000)
    ap.add_argument("--draws", type=int, default=100)
    ap.add_argument("--no-abess", action="store_true")
    ap.add_argument("--main-src", help="a checkout of the code before this change (variant "
                    "'main', run from there in the same invocation)")
    ap.add_argument("--memmap", metavar="DIR", help="large-p designs as float32 .npy "
                    "memmaps generated chunk by chunk under DIR (deleted at the end)")
    ap.add_argument("--time-limit", type=float, default=3600.0,
                    help="time_limit of each release (s; default 3600)")
    ap.add_argument("--abess-max-gb", type=float, default=6.0,
                    help="skip abess when a float64 copy of X is larger (default 6)")
    ap.add_argument("--prescreen", nargs=3, action="append", default=[],
                    metavar=("METHOD", "K", "FRACTION"),
                    help="also run private_bss(..., prescreen=(METHOD, K, FRACTION)) "
                    "(variant 'prescreen:METHOD:K:FRACTION'; repeatable)")
    ap.add_argument("--no-default", action="store_true",
                    help="skip the variant 'default' (e.g. at p = 10⁶, where it does not "
                    "release within the time limit)")
    ap.add_argument("--keep-memmap", action="store_true",
                    help="keep the memmap files (and reuse them when they exist)")
    ap.add_argument("--child")
    ap.add_argument("--write", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.write:
        _write_memmap(**json.loads(a.write))
        return
    if a.child:
        print(json.dumps(_child(json.loads(a.child))))
        return
    variants = ([] if a.no_default else ["default"]) + (["main"] if a.main_src else [])
    variants += [f"prescreen:{m}:{int(k)}:{float(f):g}" for m, k, f in a.prescreen]
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
        spec = dict(p=p, n=n, rho=rho, draws=draws, time_limit=a.time_limit)
        if a.memmap and rho == 0.1:
            os.makedirs(a.memmap, exist_ok=True)
            spec["path"] = os.path.join(a.memmap, f"X_{n}x{p}.npy")
            t0 = time.perf_counter()
            if not (a.keep_memmap and os.path.exists(spec["path"] + ".y.npy")):
                proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--write",
                                       json.dumps(dict(path=spec["path"], n=n, p=p, rho=rho,
                                                       seed=p))])
                if proc.returncode:
                    raise SystemExit(f"writing {spec['path']} failed")
            spec["file_mb"] = os.path.getsize(spec["path"]) / 2 ** 20
            print(f"| p={p} n={n} | memmap written in {time.perf_counter() - t0:.0f} s: "
                  f"{spec['file_mb']:.0f} MB | | | | |", flush=True)
        for v in variants:
            if v == "abess" and 8 * n * p > a.abess_max_gb * 2 ** 30:
                print(f"| p={p} n={n} ρ={rho} | abess | skipped: a float64 copy of X "
                      f"({8 * n * p / 2 ** 30:.0f} GB) exceeds --abess-max-gb | | | |", flush=True)
                continue
            r = _run({**spec, "variant": v}, a.main_src if v == "main" else None)
            res[v] = r
            print(f"| p={p} n={n} ρ={rho} draws={draws} " + _fmt(r), flush=True)
        if "path" in spec and not a.keep_memmap:
            os.remove(spec["path"])
            os.remove(spec["path"] + ".y.npy")
        if "time" in res.get("main", {}) and "time" in res.get("default", {}):
            print(f"| p={p} n={n} ρ={rho} | ratio main/default "
                  f"{res['main']['time'] / res['default']['time']:.2f} | | | | |", flush=True)


if __name__ == "__main__":
    main()
