"""Least squares, Huber and hinge on a dask X: dask computes per release, and time.

Least squares on a tall dask X takes its sufficient statistics in one ``dask.compute``
(mipdp.statistics); Huber and the hinge loss use the general lazy path
(mipdp.data.ClippedDesign: X persisted on the workers when it fits, one compute per
product).  Counts every ``dask.compute`` / ``.compute()`` made during one release on a
``LocalCluster`` of 2 worker processes, and times the same release on the numpy arrays.

    python -m experiments.studies.bench_dask_losses --n 200000 --p 30
"""

from __future__ import annotations

import argparse
import time
import warnings

import dask
import dask.array as da
import dask.base
import numpy as np


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--p", type=int, default=30)
    ap.add_argument("--chunk", type=int, default=25_000)
    args = ap.parse_args(argv)
    from distributed import Client, LocalCluster

    from mipdp import private_bss
    warnings.simplefilter("ignore")
    count = {"n": 0}
    orig_method, orig_fn = dask.base.DaskMethodsMixin.compute, dask.compute

    def method(self, **kw):
        count["n"] += 1
        return orig_method(self, **kw)

    def fn(*a, **kw):
        count["n"] += 1
        return orig_fn(*a, **kw)

    dask.base.DaskMethodsMixin.compute, dask.compute = method, fn  # type: ignore[method-assign]
    try:
        rng = np.random.default_rng(0)
        n, p = args.n, args.p
        X = 0.25 * rng.standard_normal((n, p))
        y = X[:, [1, 3, 5, 7, 9]] @ np.full(5, 5 ** -0.5) + 0.25 * rng.standard_normal(n)
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=":0") as cluster, Client(cluster):
            for loss in ("least_squares", "huber", "hinge"):
                yy = np.sign(y) if loss == "hinge" else y
                kw = {"bounds": (0.5, 0.5), "random_state": 0, "loss": loss}
                count["n"] = 0
                t = time.perf_counter()
                r = private_bss(da.from_array(X, chunks=(args.chunk, p)),
                                da.from_array(yy, chunks=args.chunk), 5, 1.0, **kw)
                t_dask, computes = time.perf_counter() - t, count["n"]
                t = time.perf_counter()
                r2 = private_bss(X, yy, 5, 1.0, **kw)
                t_np = time.perf_counter() - t
                print(f"{loss}: dask {t_dask:.2f} s, {computes} computes; numpy {t_np:.2f} s; "
                      f"same release: {np.array_equal(r.supports, r2.supports)}", flush=True)
    finally:    # dask restored: other studies may run in this process
        dask.base.DaskMethodsMixin.compute, dask.compute = (  # type: ignore[method-assign]
            orig_method, orig_fn)

if __name__ == "__main__":
    main()
