"""Dask scale run: ``private_bss`` on a ``dask.array`` whose column products run on a cluster.

Seed 002's AR(1) design (ρ = 0.1, s = 5, β* = 1/√s at 1, 3, …, 9, y = Xβ* without noise)
is written column chunk by column chunk to a float32 ``.npy`` file (never whole in RAM).
Two releases are timed in the same invocation, each in a fresh subprocess:

* ``dask`` — X is a dask array of column chunks (``--chunk`` columns) that the workers of
  a ``distributed.LocalCluster`` (``--workers`` processes, one thread each) read from the
  file themselves (``dask.delayed`` loaders: nothing large is shipped from the client;
  ``da.from_array`` on a memmap would pickle the whole array into every graph); mipdp
  persists it in the workers' memory, and they compute ``X_cᵀ v``, ``X_c β``, column
  norms and the supports' columns; only vectors of length n or p come back to the client,
  where the MIP master runs.  A real cluster is the same call with
  ``Client("tcp://scheduler:8786")`` and the file on storage every worker can read.
* ``memmap`` — the same file as a numpy memmap on the client (the baseline).

Both use ε = 1, b_x = b_y = 0.5, the default score, ``random_state=0``; the releases must
be equal (the script says so).  Reported: wall-clock time, the phases above 0.5 s, peak RSS
of the client process.

    python -m experiments.studies.bench_dask --p 100000 --n 3000  # about 2 x 1.2 GB file
    python -m experiments.studies.bench_dask --p 20000 --n 2000 --workers 2
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

import numpy as np

if __package__:
    from ._memmap import write_ar1_memmap
else:  # run as a file by a child process, with another checkout's mipdp on the path
    from _memmap import write_ar1_memmap  # type: ignore[import-not-found,no-redef]



def _checkout() -> str:
    """The checkout holding this file (the parent of ``experiments/``)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))


def _write(path: str, n: int, p: int, rho: float, seed: int, chunk: int = 2000) -> np.ndarray:
    X = write_ar1_memmap(path, n, p, rho, np.random.default_rng(seed), chunk)
    y = np.asarray(X[:, 1:10:2], dtype=np.float64) @ np.full(5, 1 / np.sqrt(5))
    del X
    return y


def _load_columns(path: str, lo: int, hi: int) -> np.ndarray:
    """Runs on a worker: columns ``lo:hi`` read from the file (nothing large is shipped)."""
    return np.array(np.load(path, mmap_mode="r")[:, lo:hi])


def _dask_from_file(path: str, shape, dtype, chunk: int):
    """A dask array whose column chunks the workers read from ``path`` themselves (as from
    any storage they share: a network file system, object storage, Zarr)."""
    import dask
    import dask.array as da
    n, p = shape
    parts = [da.from_delayed(dask.delayed(_load_columns)(path, lo, min(lo + chunk, p)),
                             shape=(n, min(lo + chunk, p) - lo), dtype=dtype)
             for lo in range(0, p, chunk)]
    return da.concatenate(parts, axis=1)


def _child(spec: dict) -> dict:
    import warnings
    warnings.simplefilter("ignore")
    from mipdp import private_bss
    y = np.load(spec["y"])
    Xm = np.load(spec["X"], mmap_mode="r")
    kw = dict(bounds=(0.5, 0.5), random_state=0, time_limit=3600)
    out = dict(spec)
    if spec["variant"] == "dask":
        from distributed import Client, LocalCluster
        with LocalCluster(n_workers=spec["workers"], threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster):
            X = _dask_from_file(spec["X"], Xm.shape, Xm.dtype, spec["chunk"])
            t0 = time.perf_counter()
            res = private_bss(X, y, 5, 1.0, **kw)
            out["time"] = time.perf_counter() - t0
    else:
        t0 = time.perf_counter()
        res = private_bss(Xm, y, 5, 1.0, **kw)
        out["time"] = time.perf_counter() - t0
    out["support"] = [int(i) for i in res.support]
    out["phases"] = {k: round(v, 1) for k, v in res.timings.items() if v >= 0.5}
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--p", type=int, default=100_000)
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--chunk", type=int, default=10_000, help="columns per dask chunk")
    ap.add_argument("--dir", default=None, help="where to write the data (default: a temp dir)")
    ap.add_argument("--child")
    a = ap.parse_args(argv)
    if a.child:
        print(json.dumps(_child(json.loads(a.child))))
        return
    src = _checkout()
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with tempfile.TemporaryDirectory(dir=a.dir) as d:
        xp, yp = os.path.join(d, "X.npy"), os.path.join(d, "y.npy")
        t0 = time.perf_counter()
        np.save(yp, _write(xp, a.n, a.p, 0.1, seed=a.p))
        print(f"data: n = {a.n}, p = {a.p}, float32 file of "
              f"{os.path.getsize(xp) / 2**20:.0f} MB written in {time.perf_counter() - t0:.0f} s")
        res = {}
        for v in ("dask", "memmap"):
            spec = dict(X=xp, y=yp, variant=v, workers=a.workers, chunk=a.chunk)
            proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child",
                                   json.dumps(spec)], capture_output=True, text=True, env=env,
                                  cwd=src)
            if proc.returncode != 0:
                print(f"{v}: error {proc.stderr.strip().splitlines()[-3:]}")
                continue
            r = res[v] = json.loads(proc.stdout.strip().splitlines()[-1])
            print(f"| {v} | {r['time']:.1f} s | {r['phases']} | client peak RSS "
                  f"{r['peak_rss_mb']:.0f} MB | support {r['support']} |", flush=True)
        if len(res) == 2:
            same = res["dask"]["support"] == res["memmap"]["support"]
            print(f"same release: {same}; time dask / memmap "
                  f"{res['dask']['time'] / res['memmap']['time']:.2f}")


if __name__ == "__main__":
    main()
