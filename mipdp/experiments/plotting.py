"""PNG figures of a study (matplotlib, Agg backend): one line per method against ``n``.

* ``recovery.png`` — fraction of draws equal to the true support (Prastakos et al., 2025, Figure 1);
* ``f1.png`` — support F1;
* ``utility_loss.png`` — ``L(Ŝ) − L(S*)``;
* ``test_mse.png`` — test MSE with objective-perturbation coefficients (utility studies);
* ``time.png`` — wall time per trial (all draws), log scale;
* ``p_truth.png`` — the MIP methods' exact probability that one draw is the truth (mean
  over trials; certified intervals drawn as bands where lower and upper bounds differ),
  the exponential mechanism's own certified ``P(truth)`` (black, dashed) and the
  frequency of the truth over its extra draws.

Error bars are standard errors over trials.  Every title names the design, ``p``, ``s``,
``ε``, the loss, the trials and the draws.
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
          "mcmc": ("C3", "v"), "dp_sis": ("C4", "D"), "kendall": ("C5", "P"),
          "exponential": ("C6", "*"), "exponential_default": ("C9", "P"),
          "permute_and_flip": ("C7", "X"), "marginal": ("0.5", "x"), "abess": ("0.3", "+")}
#: non-private baselines are drawn dotted
_DOTTED = ("marginal", "abess")


def study_title(study: dict, trials) -> str:
    """``name: design (ρ), p, s, ε, loss, trials × draws`` of a study.json dict."""
    design = study.get("design", "seed002")
    rho = study.get("rho")
    d = f"{design} design" + (f", ρ={rho:g}" if rho is not None else "")
    return (f"{study.get('name')}: {d}, p={study['p']}, s={study['s']}, ε={study['eps']:g}, "
            f"{study['loss']}, {trials} trials × {study['draws']} draws")


def _trials(summary) -> str:
    t = summary["trials"][summary["trials"] > 0]
    if t.empty:
        return "0"
    lo, hi = int(t.min()), int(t.max())
    return str(hi) if lo == hi else f"{lo}–{hi}"


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
    written: list[Path] = []
    if summary.empty:
        return written
    title = study_title(study, _trials(summary))
    for metric, (fname, ylabel, logy) in _FIGS.items():
        col = f"{metric}_mean"
        if col not in summary.columns or summary[col].isna().all():
            continue
        fig, ax = plt.subplots(figsize=(6.4, 4.4))
        for method, g in summary.groupby("method", sort=False):
            g = g.sort_values("n")
            color, marker = _STYLE.get(method, (None, "o"))
            ax.errorbar(g["n"], g[col], yerr=g[f"{metric}_se"], label=_label(method),
                        color=color, marker=marker, capsize=3, lw=1.5, ms=5,
                        ls=":" if method in _DOTTED else "-")
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
    path = _plot_p_truth(summary, title, out_dir / f"{prefix}p_truth.png")
    if path is not None:
        written.append(path)
    pd.DataFrame(summary).to_csv(out_dir / f"{prefix}summary.csv", index=False)
    return written


def _label(method: str) -> str:
    return f"{method} (not private)" if method in _DOTTED else method


def _plot_p_truth(summary, title: str, path):
    """Exact / certified P(one draw = truth) of the MIP methods and the EM's own."""
    import matplotlib.pyplot as plt
    if "p_truth_lo_mean" not in summary.columns or summary["p_truth_lo_mean"].isna().all():
        return None
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    if "em_truth_lo_mean" in summary.columns:
        em = summary.dropna(subset=["em_truth_lo_mean"]).groupby("n")[
            ["em_truth_lo_mean", "em_truth_hi_mean"]].first().sort_index()
        if not em.empty:
            ax.plot(em.index, em["em_truth_lo_mean"], "k--", lw=2.2, alpha=0.6,
                    label="exponential mechanism, exact (reference)")
    for method, g in summary.dropna(subset=["p_truth_lo_mean"]).groupby("method", sort=False):
        g = g.sort_values("n")
        color, marker = _STYLE.get(method, (None, "o"))
        ax.errorbar(g["n"], g["p_truth_lo_mean"], yerr=g["p_truth_lo_se"], color=color,
                    marker=marker, capsize=3, lw=1.5, ms=5,
                    label=f"{method}: P(draw = truth)")
        if (g["p_truth_hi_mean"] - g["p_truth_lo_mean"]).abs().max() > 1e-3:
            ax.fill_between(g["n"], g["p_truth_lo_mean"], g["p_truth_hi_mean"], color=color,
                            alpha=0.2, label=f"{method}: certified bounds")
        if (method == "exponential" and "p_truth_freq_mean" in g
                and g["p_truth_freq_mean"].notna().any()):
            ax.plot(g["n"], g["p_truth_freq_mean"], color=color, ls=":", marker="o", ms=3,
                    label="exponential: frequency over extra draws")
    ax.set_xlabel("n")
    ax.set_ylabel("probability that one draw is the true support")
    ax.set_ylim(-0.03, 1.03)
    ax.set_title(title, fontsize=8)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_all(path, out_dir=None) -> list[Path]:
    """Figures of every study under ``path`` (into each study's ``figures/``, or
    ``out_dir`` with the study name as file prefix)."""
    written = []
    for root in find_studies(path):
        prefix = f"{root.name}_" if out_dir is not None else ""
        written += plot_study(root, out_dir, prefix)
    return written
