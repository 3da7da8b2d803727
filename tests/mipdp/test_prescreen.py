"""The pre-screen in front of the MIP methods (``mipdp/prescreen.py``)."""

import warnings

import numpy as np
import pytest

from mipdp import PrivacyLeakWarning, private_bss
from mipdp.comparators import dp_sis
from mipdp.datasets import make_bss_classification
from mipdp.prescreen import LABEL_BOUND, run_prescreen


@pytest.fixture(scope="module")
def labels():
    X, y, _ = make_bss_classification(n=200, p=12, s=2, random_state=0)
    return X, y


def test_hinge_prescreen_uses_the_public_label_bound(labels):
    """±1 labels are public: b_y = None must not read max|y| off the data (no warning)."""
    X, y = labels
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        res = private_bss(X, y, 2, 1.0, bounds=(0.5, None), loss="hinge",
                          prescreen=("dp_sis", 6, 0.3), random_state=0)
    assert "|y| <= 1" in str(res.info["prescreen"]["guarantee"])
    assert "read off the data" not in str(res.guarantee)
    assert res.is_private


def test_run_prescreen_clips_y_by_the_label_bound(labels):
    X, y = labels
    cols, info = run_prescreen(("dp_sis", 6, 0.3), X, y, 2, 1.0, (0.5, None),
                               np.random.default_rng(5))
    ref = dp_sis(X, y, 6, 0.3, bounds=(0.5, LABEL_BOUND), random_state=np.random.default_rng(5),
                 gamma=0.0)   # the screen's gamma (DP_SIS_SCREEN_GAMMA)
    np.testing.assert_array_equal(cols, ref.support)
    assert info["guarantee"] == ref.guarantee
    # an explicit b_y is used as given
    _, info2 = run_prescreen(("dp_sis", 6, 0.3), X, y, 2, 1.0, (0.5, 2.0),
                             np.random.default_rng(5))
    assert "|y| <= 2" in str(info2["guarantee"])
    with pytest.raises(ValueError, match="label_bound"):
        run_prescreen(("dp_sis", 6, 0.3), X, y, 2, 1.0, (0.5, None), np.random.default_rng(5),
                      label_bound=0.0)


def _replace_and_add_remove_neighbours(X, y, rng):
    """(mode, X', y') for adversarial and random rows replaced, added and removed."""
    n, p = X.shape
    rows = [np.array(v) * 0.5 for v in
            np.array(np.meshgrid(*[(-1.0, 1.0)] * (p + 1))).reshape(p + 1, -1).T[:12]]
    rows += [rng.uniform(-2, 2, size=p + 1) for _ in range(4)]
    for r in rows:
        for i in (0, n - 1):
            X2, y2 = X.copy(), y.copy()
            X2[i], y2[i] = r[:p], r[p]
            yield "replace", X2, y2
        yield "add_remove", np.vstack([X, r[:p]]), np.append(y, r[p])
    yield "add_remove", X[1:], y[1:]


def test_screen_rule_exact_privacy_on_neighbours():
    """The screen's rule (canonical Lipschitz top-k at gamma = 0 on |x_jᵀy|): exact output
    laws on neighbouring datasets differ by at most eps in log, under replace-one
    (Δ = 2 b_x b_y) and add/remove (Δ = b_x b_y) neighbours."""
    from mipdp.comparators.dp_sis import sis_scores
    from mipdp.mechanisms.topk import canonical_lipschitz_topk_distribution
    from mipdp.prescreen import DP_SIS_SCREEN_GAMMA
    assert DP_SIS_SCREEN_GAMMA == 0.0
    b = 0.5
    rng = np.random.default_rng(11)
    eps, k = 0.7, 3

    def law(X, y, sens):
        sc = sis_scores(np.clip(X, -b, b), np.clip(y, -b, b))
        return canonical_lipschitz_topk_distribution(sc, k, eps, sens, gamma=0.0)[1]

    for _ in range(2):
        X = rng.uniform(-1, 1, size=(6, 5))
        y = X[:, 0] + X[:, 2] + 0.1 * rng.normal(size=6)
        base = {"replace": law(X, y, 2 * b * b), "add_remove": law(X, y, b * b)}
        worst = {"replace": 0.0, "add_remove": 0.0}
        for mode, X2, y2 in _replace_and_add_remove_neighbours(X, y, rng):
            lq = law(X2, y2, 2 * b * b if mode == "replace" else b * b)
            worst[mode] = max(worst[mode], float(np.max(np.abs(base[mode] - lq))))
        assert worst["replace"] <= eps + 1e-9 and worst["add_remove"] <= eps + 1e-9
        assert worst["replace"] > 0.2 * eps          # the test has teeth


def test_screen_samples_the_gamma_zero_law():
    """run_prescreen's DP-SIS draws follow the exact gamma = 0 law (chi-square)."""
    from scipy import stats

    from mipdp.comparators.dp_sis import sis_scores
    from mipdp.mechanisms.topk import canonical_lipschitz_topk_distribution
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(30, 6))
    y = X[:, 0] + X[:, 3] + 0.2 * rng.normal(size=30)
    cols, info = run_prescreen(("dp_sis", 3, 0.5), X, y, 2, 2.0, (0.5, 0.5),
                               np.random.default_rng(0))
    assert info["gamma"] == 0.0
    res = dp_sis(X, y, 3, 1.0, bounds=(0.5, 0.5), gamma=0.0, random_state=4, n_draws=4000)
    subsets, lp = canonical_lipschitz_topk_distribution(
        sis_scores(np.clip(X, -0.5, 0.5), np.clip(y, -0.5, 0.5)), 3, 1.0, 0.5, gamma=0.0)
    index = {tuple(r): i for i, r in enumerate(subsets.tolist())}
    counts = np.zeros(len(subsets))
    for S in res.supports.tolist():
        counts[index[tuple(S)]] += 1
    expected = 4000 * np.exp(lp)
    keep = expected >= 5
    obs = np.append(counts[keep], counts[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] < 5:
        obs, exp = obs[:-1], exp[:-1]
    assert stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue > 1e-3


def test_screen_keeps_a_separated_head():
    """k >> s: gamma = 0 keeps the s clearly separated features far more often than 0.5."""
    from mipdp.mechanisms.topk import canonical_lipschitz_topk
    scores = np.r_[np.full(5, 150.0), np.random.default_rng(0).uniform(0, 30, 95)]
    rng = np.random.default_rng(1)
    hit = {g: np.mean([set(range(5)) <= set(canonical_lipschitz_topk(scores, 20, 0.2, 1.0, rng,
                                                                      gamma=g))
                       for _ in range(100)]) for g in (0.0, 0.5)}
    assert hit[0.0] >= 0.9 and hit[0.5] <= 0.2


def test_two_stage_prescreen_fits_on_the_clipped_design():
    """Issue 28 (1): prescreen=("two_stage", k, f) fitted its Lasso on raw X; a finite row
    of 1e160 (clipped away by the bounds) made every run raise OverflowError where the
    neighbouring data set runs.  Both now run, and the pre-screen sees the clipped rows."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (50, 8))
    y = X[:, 0] + 0.1 * rng.normal(size=50)
    X2 = X.copy()
    X2[3] = 1e160
    for data in (X, X2):
        res = private_bss(data, y, 2, 1.0, bounds=(1.0, 2.0), prescreen=("two_stage", 4, 0.3),
                          random_state=0)
        assert res.support.size == 2
