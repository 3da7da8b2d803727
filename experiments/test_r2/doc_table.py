"""The table of docs/real_data.md: test R² of every method, s = 3 (or --s), ε = 1 / ε = 5.

Reads the cells of ``bench.py``; ``bounds=None`` is the package's rule
(:func:`mipdp.bounds_free.default_bounds_free` on the training rows' ``n``: the Kendall
score or the ranks), applied to the two exact laws.

    python experiments/test_r2/doc_table.py --out results/test_r2 --frac 0.1 --s 3
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import ADDED, HINGE, REGRESSION, SYNTH, load, load_cells  # noqa: E402

from mipdp.bounds_free import default_bounds_free  # noqa: E402

COLS = [("default", "bounds=None"), ("ranks", '"ranks"'), ("kendall_score", '"kendall"'),
        ("dpkendall", "DPKendall"), ("public", "public ranges"),
        ("private", '"private"'), ("dp_sis", "DP-SIS"), ("noisy_iht", "noisy IHT")]


def figure(cells, m, eps, n_train, task):
    if m == "default":
        loss = "least_squares" if task == "regression" else "hinge"
        m = ("kendall_score" if default_bounds_free(n_train, eps, loss=loss) == "kendall"
             else "ranks")
    if m not in cells[0]["laws"]:
        return None
    return float(np.mean([c["laws"][m][eps] @ c["test_values"] for c in cells]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="results/test_r2")
    ap.add_argument("--frac", type=float, default=0.1)
    ap.add_argument("--s", type=int, default=3)
    ap.add_argument("--splits", type=int, default=10)
    a = ap.parse_args(argv)
    out = Path(a.out)
    lines = ["| data | n | mean support | best training support | "
             + " | ".join(t for _, t in COLS) + " |", "|---|---|---|---|" + "---|" * len(COLS)]
    ses = []
    for name in REGRESSION + ADDED + SYNTH + HINGE:
        cells = load_cells(out, name, a.frac, a.splits, a.s)
        if not cells:
            continue
        d = load(name)
        n_train = len(d.y) - round(a.frac * len(d.y))
        best = [c["scale"][1] for c in cells]
        row = [f"{np.mean([c['scale'][0] for c in cells]):.2f}", f"{np.mean(best):.2f}"]
        for m, _ in COLS:
            v = [figure(cells, m, e, n_train, d.task) for e in (1.0, 5.0)]
            row.append("n/a" if v[0] is None else f"{v[0]:.2f} / {v[1]:.2f}")
        for e in (1.0, 5.0):
            t = [c["laws"]["dpkendall"][e] @ c["test_values"] for c in cells]
            ses.append(np.std(t, ddof=1) / np.sqrt(len(t)))
        tag = " (hinge: accuracy)" if name in HINGE else ""
        lines.append(f"| {name}{tag} | {len(d.y)} | " + " | ".join(row) + " |")
    print("\n".join(lines))
    print(f"\nstandard errors over splits (DPKendall's): {np.min(ses):.3f} to {np.max(ses):.3f}, "
          f"median {np.median(ses):.3f}; splits: {a.splits}")


if __name__ == "__main__":
    main()
