"""CLI subcommands and figures."""

from pathlib import Path

from mipdp.cli import build_parser, main
from mipdp.experiments.config import load_studies

STUDIES = Path(__file__).resolve().parents[3] / "experiments" / "studies.toml"


def test_configs_parse():
    entries = load_studies(STUDIES)
    cfg = entries["seed002_ls"].runner_config()
    assert (cfg.p, cfg.s, cfg.eps, cfg.trials, cfg.draws) == (100, 5, 1.0, 10, 100)
    assert cfg.ns == [2000, 3000, 4000, 5000, 6000, 7000, 8000] and "exponential" in cfg.methods
    assert entries["seed002_ls"].run["jobs"] == 2
    tiny = entries["tiny"].runner_config()
    assert tiny.p == 20 and tiny.name == "tiny"


def test_old_subcommands_still_parse():
    p = build_parser()
    assert p.parse_args(["demo", "--n", "500"]).n == 500
    assert p.parse_args(["backends"]).command == "backends"


def test_experiment_run_and_plot(tmp_path, capsys):
    cfg = tmp_path / "c.toml"
    cfg.write_text('[study]\nname = "cli"\np = 12\ns = 2\nns = [200]\ntrials = 2\n'
                   'draws = 3\nmethods = ["top_r", "dp_sis"]\n')
    assert main(["experiment", "run", str(cfg), "--out", str(tmp_path / "res")]) == 0
    out = capsys.readouterr().out
    assert "4 cells computed" in out
    assert main(["experiment", "run", str(cfg), "--out", str(tmp_path / "res")]) == 0
    assert "0 cells computed, 4 already done" in capsys.readouterr().out
    figs = tmp_path / "figs"
    assert main(["plot", str(tmp_path / "res"), "--to", str(figs)]) == 0
    for name in ("recovery", "f1", "utility_loss", "time"):
        png = figs / f"cli_{name}.png"
        assert png.exists() and png.read_bytes()[:4] == b"\x89PNG"


def test_hinge_flag(tmp_path, capsys):
    from mipdp.losses import LOSSES
    rc = main(["experiment", "recovery", "--p", "12", "--s", "2", "--n", "200", "--trials", "1",
               "--draws", "2", "--methods", "top_r", "--loss", "hinge",
               "--out", str(tmp_path)])
    assert rc == 0
    if "hinge" not in LOSSES:
        assert "not available" in capsys.readouterr().err


def test_plot_with_nothing_to_plot_exits_nonzero(tmp_path, capsys):
    """Issue 30 item 4: no study, or studies without a finished trial: exit 1, say why."""
    assert main(["plot", str(tmp_path)]) == 1
    assert "no study" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "study.json").write_text('{"name": "empty"}')
    assert main(["plot", str(tmp_path)]) == 1
    assert "nothing to plot" in capsys.readouterr().err
