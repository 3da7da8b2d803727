"""Benchmark: peak memory of ``private_bss`` on sparse, float32 and memmap inputs.

Each case runs in a fresh child process (its peak RSS, ``VmHWM``, is its own): the child builds
or opens the data, records its peak RSS, runs ``private_bss``, and reports the increase of
the peak RSS over the data's own footprint and, in a second child, the ``tracemalloc``
peak (Python and numpy allocations) of the call.  The baseline measured in the same run
is the same call on the data densified as a float64 array (what ``private_bss`` did
before inputs were clipped lazily: a float64 copy, then a clipped copy).

Cases
-----
``sparse``: a 1000 × 20 000 CSR matrix of density 0.001 (about 244 KB) plus ``s`` dense
true columns (seed 002's coefficients; 0.29 MB in all), ``y = X β + noise``.  Target: peak increase
``<= 10 ×`` the sparse matrix's size ``+ O(n·s)``.

``memmap``: seed 002's AR(1) design (ρ = 0.1) at ``n = 2000, p = 100 000`` in float32,
generated column chunk by column chunk into a memmap file (never whole in RAM); the
release runs on the memmap.  Peak RSS counts the pages of the file that were read (the
page cache mapped into the process), so the target is a peak near the file's size, not
twice it.

``--prescreen NAME K FRACTION`` runs the release with ``prescreen=(NAME, K, FRACTION)``
(e.g. ``kendall 200 0.3``, ``two_stage 200 0.3``): the pre-screens read ``X`` chunk by
chunk as well (docs/design.md, "Memory", "Pre-screens").

``--bounds private`` runs the release with ``bounds="private"`` (private clipping ranges,
a tenth of ε): the ranges are counted tile by tile (sparse: from the stored values) and the
mapped design is lazy (sparse: a sparse matrix plus a rank-one term; docs/design.md,
"Memory", "Private clipping ranges").  The data path then releases the ranges and binds
the objective to the mapped design.

In the sparse case the ``tracemalloc`` peak of the whole run is the MIP enumeration's state
(cuts of length p, the one-swap neighbourhood), not ``X``: nothing densifies ``X``
(docs/design.md, "Where the sparse run's memory goes").

Example::

    python -m experiments.studies.bench_memory --cases sparse memmap --p-memmap 100000 \
        --n-memmap 2000
    python -m experiments.studies.bench_memory --cases sparse --no-baseline \
        --prescreen kendall 200 0.3
    python -m experiments.studies.bench_memory --cases sparse --bounds private

Timings depend on load (the machine is shared); memory figures do not.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from typing import Any

import numpy as np

if __package__:
    from ._memmap import write_ar1_memmap
else:  # run as a file by a child process, with another checkout's mipdp on the path
    from _memmap import write_ar1_memmap  # type: ignore[import-not-found,no-redef]



def _checkout() -> str:
    """The checkout holding this file (the parent of ``experiments/``)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))


def _rss_mb() -> float:
    """Peak RSS of this process image in MiB: ``VmHWM`` (reset at exec, unlike
    ``ru_maxrss``, which keeps the parent's high-water mark from before the exec)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0   # Linux: KiB


def _sparse_data(n, p, s, seed):
    import scipy.sparse as sp
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=0.001, format="csr", random_state=rng, dtype=np.float64,
                  data_rvs=rng.standard_normal)
    support = np.arange(1, 2 * s, 2)
    dense_cols = sp.csr_matrix((rng.standard_normal((n, s)).ravel(),
                                (np.repeat(np.arange(n), s), np.tile(support, n))), shape=(n, p))
    X = (X + dense_cols).tocsr()
    beta = np.zeros(p)
    beta[support] = 1.0 / np.sqrt(s)
    y = np.asarray(X @ beta).ravel() + 0.1 * rng.standard_normal(n)
    return X, y, support


def _memmap_data(path, n, p, s, rho, seed, chunk=2000):
    """Seed 002's AR(1) design written chunk by chunk (float32), and y = X β."""
    X = write_ar1_memmap(path, n, p, rho, np.random.default_rng(seed), chunk)
    support = np.arange(1, 2 * s, 2)
    y = np.asarray(X[:, support], dtype=np.float64) @ np.full(s, 1.0 / np.sqrt(s))
    del X
    return support, y


