"""The tables of docs/experiments.md: rendered from results, and the one command that makes them.

    mipdp experiment report experiments/studies.toml --results results \
          --update-doc docs/experiments.md [--smoke] [--only NAME ...] [--no-run]

runs every study of the studies file whose results are missing (:func:`run_missing`),
then rewrites the blocks of the page (:func:`update_doc`):

* ``<!-- table STUDY METRIC [digits=K] [sci] [notrials] [methods=a,b,...] -->`` ...
  ``<!-- /table -->``: the table of one metric of a runner study (:func:`tables`);
* ``<!-- real STUDY -->`` ... ``<!-- /real -->``: ``results/STUDY/tables.md`` of the
  real-data benchmark (``kind = "real"``);
* ``<!-- study STUDY [K] -->`` ... ``<!-- /study -->``: the K-th table (default: all) of
  a module study (``results/STUDY/tables.md``, :mod:`mipdp.experiments.studies`; the
  research modules live in a clone's ``experiments/studies/``).

A block whose results are absent is left as it is.  ``--smoke`` runs every study at tiny
sizes into ``RESULTS/smoke/`` (and reads the page's tables from there): it proves the
studies run end to end, and its figures mean nothing.

Per (n, method) of a runner study: mean over finished trials ± standard error;
``p_truth`` is the exact
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
import re
from pathlib import Path

import numpy as np

from mipdp.experiments.runner import load_table, summarize

ORDER = ["exponential", "exponential_default", "top_r", "mistakes", "mcmc", "samp_agg", "dp_sis",
         "kendall", "marginal", "abess"]


def _fmt(mean, se, digits=3, sci=False):
    if mean is None or (isinstance(mean, float) and np.isnan(mean)):
        return "—"
    if sci:
        return f"{mean:.{digits}e}"
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


def tables(root: Path, metrics: list[str], header: bool = True, digits: int = 3,
           sci: bool = False, trials_column: bool = True,
           order: list[str] | None = None) -> str:
    study = json.loads((root / "study.json").read_text())
    summ = summarize(load_table(root))
    order = ORDER if order is None else order
    methods = [m for m in order if m in set(summ["method"])] + sorted(
        set(summ["method"]) - set(order))
    out = [] if not header else [
        f"Study `{root.name}`: design {study.get('design', 'seed002')}, ρ = {study['rho']}, "
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
        tail = " | trials |" if trials_column else " |"
        out.append("| " + " | ".join(head) + tail)
        out.append("|" + "---|" * (len(head) + int(trials_column)))
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
                    row.append(_fmt(r[f"{metric}_mean"], r[f"{metric}_se"], digits, sci))
                if r["trials"] > 0 and unf:
                    row[-1] += f" ({unf} not finished)"
            if metric == "p_truth" and "exponential" in cols and (("exponential", n) in by.index):
                freq = by.loc[("exponential", n)].get("p_truth_freq_mean", np.nan)
                row.append("—" if freq is None or np.isnan(freq) else f"{freq:.3f}")
            elif metric == "p_truth" and "exponential" in cols:
                row.append("—")
            done = [t for t in trials if t > 0]
            if trials_column:
                row.append(str(min(done)) if done and min(done) == max(done)
                           else f"{min(done)}–{max(done)}" if done else "0")
            out.append("| " + " | ".join(row) + " |")
    return "\n".join(out)


_TABLE = re.compile(r"(<!-- table (\S+) (\S+)((?: \S+)*) -->\n)(.*?)(<!-- /table -->)", re.S)
_REAL = re.compile(r"(<!-- real (\S+) -->\n)(.*?)(<!-- /real -->)", re.S)
_STUDY = re.compile(r"(<!-- study (\S+)(?: (\d+))? -->\n)(.*?)(<!-- /study -->)", re.S)


def _table_options(tokens: str) -> dict:
    opts: dict = {}
    for tok in tokens.split():
        if tok.startswith("digits="):
            opts["digits"] = int(tok.split("=", 1)[1])
        elif tok == "sci":
            opts["sci"] = True
        elif tok == "notrials":
            opts["trials_column"] = False
        elif tok.startswith("methods="):
            opts["order"] = tok.split("=", 1)[1].split(",")
        else:
            raise ValueError(f"table marker: unknown option {tok!r} (digits=K, sci, notrials, "
                             "methods=a,b,...)")
    return opts


def update_doc(doc: Path, results: Path) -> list[str]:
    """Rewrite every table block of ``doc`` whose results exist; returns the blocks written.

    Blocks: ``<!-- table STUDY METRIC [options] -->``, ``<!-- real STUDY -->`` and
    ``<!-- study STUDY [K] -->`` (see the module docstring).
    """
    from .studies import split_tables
    doc, results = Path(doc), Path(results)
    text = doc.read_text(encoding="utf-8")
    written: list[str] = []

    def fill(m):
        root = results / m.group(2)
        if not (root / "study.json").exists():
            return m.group(0)
        written.append(f"table {m.group(2)} {m.group(3)}")
        body = tables(root, [m.group(3)], header=False, **_table_options(m.group(4)))
        return m.group(1) + body.strip() + "\n" + m.group(6)

    def fill_real(m):
        f = results / m.group(2) / "tables.md"
        if not f.exists():
            return m.group(0)
        written.append(f"real {m.group(2)}")
        return m.group(1) + f.read_text(encoding="utf-8").strip() + "\n" + m.group(4)

    def fill_study(m):
        f = results / m.group(2) / "tables.md"
        if not f.exists():
            return m.group(0)
        found = split_tables(f.read_text(encoding="utf-8"))
        if m.group(3) is not None:
            k = int(m.group(3))
            if not 1 <= k <= len(found):
                raise ValueError(f"{doc}: block 'study {m.group(2)} {k}': "
                                 f"{f} has {len(found)} table(s)")
            found = found[k - 1:k]
        written.append(f"study {m.group(2)}" + (f" {m.group(3)}" if m.group(3) else ""))
        body = "\n\n".join("\n".join(t) for t in found)
        return m.group(1) + body + "\n" + m.group(5)

    text = _TABLE.sub(fill, text)
    text = _REAL.sub(fill_real, text)
    text = _STUDY.sub(fill_study, text)
    doc.write_text(text, encoding="utf-8")
    return written


def doc_blocks(doc: Path) -> list[str]:
    """The study names the table blocks of a page read."""
    text = Path(doc).read_text(encoding="utf-8")
    names = [m.group(2) for m in _TABLE.finditer(text)]
    names += [m.group(2) for m in _REAL.finditer(text)]
    names += [m.group(2) for m in _STUDY.finditer(text)]
    return list(dict.fromkeys(names))


def is_done(entry, results: Path) -> bool:
    """Has the study results under ``results`` (a runner study: any; a module: its tables)?"""
    root = Path(results) / entry.name
    if entry.kind == "module":
        return (root / "tables.md").exists()
    if entry.kind == "real":
        return (root / "tables.md").exists()
    return (root / "study.json").exists()


def run_entry(entry, results: Path, smoke: bool = False, jobs: int | None = None) -> Path:
    """Run one study of a studies file into ``results`` (resuming a runner study)."""
    from .studies import run_module_study
    if entry.kind == "module":
        return run_module_study(entry.name, entry.module, entry.module_runs(smoke), results,
                                smoke=smoke, folder=entry.folder)
    cfg = entry.runner_config(smoke)
    njobs = jobs if jobs is not None else (1 if smoke else int(entry.run.get("jobs", 1)))
    if entry.kind == "real":
        from .real_bench import run_real_study
        run_real_study(cfg, results, jobs=njobs)
    else:
        from .runner import run_study
        run_study(cfg, results, jobs=njobs)
    return Path(results) / entry.name


def run_missing(entries: dict, results: Path, smoke: bool = False, only=None,
                jobs: int | None = None, log=None) -> list[str]:
    """Run every study of ``entries`` (or of ``only``) without results; returns their names."""
    import time
    names = list(only) if only else list(entries)
    unknown = [n for n in names if n not in entries]
    if unknown:
        raise ValueError(f"only: unknown studies {unknown}; known: {list(entries)}")
    ran = []
    for name in names:
        entry = entries[name]
        if is_done(entry, results):
            continue
        t0 = time.perf_counter()
        run_entry(entry, results, smoke=smoke, jobs=jobs)
        if log is not None:
            log(f"{name}: ran in {time.perf_counter() - t0:.1f} s -> {Path(results) / name}")
        ran.append(name)
    return ran


def main(argv=None) -> None:
    """``python -m mipdp.experiments.report RESULTS/STUDY``: the tables of one runner study."""
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root")
    ap.add_argument("--metrics", nargs="+", default=["p_truth", "exact", "f1", "time_s"])
    args = ap.parse_args(argv)
    print(tables(Path(args.root), args.metrics))


if __name__ == "__main__":
    main()
