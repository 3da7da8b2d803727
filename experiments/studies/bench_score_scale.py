"""The default score at large p: time of the first release and frequency of the truth.

Seed 002's design (s = 5, ρ = 0.1, ε = 1, b = 0.5), one data set per p, ``--draws`` exact
draws from one envelope (further draws are cheap), the default score and (``--seed-score``)
the seed's λ = 120, r = 1.1 beside it.

    python -m experiments.studies.bench_score_scale --p 10000 100000 --n 3000

``--n-jobs 1 2 -1`` runs the default score once per ``n_jobs`` (``-1``: all cores) on the
same data, checks that the releases are identical, prints each phase's time per
``n_jobs`` and, from the ``n_jobs = 1`` and ``2`` times, each phase's parallel fraction
``f = 2 (1 - T_2/T_1)`` (Amdahl) with the speed-up it predicts on 16 and 64 cores,
``1 / ((1 - f) + f/N)``.  ``--abess`` fits abess (non-private best subset, support size
5) on the same data in the same run; ``--parallel-fraction`` profiles an ``n_jobs=1`` call
and prints the share of each phase spent in the parallel maps (Amdahl's ``f``, less
sensitive to a loaded machine than a ratio of two runs).  The load average is printed with
every row (the
machine may be shared):

    python -m experiments.studies.bench_score_scale --p 10000 100000 --n 3000 --draws 100 \
        --n-jobs 1 2 -1 --abess
    python -m experiments.studies.bench_score_scale --p 10000 100000 --n 3000 --draws 100 \
        --parallel-fraction
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

from mipdp import private_bss
from mipdp.datasets import make_bss_regression


def _load() -> str:
    return "load {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def _other(timings: dict) -> float:
    """Validation, clipping and products: the call's time outside its named phases."""
    return timings["total"] - sum(v for k, v in timings.items() if k != "total")


def _amdahl(t1: float, t2: float) -> str:
    if t1 <= 0.05:
        return "-"
    f = min(1.0, max(0.0, 2.0 * (1.0 - t2 / t1)))
    return (f"f={f:.2f}, x{1 / ((1 - f) + f / 16):.1f} on 16, "
            f"x{1 / ((1 - f) + f / 64):.1f} on 64")


def _n_jobs_run(X, y, truth, a, p) -> None:
    runs = {}
    for nj in a.n_jobs:
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = private_bss(X, y, 5, 1.0, bounds=(0.5, 0.5), n_draws=a.draws,
                              random_state=0, time_limit=a.time_limit, n_jobs=nj)
        wall = time.perf_counter() - t0
        tm = dict(res.timings)
        tm["other"] = _other(tm)
        runs[nj] = (wall, tm, res.supports)
        phases = {k: round(v, 2) for k, v in tm.items() if v >= 0.05}
        print(f"p={p} n={a.n} n_jobs={nj}: {wall:.1f} s; phases {phases}; {_load()}",
              flush=True)
    first = runs[a.n_jobs[0]][2]
    same = all(np.array_equal(r[2], first) for r in runs.values())
    print(f"p={p}: identical releases for n_jobs {a.n_jobs}: {same}", flush=True)
    if 1 in runs and 2 in runs:
        t1, t2 = runs[1][1], runs[2][1]
        print(f"p={p}: speed-up n_jobs=2 / n_jobs=1: total x{runs[1][0] / runs[2][0]:.2f}",
              flush=True)
        for k in t1:
            if k == "total" or t1[k] < 0.05:
                continue
            print(f"  {k}: {t1[k]:.2f} s -> {t2.get(k, 0.0):.2f} s; "
                  f"{_amdahl(t1[k], t2.get(k, 0.0))}", flush=True)
        print(f"  total: {_amdahl(runs[1][0], runs[2][0])}", flush=True)


#: where each caller of mipdp._parallel.parallel_map runs (the phase its time counts in)
_CALLER_PHASE = {"_first_pass": "other", "gram_matvec": "warm_start",
                 "one_swap_values": "warm_start", "build_envelope": "class_k"}