def _data_path(X, y, s, kw) -> dict:
    """tracemalloc peak of what the objective computes from X (no MIP): binding (Xᵀy,
    column norms), a cut at a support (Xᵀρ), its one-swap neighbourhood (X_SᵀX) and the
    objective of 2 000 random supports (Gram blocks of supports)."""
    import tracemalloc

    from mipdp._validation import check_X_y, clip_design
    from mipdp.losses import LeastSquares
    tracemalloc.start()
    t0 = time.perf_counter()
    Xv: Any
    yv: Any
    Xv, yv = check_X_y(X, y, lazy=True)
    if kw["bounds"] == "private":     # the ranges' release, then the lazy mapped design
        from mipdp.private_ranges import PrivateBounds, estimate_ranges
        ranges = estimate_ranges(Xv, yv, PrivateBounds(), 0.1 * kw.get("eps", 1.0),
                                 np.random.default_rng(0))
        Xv, yv = ranges.mapped(Xv), ranges.transform_y(yv)
        kw = dict(kw, bounds=(0.5, 0.5))
    b_x, b_y = kw["bounds"]
    Xc, yc = clip_design(Xv, yv, b_x, b_y)
    obj = LeastSquares(kw.get("ridge", 1.0), kw.get("radius", 1.0)).bind(Xc, yc)
    S = np.arange(1, 2 * s, 2)
    obj.value_and_cut(S)
    obj.one_swap_values(S)
    rng = np.random.default_rng(0)
    sup = np.sort(np.array([rng.choice(X.shape[1], s, replace=False) for _ in range(2000)]), 1)
    obj.values(sup)
    return {"data_path_tracemalloc_mb": tracemalloc.get_traced_memory()[1] / 2 ** 20,
            "data_path_time_s": time.perf_counter() - t0, "time_s": 0.0, "rss_peak_mb": _rss_mb(),
            "rss_before_mb": 0.0, "rss_increase_mb": 0.0, "p_truth": float("nan")}


