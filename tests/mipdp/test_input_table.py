"""One table of input mistakes, driven through the three interfaces (issue 38 item 2).

``private_bss(X, y, ...)``, ``PrivateBestSubsetSelector(...).fit(X, y)`` and ``mipdp select
data.csv --target target`` run the same input check (:func:`mipdp._validation.check_input`):
the same mistake gives the same message, after a prefix naming the interface called.  The
rows that are no mistake (boolean columns, string labels with the hinge loss) run in all
three and release the same support for the same seed.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

pd = pytest.importorskip("pandas", reason="the table's inputs are DataFrames")

from mipdp import PrivateBestSubsetSelector, private_bss  # noqa: E402
from mipdp.cli import main  # noqa: E402

N = 40
NON_NUMERIC = ("are not numeric; encode them with public constants (e.g. pandas.get_dummies) "
               "or drop them first")
TARGET = ('y: the target is not numeric; for two classes pass loss="hinge" (any two labels; '
          "they become -1 and +1), or convert the target to numbers first")


def _frame(seed: int = 0) -> tuple:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"a": rng.normal(size=N), "b": rng.normal(size=N),
                      "c": rng.normal(size=N), "d": rng.normal(size=N)})
    y = pd.Series(X["a"] - X["c"] + 0.1 * rng.normal(size=N), name="target")
    return X, y


def _strings():
    X, y = _frame()
    return X.assign(League=["N", "A"] * (N // 2)), y


def _two_strings():
    X, y = _strings()
    return X.assign(Division=["E", "W"] * (N // 2)), y


def _dummies():
    X, y = _frame()
    teams = pd.Series(["N", "A", "B", "A"] * (N // 4), name="League")
    return pd.concat([X, pd.get_dummies(teams, prefix="L")], axis=1), y   # bool columns


def _string_target():
    X, y = _frame()
    return X, pd.Series(np.where(y > 0, "yes", "no"), name="target")


def _nan_y():
    X, y = _frame()
    y = y.copy()
    y.iloc[[1, 5, 9]] = np.nan
    return X, y


def _inf_y():
    X, y = _frame()
    y = y.copy()
    y.iloc[3] = np.inf
    return X, y


def _nan_X():
    X, y = _frame()
    X = X.copy()
    X.iloc[4, 1] = np.nan
    return X, y


#: name -> (data, keyword arguments, expected message after the prefix, or None: it runs)
TABLE = {
    "string column": (_strings, {}, f"X: column(s) ['League'] {NON_NUMERIC}"),
    "two string columns": (_two_strings, {}, f"X: column(s) ['League', 'Division'] {NON_NUMERIC}"),
    "boolean columns (get_dummies)": (_dummies, {}, None),
    "string target": (_string_target, {}, TARGET),
    "string target, hinge": (_string_target, {"loss": "hinge"}, None),
    "NaN in y": (_nan_y, {}, "y: contains NaN or infinite values in 3 entries; impute them or "
                             "drop those rows of X and y first (the release needs every value "
                             "finite)"),
    "inf in y": (_inf_y, {}, "y: contains NaN or infinite values in 1 entry; impute them or "
                             "drop those rows of X and y first (the release needs every value "
                             "finite)"),
    "NaN in X": (_nan_X, {}, "X: contains NaN or infinite values in column(s) 1 ('b'); impute "
                             "or drop them first (the release needs every value finite)"),
}


def _python(X, y, kw):
    return private_bss(X, y, s=2, eps=1.0, random_state=0, **kw).support


def _selector(X, y, kw):
    return PrivateBestSubsetSelector(s=2, eps=1.0, random_state=0, **kw).fit(X, y).support_


def _cli(X, y, kw, tmp_path, capsys):
    path = tmp_path / "data.csv"
    X.assign(target=y).to_csv(path, index=False)
    out = tmp_path / "release.json"
    argv = ["select", str(path), "--target", "target", "--s", "2", "--eps", "1", "--seed", "0",
            "--out", str(out)]
    if "loss" in kw:
        argv += ["--loss", kw["loss"]]
    capsys.readouterr()
    code = main(argv)
    err = capsys.readouterr().err.strip()
    if code != 0:
        raise _CLIError(err)
    return np.asarray(json.loads(out.read_text())["supports"][0])


class _CLIError(Exception):
    pass


INTERFACES = {"private_bss": "private_bss", "selector": "PrivateBestSubsetSelector.fit",
              "cli": "mipdp select"}


def _run(interface, X, y, kw, tmp_path, capsys):
    """``(support, None)`` or ``(None, message)``."""
    try:
        if interface == "private_bss":
            return _python(X, y, kw), None
        if interface == "selector":
            return _selector(X, y, kw), None
        return _cli(X, y, kw, tmp_path, capsys), None
    except (TypeError, ValueError, _CLIError) as exc:
        return None, str(exc)


@pytest.mark.parametrize("row", list(TABLE))
def test_the_same_mistake_gives_the_same_message(row, tmp_path, capsys):
    make, kw, expected = TABLE[row]
    outcomes = {}
    for interface, name in INTERFACES.items():
        X, y = make()
        support, msg = _run(interface, X, y, kw, tmp_path, capsys)
        if expected is None:
            assert msg is None, f"{interface} refused {row!r}: {msg}"
            outcomes[interface] = tuple(support)
        else:
            assert msg is not None, f"{interface} accepted {row!r}"
            assert msg == f"{name}: {expected}", (interface, msg)
    if expected is None:      # the same release everywhere for the same seed
        assert len(set(outcomes.values())) == 1, outcomes


@pytest.mark.parametrize("interface", ["private_bss", "selector"])
def test_array_columns_are_named_by_index(interface, tmp_path, capsys):
    X, y = _frame()
    A = np.asarray(X, dtype=object)
    A[:, 2] = "x"
    _, msg = _run(interface, A, y.to_numpy(), {}, tmp_path, capsys)
    assert msg == f"{INTERFACES[interface]}: X: column(s) [2] {NON_NUMERIC}"


@pytest.mark.parametrize("interface", ["private_bss", "selector"])
def test_no_message_quotes_a_value(interface, tmp_path, capsys):
    X, y = _frame()
    X = X.assign(name=[f"secret{i}" for i in range(N)])
    _, msg = _run(interface, X, y, {}, tmp_path, capsys)
    assert msg is not None and "secret" not in msg


def test_the_selector_names_itself_for_its_parameters():
    X, y = _frame()
    with pytest.raises(ValueError, match="The 'eps' parameter of PrivateBestSubsetSelector "
                                         "must be"):
        PrivateBestSubsetSelector(s=2, eps=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="The 'eps' parameter of private_bss must be"):
        private_bss(X, y, s=2, eps=-1.0)


def test_the_selector_logs_its_spend_once_per_fit(caplog):
    import logging

    from mipdp import BudgetAccountant
    X, y = _frame()
    with caplog.at_level(logging.INFO, logger="mipdp.selector"):
        PrivateBestSubsetSelector(s=2, eps=0.5, random_state=0).fit(X, y)
    lines = [r.getMessage() for r in caplog.records if r.name == "mipdp.selector"]
    assert len(lines) == 1 and "spends eps = 0.5" in lines[0], lines
    caplog.clear()
    with BudgetAccountant(epsilon=2.0), caplog.at_level(logging.INFO, logger="mipdp.selector"):
        sel = PrivateBestSubsetSelector(s=2, eps=0.5, random_state=0)
        sel.fit(X, y)
        sel.fit(X, y)
    lines = [r.getMessage() for r in caplog.records if r.name == "mipdp.selector"]
    assert len(lines) == 2
    assert "the accountant has spent eps = 1 of its budget eps = 2" in lines[1], lines


def test_the_help_lists_the_formats_select_reads(capsys):
    """``mipdp --help`` names every format ``mipdp select`` reads (issue 38 item 3)."""
    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    for fmt in ("CSV", "Parquet", ".npy", ".npz"):
        assert fmt in text, fmt
