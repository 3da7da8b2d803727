"""The test-R² benchmark's split protocol: the release never sees the test rows."""

from __future__ import annotations

import numpy as np
import pytest

from mipdp.experiments import test_r2 as tr
from mipdp.experiments.real_sets import RealData, RealSet


def _data(n=60, p=5, seed=0, task="regression"):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p)) * np.array([1.0, 10.0, 0.1, 3.0, 1.0])[:p]
    y = X[:, 0] - 0.1 * X[:, 1] + rng.standard_normal(n)
    if task == "classification":
        y = np.where(y > 0, 1.0, -1.0)
    spec = RealSet("synthetic", "t", "y", task=task)
    return RealData("t", X, y, [f"x{j}" for j in range(p)], X.min(0), X.max(0),
                    ["observed"] * p, (float(y.min()), float(y.max())), "observed", spec)


def test_random_splits_disjoint_and_reproducible():
    a = tr.random_splits(50, 0.3, 4, seed=1)
    b = tr.random_splits(50, 0.3, 4, seed=1)
    for (tr_a, te_a), (tr_b, _) in zip(a, b, strict=True):
        assert len(te_a) == 15 and len(tr_a) == 35
        assert not set(tr_a) & set(te_a)
        assert sorted(set(tr_a) | set(te_a)) == list(range(50))
        np.testing.assert_array_equal(tr_a, tr_b)
    assert not np.array_equal(a[0][1], a[1][1])
    with pytest.raises(ValueError, match="test_fraction"):
        tr.random_splits(10, 1.0, 1)


@pytest.mark.parametrize("task", ["regression", "classification"])
def test_release_never_sees_test_rows(task):
    """Wild test rows change the test figures, never a release's law."""
    d = _data(task=task)
    train, test = tr.random_splits(len(d.y), 0.25, 1, seed=0)[0]
    methods = ["ranks", "dpkendall", "public", "private"] + (
        ["kendall_score"] if task == "regression" else [])
    a = tr.evaluate_split(d, train, test, 2, [1.0], methods, seed=3, draws=20)
    X2, y2 = d.X.copy(), d.y.copy()
    X2[test] = 1e6 * np.random.default_rng(9).standard_normal((len(test), d.X.shape[1]))
    if task == "regression":
        y2[test] = -1e6
    else:
        y2[test] = -y2[test]
    d2 = tr.with_rows(d, np.arange(len(d.y)))
    d2.X, d2.y = X2, y2
    b = tr.evaluate_split(d2, train, test, 2, [1.0], methods, seed=3, draws=20)
    for m in methods:
        np.testing.assert_array_equal(a.laws[m][1.0], b.laws[m][1.0])
    np.testing.assert_array_equal(a.overlap, b.overlap)
    assert not np.allclose(a.test_values, b.test_values)


def test_release_gets_only_training_rows(monkeypatch):
    """Every array that reaches a release has exactly the training rows."""
    import mipdp.selection as sel
    d = _data()
    train, test = tr.random_splits(len(d.y), 0.25, 1, seed=0)[0]
    seen = []
    real = sel.private_bss

    def spy(X, y, *args, **kw):
        seen.append((np.asarray(X).shape[0], np.asarray(y).shape[0]))
        return real(X, y, *args, **kw)

    monkeypatch.setattr(sel, "private_bss", spy)
    tr.evaluate_split(d, train, test, 2, [1.0], ["ranks", "public"], seed=0)
    assert seen and all(v == (len(train), len(train)) for v in seen)


def test_ols_test_r2_matches_direct_fit():
    d = _data(n=80)
    train, test = tr.random_splits(80, 0.3, 1, seed=2)[0]
    sup = tr.all_supports(5, 2)
    r2, rss = tr.support_scores(d.X, d.y, train, test, sup)
    for i, S in enumerate(sup):
        A = np.column_stack([np.ones(len(train)), d.X[train][:, S]])
        coef, *_ = np.linalg.lstsq(A, d.y[train], rcond=None)
        res = d.y[train] - A @ coef
        pred = np.column_stack([np.ones(len(test)), d.X[test][:, S]]) @ coef
        yt = d.y[test]
        want = 1 - ((yt - pred) ** 2).sum() / ((yt - yt.mean()) ** 2).sum()
        assert r2[i] == pytest.approx(want, abs=1e-9)
        assert rss[i] == pytest.approx(res @ res, rel=1e-8)


def test_training_ranges_ignore_test_rows():
    d = _data()
    train, test = tr.random_splits(len(d.y), 0.25, 1, seed=0)[0]
    lo, hi, yr = tr.training_ranges(d, train)
    np.testing.assert_allclose(lo, d.X[train].min(0))
    np.testing.assert_allclose(hi, d.X[train].max(0))
    assert yr == (d.y[train].min(), d.y[train].max())


def test_joint_effect_set_shows_only_jointly():
    d = tr.joint_effect_set(n=1500, seed=0)
    c = np.corrcoef(np.column_stack([d.X[:, :2], d.y]).T)
    assert c[0, 1] == pytest.approx(0.9, abs=0.03)
    assert abs(c[0, 2]) < 0.3 and abs(c[1, 2]) < 0.3
    A = np.column_stack([np.ones(1500), d.X[:, :2]])
    coef, *_ = np.linalg.lstsq(A, d.y, rcond=None)
    r = d.y - A @ coef
    assert 1 - r @ r / ((d.y - d.y.mean()) ** 2).sum() > 0.5
