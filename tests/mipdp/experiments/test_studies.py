"""experiments/studies.toml: every study of the docs, its smoke run, and the one report command."""

import re
import shutil
from pathlib import Path

import pytest

from mipdp.cli import main
from mipdp.experiments.config import load_studies
from mipdp.experiments.report import doc_blocks, update_doc
from mipdp.experiments.studies import (
    STUDIES,
    get_study,
    merge_tables,
    params_to_argv,
    split_tables,
    study_modules,
)

ROOT = Path(__file__).resolve().parents[3]
FILE = ROOT / "experiments" / "studies.toml"
PAGE = ROOT / "docs" / "experiments.md"
#: a representative subset for the default run: two module studies (merged runs, one
#: table per run) and a runner study
SUBSET = ["permute_flip_timing", "real_regression", "noisy_iht_eps5"]


def test_experiments_folder_holds_the_files_and_the_studies():
    files = [p for p in (ROOT / "experiments").glob("*") if p.is_file()]
    assert len(files) <= 8, files
    studies = {p.stem for p in (ROOT / "experiments" / "studies").glob("[a-z]*.py")}
    assert not studies & set(STUDIES)          # a study is installed or in the clone, not both


def test_the_research_studies_run_from_the_clone():
    """Found by name next to the studies file, and importable as experiments.studies.NAME."""
    from experiments.studies import STUDIES as RESEARCH
    mods = study_modules(FILE.parent)
    assert set(mods) == set(STUDIES) | set(RESEARCH)
    assert mods["rank_transforms"] == "experiments.studies.rank_transforms"
    assert mods["bench_real_data"] == "mipdp.experiments.studies.bench_real_data"
    assert callable(get_study("ranks_audit", FILE.parent).main)
    assert set(study_modules()) == set(STUDIES)    # installed alone: only the package's


def test_a_research_study_runs_as_a_module_of_the_clone():
    """``python -m experiments.studies.NAME --help`` from the repository's root."""
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-m", "experiments.studies.ranks_audit", "--help"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "usage" in out.stdout


def test_every_study_is_configured_and_every_block_has_a_study():
    entries = load_studies(FILE)
    used = {e.module for e in entries.values() if e.kind == "module"}
    known = set(study_modules(FILE.parent))
    assert used == known, known ^ used     # every module is a configured study
    for entry in entries.values():
        if entry.kind == "module":
            assert entry.runs and all(isinstance(r, dict) for r in entry.runs)
        else:
            entry.runner_config(smoke=False)
            entry.runner_config(smoke=True)
    blocks = doc_blocks(PAGE)
    assert {"seed002_ls", "real_data", "bench_utility", "permute_flip_laws"} <= set(blocks)
    # a block names a study of the file (or the old utility run, made by the CLI)
    assert set(blocks) <= set(entries), set(blocks) - set(entries)


def test_every_table_of_the_page_is_in_a_block():
    inside, prev, loose = False, False, []
    for i, line in enumerate(PAGE.read_text(encoding="utf-8").splitlines(), 1):
        s = line.strip()
        if re.match(r"<!-- (table|real|study) ", s):
            inside = True
        elif re.match(r"<!-- /(table|real|study) -->", s):
            inside = False
        is_table = s.startswith("|")
        if is_table and not prev and not inside:
            loose.append(i)
        prev = is_table
    assert not loose, f"tables outside a regenerated block at lines {loose}"


def test_params_to_argv_and_tables():
    argv = params_to_argv({"trials": 3, "comparator_draws": 30, "n": [1, 2], "timing": True,
                           "quick": False, "positional": ["tall"], "csv": "{out}/r.csv"},
                          Path("R"))
    assert argv == ["tall", "--trials", "3", "--comparator-draws", "30", "--n", "1", "2",
                    "--timing", "--csv", "R/r.csv"]
    text = "x\n| a | b |\n|---|---|\n| 1 | 2 |\nnoise\n| a | b |\n|---|---|\n| 3 | 4 |\n\n|c|\n"
    tables = split_tables(text)
    assert len(tables) == 2                      # "|c|" alone is no table
    assert merge_tables(tables) == [["| a | b |", "|---|---|", "| 1 | 2 |", "| 3 | 4 |"]]


