"""PNG figures of a study (matplotlib, Agg backend): one line per method against ``n``.

* ``recovery.png`` — fraction of draws equal to the true support (seed 002, Figure 1);
* ``f1.png`` — support F1;
* ``utility_loss.png`` — ``L(Ŝ) − L(S*)``;
* ``test_mse.png`` — test MSE with objective-perturbation coefficients (utility studies);
* ``time.png`` — wall time per trial (all draws), log scale.

Error bars are standard errors over trials.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["plot_study", "plot_all", "find_studies"]

_FIGS = {
    "exact": ("recovery", "fraction of draws = true support", False),
    "f1": ("f1", "support F1", False),
    "utility_loss": ("utility_loss", "utility loss  L(Ŝ) − L(S*)", False),
    "test_mse": ("test_mse", "test MSE (private coefficients)", False),
    "time_s": ("time", "wall time per trial [s]", True),
}
_STYLE = {"top_r": ("C0", "o"), "mistakes": ("C1", "s"), "samp_agg": ("C2", "^"),
          "mcmc": ("C3", "v"), "dp_sis": ("C4", "D"), "kendall": ("C5", "P")}


def find_studies(path) -> list[Path]:
    """Study directories (holding ``study.json``) at ``path`` or one level below."""
    path = Path(path)
    if (path / "study.json").exists():
        return [path]
    return sorted(p.parent for p in path.glob("*/study.json"))


def plot_study(root, out_dir=None, prefix: str = "") -> list[Path]:
    """Write the figures of the study in ``root``; returns the PNG paths."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    from .runner import load_table, summarize
    root = Path(root)
    study = json.loads((root / "study.json").read_text())
    summary = summarize(load_table(root))
    out_dir = Path(out_dir) if out_dir is not None else root / "figures"
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    if summary.empty:
        return written
    title = (f"{study.get('name')}: p={study['p']}, s={study['s']}, ε={study['eps']:g}, "
             f"{study['loss']}, {int(summary['trials'].max())} trials × {study['draws']} draws")
    for metric, (fname, ylabel, logy) in _FIGS.items():
        col = f"{metric}_mean"
        if col not in summary.columns or summary[col].isna().all():
            continue
        fig, ax = plt.subplots(figsize=(6.4, 4.4))
        for method, g in summary.groupby("method", sort=False):
            g = g.sort_values("n")
            color, marker = _STYLE.get(method, (None, "o"))
            ax.errorbar(g["n"], g[col], yerr=g[f"{metric}_se"], label=method, color=color,
                        marker=marker, capsize=3, lw=1.5, ms=5)
        ax.set_xlabel("n")
        ax.set_ylabel(ylabel)
        if logy:
            ax.set_yscale("log")
        if metric in ("exact", "f1"):
            ax.set_ylim(-0.03, 1.03)
        ax.set_title(title, fontsize=8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        path = out_dir / f"{prefix}{fname}.png"
        fig.savefig(path, dpi=120)
        plt.close(fig)
        written.append(path)
    pd.DataFrame(summary).to_csv(out_dir / f"{prefix}summary.csv", index=False)
    return written


def plot_all(path, out_dir=None) -> list[Path]:
    """Figures of every study under ``path`` (into each study's ``figures/``, or
    ``out_dir`` with the study name as file prefix)."""
    written = []
    for root in find_studies(path):
        prefix = f"{root.name}_" if out_dir is not None else ""
        written += plot_study(root, out_dir, prefix)
    return written