def _parallel_fraction(X, y, a, p) -> None:
    """Share of an n_jobs=1 call spent inside the parallel maps (cProfile), per phase:
    less sensitive to the machine's load than a ratio of two timed runs."""
    import cProfile
    import pstats
    prof = cProfile.Profile()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prof.enable()
        res = private_bss(X, y, 5, 1.0, bounds=(0.5, 0.5), n_draws=a.draws, random_state=0,
                          time_limit=a.time_limit, n_jobs=1)
        prof.disable()
    tm = dict(res.timings)
    tm["other"] = _other(tm)
    tm["class_k"] = sum(v for k, v in tm.items() if k.startswith("class_"))
    par: dict = {}
    for (_, _, name), (_, _, _, _, callers) in pstats.Stats(prof).stats.items():  # type: ignore[attr-defined]
        if name == "parallel_map":
            for c, v in callers.items():
                ph = _CALLER_PHASE.get(c[2], c[2])
                par[ph] = par.get(ph, 0.0) + v[3]
    total = tm["total"]
    f = sum(par.values()) / total
    print(f"p={p} parallel fraction (n_jobs=1, profiled {total:.1f} s): f={f:.2f}; "
          f"Amdahl x{1 / ((1 - f) + f / 2):.2f} on 2, x{1 / ((1 - f) + f / 16):.2f} on 16, "
          f"x{1 / ((1 - f) + f / 64):.2f} on 64; {_load()}", flush=True)
    for ph in ("other", "warm_start", "class_k", "sampling"):
        if tm.get(ph, 0.0) >= 0.05:
            print(f"  {ph}: {tm[ph]:.2f} s, in parallel maps {par.get(ph, 0.0):.2f} s, "
                  f"f={min(1.0, par.get(ph, 0.0) / tm[ph]):.2f}", flush=True)


def _abess(X, y, truth, p, n) -> None:
    from abess.linear import LinearRegression
    t0 = time.perf_counter()
    model = LinearRegression(support_size=5).fit(X, y)
    wall = time.perf_counter() - t0
    found = np.sort(np.flatnonzero(model.coef_))
    print(f"p={p} n={n} abess (non-private, support size 5): {wall:.1f} s, support "
          f"{'= truth' if np.array_equal(found, np.sort(truth)) else found.tolist()}; "
          f"{_load()}", flush=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--p", nargs="+", type=int, default=[10_000, 100_000])
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--seed-score", action="store_true")
    ap.add_argument("--time-limit", type=float, default=1800.0)
    ap.add_argument("--n-jobs", nargs="+", type=int, default=None,
                    help="n_jobs values to compare (e.g. 1 2 -1); phase times per value")
    ap.add_argument("--parallel-fraction", action="store_true",
                    help="profile an n_jobs=1 call: share of each phase in the parallel maps")
    ap.add_argument("--abess", action="store_true",
                    help="also fit abess (non-private, support size 5) on the same data")
    a = ap.parse_args(argv)
    for p in a.p:
        X, y, truth = make_bss_regression(n=a.n, p=p, s=5, random_state=p)
        if a.parallel_fraction:
            _parallel_fraction(X, y, a, p)
        if a.n_jobs:
            _n_jobs_run(X, y, truth, a, p)
        if a.n_jobs or a.parallel_fraction:
            if a.abess:
                _abess(X, y, truth, p, a.n)
            continue
        scores: list[tuple[str, dict]] = [("default", {})] + (
            [("seed", dict(ridge=120.0, radius=1.1))]
                                      if a.seed_score else [])
        for tag, kw in scores:
            t0 = time.perf_counter()
            try:
                res = private_bss(X, y, 5, 1.0, bounds=(0.5, 0.5), n_draws=a.draws,
                                  random_state=0, time_limit=a.time_limit, **kw)
            except Exception as exc:  # noqa: BLE001 - report and go on
                print(f"p={p} n={a.n} {tag}: {type(exc).__name__}: {exc}", flush=True)
                continue
            wall = time.perf_counter() - t0
            freq = float(np.mean([np.array_equal(S, truth) for S in res.supports]))
            phases = {k: round(v, 1) for k, v in res.timings.items() if v >= 0.5}
            print(f"p={p} n={a.n} {tag}: first release (all {a.draws} draws) {wall:.1f} s, "
                  f"frequency of the truth {freq:.3f}; phases {phases}", flush=True)
        if a.abess:
            _abess(X, y, truth, p, a.n)


if __name__ == "__main__":
    main()
