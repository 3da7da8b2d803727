"""How large must n be?  The exponential mechanism's P(release = truth) against n (docs/guide.md).

Seed 002's regression design (s = 5, rho = 0.1, SNR = 5, bounds 0.5, ridge 120, radius
1.1), eps = 1, for p = 100, 1000 and 10 000.  For every (p, n) and data seed:

* ``freq``: the frequency of the truth over ``--draws`` draws of the exact sampler
  (``private_bss(method="exponential")`` then ``result.mechanism.sample``), with the time
  to the first draw;
* ``lo``, ``hi``: certified bounds on the EM's P(truth) by
  :func:`mipdp.experiments.em_reference.em_truth_probability` (the 2-mistake ball
  evaluated exactly at p = 100, the 1-ball at p = 1000; skipped at p = 10 000, where the
  frequency is the figure).

    python -m experiments.studies.guide_em_vs_n --out docs/figures/guide_em_vs_n
    python -m experiments.studies.guide_em_vs_n --p 100 --n 1000 2000 --trials 1   # quick

Writes ``<out>.csv`` (one row per (p, n, trial)) and ``<out>.png``.  Resumable: rows already
in the CSV are not recomputed.
"""

from __future__ import annotations

import argparse
import csv
import math
import time
import warnings
from pathlib import Path

import numpy as np

from mipdp import private_bss
from mipdp.datasets import make_bss_regression
from mipdp.exceptions import CertificationError
from mipdp.experiments.em_reference import em_truth_probability

GRID = {100: [1000, 1500, 2000, 2500, 3000, 4000, 5000, 6000],
        1000: [2000, 3000, 4000, 5000, 6000, 8000],
        10000: [3000, 4000, 6000, 8000]}
B, RIDGE, RADIUS, S, EPS = 0.5, 120.0, 1.1, 5, 1.0
FIELDS = ["p", "n", "trial", "freq", "draws", "first_draw_s", "per_draw_ms", "lo", "hi",
          "reference_s", "note"]


def one(p: int, n: int, trial: int, draws: int, time_limit: float) -> dict:
    X, y, truth = make_bss_regression(n=n, p=p, s=S, random_state=trial)
    row = {"p": p, "n": n, "trial": trial, "draws": draws, "note": ""}
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = private_bss(X, y, S, EPS, bounds=(B, B), ridge=RIDGE, radius=RADIUS,
                              random_state=trial, time_limit=time_limit)
        row["first_draw_s"] = time.perf_counter() - t0
        t1 = time.perf_counter()
        more = res.mechanism.sample(np.random.default_rng(10_000 + trial), draws)
        row["per_draw_ms"] = 1e3 * (time.perf_counter() - t1) / draws
        row["freq"] = float(np.mean(np.all(np.sort(more, axis=1) == truth, axis=1)))
    except CertificationError:
        row.update(first_draw_s=time.perf_counter() - t0, per_draw_ms=math.nan, freq=math.nan,
                   note=f"sampler stopped by time_limit={time_limit:g}s")
    if p <= 1000:
        t1 = time.perf_counter()
        ref = em_truth_probability(X, y, truth, EPS, s=S, ball=2 if p <= 100 else 1,
                                   bounds=(B, B), ridge=RIDGE, radius=RADIUS)
        row.update(lo=ref["lo"], hi=ref["hi"], reference_s=time.perf_counter() - t1)
    else:
        row.update(lo=math.nan, hi=math.nan, reference_s=math.nan)
    return row


def plot(rows: list[dict], path: Path, trials: int, draws: int) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.6, 4.4))
    for (p, color) in zip(sorted({r["p"] for r in rows}), ("C0", "C1", "C2"), strict=False):
        sel = [r for r in rows if r["p"] == p]
        ns = sorted({r["n"] for r in sel})
        f = [np.nanmean([r["freq"] for r in sel if r["n"] == n]) for n in ns]
        ax.plot(ns, f, "o-", color=color, label=f"p = {p}: frequency over {draws} exact draws")
        if p <= 1000:
            lo = [np.nanmean([r["lo"] for r in sel if r["n"] == n]) for n in ns]
            hi = [np.nanmean([r["hi"] for r in sel if r["n"] == n]) for n in ns]
            ax.fill_between(ns, lo, hi, color=color, alpha=0.25,
                            label=f"p = {p}: certified bounds on P(truth)")
    ax.set_xlabel("n")
    ax.set_ylabel("P(one release = true support)")
    ax.set_ylim(-0.03, 1.03)
    ps = ", ".join(str(p) for p in sorted({r["p"] for r in rows}))
    ax.set_title(f"exponential mechanism: seed002 design, ρ=0.1, p={ps}, s={S}, ε={EPS:g}, "
                 f"least squares,\n"
                 f"up to {trials} data sets per n, {draws} draws", fontsize=8)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--p", type=int, nargs="+", default=list(GRID))
    ap.add_argument("--n", type=int, nargs="+", help="these n for every p (default: GRID)")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--time-limit", type=float, default=600.0)
    ap.add_argument("--out", default="results/guide_em_vs_n")
    ap.add_argument("--plot-only", action="store_true", help="plot the rows already in the CSV")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    csv_path = out.with_suffix(".csv")
    rows = []
    if csv_path.exists():
        with csv_path.open() as fh:
            rows = [{k: (float(v) if k not in ("note",) and v != "" else v) for k, v in r.items()}
                    for r in csv.DictReader(fh)]
            for r in rows:
                for k in ("p", "n", "trial", "draws"):
                    r[k] = int(r[k])
    done = {(r["p"], r["n"], r["trial"]) for r in rows}
    for p in ([] if args.plot_only else args.p):
        for n in (args.n or GRID[p]):
            for trial in range(args.trials):
                if (p, n, trial) in done:
                    continue
                t0 = time.perf_counter()
                row = one(p, n, trial, args.draws, args.time_limit)
                rows.append(row)
                print(f"p={p:5d} n={n:5d} trial={trial} freq={row['freq']:.3f} "
                      f"P in [{row['lo']:.3f}, {row['hi']:.3f}] first draw "
                      f"{row['first_draw_s']:.1f}s ({time.perf_counter() - t0:.1f}s) {row['note']}",
                      flush=True)
                with csv_path.open("w", newline="") as fh:
                    w = csv.DictWriter(fh, fieldnames=FIELDS)
                    w.writeheader()
                    w.writerows(rows)
    plot(rows, out.with_suffix(".png"), int(max(int(r["trial"]) for r in rows)) + 1, args.draws)
    print(out.with_suffix(".png"))


if __name__ == "__main__":
    main()
