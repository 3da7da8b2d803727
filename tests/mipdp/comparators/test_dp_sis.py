"""DP-SIS: sensitivity, exact privacy on neighbouring datasets, wrapper, inputs."""

import collections
import itertools

import numpy as np
import pytest
from scipy import stats

from mipdp.comparators.dp_sis import dp_sis, sis_scores
from mipdp.exceptions import PrivacyLeakWarning
from mipdp.mechanisms.topk import (
    canonical_lipschitz_topk_distribution,
    gumbel_peeling_topk_distribution,
)
from mipdp.result import SelectionResult

B = (0.5, 0.5)


def chi_square_pvalue(samples, subsets, log_prob):
    counts = collections.Counter(tuple(int(i) for i in s) for s in samples)
    observed = np.array([counts.pop(tuple(int(i) for i in r), 0) for r in subsets], float)
    assert not counts
    expected = len(samples) * np.exp(log_prob)
    keep = expected >= 5
    obs = np.append(observed[keep], observed[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] < 5:
        obs, exp = obs[:-1], exp[:-1]
    return stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue


def clipped_scores(X, y):
    return sis_scores(np.clip(X, -B[0], B[0]), np.clip(y, -B[1], B[1]))


def neighbours(X, y, rng, mode):
    """Adversarial and random neighbours of (X, y)."""
    n, p = X.shape
    extremes = [np.array(v) for v in itertools.product((-1.0, 1.0), repeat=p + 1)][:16]
    rows = [e * 0.5 for e in extremes] + [rng.uniform(-2, 2, size=p + 1) for _ in range(4)]
    for r in rows:
        if mode == "replace":
            for i in (0, n - 1):
                X2, y2 = X.copy(), y.copy()
                X2[i], y2[i] = r[:p], r[p]
                yield X2, y2
        else:
            yield np.vstack([X, r[:p]]), np.append(y, r[p])
            yield X[1:], y[1:]


@pytest.mark.parametrize("neighbour,mode,factor", [("replace-one", "replace", 2.0),
                                                   ("add/remove", "add", 1.0)])
def test_score_sensitivity(neighbour, mode, factor):
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(7, 4))
    y = rng.uniform(-1, 1, size=7)
    s = clipped_scores(X, y)
    worst = 0.0
    for X2, y2 in neighbours(X, y, rng, mode):
        worst = max(worst, np.max(np.abs(clipped_scores(X2, y2) - s)))
    assert worst <= factor * B[0] * B[1] + 1e-12
    assert worst >= 0.5 * factor * B[0] * B[1]


@pytest.mark.parametrize("neighbour,mode,factor", [("replace-one", "replace", 2.0),
                                                   ("add/remove", "add", 1.0)])
@pytest.mark.parametrize("dist", [canonical_lipschitz_topk_distribution,
                                  gumbel_peeling_topk_distribution])
def test_exact_privacy_on_neighbouring_datasets(neighbour, mode, factor, dist):
    rng = np.random.default_rng(1)
    eps, k = 1.0, 2
    for _ in range(2):
        X = rng.uniform(-1, 1, size=(6, 5))
        y = X[:, 0] - X[:, 1] + 0.1 * rng.normal(size=6)
        sens = factor * B[0] * B[1]
        _, lp = dist(clipped_scores(X, y), k, eps, sens)
        for X2, y2 in neighbours(X, y, rng, mode):
            _, lq = dist(clipped_scores(X2, y2), k, eps, sens)
            assert np.max(np.abs(lp - lq)) <= eps + 1e-9


def test_wrapper_samples_the_mechanism_with_the_right_sensitivity():
    rng = np.random.default_rng(2)
    X = rng.uniform(-1, 1, size=(20, 6))
    y = X[:, 0] + X[:, 2] + 0.2 * rng.normal(size=20)
    eps, k = 3.0, 2
    res = dp_sis(X, y, k, eps, bounds=B, random_state=3, n_draws=6000)
    subsets, lp = canonical_lipschitz_topk_distribution(clipped_scores(X, y), k, eps,
                                                        2 * B[0] * B[1])
    assert chi_square_pvalue(res.supports, subsets, lp) > 1e-3
    res = dp_sis(X, y, k, eps, bounds=B, random_state=4, n_draws=6000, neighbours="add_remove",
                 topk="peeling")
    subsets, lp = gumbel_peeling_topk_distribution(clipped_scores(X, y), k, eps, B[0] * B[1])
    assert chi_square_pvalue(res.supports, subsets, lp) > 1e-3


