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
