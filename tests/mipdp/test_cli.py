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
    import mipdp.cli.progress as progress  # where the bars read it
    monkeypatch.setattr(progress, "TICK_SECONDS", 0.05)
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


# -- issue 21: X from a .npy memmap or a scipy sparse .npz, never densified ----------------

def _files(tmp_path, seed=0, n=80, p=12):
    import numpy as np
    import scipy.sparse as sp
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    X[rng.random((n, p)) > 0.4] = 0.0
    X[:, [1, 4]] = rng.standard_normal((n, 2))
    y = X[:, 1] - X[:, 4] + 0.2 * rng.standard_normal(n)
    np.save(tmp_path / "X.npy", X)
    sp.save_npz(tmp_path / "Xr.npz", sp.csr_matrix(X))
    sp.save_npz(tmp_path / "Xc.npz", sp.csc_matrix(X))
    np.save(tmp_path / "y.npy", y)
    np.savetxt(tmp_path / "y.csv", y, delimiter=",")
    return X, y


def test_load_design_keeps_memmap_and_sparse(tmp_path):
    import numpy as np
    import scipy.sparse as sp

    from mipdp.cli import load_design, load_targets
    X, y = _files(tmp_path)
    M = load_design(tmp_path / "X.npy")
    assert isinstance(M, np.memmap) and not M.flags.writeable
    np.testing.assert_array_equal(M, X)
    for name, fmt in (("Xr.npz", "csr"), ("Xc.npz", "csc")):
        S = load_design(tmp_path / name)
        assert sp.issparse(S) and S.format == fmt
        np.testing.assert_array_equal(S.toarray(), X)
    np.testing.assert_allclose(load_targets(tmp_path / "y.csv"), y)
    np.testing.assert_array_equal(load_targets(tmp_path / "y.npy"), y)


@pytest.mark.parametrize("xfile", ["X.npy", "Xr.npz", "Xc.npz"])
def test_select_passes_X_through_and_releases_as_on_the_array(xfile, tmp_path, monkeypatch,
                                                               capsys):
    """The CLI hands the memmap / sparse matrix to private_bss as it is (no dense copy) and
    releases what private_bss releases on the dense array with the same seed."""
    import json

    import numpy as np
    import scipy.sparse as sp

    import mipdp.selection as selection
    X, y = _files(tmp_path)
    real = selection.private_bss
    seen = []

    def spy(X_in, *args, **kwargs):
        seen.append(X_in)
        return real(X_in, *args, **kwargs)

    monkeypatch.setattr(selection, "private_bss", spy)
    out = tmp_path / "res.json"
    argv = ["select", str(tmp_path / xfile), str(tmp_path / "y.csv"), "--s", "2", "--eps", "3",
            "--bounds", "1.5", "2", "--draws", "2", "--seed", "7", "--out", str(out)]
    assert main(argv) == 0
    assert len(seen) == 1
    if xfile.endswith(".npy"):
        assert isinstance(seen[0], np.memmap)
    else:
        assert sp.issparse(seen[0])
    ref = real(X, np.loadtxt(tmp_path / "y.csv", delimiter=","), 2, 3.0, bounds=(1.5, 2.0),
               n_draws=2, random_state=7)
    rec = json.loads(out.read_text())
    assert rec["supports"] == ref.supports.tolist()
    assert rec["epsilon"] == pytest.approx(6.0) and rec["delta"] == 0.0 and rec["is_private"]
    text = capsys.readouterr().out
    assert "not densified" in text and f"released support 1: {ref.supports[0].tolist()}" in text


def test_select_with_prescreen_and_hinge(tmp_path, capsys):
    import numpy as np
    X, y = _files(tmp_path, 1, n=120, p=20)
    np.save(tmp_path / "labels.npy", np.where(y > 0, 1.0, -1.0))
    assert main(["select", str(tmp_path / "Xr.npz"), str(tmp_path / "labels.npy"), "--s", "2",
                 "--eps", "4", "--bounds", "1.5", "--loss", "hinge", "--seed", "0",
                 "--prescreen", "kendall", "6", "0.25"]) == 0
    out = capsys.readouterr().out
    assert "released support:" in out and "guarantee: 4-DP" in out and "Kendall" in out


def test_select_bad_files_print_one_line(tmp_path, capsys):
    import numpy as np
    _files(tmp_path)
    np.savez(tmp_path / "plain.npz", a=np.zeros((3, 3)))
    y = str(tmp_path / "y.npy")
    common = ["--s", "2", "--eps", "1", "--bounds", "1", "1"]
    for xfile, needle in (("plain.npz", "not a scipy sparse matrix"),
                          ("X.xlsx", "expected a .npy file"),
                          ("missing.npy", "No such file")):
        assert main(["select", str(tmp_path / xfile), y, *common]) == 2
        err = capsys.readouterr().err
        assert err.startswith("mipdp select: ") and needle in err, err
    assert main(["select", str(tmp_path / "X.npy"), y, "--s", "2", "--eps", "1",
                 "--bounds", "1", "1", "1"]) == 2
    assert "--bounds" in capsys.readouterr().err
    assert main(["select", str(tmp_path / "X.npy"), y, "--s", "20", "--eps", "1",
                 "--bounds", "1", "1"]) == 2
    assert "s" in capsys.readouterr().err


