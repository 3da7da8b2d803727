"""Benchmark of ``n_jobs``: one release's phases on 1, 2 and all cores, with abess beside it.

Seed 002's design (:func:`mipdp.datasets.make_bss_regression`, ``s = 5``, ``ρ = 0.1``),
one data set per ``p`` (``random_state=p``), ``ε = 1``, bounds ``(0.5, 0.5)``, ``--draws``
exact draws, the default score and method (the exponential mechanism)::

    python -m experiments.studies.bench_parallel --p 10000 100000 --n 3000

For every ``p`` and every ``n_jobs`` (default ``1 2 -1``; ``-1``: all cores) one release
is timed by phase, from the enumeration's progress events (``enumeration_options=
{"progress": ...}``), in **wall-clock** and in **CPU** seconds (``time.process_time``: all
threads of this process; on a shared machine the CPU time is the steadier figure):

* ``warm_start`` — IHT and the one-swap local search;
* ``envelope`` — the class cuts and the mistake-class searches (run on forks of the
  enumerator, one per class, on the workers: :mod:`mipdp.enumeration.fork`);
* ``sampling`` — the draws;
* ``other`` — the rest of the call: validation, the clipping pass and the first products,
  building the sampler.

A small release (``p = 400``) runs first for every ``n_jobs``, untimed, so that lazy
imports and first calls are not counted in the first timed release.  The releases of all
``n_jobs`` are checked to be identical.  From the ``n_jobs = 1`` and
``2`` runs each phase gets two estimates of its parallel fraction ``f`` (Amdahl), clipped to
``[0, 1]``:

* ``f_wall = 2 (1 - T₂/T₁)`` from the two wall times;
* ``f_cpu = 2 (C₂ - T₂) / C₂`` from the ``n_jobs = 2`` run alone (``C₂`` its CPU time: a
  phase that keeps two threads busy for a time ``b`` and one thread for ``a`` has
  ``T₂ = a + b`` and ``C₂ = a + 2b``); other processes on the machine lengthen ``T₂`` and
  lower both estimates;

with the speed-up Amdahl's law predicts on 16 and 64 cores, ``1 / ((1 - f) + f/N)``.

Before the releases of every ``p``, one line says what two threads buy on this machine
against one (:func:`machine_scaling`, on the benchmark's own ``X``): cache-resident
arithmetic (the cores' ceiling), ``Xᵀv`` over row halves (a read-only pass over ``X``, as
the cuts and the warm start make), a clipped copy of row halves (a pass that reads and
writes, as clipping and ranking make), and ``Xᵀv`` with one BLAS thread against two — the
second BLAS thread that an ``n_jobs = 1`` release already uses.  Where passes over ``X``
are bound by memory bandwidth, a second worker cannot speed them up, whatever ``n_jobs``.
abess (:class:`abess.linear.LinearRegression`, support size 5, non-private) is fitted on
the same data in the same run when it is installed.  The load average is printed with
every row.  Every figure is computed from the data without noise: **not private**.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import os
import time
import warnings

import numpy as np

__all__ = ["main", "run_release", "amdahl", "machine_scaling"]

PHASES = ("warm_start", "envelope", "sampling")


def _load() -> str:
    return "load {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


class _PhaseClock:
    """Progress callback: wall and CPU seconds of the top-level phases."""

    def __init__(self) -> None:
        self.open: dict[str, tuple[float, float]] = {}
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}

    def __call__(self, event: dict) -> None:
        phase = event.get("phase")
        if phase not in PHASES:
            return
        now = (time.perf_counter(), time.process_time())
        if event.get("event") == "start":
            self.open[phase] = now
        elif event.get("event") == "done" and phase in self.open:
            w0, c0 = self.open.pop(phase)
            self.wall[phase] = self.wall.get(phase, 0.0) + now[0] - w0
            self.cpu[phase] = self.cpu.get(phase, 0.0) + now[1] - c0


def run_release(X, y, n_jobs: int, *, draws: int = 100, time_limit: float = 1800.0):
    """One release with ``n_jobs``: ``(supports, wall, cpu, maps)``; ``wall`` and ``cpu``
    are dicts of seconds per phase with ``"other"`` and ``"total"``, ``maps`` maps each
    phase to the CPU seconds of the pieces of each of its parallel maps
    (:data:`mipdp._parallel.OBSERVER`)."""
    from mipdp import _parallel, private_bss
    clock = _PhaseClock()
    maps: dict[str, list[list[float]]] = {}

    def observe(times: list[float]) -> None:
        phase = next(iter(clock.open), "other")
        maps.setdefault(phase, []).append(list(times))

    gc.collect()            # the previous release's arrays are freed before this one
    t0, c0 = time.perf_counter(), time.process_time()
    _parallel.OBSERVER = observe
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = private_bss(X, y, 5, 1.0, bounds=(0.5, 0.5), n_draws=draws,
                              random_state=0, time_limit=time_limit, n_jobs=n_jobs,
                              enumeration_options={"progress": clock})
    finally:
        _parallel.OBSERVER = None
    wall = dict(clock.wall, total=time.perf_counter() - t0)
    cpu = dict(clock.cpu, total=time.process_time() - c0)
    for d in (wall, cpu):
        d["other"] = d["total"] - sum(d.get(k, 0.0) for k in PHASES)
    maps["total"] = [m for k in (*PHASES, "other") for m in maps.get(k, [])]
    return np.asarray(res.supports), wall, cpu, maps


def _best_time(fn, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def machine_scaling(X: np.ndarray, *, rows: int | None = None) -> dict[str, float]:
    """Speed-ups of two threads over one on this machine, measured on ``X``.

    Returns a dict: ``compute`` (cache-resident arithmetic: ``sin`` on two small arrays),
    ``read`` (``Xᵀv`` over the two row halves of ``X``, one BLAS thread each), ``write``
    (a clipped copy of the two row halves of the first ``rows`` rows), ``blas`` (``Xᵀv``
    with two BLAS threads against one), and ``read_gbs`` / ``read2_gbs``, the read
    bandwidth of one and two threads in GB/s.  Each time is the best of three.
    """
    from concurrent.futures import ThreadPoolExecutor

    from threadpoolctl import threadpool_limits
    n = X.shape[0]
    h = n // 2
    v = np.linspace(-1.0, 1.0, n)
    small = np.linspace(0.0, 1.0, 2 * 20_000).reshape(2, -1)

    def spin(i: int) -> float:
        a = small[i].copy()
        for _ in range(300):
            np.sin(a, out=a)
        return float(a[0])

    def read(lo: int, hi: int) -> None:
        X[lo:hi].T @ v[lo:hi]

    m = rows or max(2, min(n, (512 << 20) // max(1, 8 * X.shape[1])))   # ~512 MB copied
    buf = np.empty((m, X.shape[1]))
    hm = m // 2

    def write(lo: int, hi: int) -> None:
        np.clip(X[lo:hi], -0.5, 0.5, out=buf[lo:hi])

    out: dict[str, float] = {}
    with ThreadPoolExecutor(2) as ex, threadpool_limits(1):
        for name, one, two in (
                ("compute", lambda: (spin(0), spin(1)),
                 lambda: list(ex.map(spin, (0, 1)))),
                ("read", lambda: read(0, n),
                 lambda: list(ex.map(read, (0, h), (h, n)))),
                ("write", lambda: write(0, m),
                 lambda: list(ex.map(write, (0, hm), (hm, m))))):
            t1, t2 = _best_time(one), _best_time(two)
            out[name] = t1 / t2
            if name == "read":
                out["read_gbs"], out["read2_gbs"] = X.nbytes / t1 / 1e9, X.nbytes / t2 / 1e9
    one_blas = _best_time(lambda: X.T @ v)
    with threadpool_limits(2):
        out["blas"] = one_blas / _best_time(lambda: X.T @ v)
    return out


def makespan(times: list[float], workers: int) -> float:
    """Wall time of pieces ``times`` handed in order to ``workers`` threads, each taking
    the next piece when it is free (as :func:`mipdp._parallel.parallel_map` does)."""
    free = [0.0] * max(1, workers)
    for t in times:
        i = min(range(len(free)), key=free.__getitem__)
        free[i] += t
    return max(free)


def predicted(cpu: float, maps: list[list[float]], workers: int) -> float:
    """A phase's wall time on ``workers`` idle cores, from an ``n_jobs = 1`` run: its CPU
    time outside the parallel maps, plus each map's :func:`makespan`."""
    inside = sum(sum(m) for m in maps)
    return max(0.0, cpu - inside) + sum(makespan(m, workers) for m in maps)


