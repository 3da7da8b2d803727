"""Benchmark of the hard enumerations of issue 11, against today's code in the same run.

Four problems, each released with ``method="top_r"``, ``"mistakes"`` and the default
``"exponential"`` (ε = 1, one draw, HiGHS):

* ``hinge_demo`` — ``mipdp demo --loss hinge``: seed 002's classification design
  (``make_bss_classification``, n = 3000, p = 100, s = 5, seed 0), b_x = 0.5, λ = 120,
  r = 1.1.
* ``cancer`` — scikit-learn's breast cancer data (569 × 30).  Split 70/30 (stratified,
  ``random_state=0``), **standardised with a scaler fitted on the training split**, and
  the selection runs on the 398 training rows (as ``experiments/breast_cancer_hinge.py``;
  ``--cancer-rows all`` runs on all 569 rows transformed by that scaler instead).
  Clipped to b_x = 0.5, hinge, λ = 1, r = 2, s = 5.
* ``digits`` — scikit-learn's digits, 3 (label +1) against 8 (−1): 357 × 64, pixels/16 − 0.5
  (so within b_x = 0.5: nothing is clipped), all 64 columns (10 of them constant),
  hinge, λ = 1, r = 2, s = 5.
* ``noise_ls`` — least squares on pure noise: X, y standard normal (seed 0), n = 500,
  p = 40, clipped to b_x = b_y = 0.5, λ = 120, r = 1.1, s = 5, with the exhaustive path
  off (``enumeration_options={"exhaustive_max": 0}``).

Every run is a fresh subprocess (the same harness for both codes): the current tree, and
*today's code* = a frozen copy of the baseline commit (``git archive`` of ``--baseline``,
default the commit issue 11 started from, unpacked under ``--cache``).  Each run gets
``time_limit=--limit`` (``private_bss`` raises ``CertificationError`` when it runs out:
the table then says ``>limit``).  The table prints both times and their ratio.

    python -m experiments.studies.bench_hard  # everything (~30 min)
    python -m experiments.studies.bench_hard --problems cancer --methods top_r
    python -m experiments.studies.bench_hard --no-baseline  # the current code only

Targets (2-core machine): hinge_demo <= 5 s; cancer <= 5 s; digits <= 30 s (top-R) and
<= 10 s (default); noise_ls <= 30 s (top-R).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tarfile
import time
import warnings

import numpy as np


def _checkout() -> str:
    """The checkout holding this file (the parent of ``experiments/``)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))


HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = _checkout()
BASELINE = "1713b66"
PROBLEMS = ("hinge_demo", "cancer", "digits", "noise_ls")
METHODS = ("top_r", "mistakes", "exponential")
TARGETS = {("hinge_demo", m): 5.0 for m in METHODS} | {("cancer", m): 5.0 for m in METHODS} | {
    ("digits", "top_r"): 30.0, ("digits", "exponential"): 10.0, ("noise_ls", "top_r"): 30.0}


def problem(name: str, cancer_rows: str = "train"):
    """``(X, y, private_bss keyword arguments)`` of a named problem."""
    if name == "hinge_demo":
        from mipdp.datasets import make_bss_classification
        X, y, _ = make_bss_classification(n=3000, p=100, s=5, random_state=0)
        return X, y, dict(s=5, loss="hinge", bounds=(0.5, None), ridge=120.0, radius=1.1)
    if name == "cancer":
        from sklearn.datasets import load_breast_cancer
        from sklearn.model_selection import train_test_split
        from sklearn.preprocessing import StandardScaler
        d = load_breast_cancer()
        X, y = d.data, np.where(d.target == 1, 1.0, -1.0)
        Xtr, _, ytr, _ = train_test_split(X, y, test_size=0.3, random_state=0, stratify=y)
        sc = StandardScaler().fit(Xtr)
        X, y = (sc.transform(Xtr), ytr) if cancer_rows == "train" else (sc.transform(X), y)
        return X, y, dict(s=5, loss="hinge", bounds=(0.5, None), ridge=1.0, radius=2.0)
    if name == "digits":
        from sklearn.datasets import load_digits
        d = load_digits()
        keep = np.isin(d.target, (3, 8))
        X = d.data[keep] / 16.0 - 0.5
        y = np.where(d.target[keep] == 3, 1.0, -1.0)
        return X, y, dict(s=5, loss="hinge", bounds=(0.5, None), ridge=1.0, radius=2.0)
    if name == "noise_ls":
        rng = np.random.default_rng(0)
        X, y = rng.standard_normal((500, 40)), rng.standard_normal(500)
        return X, y, dict(s=5, loss="least_squares", bounds=(0.5, 0.5), ridge=120.0,
                          radius=1.1, enumeration_options={"exhaustive_max": 0})
    raise ValueError(f"problem: unknown {name!r}; choose from {PROBLEMS}")


