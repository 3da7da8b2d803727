"""Markdown tables of a study directory (the tables of docs/experiments.md).

    python experiments/report_tables.py results/seed002_ls [--metrics exact p_truth f1 time_s]
    python experiments/report_tables.py --update-doc docs/experiments.md --results results

``--update-doc`` rewrites every block of the page between ``<!-- table STUDY METRIC -->``
and ``<!-- /table -->`` with the current table of ``results/STUDY``, and every block
between ``<!-- real STUDY -->`` and ``<!-- /real -->`` with ``results/STUDY/tables.md``
(the tables the real-data benchmark, ``kind = "real"``, writes).

Per (n, method): mean over finished trials ± standard error; ``p_truth`` is the exact
probability that one draw is the truth (an interval ``lo–hi`` where the bounds are only
certified), ``em`` the exponential mechanism's own certified P(truth) on the same data
(the mean over every reference cell of that n, whatever the methods' trial counts);
cells with unfinished trials say so; the last column gives the number of finished
trials (a range when methods differ).  Every figure is an evaluation quantity computed with
the truth: **not private**.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from mipdp.experiments.runner import load_table, summarize

ORDER = ["exponential", "exponential_default", "top_r", "mistakes", "mcmc", "samp_agg", "dp_sis", "kendall",
         "marginal", "abess"]


def _fmt(mean, se, digits=3):
    if mean is None or (isinstance(mean, float) and np.isnan(mean)):
        return "—"
    return f"{mean:.{digits}f} ± {se:.{digits}f}" if se > 0 else f"{mean:.{digits}f}"


def _references(root: Path) -> dict:
    """``{n: [(lo, hi), ...]}`` of the exponential mechanism's reference cells (one per
    finished ``(n, trial)``), read directly so that no method's trial count filters them."""
    out: dict = {}
    for f in sorted((root / "trials" / "_em_reference").glob("n*_t*.json")):
        try:
            meta = json.loads(f.read_text())["meta"]
        except (ValueError, KeyError):
            continue
        if meta.get("finished", True) and "em_truth_lo" in meta:
            out.setdefault(int(meta["n"]), []).append((float(meta["em_truth_lo"]),
                                                       float(meta["em_truth_hi"])))
    return out


def tables(root: Path, metrics: list[str], header: bool = True) -> str:
    study = json.loads((root / "study.json").read_text())
    summ = summarize(load_table(root))
    methods = [m for m in ORDER if m in set(summ["method"])] + sorted(
        set(summ["method"]) - set(ORDER))
    out = [] if not header else [f"Study `{root.name}`: design {study.get('design', 'seed002')}, ρ = {study['rho']}, "
           f"p = {study['p']}, s = {study['s']}, ε = {study['eps']}, loss {study['loss']}, "
           f"{study['draws']} draws per trial; trials per cell in the last column."]
    by = summ.set_index(["method", "n"])
    ns = sorted(set(summ["n"]))
    refs = _references(root)
    for metric in metrics:
        if metric == "p_truth":
            cols = [m for m in methods if "p_truth_lo_mean" in by.columns
                    and by.loc[m]["p_truth_lo_mean"].notna().any()]
            head = ["n", "EM (reference)"] + cols + (["EM sampler: frequency"]
                                                     if "exponential" in cols else [])
            if header:
                out.append("\n**P(one draw = truth)** — exact, or `lo–hi` certified bounds:\n")
        else:
            cols = methods
            head = ["n"] + cols
            if header:
                out.append(f"\n**{metric}** (mean over trials ± SE):\n")
        out.append("| " + " | ".join(head) + " | trials |")
        out.append("|" + "---|" * (len(head) + 1))
        for n in ns:
            row = [str(n)]
            trials = []
            if metric == "p_truth":
                ref = refs.get(n)   # the reference cells themselves, one per (n, trial)
                if ref:
                    lo, hi = np.mean([r[0] for r in ref]), np.mean([r[1] for r in ref])
                    row.append(f"{lo:.3f}" if hi - lo < 5e-4 else f"{lo:.3f}–{hi:.3f}")
                else:
                    row.append("—")
            for m in cols:
                if (m, n) not in by.index:
                    row.append("—")
                    continue
                r = by.loc[(m, n)]
                trials.append(int(r["trials"]))
                unf = int(r.get("unfinished", 0))
                if r["trials"] == 0:
                    row.append(f"not finished ({unf})")
                elif metric == "p_truth":
                    lo, hi = r["p_truth_lo_mean"], r["p_truth_hi_mean"]
                    row.append(f"{lo:.3f}" if hi - lo < 5e-4 else f"{lo:.3f}–{hi:.3f}")
                elif metric == "time_s":
                    row.append(f"{r['time_s_mean']:.1f}")
                else:
                    row.append(_fmt(r[f"{metric}_mean"], r[f"{metric}_se"]))
                if r["trials"] > 0 and unf:
                    row[-1] += f" ({unf} not finished)"
            if metric == "p_truth" and "exponential" in cols and (("exponential", n) in by.index):
                freq = by.loc[("exponential", n)].get("p_truth_freq_mean", np.nan)
                row.append("—" if freq is None or np.isnan(freq) else f"{freq:.3f}")
            elif metric == "p_truth" and "exponential" in cols:
                row.append("—")
            done = [t for t in trials if t > 0]
            row.append(str(min(done)) if done and min(done) == max(done)
                       else f"{min(done)}–{max(done)}" if done else "0")
            out.append("| " + " | ".join(row) + " |")
    return "\n".join(out)


def update_doc(doc: Path, results: Path) -> None:
    import re
    text = doc.read_text(encoding="utf-8")
    pat = re.compile(r"(<!-- table (\S+) (\S+) -->\n)(.*?)(<!-- /table -->)", re.S)

    def fill(m):
        root = results / m.group(2)
        if not (root / "study.json").exists():
            return m.group(0)
        return m.group(1) + tables(root, [m.group(3)], header=False).strip() + "\n" + m.group(5)

    text = pat.sub(fill, text)
    real = re.compile(r"(<!-- real (\S+) -->\n)(.*?)(<!-- /real -->)", re.S)

    def fill_real(m):
        f = results / m.group(2) / "tables.md"
        if not f.exists():
            return m.group(0)
        return m.group(1) + f.read_text(encoding="utf-8").strip() + "\n" + m.group(4)

    doc.write_text(real.sub(fill_real, text), encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root", nargs="?")
    ap.add_argument("--metrics", nargs="+", default=["p_truth", "exact", "f1", "time_s"])
    ap.add_argument("--update-doc", help="rewrite the table blocks of this markdown page")
    ap.add_argument("--results", default="results", help="results directory (--update-doc)")
    args = ap.parse_args()
    if args.update_doc:
        update_doc(Path(args.update_doc), Path(args.results))
    else:
        print(tables(Path(args.root), args.metrics))


if __name__ == "__main__":
    main()