def test_unknown_study_module_is_refused(tmp_path):
    f = tmp_path / "s.toml"
    f.write_text('[x]\nmodule = "no_such_study"\n')
    with pytest.raises(ValueError, match="unknown study module 'no_such_study'"):
        load_studies(f)


def test_report_smoke_subset_rewrites_the_page(tmp_path, capsys):
    """The one command, in smoke mode, on a representative subset (default run)."""
    page = tmp_path / "experiments.md"
    shutil.copy(PAGE, page)
    before = page.read_text(encoding="utf-8")
    args = ["experiment", "report", str(FILE), "--results", str(tmp_path / "res"), "--smoke",
            "--only", *SUBSET, "--update-doc", str(page)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert f"{len(SUBSET)} studies run" in out
    for name in SUBSET:
        assert (tmp_path / "res" / "smoke" / name).is_dir()
    after = page.read_text(encoding="utf-8")
    assert after != before
    timing = re.search(r"<!-- study permute_flip_timing -->\n(.*?)<!-- /study -->", after, re.S)
    rows = [r for r in timing.group(1).splitlines() if r.startswith("| 30 |")]
    assert len(rows) == 6                       # six runs, one merged table, smoke's p = 30
    assert "| diabetes | 442 | 10 | 3 | 1 |" in after
    # the blocks of studies that did not run are left as they were
    assert "| 4000 | MCMC | 10000 | 50 | 1.00 | 1.000 | 139.8 |" in after
    assert main(args) == 0                      # nothing missing: nothing runs again
    assert "0 studies run" in capsys.readouterr().out


def test_update_doc_study_block_index(tmp_path):
    res = tmp_path / "r" / "s"
    res.mkdir(parents=True)
    (res / "tables.md").write_text("| a |\n|---|\n| 1 |\n\n| b |\n|---|\n| 2 |\n")
    page = tmp_path / "p.md"
    page.write_text("<!-- study s 2 -->\nold\n<!-- /study -->\n<!-- study t -->\nkept\n"
                    "<!-- /study -->\n")
    assert update_doc(page, tmp_path / "r") == ["study s 2"]
    assert page.read_text() == ("<!-- study s 2 -->\n| b |\n|---|\n| 2 |\n<!-- /study -->\n"
                                "<!-- study t -->\nkept\n<!-- /study -->\n")


@pytest.mark.slow
@pytest.mark.parametrize("name", list(load_studies(FILE)))
def test_every_study_runs_in_smoke_mode(name, tmp_path, capsys):
    args = ["experiment", "run", str(FILE), "--study", name, "--smoke", "--out", str(tmp_path)]
    assert main(args) == 0
    root = tmp_path / name
    assert (root / "tables.md").exists() or (root / "study.json").exists()


def test_the_docs_name_only_studies_that_exist():
    """Every study module and named study the docs mention exists; no removed script."""
    entries = load_studies(FILE)
    known = study_modules(FILE.parent)
    pages = [ROOT / "README.md", ROOT / "benchmarks" / "README.md",
             *sorted((ROOT / "docs").glob("*.md"))]
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for mod in re.findall(r"experiments\.studies\.([a-z]\w*)", text):
            assert mod in known, f"{page.name}: unknown study module {mod}"
        # only the installed study keeps the package's prefix; the others live in the clone
        for mod in re.findall(r"mipdp[./]experiments[./]studies[./]([a-z]\w*)", text):
            assert mod == "bench_real_data", \
                f"{page.name}: {mod} is a study of the clone: experiments.studies.{mod}"
        for name in re.findall(r"--study ([a-z]\w*)", text):   # NAME: a placeholder
            assert name in entries, f"{page.name}: no study {name} in {FILE.name}"
        assert not re.search(r"(?<![\w/])experiments/(?!studies\.toml)\w+\.(py|toml)", text), \
            f"{page.name} names a removed file of experiments/"
