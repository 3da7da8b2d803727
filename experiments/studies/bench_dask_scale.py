"""Scale runs of ``private_bss`` on Dask data larger than the cluster's memory.

The data are generated lazily, chunk by chunk, on the workers of a
``distributed.LocalCluster`` (``--workers`` processes of one thread, ``--memory-limit``
each): every chunk comes from its own ``numpy.random.Generator`` seeded by
``(seed, chunk index)``, so the data are the same whatever the schedule, and no chunk is
ever held by the client.

* ``tall`` — n × p float64, chunks of ``--chunk`` rows × all p columns.  X has i.i.d.
  N(0, 0.25²) entries, y = X_S β* + 0.25 e with S = {1, 3, 5, 7, 9} and β* = 1/√5 (seed
  002's support and coefficients).  Least squares goes through the sufficient statistics
  (mipdp.statistics: XcᵀXc, Xcᵀyc, ycᵀyc in one ``dask.compute``), then the MIP and the
  sampler run on the client.
* ``wide`` — n × p float32, chunks of n rows × ``--chunk`` columns, the same law; through
  the DP-SIS pre-screen on the cluster (``prescreen=("dp_sis", k, 0.6)``: one pass for
  ``|x_jᵀy|`` of the clipped columns, the canonical top-k on the client), then the
  selection on the k candidates' columns (only their chunks are computed again).

Reported (JSON on stdout): wall time of the release, its phases, peak RSS of each worker
(sampled every ``--sample`` seconds with ``client.run``), the workers' memory limits, the
client's peak RSS, the release and its guarantee.

    nice -n 10 python -m experiments.studies.bench_dask_scale tall --n 100000000 --p 100
    nice -n 10 python -m experiments.studies.bench_dask_scale wide --n 2000 --p 10000000
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import threading
import time

import numpy as np

SUPPORT = np.array([1, 3, 5, 7, 9])
SCALE = 0.25     # sd of the entries of X and of the noise of y


def _tall_block(seed: int, p: int, block_info=None) -> np.ndarray:
    info = block_info[None]
    i, rows = info["chunk-location"][0], info["chunk-shape"][0]
    rng = np.random.default_rng([seed, 0, i])
    return SCALE * rng.standard_normal((rows, p))


def _wide_block(seed: int, n: int, block_info=None) -> np.ndarray:
    info = block_info[None]
    j, cols = info["chunk-location"][1], info["chunk-shape"][1]
    rng = np.random.default_rng([seed, 0, j])
    out = rng.standard_normal((n, cols), dtype=np.float32)
    out *= np.float32(SCALE)
    return out


def _noise_block(seed: int, block_info=None) -> np.ndarray:
    info = block_info[None]
    i, rows = info["chunk-location"][0], info["chunk-shape"][0]
    return SCALE * np.random.default_rng([seed, 1, i]).standard_normal(rows)


def lazy_data(case: str, n: int, p: int, chunk: int, seed: int):
    """``(X, y)`` as dask arrays, generated chunk by chunk where they are computed."""
    import dask.array as da
    s = SUPPORT.size
    beta = np.full(s, 1.0 / np.sqrt(s))
    if case == "tall":
        rows = da.core.normalize_chunks((chunk,), (n,))[0]
        X = da.map_blocks(_tall_block, seed, p, chunks=(rows, (p,)), dtype=np.float64,
                          meta=np.empty((0, 0)))
        y_chunks = rows
    else:
        cols = da.core.normalize_chunks((chunk,), (p,))[0]
        X = da.map_blocks(_wide_block, seed, n, chunks=((n,), cols), dtype=np.float32,
                          meta=np.empty((0, 0), dtype=np.float32))
        y_chunks = (n,)
    noise = da.map_blocks(_noise_block, seed, chunks=(y_chunks,), dtype=np.float64,
                          meta=np.empty((0,)))
    y = X[:, SUPPORT].astype(np.float64) @ beta + noise
    return X, y


class _Peak(threading.Thread):
    """Samples every worker's RSS (``client.run``) until stopped; keeps the maxima."""

    def __init__(self, client, every: float) -> None:
        super().__init__(daemon=True)
        self.client, self.every = client, every
        self.peak: dict[str, int] = {}
        self.samples = 0
        self._stop_evt = threading.Event()

    def run(self) -> None:
        while not self._stop_evt.is_set():
            try:
                rss = self.client.run(_rss)
            except (OSError, TimeoutError, KeyError):   # a worker restarting: try again
                rss = {}
            for w, v in rss.items():
                self.peak[w] = max(self.peak.get(w, 0), int(v))
            self.samples += 1
            self._stop_evt.wait(self.every)

    def stop(self) -> None:
        self._stop_evt.set()
        self.join()


def _rss() -> int:
    import psutil  # type: ignore[import-untyped]
    return psutil.Process().memory_info().rss


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("case", choices=["tall", "wide"])
    ap.add_argument("--n", type=int, required=True)
    ap.add_argument("--p", type=int, required=True)
    ap.add_argument("--chunk", type=int, default=None,
                    help="rows (tall) or columns (wide) per chunk; default about 25 M entries")
    ap.add_argument("--s", type=int, default=5)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--k", type=int, default=20, help="candidates of the pre-screen (wide)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-limit", default="6GB")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sample", type=float, default=1.0)
    args = ap.parse_args(argv)
    import warnings

    from distributed import Client, LocalCluster

    from mipdp import private_bss
    warnings.simplefilter("ignore")
    other = args.p if args.case == "tall" else args.n
    chunk = args.chunk or max(1, 25_000_000 // other)
    X, y = lazy_data(args.case, args.n, args.p, chunk, args.seed)
    kw = dict(bounds=(0.5, 0.5), random_state=args.seed, time_limit=3600)
    if args.case == "wide":
        kw["prescreen"] = ("dp_sis", args.k, 0.6)
    out = {"command": " ".join(["python", "experiments/bench_dask_scale.py"] + sys.argv[1:]),
           "case": args.case, "n": args.n, "p": args.p, "chunk": chunk, "s": args.s,
           "eps": args.eps, "X_GB": X.nbytes / 1e9, "chunks": int(X.npartitions),
           **{k: v for k, v in kw.items() if k != "time_limit"}}
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      memory_limit=args.memory_limit, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        limits = {a: w["memory_limit"] for a, w in client.scheduler_info()["workers"].items()}
        peak = _Peak(client, args.sample)
        peak.start()
        t0 = time.perf_counter()
        res = private_bss(X, y, args.s, args.eps, **kw)
        out["time_s"] = time.perf_counter() - t0
        peak.stop()
    out["timings"] = {k: round(float(v), 2) for k, v in res.timings.items()}
    out["worker_peak_rss_GB"] = {w: round(v / 1e9, 2) for w, v in sorted(peak.peak.items())}
    out["worker_memory_limit_GB"] = {w: round(v / 1e9, 2) for w, v in sorted(limits.items())}
    out["rss_samples"] = peak.samples
    out["client_peak_rss_GB"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6, 2)
    out["support"] = res.support.tolist()
    out["truth"] = SUPPORT.tolist()
    out["guarantee"] = str(res.guarantee)
    out["epsilon"] = res.epsilon
    if args.case == "wide":
        cols = res.info["prescreen"]["columns"]
        out["truth_in_candidates"] = int(np.isin(SUPPORT, cols).sum())
    print(json.dumps(out, indent=1, default=str))
    return out


if __name__ == "__main__":
    main()
