"""Every study of docs/experiments.md, shrunk to seconds: it runs, and a rerun skips it."""

from pathlib import Path

import pytest

from mipdp.cli import main
from mipdp.experiments.config import load_studies

FILE = Path(__file__).resolve().parents[3] / "experiments" / "studies.toml"
STUDIES = ["seed002_ls", "seed002_hinge", "rho07_ls", "cancel_ls", "p1000_ls"]


@pytest.mark.parametrize("name", STUDIES)
def test_study_config_tiny_and_resumable(name, tmp_path, capsys):
    entry = load_studies(FILE)[name]
    cfg, run = entry.runner_config(), entry.run
    assert run["jobs"] == 2 and cfg.time_limit is not None
    assert {"exponential", "top_r", "mistakes"} <= set(cfg.methods)
    # the same study, shrunk: same methods, design, rho and loss
    methods = [m for m in cfg.methods if m not in ("mcmc", "samp_agg", "abess")]
    args = ["experiment", "recovery", "--p", "16", "--s", "3", "--n", "300", "--trials", "1",
            "--draws", "3", "--extra-draws", "50", "--methods", *methods, "--loss", cfg.loss,
            "--design", cfg.design, "--rho", str(cfg.rho), "--time-limit", "120",
            "--out", str(tmp_path), "--name", cfg.name]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert f"{len(methods)} cells computed, 0 already done (+1 reference cells)" in out
    assert "P(one draw = truth)" in out
    assert main(args) == 0                       # resumable: nothing recomputed
    assert f"0 cells computed, {len(methods)} already done" in capsys.readouterr().out


def test_cli_design_options(tmp_path, capsys):
    args = ["experiment", "recovery", "--p", "16", "--s", "3", "--n", "3000", "--trials", "1",
            "--draws", "1", "--methods", "marginal", "--design", "cancel",
            "--no-em-reference", "--out", str(tmp_path)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "1 cells computed" in out and "reference" not in out
    import json
    study = json.loads((tmp_path / "recovery_least_squares" / "study.json").read_text())
    assert study["design"] == "cancel" and study["rho"] == 0.7