def amdahl(f: float, cores: int) -> float:
    """Amdahl's speed-up on ``cores`` of work with parallel fraction ``f``."""
    return 1.0 / ((1.0 - f) + f / cores)


def _fraction_wall(t1: float, t2: float) -> float:
    return min(1.0, max(0.0, 2.0 * (1.0 - t2 / t1))) if t1 > 0.05 else float("nan")


def _fraction_cpu(t2: float, c2: float) -> float:
    return min(1.0, max(0.0, 2.0 * (c2 - t2) / c2)) if c2 > 0.05 else float("nan")


def _abess(X, y, truth, p: int, n: int) -> None:
    try:
        from abess.linear import LinearRegression
    except ImportError:
        print(f"p={p}: abess is not installed (pip install abess)", flush=True)
        return
    t0, c0 = time.perf_counter(), time.process_time()
    model = LinearRegression(support_size=5).fit(X, y)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    found = np.sort(np.flatnonzero(model.coef_))
    what = "= truth" if np.array_equal(found, np.sort(truth)) else found.tolist()
    print(f"p={p} n={n} abess (non-private, support size 5): wall {wall:.2f} s, CPU "
          f"{cpu:.2f} s, support {what}; {_load()}", flush=True)


def _digest(supports: np.ndarray) -> str:
    return hashlib.sha1(np.ascontiguousarray(supports).tobytes()).hexdigest()[:12]