def test_select_without_bounds_uses_ranks(tmp_path, capsys):
    """No --bounds: private_bss's bounds=None (its data-free rule between the rank and the
    Kendall score; private, no ranges needed); --bounds data is the non-private path, and a
    word that is no option is one line on stderr."""
    import json

    import numpy as np

    from mipdp import private_bss
    X, y = _files(tmp_path)
    out = tmp_path / "r.json"
    y_file = str(tmp_path / "y.npy")
    assert main(["select", str(tmp_path / "X.npy"), y_file, "--s", "2", "--eps", "2",
                 "--seed", "3", "--out", str(out)]) == 0
    rec = json.loads(out.read_text())
    ref = private_bss(X, np.load(y_file), 2, 2.0, random_state=3)
    assert rec["bounds"] == ref.info["bounds"] and rec["is_private"]
    assert rec["bounds_rule"] == ref.info["bounds_rule"]
    assert rec["supports"] == ref.supports.tolist()
    assert ("ranks" if rec["bounds"] == "ranks" else "Kendall") in capsys.readouterr().out
    from mipdp.exceptions import PrivacyLeakWarning
    with pytest.warns(PrivacyLeakWarning, match="not private"):
        assert main(["select", str(tmp_path / "X.npy"), y_file, "--s", "2", "--eps", "2",
                     "--bounds", "data", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["is_private"] is False
    assert main(["select", str(tmp_path / "X.npy"), y_file, "--s", "2", "--eps", "2",
                 "--bounds", "rank"]) == 2
    assert "--bounds" in capsys.readouterr().err


# -- issue 30 item 4: CSV (with a header) and Parquet tables ---------------------------------

def _table(tmp_path):
    import pandas as pd

    from mipdp.datasets import make_bss_regression
    X, y, _ = make_bss_regression(n=200, p=6, s=2, random_state=0)
    names = ["cyl", "disp", "hp", "wt", "acc", "year"]
    df = pd.DataFrame(X, columns=names)
    df.insert(2, "mpg", y)                     # the target, not the last column
    return X, y, names, df


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_select_reads_a_table_with_a_named_target(fmt, tmp_path, capsys):
    import json

    from mipdp import private_bss
    X, y, names, df = _table(tmp_path)
    path = tmp_path / f"cars.{fmt}"
    df.to_csv(path, index=False) if fmt == "csv" else df.to_parquet(path)
    out = tmp_path / "res.json"
    argv = ["select", str(path), "--target", "mpg", "--s", "2", "--eps", "3", "--bounds", "1.5",
            "2", "--draws", "2", "--seed", "7", "--out", str(out)]
    assert main(argv) == 0
    ref = private_bss(X, y, 2, 3.0, bounds=(1.5, 2.0), n_draws=2, random_state=7)
    rec = json.loads(out.read_text())
    assert rec["supports"] == ref.supports.tolist()
    assert rec["feature_names"] == [[names[j] for j in S] for S in ref.supports]
    text = capsys.readouterr().out
    assert "column 'mpg'" in text and ", ".join(names[j] for j in ref.supports[0]) in text


def test_select_table_defaults_to_the_last_column_and_takes_a_y_file(tmp_path, capsys):
    import json

    import numpy as np
    X, y, names, df = _table(tmp_path)
    df = df.drop(columns=["mpg"])
    df["target"] = y
    df.to_csv(tmp_path / "last.csv", index=False)
    common = ["--s", "2", "--eps", "3", "--bounds", "1.5", "2", "--seed", "7"]
    assert main(["select", str(tmp_path / "last.csv"), *common, "--out",
                 str(tmp_path / "a.json")]) == 0
    df.drop(columns=["target"]).to_csv(tmp_path / "feat.csv", index=False)
    np.save(tmp_path / "y.npy", y)
    assert main(["select", str(tmp_path / "feat.csv"), str(tmp_path / "y.npy"), *common,
                 "--out", str(tmp_path / "b.json")]) == 0
    a = json.loads((tmp_path / "a.json").read_text())
    b = json.loads((tmp_path / "b.json").read_text())
    assert a["supports"] == b["supports"] and a["feature_names"] == b["feature_names"]


def test_select_table_hinge_with_string_labels(tmp_path, capsys):
    import numpy as np
    X, y, names, df = _table(tmp_path)
    df["mpg"] = np.where(y > 0, "high", "low")
    df.to_parquet(tmp_path / "cls.parquet")
    assert main(["select", str(tmp_path / "cls.parquet"), "--target", "mpg", "--loss", "hinge",
                 "--s", "2", "--eps", "3", "--bounds", "1.5", "--seed", "0"]) == 0
    assert "released support" in capsys.readouterr().out


def test_select_table_errors_print_one_line(tmp_path, capsys):
    X, y, names, df = _table(tmp_path)
    df.to_csv(tmp_path / "t.csv", index=False)
    common = ["--s", "2", "--eps", "1", "--bounds", "1"]
    assert main(["select", str(tmp_path / "t.csv"), "--target", "nope", *common]) == 2
    assert "no column 'nope'" in capsys.readouterr().err
    df["make"] = "ford"
    df.to_csv(tmp_path / "s.csv", index=False)
    assert main(["select", str(tmp_path / "s.csv"), "--target", "mpg", *common]) == 2
    err = capsys.readouterr().err
    assert "['make']" in err and "not numeric" in err and "ford" not in err
    import numpy as np
    np.save(tmp_path / "X.npy", X)
    assert main(["select", str(tmp_path / "X.npy"), *common]) == 2
    assert "second file" in capsys.readouterr().err