def child(args) -> dict:
    from mipdp import private_bss
    out: dict = {"case": args.case, "mode": args.mode}
    if args.case == "sparse":
        X, y, support = _sparse_data(1000, 20_000, args.s, args.seed)
        out["input_mb"] = (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 2 ** 20
        if args.mode == "dense_baseline":
            X = X.toarray()
        kw: dict[str, Any] = dict(bounds=(1.0, 2.0))
    else:
        path = args.path
        X = np.load(path, mmap_mode="r")
        y = np.load(path + ".y.npy")
        support = np.arange(1, 2 * args.s, 2)
        out["input_mb"] = X.nbytes / 2 ** 20
        if args.mode == "dense_baseline":
            X = np.asarray(X, dtype=np.float64)
        kw = dict(bounds=(0.5, 0.5), ridge=120.0, radius=1.1)
    out["shape"] = list(X.shape)
    if args.bounds == "private":
        kw["bounds"] = "private"
        out["bounds"] = "private"
    if args.prescreen:
        kw["prescreen"] = (args.prescreen[0], int(args.prescreen[1]), float(args.prescreen[2]))
        out["prescreen"] = args.prescreen
    if args.mode == "data_path":
        out.update(_data_path(X, y, args.s, dict(kw, eps=args.eps)))
        return out
    out["rss_before_mb"] = _rss_mb()
    if args.trace:
        import tracemalloc
        tracemalloc.start()
    t0 = time.perf_counter()
    res = private_bss(X, y, args.s, args.eps, random_state=args.seed, n_draws=args.draws,
                      time_limit=args.time_limit, **kw)
    out["time_s"] = time.perf_counter() - t0
    if args.trace:
        out["tracemalloc_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2 ** 20
        tracemalloc.stop()
    out["rss_peak_mb"] = _rss_mb()
    out["rss_increase_mb"] = out["rss_peak_mb"] - out["rss_before_mb"]
    out["p_truth"] = float(np.mean([set(S) == set(support) for S in res.supports]))
    out["timings"] = {k: round(v, 2) for k, v in res.timings.items()}
    return out


def _run(case, mode, trace, args, path=None) -> dict:
    cmd = [sys.executable, __file__, "--child", "--case", case, "--mode", mode,
           "--s", str(args.s), "--eps", str(args.eps), "--draws", str(args.draws),
           "--seed", str(args.seed), "--time-limit", str(args.time_limit)]
    if trace:
        cmd.append("--trace")
    if args.bounds != "public":
        cmd += ["--bounds", args.bounds]
    if args.prescreen:
        cmd += ["--prescreen", *args.prescreen]
    if path:
        cmd += ["--path", path]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=os.getcwd())
    if proc.returncode:
        return {"case": case, "mode": mode, "error": proc.stderr.strip().splitlines()[-1:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", nargs="+", default=["sparse", "memmap"])
    ap.add_argument("--s", type=int, default=5)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--draws", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--time-limit", type=float, default=1800.0)
    ap.add_argument("--p-memmap", type=int, default=100_000)
    ap.add_argument("--n-memmap", type=int, default=2000)
    ap.add_argument("--prescreen", nargs=3, metavar=("NAME", "K", "FRACTION"), default=None,
                    help="run private_bss with prescreen=(NAME, K, FRACTION), e.g. "
                         "--prescreen kendall 200 0.3 (the data path ignores it)")
    ap.add_argument("--bounds", choices=["public", "private"], default="public",
                    help="public bounds (the cases' own) or bounds='private' (private "
                         "clipping ranges with a tenth of eps)")
    ap.add_argument("--no-baseline", action="store_true",
                    help="skip the densified float64 baseline (it needs 2 × 8np bytes)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--case", help=argparse.SUPPRESS)
    ap.add_argument("--mode", default="lazy", help=argparse.SUPPRESS)
    ap.add_argument("--trace", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--path", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        sys.path.insert(0, os.getcwd())
        print(json.dumps(child(args)))
        return
    rows = []
    tmp = tempfile.mkdtemp(prefix="bench_memory_")
    for case in args.cases:
        path = None
        if case == "memmap":
            path = os.path.join(tmp, "X.npy")
            t0 = time.perf_counter()
            _, y = _memmap_data(path, args.n_memmap, args.p_memmap, args.s, 0.1, args.seed)
            np.save(path + ".y.npy", y)
            print(f"memmap: wrote {args.n_memmap} x {args.p_memmap} float32 in "
                  f"{time.perf_counter() - t0:.1f} s", flush=True)
        modes = ["data_path", "lazy"] + ([] if args.no_baseline else ["dense_baseline"])
        for mode in modes:
            for trace in ((False, True) if case == "sparse" else (False,)):
                r = _run(case, mode, trace, args, path)
                rows.append(r)
                print(json.dumps(r), flush=True)
        if path:
            os.remove(path)
            os.remove(path + ".y.npy")
    print(f"\nmachine: {os.cpu_count()} cores, shared (timings under load)")
    print(f"{'case':8s} {'mode':15s} {'input MB':>9s} {'RSS before':>11s} {'RSS peak':>9s} "
          f"{'increase':>9s} {'tracemalloc':>12s} {'time s':>7s} {'P(truth)':>8s}")
    for r in rows:
        if "error" in r:
            print(f"{r['case']:8s} {r['mode']:15s} error: {r['error']}")
            continue
        if r["mode"] == "data_path":
            print(f"{r['case']:8s} {'data path':15s} {r['input_mb']:9.2f}   tracemalloc peak "
                  f"{r['data_path_tracemalloc_mb']:.2f} MB in {r['data_path_time_s']:.1f} s "
                  f"(= {r['data_path_tracemalloc_mb'] / r['input_mb']:.1f} × input; n·s·8 = "
                  f"{r['shape'][0] * 5 * 8 / 2 ** 20:.3f} MB)")
            continue
        tm = r.get("tracemalloc_peak_mb")
        print(f"{r['case']:8s} {r['mode']:15s} {r['input_mb']:9.2f} {r['rss_before_mb']:11.1f} "
              f"{r['rss_peak_mb']:9.1f} {r['rss_increase_mb']:9.1f} "
              f"{'' if tm is None else f'{tm:12.2f}':>12s} {r['time_s']:7.1f} {r['p_truth']:8.2f}")
    for case in args.cases:
        lazy = [r for r in rows if r.get("case") == case and r.get("mode") == "lazy"
                and "error" not in r]
        base = [r for r in rows if r.get("case") == case and r.get("mode") == "dense_baseline"
                and "error" not in r]
        if lazy and base:
            ratio = (max(lazy[0]['rss_increase_mb'], 1e-9)
                     / max(base[0]['rss_increase_mb'], 1e-9))
            print(f"{case}: peak RSS increase lazy / densified baseline = {ratio:.3f}")
        traced = [r for r in lazy if "tracemalloc_peak_mb" in r]
        if traced:
            t = traced[0]
            print(f"{case}: tracemalloc peak / sparse size = "
                  f"{t['tracemalloc_peak_mb'] / t['input_mb']:.1f}")


if __name__ == "__main__":
    main()
