"""Reproduce seed 004's synthetic study (Table 1, uncorrelated design) with mipdp.screening.

Design (seed 004 §6.1, after Raj et al. 2016): X ∈ R^{n×d} with N(0, 1) entries, scaled by
its largest |entry| so that ||x_i||_∞ <= 1; w* has 35 entries +1 and 35 entries −1 at random
positions; y = X w*. DP-FW / ADP-Screen / RNM-Screen with λ = 50, T = 1000, ε1 = 4.9,
δ1 = 1/4000, ε2 = 0.1, δ2 = 1/12000, random initial point in the λ-ℓ1 ball, bounds
(b_x, b_y) = (1, λ) (seed 004 assumes |y_i| <= λ; nothing is clipped). ADP-Screen screens
every 50th iteration. Each method runs with both noise calibrations:

* ``seed``: the seeds' formulas (reproduction; no proven guarantee);
* ``rigorous``: replace-one sensitivities proven in mipdp.screening (a real (ε, δ) guarantee).

Two non-private references are added: Frank-Wolfe from 0 and Frank-Wolfe from the random start
with the exact safe rule at every iteration.

Metrics against the true support S* (|S*| = 70): TPR = |nz ∩ S*|/|S*|, FPR = |nz \\ S*|/(d − |S*|),
F1 = TP/(TP + (FP + FN)/2) (seed 004's definition), sparsity = |nz|/d; mean ± standard error
over trials (a fresh dataset and fresh noise per trial).

    python -m experiments.studies.seed004_screening --trials 20 \
        --out results/seed004_screening.md
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")   # one BLAS thread per process: much faster for gemv

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from concurrent.futures import ProcessPoolExecutor  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from tqdm import tqdm  # noqa: E402

from mipdp import screening  # noqa: E402
from mipdp._validation import check_random_state  # noqa: E402
from mipdp.exceptions import PrivacyLeakWarning  # noqa: E402

SEED004_TABLE1 = {"TPR": 0.829, "FPR": 0.475, "F1": 0.291, "sparsity": 0.504}
METRICS = ("TPR", "FPR", "F1", "sparsity", "seconds")


def make_data(n: int, d: int, k: int, rng: np.random.Generator):
    """Seed 004's uncorrelated synthetic design."""
    X = rng.standard_normal((n, d))
    X /= np.abs(X).max()
    w = np.zeros(d)
    pos = rng.permutation(d)[: 2 * k]
    w[pos[:k]], w[pos[k:]] = 1.0, -1.0
    return X, X @ w, w != 0


def metrics(coef: np.ndarray, truth: np.ndarray, seconds: float) -> dict:
    nz = coef != 0
    tp, fp, fn = int(np.sum(nz & truth)), int(np.sum(nz & ~truth)), int(np.sum(~nz & truth))
    return {"TPR": tp / truth.sum(), "FPR": fp / (~truth).sum(),
            "F1": tp / (tp + (fp + fn) / 2) if tp + fp + fn else 1.0,
            "sparsity": nz.mean(), "seconds": seconds}


def run_trial(job: tuple) -> tuple[dict, dict]:
    """One dataset, every method; returns {label: metrics} and {label: noise description}."""
    seq, a = job
    rng_data, rng_alg = (check_random_state(s) for s in seq.spawn(2))
    X, y, truth = make_data(a["n"], a["d"], a["k"], rng_data)
    lam, T = a["lam"], a["n_iter"]
    common = {"bounds": (1.0, lam), "init": "random"}
    budgets = {"eps_opt": a["eps1"], "delta_opt": a["delta1"], "eps_screen": a["eps2"],
               "delta_screen": a["delta2"]}
    out, noise = {}, {}
    for cal in a["calibrations"]:
        runs = {
            "DP-FW": lambda cal=cal: screening.dp_frank_wolfe(
                X, y, lam, T, a["eps1"], a["delta1"], calibration=cal, random_state=rng_alg,
                **common),
            "ADP-Screen": lambda cal=cal: screening.adp_screen(
                X, y, lam, T, **budgets, screen_every=50, calibration=cal,
                random_state=rng_alg, **common),
            "RNM-Screen": lambda cal=cal: screening.rnm_screen(
                X, y, lam, T, **budgets, calibration=cal, random_state=rng_alg, **common),
        }
        for name, run in runs.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PrivacyLeakWarning)
                t0 = time.perf_counter()
                res = run()
            label = f"{name} ({cal})"
            out[label] = metrics(res.coef_, truth, time.perf_counter() - t0)
            noise[label] = "; ".join(f"{k}: scale {c.scale:.4g}, ε_iter {c.epsilon_iter:.3g}"
                                     for k, c in res.privacy.items())
    if a["nonprivate"]:
        t0 = time.perf_counter()
        res = screening.dp_frank_wolfe(X, y, lam, T, np.inf, bounds=(1.0, lam), init="zero")
        out["FW from 0 (non-private)"] = metrics(res.coef_, truth, time.perf_counter() - t0)
        t0 = time.perf_counter()
        res = screening.adp_screen(X, y, lam, T, np.inf, None, np.inf, None, screen_every=1,
                                   **common)
        out["FW + exact safe rule every iteration (non-private)"] = metrics(
            res.coef_, truth, time.perf_counter() - t0)
    return out, noise


