"""Named studies: every measurement of the documentation as a module run by name.

A study module has ``main(argv=None)``: it parses its own options (argparse), prints its
progress and its markdown table(s) on standard output, and runs on its own.  The research
studies are not installed: they live in a clone's ``experiments/studies/`` (run there as
``python -m experiments.studies.NAME [options]``); :data:`STUDIES` lists the few installed
here (``python -m mipdp.experiments.studies.NAME``) and :func:`study_modules` finds both by
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
import sys
import time
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["STUDIES", "study_modules", "get_study", "params_to_argv", "run_module_study",
           "split_tables", "merge_tables"]

logger = logging.getLogger(__name__)

#: the study modules installed with the package (the others live in a clone's
#: ``experiments/studies/``, next to ``experiments/studies.toml``)
STUDIES: dict[str, str] = {
    "bench_real_data": "five real regression sets with public ranges (exact laws)",
}


def study_modules(folder: str | Path | None = None) -> dict[str, str]:
    """The study modules a studies file can name: study name -> importable module name.

    The installed ones (:data:`STUDIES`), and, when ``folder`` (the folder of a studies
    file, e.g. a clone's ``experiments/``) holds a package ``studies/``, its modules
    (imported as ``experiments.studies.NAME`` with the folder's parent on ``sys.path``).
    """
    mods = {name: f"{__name__}.{name}" for name in STUDIES}
    if folder is not None:
        folder = Path(folder).resolve()
        if (folder / "studies" / "__init__.py").is_file():
            for f in sorted((folder / "studies").glob("[a-z]*.py")):
                mods.setdefault(f.stem, f"{folder.name}.studies.{f.stem}")
    return mods


def get_study(name: str, folder: str | Path | None = None) -> ModuleType:
    """The module of the study ``name`` (see :func:`study_modules` for ``folder``)."""
    mods = study_modules(folder)
    if name not in mods:
        raise ValueError(f"study: unknown study module {name!r}; known: {sorted(mods)}")
    if folder is not None and not mods[name].startswith(f"{__name__}."):
        root = str(Path(folder).resolve().parent)
        if root not in sys.path:
            sys.path.insert(0, root)
    return importlib.import_module(mods[name])


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
                     smoke: bool = False, folder: str | Path | None = None) -> Path:
    """Run a configured study (its module once per entry of ``runs``); write its files.

    ``folder``: the folder of the studies file (where its ``studies/`` modules are, see
    :func:`study_modules`).  Returns ``RESULTS/NAME`` (see the module docstring for its
    files).
    """
    mod = get_study(module, folder)
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
