"""End-to-end sweeps: resume, no recomputation, identical tables, parallel = sequential."""

import json

import numpy as np
import pandas as pd
import pytest

from mipdp.experiments import StudyConfig, run_study
from mipdp.experiments import methods as methods_mod
from mipdp.experiments.runner import LossUnavailable, cell_seeds

ALL = ["exponential", "top_r", "mistakes", "samp_agg", "mcmc", "dp_sis", "kendall"]


def tiny(**kw):
    base = dict(p=20, s=3, ns=[300, 600], trials=2, draws=5, methods=ALL, name="tiny")
    base.update(kw)
    return StudyConfig(**base)


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    out = tmp_path_factory.mktemp("full")
    rep = run_study(tiny(), out, jobs=1)
    return out, rep


def test_tiny_sweep_end_to_end(full):
    out, rep = full
    assert len(rep.computed) == 2 * 2 * len(ALL) and not rep.skipped
    t = rep.table
    assert set(t["method"]) == set(ALL)
    assert len(t) == 2 * 2 * len(ALL) * 5
    assert t["exact"].isin([0, 1]).all()
    assert ((t["f1"] >= 0) & (t["f1"] <= 1)).all()
    assert (t["utility_loss"] >= -1e-12).all()
    assert (t["time_s"] > 0).all()
    # exact recovery <=> F1 == 1, and exact => zero utility loss when S* is the truth
    assert ((t["f1"] == 1.0) == (t["exact"] == 1)).all()
    root = out / "tiny"
    for f in ("draws.csv", "summary.csv", "study.json"):
        assert (root / f).exists()
    assert len(list((root / "trials").glob("*/*.json"))) == 2 * 2 * len(ALL) + 4  # + references
    s = rep.summary
    assert {"exact_mean", "exact_se", "f1_mean", "utility_loss_mean", "time_s_mean"} <= set(s)
    assert (s["trials"] == 2).all()
    # mistakes is flagged as conditional
    rec = json.loads((root / "trials" / "mistakes" / "n300_t0.json").read_text())
    assert rec["meta"]["guarantee"].startswith("CONDITIONAL")


def test_rerun_recomputes_nothing(full, monkeypatch):
    out, rep = full

    def boom(*a, **k):
        raise AssertionError("recomputed a finished cell")

    for m in ALL:
        monkeypatch.setitem(methods_mod.METHODS, m, boom)
    again = run_study(tiny(), out, jobs=1)
    assert again.computed == [] and len(again.skipped) == 2 * 2 * len(ALL)
    assert again.references_computed == []
    pd.testing.assert_frame_equal(again.table, rep.table)


def test_interrupted_then_resumed_equals_uninterrupted(full, tmp_path, monkeypatch):
    _, rep = full
    sub = ["top_r", "dp_sis", "kendall", "mcmc"]
    # 1) a partial sweep (subset of n and trials), 2) a crash mid-sweep, 3) resume
    run_study(tiny(ns=[600], trials=1, methods=sub), tmp_path, jobs=1)
    real = methods_mod.METHODS["kendall"]

    def crash(X, *a, **k):
        if X.shape[0] == 300:
            raise KeyboardInterrupt("simulated kill")
        return real(X, *a, **k)

    monkeypatch.setitem(methods_mod.METHODS, "kendall", crash)
    with pytest.raises(KeyboardInterrupt):
        run_study(tiny(methods=sub), tmp_path, jobs=1)
    n_done = len([f for f in (tmp_path / "tiny" / "trials").glob("*/*.json")
                  if f.parent.name != "_em_reference"])
    assert 4 <= n_done < 16
    monkeypatch.setitem(methods_mod.METHODS, "kendall", real)
    resumed = run_study(tiny(methods=sub), tmp_path, jobs=1)
    assert len(resumed.skipped) == n_done and len(resumed.computed) == 16 - n_done
    ref = rep.table[rep.table["method"].isin(sub)].reset_index(drop=True)
    pd.testing.assert_frame_equal(resumed.table.drop(columns="time_s").dropna(axis=1, how="all"),
                                  ref.drop(columns="time_s").dropna(axis=1, how="all"))


@pytest.mark.slow  # ~15 s on a loaded 2-core machine (worker start-up)
def test_parallel_jobs_same_table(full, tmp_path):
    _, rep = full
    cfg = tiny(methods=["top_r", "dp_sis"], ns=[300])
    par = run_study(cfg, tmp_path, jobs=2)
    t = rep.table
    ref = t[t["method"].isin(cfg.methods) & (t["n"] == 300)].reset_index(drop=True)
    # columns only other methods fill (e.g. the exponential mechanism's) are all-NaN here
    pd.testing.assert_frame_equal(par.table.drop(columns="time_s").dropna(axis=1, how="all"),
                                  ref.drop(columns="time_s").dropna(axis=1, how="all"))


def test_changed_parameters_refused(full):
    out, _ = full
    with pytest.raises(ValueError, match="different parameters"):
        run_study(tiny(eps=2.0), out, jobs=1)


def test_seeds_keyed_by_cell():
    d1, m1 = cell_seeds(0, 300, 1, "top_r")
    d2, m2 = cell_seeds(0, 300, 1, "mcmc")
    assert d1.generate_state(4).tolist() == d2.generate_state(4).tolist()   # same data
    assert m1.generate_state(4).tolist() != m2.generate_state(4).tolist()
    child = np.random.SeedSequence(0).spawn(301)[300].spawn(2)[1]
    assert child.spawn_key == (300, 1)


def test_hinge_skipped_or_run(tmp_path):
    from mipdp.losses import LOSSES
    cfg = tiny(loss="hinge", ns=[300], trials=1, methods=["top_r", "mcmc"])
    if "hinge" not in LOSSES:
        with pytest.raises(LossUnavailable, match="hinge"):
            run_study(cfg, tmp_path)
    else:
        rep = run_study(cfg, tmp_path)
        assert set(rep.table["method"]) == {"top_r"}
        assert any("mcmc" in m for m in rep.messages)


def test_utility_study(tmp_path):
    cfg = tiny(kind="utility", ns=[400], trials=1, methods=["top_r", "dp_sis"], name="u")
    rep = run_study(cfg, tmp_path)
    t = rep.table
    assert {"test_mse", "test_mse_raw_y", "utility_loss"} <= set(t)
    assert np.isfinite(t["test_mse"]).all() and (t["test_mse"] > 0).all()
    rec = json.loads((tmp_path / "u" / "trials" / "top_r" / "n400_t0.json").read_text())
    assert rec["meta"]["epsilon_fit"] == pytest.approx(0.5)
    assert rec["meta"]["epsilon_select"] == pytest.approx(5 * 0.5)   # 5 draws of eps/2
