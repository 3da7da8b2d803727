"""The command line's help and options (issue 13)."""

import pytest

from mipdp.cli import _joblib_backend, build_parser, main


def test_top_level_help_lists_every_subcommand_without_markup(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "``" not in out
    for cmd in ("demo", "backends", "experiment", "plot", "audit"):
        assert cmd in out


def _subparsers(parser, prefix=()):
    import argparse
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield prefix + (name,), sub
                yield from _subparsers(sub, prefix + (name,))


def test_every_option_has_help():
    for path, sub in _subparsers(build_parser()):
        for action in sub._actions:
            if action.dest in ("help", "func") or action.__class__.__name__ == "_SubParsersAction":
                continue
            assert action.help, (path, action.dest)


def test_joblib_backend_is_named_and_old_spelling_still_works(capsys):
    p = build_parser()
    args = p.parse_args(["experiment", "run", "x.toml", "--joblib-backend", "dask"])
    assert _joblib_backend(args) == "dask"
    old = p.parse_args(["experiment", "run", "x.toml", "--backend", "dask"])
    assert _joblib_backend(old) == "dask"
    assert "deprecated" in capsys.readouterr().err
    demo = p.parse_args(["demo", "--backend", "gurobi"])
    assert demo.backend == "gurobi"          # in demo it is the MIP solver


def test_backends_lists_install_hint_only_when_missing(capsys):
    assert main(["backends"]) == 0
    for line in capsys.readouterr().out.splitlines():
        assert ("installed" in line) != ("pip install" in line)


# -- issue 20 (6, 9): --version, Ctrl-C, progress, the demo's frequency and legend ---------

def test_version(capsys):
    import mipdp
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"mipdp {mipdp.__version__}"


def test_ctrl_c_prints_one_line_and_returns_130(monkeypatch, capsys):
    import mipdp.cli as cli

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_backends", interrupted)
    assert main(["backends"]) == 130
    err = capsys.readouterr().err
    assert err.strip() == "mipdp: interrupted" and "Traceback" not in err


def test_progress_bar_shows_the_phase_and_ticks(monkeypatch):
    """The bar is redrawn by a ticker while nothing reports (the sampling phase)."""
    import io
    import time
    import mipdp.cli as cli
    tqdm = pytest.importorskip("tqdm")
    buf = io.StringIO()
    monkeypatch.setattr(cli, "TICK_SECONDS", 0.05)
    real = tqdm.auto.tqdm
    monkeypatch.setattr(tqdm.auto, "tqdm", lambda *a, **k: real(
        *a, **{**k, "file": buf, "disable": False}))
    callback, close = cli._progress_bar("exponential")
    callback({"phase": "sampling", "event": "start", "elapsed": 0.0, "draws": 20})
    time.sleep(0.3)
    close()
    text = buf.getvalue()
    assert "exponential [sampling]" in text and "draws=20" in text
    assert text.count("exponential [sampling]") >= 3      # redrawn while nothing reported


def test_demo_reports_the_frequency_over_draws_and_explains_its_lines(capsys):
    assert main(["demo", "--n", "400", "--p", "8", "--s", "2", "--methods", "exponential",
                 "--draws", "5"]) == 0
    out = capsys.readouterr().out
    assert "draws, " in out and "of 5 draws" in out
    for word in ("class_k", "no-goods", "proposals", "cuts", "clipping", "not private"):
        assert word in out, word
    assert "of X and" in out and "clipped to the bound 0.5" in out