def summarise(rows: list[dict]) -> dict:
    labels = list(rows[0])
    table: dict = {}
    for lab in labels:
        table[lab] = {}
        for m in METRICS:
            v = np.array([r[lab][m] for r in rows])
            se = v.std(ddof=1) / np.sqrt(v.size) if v.size > 1 else float("nan")
            table[lab][m] = (float(v.mean()), float(se))
    return table


def to_markdown(table: dict, noise: dict, a: dict, command: str, wall: float) -> str:
    lines = [f"Seed 004 synthetic study — {a['trials']} trials, n = {a['n']}, d = {a['d']}, "
             f"70 true non-zeros, λ = {a['lam']:g}, T = {a['n_iter']}, (ε1, δ1) = "
             f"({a['eps1']:g}, 1/{1 / a['delta1']:.0f}), (ε2, δ2) = ({a['eps2']:g}, "
             f"1/{1 / a['delta2']:.0f}), seed {a['seed']}. Mean ± s.e.; wall time {wall:.0f} s.",
             "", f"Command: `{command}`", "",
             "| method (calibration) | TPR | FPR | F1 | sparsity | s/run |",
             "|---|---|---|---|---|---|"]
    for lab, row in table.items():
        cells = [f"{row[m][0]:.3f} ± {row[m][1]:.3f}" for m in METRICS[:4]]
        lines.append(f"| {lab} | " + " | ".join(cells) + f" | {row['seconds'][0]:.2f} |")
    t1 = SEED004_TABLE1
    lines += ["", f"Seed 004 Table 1 (uncorrelated, RNM-Screen): TPR {t1['TPR']}, FPR {t1['FPR']}, "
              f"F1 {t1['F1']}, sparsity {t1['sparsity']}.", "", "Noise scales (first trial):", ""]
    lines += [f"- {lab}: {desc}" for lab, desc in noise.items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--n", type=int, default=3000)
    ap.add_argument("--d", type=int, default=600)
    ap.add_argument("--k", type=int, default=35, help="entries +1 and entries −1 in w*")
    ap.add_argument("--n-iter", type=int, default=1000)
    ap.add_argument("--lam", type=float, default=50.0)
    ap.add_argument("--eps1", type=float, default=4.9)
    ap.add_argument("--delta1", type=float, default=1 / 4000)
    ap.add_argument("--eps2", type=float, default=0.1)
    ap.add_argument("--delta2", type=float, default=1 / 12000)
    ap.add_argument("--calibrations", default="seed,rigorous")
    ap.add_argument("--no-nonprivate", action="store_true", help="skip the non-private rows")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (one trial each)")
    ap.add_argument("--out", default="results/seed004_screening.md")
    ns = ap.parse_args(argv)
    a = {k: getattr(ns, k) for k in ("trials", "n", "d", "k", "n_iter", "lam", "eps1", "delta1",
                                     "eps2", "delta2", "seed")}
    a["calibrations"] = [c.strip() for c in ns.calibrations.split(",") if c.strip()]
    a["nonprivate"] = not ns.no_nonprivate
    jobs = [(s, a) for s in np.random.SeedSequence(ns.seed).spawn(ns.trials)]
    t0 = time.perf_counter()
    if ns.jobs > 1:
        with ProcessPoolExecutor(ns.jobs) as pool:
            results = list(tqdm(pool.map(run_trial, jobs), total=len(jobs), desc="trials"))
    else:
        results = [run_trial(j) for j in tqdm(jobs, desc="trials")]
    wall = time.perf_counter() - t0
    table = summarise([r[0] for r in results])
    command = "python -m experiments.studies.seed004_screening " + " ".join(
        sys.argv[1:] if argv is None else argv)
    md = to_markdown(table, results[0][1], a, command.strip(), wall)
    print(md)
    out = Path(ns.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