def main(argv=None) -> None:
    from mipdp.datasets import make_bss_regression
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--p", nargs="+", type=int, default=[10_000, 100_000])
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--draws", type=int, default=100)
    ap.add_argument("--n-jobs", nargs="+", type=int, default=[1, 2, -1])
    ap.add_argument("--repeats", type=int, default=1,
                    help="releases per n_jobs (alternating); the fastest total is reported")
    ap.add_argument("--time-limit", type=float, default=1800.0)
    ap.add_argument("--no-abess", action="store_true")
    ap.add_argument("--warmup-p", type=int, default=400,
                    help="p of the untimed warm-up release (0: none)")
    a = ap.parse_args(argv)
    print(f"cores: {len(os.sched_getaffinity(0))}; {_load()}", flush=True)
    # a small release first: the lazy imports and first calls are not timed with n_jobs=1
    if a.warmup_p:
        Xw, yw, _ = make_bss_regression(n=300, p=a.warmup_p, s=5, random_state=1)
        for nj in a.n_jobs:
            run_release(Xw, yw, nj, draws=3)
    for p in a.p:
        t0 = time.perf_counter()
        X, y, truth = make_bss_regression(n=a.n, p=p, s=5, random_state=p)
        print(f"p={p} n={a.n}: data made in {time.perf_counter() - t0:.1f} s", flush=True)
        ms = machine_scaling(X)
        print(f"p={p}: this machine, two threads against one: arithmetic in cache "
              f"x{ms['compute']:.2f}; read-only pass Xᵀv x{ms['read']:.2f} "
              f"({ms['read_gbs']:.0f} -> {ms['read2_gbs']:.0f} GB/s); read-write pass "
              f"(clipped copy) x{ms['write']:.2f}; BLAS Xᵀv on 2 threads against 1 "
              f"x{ms['blas']:.2f} (an n_jobs=1 release already has it); {_load()}",
              flush=True)
        best: dict = {}
        for _ in range(a.repeats):
            for nj in a.n_jobs:
                sup, wall, cpu, maps = run_release(X, y, nj, draws=a.draws,
                                                   time_limit=a.time_limit)
                ph = ", ".join(f"{k} {wall.get(k, 0.0):.2f}/{cpu.get(k, 0.0):.2f}"
                               for k in (*PHASES, "other", "total"))
                print(f"p={p} n_jobs={nj}: wall/CPU s: {ph}; release {_digest(sup)}; "
                      f"{_load()}", flush=True)
                if nj not in best or wall["total"] < best[nj][1]["total"]:
                    best[nj] = (sup, wall, cpu, maps)
        ref = best[a.n_jobs[0]][0]
        same = all(np.array_equal(r[0], ref) for r in best.values())
        print(f"p={p}: identical releases for n_jobs {a.n_jobs}: {same}", flush=True)
        if 1 in best and 2 in best:
            w1, w2, c2 = best[1][1], best[2][1], best[2][2]
            c1 = best[1][2]
            print(f"p={p}: n_jobs=2 against n_jobs=1: wall x{w1['total'] / w2['total']:.2f}, "
                  f"CPU {c1['total']:.2f} s -> {c2['total']:.2f} s", flush=True)
            for k in (*PHASES, "other", "total"):
                fw = _fraction_wall(w1.get(k, 0.0), w2.get(k, 0.0))
                fc = _fraction_cpu(w2.get(k, 0.0), c2.get(k, 0.0))
                est = "; ".join(
                    f"{tag}={f:.2f}: x{amdahl(f, 16):.2f} on 16, x{amdahl(f, 64):.2f} on 64"
                    for tag, f in (("f_wall", fw), ("f_cpu", fc)) if np.isfinite(f))
                print(f"  {k}: wall {w1.get(k, 0.0):.2f} -> {w2.get(k, 0.0):.2f} s, CPU "
                      f"{c1.get(k, 0.0):.2f} -> {c2.get(k, 0.0):.2f} s; {est or '-'}",
                      flush=True)
        if 1 in best:
            _, _, c1, m1 = best[1]
            print(f"p={p}: from the n_jobs=1 run's CPU times (load-free model: CPU outside "
                  f"the parallel maps + each map's schedule on N workers):", flush=True)
            for k in (*PHASES, "other", "total"):
                c, ms = c1.get(k, 0.0), m1.get(k, [])
                if c < 0.01:
                    continue
                inside = min(c, sum(sum(m) for m in ms))
                f = inside / c
                sp = {N: c / max(predicted(c, ms, N), 1e-9) for N in (2, 16, 64)}
                print(f"  {k}: CPU {c:.2f} s, in parallel maps {inside:.2f} s (f={f:.2f}, "
                      f"{len(ms)} maps); predicted x{sp[2]:.2f} on 2, x{sp[16]:.2f} on 16, "
                      f"x{sp[64]:.2f} on 64; Amdahl x{amdahl(f, 2):.2f} / "
                      f"x{amdahl(f, 16):.2f} / x{amdahl(f, 64):.2f}", flush=True)
        if not a.no_abess:
            _abess(X, y, truth, p, a.n)


if __name__ == "__main__":
    main()