def worker(name: str, method: str, limit: float, cancer_rows: str) -> dict:
    """One release in this process; a JSON-able record."""
    from mipdp import private_bss
    from mipdp.exceptions import CertificationError
    X, y, kw = problem(name, cancer_rows)
    s = kw.pop("s")
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = private_bss(X, y, s, 1.0, method=method, time_limit=limit, random_state=0, **kw)
    except CertificationError as exc:
        return {"ok": False, "time": time.perf_counter() - t0, "error": str(exc)[:200]}
    elapsed = time.perf_counter() - t0
    phases = res.stats.get("phases", {})
    return {"ok": True, "time": elapsed,
            "solves": int(sum(ph.get("solves", 0) for ph in phases.values())),
            "evaluations": int(res.stats.get("n_evaluations", 0)),
            "phases": {k: round(v.get("time", 0.0), 3) for k, v in phases.items()},
            "optimum": [int(i) for i in np.asarray(res.candidates[0])]}


def baseline_tree(ref: str, cache: str) -> str:
    """A frozen copy of ``ref`` (its ``mipdp`` and ``solvers`` packages) under ``cache``."""
    sha = subprocess.run(["git", "-C", ROOT, "rev-parse", ref], check=True, capture_output=True,
                         text=True).stdout.strip()
    dest = os.path.join(cache, f"mipdp-{sha[:12]}")
    if not os.path.isdir(os.path.join(dest, "mipdp")):
        os.makedirs(dest, exist_ok=True)
        tar = subprocess.run(["git", "-C", ROOT, "archive", sha, "mipdp", "solvers"], check=True,
                             capture_output=True).stdout
        with tarfile.open(fileobj=io.BytesIO(tar)) as tf:
            tf.extractall(dest, filter="data")
    return dest


def run(tree: str, name: str, method: str, limit: float, cancer_rows: str) -> dict:
    """``worker`` in a subprocess that imports ``mipdp`` from ``tree``."""
    env = dict(os.environ, PYTHONPATH=tree)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", name, method,
           "--limit", str(limit), "--cancer-rows", cancer_rows]
    try:
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=2 * limit + 120,
                             cwd=tree)
    except subprocess.TimeoutExpired:
        return {"ok": False, "time": 2 * limit + 120, "error": "subprocess timed out"}
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith("{")]
    if out.returncode != 0 or not lines:
        return {"ok": False, "time": float("nan"), "error": out.stderr.strip()[-400:]}
    return json.loads(lines[-1])


def _fmt(r: dict | None, limit: float) -> str:
    if r is None:
        return "—"
    if not r["ok"]:
        return f">{limit:g} (not certified)" if "time_limit" in r.get("error", "") else "error"
    return f"{r['time']:.2f}"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--problems", nargs="+", default=list(PROBLEMS), choices=PROBLEMS)
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--limit", type=float, default=300.0,
                    help="time_limit of every release, seconds (default 300)")
    ap.add_argument("--baseline", default=BASELINE,
                    help=f"git ref of today's code (default {BASELINE})")
    ap.add_argument("--no-baseline", action="store_true", help="run the current code only")
    ap.add_argument("--cache", default=os.path.join(os.path.expanduser("~"), ".cache",
                                                    "mipdp-bench"),
                    help="where the baseline copy is unpacked")
    ap.add_argument("--cancer-rows", choices=["train", "all"], default="train")
    ap.add_argument("--worker", nargs=2, metavar=("PROBLEM", "METHOD"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        name, method = args.worker
        print(json.dumps(worker(name, method, args.limit, args.cancer_rows)), flush=True)
        return
    old_tree = None if args.no_baseline else baseline_tree(args.baseline, args.cache)
    print(f"current tree {ROOT}; today's code: "
          f"{'not run' if old_tree is None else args.baseline + ' at ' + old_tree}; "
          f"time_limit {args.limit:g} s; ε = 1, HiGHS, one draw", flush=True)
    rows = []
    for name in args.problems:
        for method in args.methods:
            new = run(ROOT, name, method, args.limit, args.cancer_rows)
            old = None if old_tree is None else run(old_tree, name, method, args.limit,
                                                    args.cancer_rows)
            rows.append((name, method, new, old))
            extra = (f" solves={new.get('solves')} evals={new.get('evaluations')} "
                     f"phases={new.get('phases')}" if new["ok"] else f" {new.get('error')}")
            print(f"{name:10s} {method:11s} new {_fmt(new, args.limit):>20s}  "
                  f"today {_fmt(old, args.limit):>20s}{extra}", flush=True)
            if old is not None and not old["ok"] and "time_limit" not in old.get("error", ""):
                print(f"   today's code failed: {old.get('error')}", flush=True)
    print("\n| problem | method | today (s) | new (s) | today / new | target (s) | "
          "MIP solves (new) |")
    print("|---|---|---|---|---|---|---|")
    for name, method, new, old in rows:
        ratio = "—"
        if old is not None and new["ok"]:
            ratio = f"{old['time'] / new['time']:.1f}" if old["ok"] else \
                f">{args.limit / new['time']:.0f}"
        target = TARGETS.get((name, method))
        print(f"| {name} | {method} | {_fmt(old, args.limit)} | {_fmt(new, args.limit)} | "
              f"{ratio} | {'—' if target is None else f'{target:g}'} | "
              f"{new.get('solves', '—')} |")


if __name__ == "__main__":
    main()
