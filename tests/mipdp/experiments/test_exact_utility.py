"""Exact utility figures per trial, the EM reference, designs, time limits, baselines."""

import json
import math

import numpy as np
import pytest

from mipdp._validation import clip_data
from mipdp.brute_force import (
    brute_force_values,
    exponential_mechanism_log_probs,
    least_squares_value,
)
from mipdp.datasets import make_bss_classification, make_bss_regression
from mipdp.experiments import StudyConfig, run_study
from mipdp.experiments import methods as methods_mod
from mipdp.experiments.em_reference import em_truth_probability
from mipdp.experiments.runner import REFERENCE


def _brute_em_truth(X, y, truth, eps, s, b=0.5, ridge=120.0, radius=1.1):
    """P_EM(truth) from the brute-force reference values over every support (tiny p)."""
    Xc, yc = clip_data(X, y, b, b)
    sup, vals = brute_force_values(lambda S: least_squares_value(Xc, yc, S, ridge, radius),
                                   X.shape[1], s)
    delta = (b + b * radius * np.sqrt(s)) ** 2 / 2 / X.shape[0]
    logp = exponential_mechanism_log_probs(vals, eps, delta)
    return float(np.exp(logp[np.all(sup == np.sort(truth), axis=1)][0]))


@pytest.mark.parametrize("score", ["seed", "default"])
@pytest.mark.parametrize("ball", [0, 1, 3])
def test_em_reference_brackets_brute_force(ball, score):
    from mipdp.losses import default_score
    X, y, truth = make_bss_regression(n=300, p=12, s=3, random_state=3)
    ridge, radius = (120.0, 1.1) if score == "seed" else default_score("least_squares", 3, .5, .5)
    exact = _brute_em_truth(X, y, truth, 1.0, 3, ridge=ridge, radius=radius)
    kw = dict(ridge=ridge, radius=radius) if score == "seed" else {}   # default: the rule
    ref = em_truth_probability(X, y, truth, 1.0, ball=ball, **kw)
    assert ref["lo"] <= exact * (1 + 1e-9) and exact <= ref["hi"] * (1 + 1e-9)
    if ball == 3:                           # every support evaluated: exact
        assert ref["lo"] == pytest.approx(exact, rel=1e-9)


def test_designs():
    X, y, truth = make_bss_regression(n=20000, p=30, s=4, rho=0.7, design="cancel",
                                      random_state=0)
    assert truth.tolist() == [1, 3, 5, 7]
    c = X.T @ y / X.shape[0]
    assert abs(c[3]) < 0.02 < 0.3 < abs(c[5])               # the cancelled feature
    assert 3 not in np.argsort(-np.abs(c))[:4]               # screening misses it
    assert np.corrcoef(X[:, 1], X[:, 3])[0, 1] == pytest.approx(0.7, abs=0.02)
    _, yc, _ = make_bss_classification(n=50, p=30, s=4, design="cancel", rho=0.5,
                                       random_state=0)
    assert set(np.unique(yc)) <= {-1.0, 1.0}
    with pytest.raises(ValueError, match="design"):
        make_bss_regression(n=10, p=30, s=2, design="nope")
    with pytest.raises(ValueError, match="rho"):
        make_bss_regression(n=10, p=30, s=2, design="cancel", rho=0.0)
    # seed 002's design unchanged by the refactoring (same draws for the same seed)
    X1, y1, _ = make_bss_regression(n=50, p=12, s=2, random_state=5)
    X2, y2, _ = make_bss_regression(n=50, p=12, s=2, design="seed002", random_state=5)
    assert np.array_equal(X1, X2) and np.array_equal(y1, y2)


def test_config_rho_default_per_design():
    assert StudyConfig(design="cancel").rho == 0.7
    assert StudyConfig().rho == 0.1
    assert StudyConfig(design="cancel", rho=0.5).rho == 0.5
    with pytest.raises(ValueError, match="design"):
        StudyConfig(design="x")
    with pytest.raises(ValueError, match="time_limit"):
        StudyConfig(time_limit=0)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    out = tmp_path_factory.mktemp("exact")
    cfg = StudyConfig(p=14, s=3, ns=[250, 600], trials=2, draws=20, extra_draws=300,
                      methods=["exponential", "top_r", "mistakes", "dp_sis", "marginal"],
                      name="e")
    return out, cfg, run_study(cfg, out, jobs=1)


def test_exact_probabilities_recorded(study):
    out, cfg, rep = study
    s = rep.summary.set_index(["method", "n"])
    for m in ("exponential", "top_r", "mistakes"):
        for n in cfg.ns:
            lo, hi = s.loc[(m, n), "p_truth_lo_mean"], s.loc[(m, n), "p_truth_hi_mean"]
            assert 0 <= lo <= hi <= 1
            assert lo == pytest.approx(hi, rel=1e-9)       # C(14, 3) small: all exact
    assert np.isnan(s.loc[("dp_sis", 600), "p_truth_lo_mean"])
    # the EM sampler's exact probability equals the independent reference, per trial
    t = rep.table
    em = t[t["method"] == "exponential"].groupby(["n", "trial"]).first()
    np.testing.assert_allclose(em["p_truth_lo"], em["em_truth_lo"], rtol=1e-8)
    np.testing.assert_allclose(em["em_truth_lo"], em["em_truth_hi"], rtol=1e-9)
    # the frequency over extra draws is within 5 standard errors of the exact figure
    for _, r in em.iterrows():
        p = r["p_truth_lo"]
        assert abs(r["p_truth_freq"] - p) <= 5 * math.sqrt(p * (1 - p) / 300) + 1e-9
    # the reference is per data set: every method row of (n, trial) carries the same value
    ref = t.groupby(["n", "trial"])["em_truth_lo"].nunique()
    assert (ref == 1).all()
    assert len(list((out / "e" / "trials" / REFERENCE).glob("*.json"))) == 4