def test_recovers_strong_signal_and_result_fields():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(2000, 50))
    y = X[:, [3, 17, 41]].sum(axis=1) + 0.1 * rng.normal(size=2000)
    X0, y0 = X.copy(), y.copy()
    for topk in ("canonical_lipschitz", "peeling", "laplace"):
        res = dp_sis(X, y, 3, 50.0, bounds=(3.0, 6.0), topk=topk, random_state=0, n_draws=3)
        assert isinstance(res, SelectionResult)
        np.testing.assert_array_equal(res.support, [3, 17, 41])
        assert res.supports.shape == (3, 3) and res.supports.dtype.kind == "i"
        assert res.epsilon == pytest.approx(150.0) and res.delta == 0.0
        assert res.neighbour == "replace-one" and res.method == "dp_sis"
        assert "DP" in str(res.guarantee) and res.sensitivity == pytest.approx(36.0)
        assert res.is_private and res.guarantee.is_pure
        assert set(res.timings) >= {"scores", "selection", "total"}
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)


def test_reproducible_and_no_global_rng():
    rng = np.random.default_rng(6)
    X, y = rng.normal(size=(30, 8)), rng.normal(size=30)
    state = np.random.get_state()[1].copy()
    a = dp_sis(X, y, 3, 1.0, bounds=B, random_state=11)
    b = dp_sis(X, y, 3, 1.0, bounds=B, random_state=11)
    np.testing.assert_array_equal(a.supports, b.supports)
    np.testing.assert_array_equal(np.random.get_state()[1], state)


def test_missing_bounds_warn():
    rng = np.random.default_rng(7)
    X, y = rng.normal(size=(30, 8)), rng.normal(size=30)
    with pytest.warns(PrivacyLeakWarning):
        dp_sis(X, y, 3, 1.0, random_state=0)


def test_bad_inputs():
    rng = np.random.default_rng(8)
    X, y = rng.normal(size=(30, 8)), rng.normal(size=30)
    with pytest.raises(ValueError, match="k"):
        dp_sis(X, y, 8, 1.0, bounds=B)
    with pytest.raises(ValueError, match="k"):
        dp_sis(X, y, 0, 1.0, bounds=B)
    with pytest.raises(ValueError, match="eps"):
        dp_sis(X, y, 2, -1.0, bounds=B)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="X"):
        dp_sis(Xn, y, 2, 1.0, bounds=B)
    with pytest.raises(ValueError, match="y"):
        dp_sis(X, y[:-1], 2, 1.0, bounds=B)
    with pytest.raises(ValueError, match="topk"):
        dp_sis(X, y, 2, 1.0, bounds=B, topk="nope")
    with pytest.raises(ValueError, match="neighbour"):
        dp_sis(X, y, 2, 1.0, bounds=B, neighbours="swap")
    with pytest.raises(ValueError, match="bound"):
        dp_sis(X, y, 2, 1.0, bounds=(0.0, 1.0))
    with pytest.raises(TypeError, match="n_draws"):
        dp_sis(X, y, 2, 1.0, bounds=B, n_draws=1.5)


@pytest.mark.parametrize("b", [1e-300, 1e-160, 1e153, 1e200, 1e300])
def test_scores_in_scaled_units_never_overflow(b):
    """Issue 39's overflow class: with b_x b_y n beyond the largest double, |x_j^T y|
    overflowed to inf on a neighbour only (a data-dependent exception).  In units of
    b_x b_y every score is at most n and one row moves it by at most 2."""
    from mipdp.comparators.dp_sis import scaled_sis_scores
    n, p = 400, 4
    rng = np.random.default_rng(0)
    X = np.full((n, p), b) * rng.choice([-1.0, 1.0], size=(n, p))
    X[:, 0] = b                                  # column 0: every term the same sign
    y = np.full(n, b)
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = -X[0], -y[0]
    with np.errstate(over="raise", invalid="raise"):
        s1, s2 = (scaled_sis_scores(Xd, yd, b, b) for Xd, yd in ((X, y), (X2, y2)))
        for Xd, yd in ((X, y), (X2, y2)):
            dp_sis(Xd, yd, 1, 1.0, bounds=(b, b), random_state=0)
    assert np.all(np.isfinite(s1)) and s1[0] == pytest.approx(n)
    assert np.max(np.abs(s1 - s2)) <= 2.0 + 1e-9
