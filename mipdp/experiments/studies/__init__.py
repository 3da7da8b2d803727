"""Named studies: every measurement of the documentation as a module run by name.

A study module has ``main(argv=None)``: it parses its own options (argparse), prints its
progress and its markdown table(s) on standard output, and runs on its own as
``python -m mipdp.experiments.studies.NAME [options]``.  :data:`STUDIES` registers them by
name; a configuration file (``experiments/studies.toml``, :func:`load_studies`) gives each
named study its module, its parameters (``args``, turned into the module's command-line
options by :func:`params_to_argv`) and the tiny parameters of its smoke run (``smoke``).

:func:`run_module_study` runs one configured study and writes, under ``RESULTS/NAME/``,

* ``output.txt``: everything the module printed;
* ``tables.md``: its markdown tables (one per block of ``|`` lines; the tables of several
  ``runs`` with the same header are merged into one table, in run order);
* ``params.json``: the parameters it ran with (and whether it was a smoke run).

:func:`mipdp.experiments.report.update_doc` copies ``tables.md`` into the blocks of a page
between ``<!-- study NAME -->`` (or ``<!-- study NAME K -->`` for its K-th table, from 1)
and ``<!-- /study -->``.  Every figure a study prints is an evaluation quantity computed
with the truth or the data without noise: **not private**.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import logging
import time
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["STUDIES", "get_study", "params_to_argv", "run_module_study", "split_tables",
           "merge_tables"]

logger = logging.getLogger(__name__)

#: study module name -> what it measures (the module's docstring says how)
STUDIES: dict[str, str] = {
    "bounds_free_speed": "time of the bounds-free releases against known bounds",
    "bench_correlated": "correlated designs: envelope variants and certified intervals",
    "bench_dask": "Dask input at scale (memory and time of the client)",
    "bench_explicit_search": "explicit search and refinements: time, work, draws' digest",
    "bench_dask_losses": "the losses' sufficient statistics on dask arrays",
    "bench_dask_scale": "Dask scale runs: tall n = 1e8 and wide p = 1e7",
    "bench_hard": "hard landscapes: hinge and real data, today's code against a baseline",
    "bench_mechanisms": "the samplers against the exponential mechanism (time, P(truth))",
    "bench_memory": "peak memory of dense, memmap and sparse input (fresh process per case)",
    "bench_neighbours": "add/remove against replace-one neighbours: laws and frequencies",
    "bench_parallel": "n_jobs = 1, 2, all: phase times, parallel fraction, abess",
    "bench_permute_flip": "permute-and-flip against the exponential mechanism",
    "bench_prescreen": "private pre-screens at large p: containment and P(truth)",
    "bench_private_bounds": "private clipping ranges against numeric bounds",
    "bench_real_data": "five real regression sets with public ranges (exact laws)",
    "bench_scale": "large p (1e4 ... 1e6, memmap) and correlated designs",
    "bench_score_scale": "the score's passes over X at large p",
    "bench_time_limit": "what a time limit releases at large p",
    "bench_utility": "the default score against the seed's, and the comparators",
    "breast_cancer_hinge": "hinge loss on scikit-learn's breast-cancer data",
    "calibrate_search_costs": "measured cost of a value and of a cut against the cost model",
    "dpk_lead": "DPKendall's lead on College and Boston: oracle pre-screen, ordered score",
    "envelope_slack": "slack of the linear envelope at large p",
    "guide_em_vs_n": "the exponential mechanism's P(truth) against n (the guide's figure)",
    "guide_intercept": "centring and the missing intercept (the guide)",
    "guide_real_data": "the guide's real-data walk-through",
    "mcmc_mixing": "MCMC's frequency of the truth against its chain length",
    "noisy_iht_prescreen": "noisy IHT after a pre-screen at p = 1000",
    "prescreen_large_p": "pre-screen time on a p = 1e6 memmap",
    "rank_redundancy": "the redundancy-aware Kendall score: exact laws, tuning and held-out",
    "rank_transforms": "stretched-rank / normal-score transforms: Δ, audit, tuning and held-out",
    "ranks_audit": "exact neighbour audit of the rank score",
    "ranks_combined": "combined rank scores (least squares and Kendall)",
    "ranks_hinge_intercept": "hinge on ranks with and without a constant column",
    "ranks_rho07": "ranks against known bounds and DPKendall at rho = 0.7",
    "ranks_scores": "candidate rank scores: exact laws on real sets and seed 002",
    "review_linear_envelope": "review of the linear envelope's regions",
    "score_rule_sweep": "the default score's ridge and radius rule",
    "seed004_screening": "seed 004's private screening study",
    "tune_noisy_iht": "noisy IHT's tuning",
}


def get_study(name: str) -> ModuleType:
    """The module of the registered study ``name``."""
    if name not in STUDIES:
        raise ValueError(f"study: unknown study module {name!r}; known: {sorted(STUDIES)}")
    return importlib.import_module(f"{__name__}.{name}")


def params_to_argv(params: dict[str, Any], out: Path | None = None) -> list[str]:
    """Command-line options of a parameter table.

    ``{"trials": 3, "comparator_draws": 30, "n": [1000, 2000], "timing": True}`` becomes
    ``["--trials", "3", "--comparator-draws", "30", "--n", "1000", "2000", "--timing"]``;
    ``False`` leaves the flag out; the key ``"positional"`` gives positional arguments;
    ``{out}`` in a string is the study's results directory.
    """
    argv: list[str] = []

    def text(v: Any) -> str:
        s = str(v)
        return s.replace("{out}", str(out)) if out is not None else s

    positional: list[str] = []
    for key, value in params.items():
        if key == "positional":
            vals = value if isinstance(value, list) else [value]
            positional += [text(v) for v in vals]
            continue
        flag = "--" + key.replace("_", "-")
        if value is True:
            argv.append(flag)
        elif value is False or value is None:
            continue
        elif isinstance(value, list):
            argv.append(flag)
            argv += [text(v) for v in value]
        else:
            argv += [flag, text(value)]
    return positional + argv   # first: an option taking a list would swallow them


def split_tables(text: str) -> list[list[str]]:
    """The markdown tables of a text: blocks of consecutive lines starting with ``|``."""
    tables: list[list[str]] = []
    block: list[str] = []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            block.append(line.rstrip())
        elif block:
            if len(block) >= 2 and set(block[1].replace("|", "").strip()) <= set("-: "):
                tables.append(block)
            block = []
    return tables


def merge_tables(tables: list[list[str]]) -> list[list[str]]:
    """Tables with the same header joined into one (rows in order), first-seen order."""
    merged: dict[str, list[str]] = {}
    for t in tables:
        if t[0] in merged:
            merged[t[0]] += t[2:]
        else:
            merged[t[0]] = list(t)
    return list(merged.values())


def run_module_study(name: str, module: str, runs: list[dict[str, Any]], results,
                     smoke: bool = False) -> Path:
    """Run a configured study (its module once per entry of ``runs``); write its files.

    Returns ``RESULTS/NAME`` (see the module docstring for its files).
    """
    mod = get_study(module)
    root = Path(results) / name
    root.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO()
    argvs = [params_to_argv(params, root) for params in runs]
    t0 = time.perf_counter()
    for argv in argvs:
        logger.info("study %s: python -m %s %s", name, mod.__name__, " ".join(argv))
        print(f"$ python -m {mod.__name__} {' '.join(argv)}".rstrip(), file=buf)
        # warnings filters set by a study stay inside it (several run in one process)
        with contextlib.redirect_stdout(buf), warnings.catch_warnings():
            mod.main(argv)
    wall = time.perf_counter() - t0
    text = buf.getvalue()
    (root / "output.txt").write_text(text, encoding="utf-8")
    tables = merge_tables(split_tables(text))
    (root / "tables.md").write_text("\n\n".join("\n".join(t) for t in tables) + "\n",
                                    encoding="utf-8")
    (root / "params.json").write_text(json.dumps(
        {"module": module, "runs": runs, "argv": argvs, "smoke": smoke,
         "wall_time_s": round(wall, 1)}, indent=1), encoding="utf-8")
    return root