def test_marginal_baseline_is_not_private(study):
    out, _, rep = study
    rec = json.loads((out / "e" / "trials" / "marginal" / "n600_t0.json").read_text())
    assert "not private" in rec["meta"]["guarantee"].lower()
    assert math.isnan(rec["meta"]["epsilon_select"])
    rows = rep.table[rep.table["method"] == "marginal"]
    assert rows.groupby(["n", "trial"])["support"].nunique().eq(1).all()   # deterministic


def test_marginal_fails_on_cancel_design(tmp_path):
    cfg = StudyConfig(p=30, s=4, ns=[4000], trials=2, draws=1, methods=["marginal"],
                      design="cancel", name="c", em_reference=False)
    rep = run_study(cfg, tmp_path, jobs=1)
    assert rep.summary["exact_mean"].iloc[0] == 0.0


def test_time_limit_records_unfinished_and_reruns_when_raised(tmp_path, monkeypatch):
    import mipdp.selection as selection
    from mipdp.exceptions import TimeLimitError
    real = selection.private_bss

    def limited(*a, method="exponential", time_limit=None, **kw):
        if method == "mistakes" and time_limit < 100:    # a slow mistakes search
            raise TimeLimitError(f"time_limit={time_limit:g} s reached; nothing released")
        return real(*a, method=method, time_limit=time_limit, **kw)

    monkeypatch.setattr(selection, "private_bss", limited)
    cfg = StudyConfig(p=12, s=2, ns=[200], trials=1, draws=3, methods=["mistakes", "top_r"],
                      time_limit=1.0, name="tl", em_reference=False)
    rep = run_study(cfg, tmp_path, jobs=1)
    s = rep.summary.set_index("method")
    assert s.loc["mistakes", "unfinished"] == 1 and s.loc["mistakes", "trials"] == 0
    assert s.loc["top_r", "unfinished"] == 0 and s.loc["top_r", "trials"] == 1
    rec = json.loads((tmp_path / "tl" / "trials" / "mistakes" / "n200_t0.json").read_text())
    assert rec["meta"]["finished"] is False and rec["rows"] == {}
    assert "time_limit" in rec["meta"]["error"] and rec["meta"]["error_kind"] == "time_limit"
    # same limit: skipped; a larger limit: rerun (and now it finishes)
    again = run_study(cfg, tmp_path, jobs=1)
    assert again.computed == []
    cfg.time_limit = 600.0
    more = run_study(cfg, tmp_path, jobs=1)
    assert more.computed == [("mistakes", 200, 0)]
    assert more.summary.set_index("method").loc["mistakes", "unfinished"] == 0


def test_failed_certificate_is_not_a_time_limit_and_is_retried(tmp_path, monkeypatch):
    """A CertificationError that is not the clock is recorded as such and rerun on resume."""
    import mipdp.selection as selection
    from mipdp.exceptions import CertificationError
    calls = []

    def failing(*a, **kw):
        calls.append(1)
        raise CertificationError("the master problem was reported infeasible; nothing released")

    monkeypatch.setattr(selection, "private_bss", failing)
    cfg = StudyConfig(p=12, s=2, ns=[200], trials=1, draws=3, methods=["top_r"],
                      time_limit=1.0, name="cf", em_reference=False)
    run_study(cfg, tmp_path, jobs=1)
    rec = json.loads((tmp_path / "cf" / "trials" / "top_r" / "n200_t0.json").read_text())
    assert rec["meta"]["finished"] is False and rec["meta"]["error_kind"] == "certification"
    again = run_study(cfg, tmp_path, jobs=1)   # same time limit, still retried
    assert again.computed == [("top_r", 200, 0)] and len(calls) == 2


def test_comparator_adapter_releases_what_the_comparator_releases():
    """The adapter skips scikit-learn's argument checks: the supports must not change."""
    from mipdp.comparators.mcmc import mcmc
    X, y, _ = make_bss_regression(n=300, p=10, s=2, random_state=0)
    out = methods_mod.METHODS["mcmc"](X, y, 2, 1.0, np.random.default_rng(3), 4)
    ref = mcmc(X, y, 2, 1.0, bounds=(0.5, 0.5), random_state=np.random.default_rng(3),
               n_draws=4)
    assert np.array_equal(out.supports, ref.supports)


def test_report_tables_and_doc_blocks(study, tmp_path):
    """mipdp.experiments.report renders the page's tables from a study directory."""
    from mipdp.experiments import report as mod
    out, cfg, _ = study
    text = mod.tables(out / "e", ["p_truth", "exact", "time_s"])
    assert "EM (reference)" in text and "| 600 |" in text and "marginal" in text
    doc = tmp_path / "page.md"
    doc.write_text("a\n<!-- table e p_truth -->\nstale\n<!-- /table -->\n"
                   "<!-- table missing exact -->\nkept\n<!-- /table -->\n")
    mod.update_doc(doc, out)
    new = doc.read_text()
    assert "stale" not in new and "EM sampler: frequency" in new and "kept" in new
