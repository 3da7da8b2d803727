"""Noisy IHT with peeling: sensitivity, exact per-iteration laws, calibration, inputs."""

import collections
import itertools
import math

import numpy as np
import pytest
from scipy import stats

from mipdp import private_bss
from mipdp.accounting import BudgetAccountant
from mipdp.audit import audit_empirical, audit_noisy_iht, max_abs_log_ratio
from mipdp.comparators import get_method, noisy_iht, prescreen
from mipdp.comparators.noisy_iht import (
    gradient_step,
    iht_calibration,
    iht_sensitivity,
    laplace_peeling_distribution,
    peel,
)
from mipdp.exceptions import BudgetError, InvalidParameterError, PrivacyLeakWarning
from mipdp.guarantee import advanced_epsilon

B = 0.5


def _neighbours(X, y, rng, mode):
    """Adversarial (clipping corners, far outside) and random neighbours of (X, y)."""
    n, p = X.shape
    rows = [np.array(e) * B for e in itertools.product((-1.0, 1.0), repeat=p + 1)]
    rows += [np.array(e) * 10 * B for e in itertools.product((-1.0, 1.0), repeat=p + 1)][:4]
    rows += [rng.uniform(-2, 2, size=p + 1) for _ in range(4)]
    for r in rows:
        if mode == "replace":
            for i in (0, n - 1):
                X2, y2 = X.copy(), y.copy()
                X2[i], y2[i] = r[:p], r[p]
                yield X2, y2
        else:
            yield np.vstack([X, r[:p]]), np.append(y, r[p])
    if mode == "add":
        for i in range(n):
            yield np.delete(X, i, axis=0), np.delete(y, i)


def _v(X, y, beta, eta, norm, c):
    return gradient_step(np.clip(X, -B, B), np.clip(y, -B, B), beta, eta, norm, c)


@pytest.mark.parametrize("neighbour,mode", [("replace_one", "replace"), ("add_remove", "add")])
def test_sensitivity_of_the_gradient_step(neighbour, mode):
    rng = np.random.default_rng(0)
    n, p = 7, 3
    X = rng.uniform(-1, 1, size=(n, p))
    y = rng.uniform(-1, 1, size=n)
    eta, c = 3.0, 0.4
    sens = iht_sensitivity(B, c, eta, n, neighbour)
    worst = 0.0
    for beta in (np.zeros(p), np.array([0.5, 0.0, -0.2]), np.array([4.0, -4.0, 0.0])):
        v = _v(X, y, beta, eta, n, c)
        for X2, y2 in _neighbours(X, y, rng, mode):
            worst = max(worst, np.max(np.abs(_v(X2, y2, beta, eta, n, c) - v)))
    assert worst <= sens * (1 + 1e-12)
    assert worst >= 0.5 * sens           # the bound is not loose by more than 2


def test_peel_samples_its_exact_law():
    rng = np.random.default_rng(3)
    v = np.array([0.3, -0.1, 0.25, 0.0])
    tuples, lp = laplace_peeling_distribution(v, 2, 1.0, 0.1)
    assert math.isclose(np.exp(lp).sum(), 1.0, rel_tol=1e-9)
    draws = 20000
    counts = collections.Counter(tuple(int(i) for i in peel(v, 2, 1.0, 0.1, rng,
                                                            values=False)[0])
                                 for _ in range(draws))
    observed = np.array([counts[t] for t in tuples], float)
    assert observed.sum() == draws
    assert stats.chisquare(observed, draws * np.exp(lp)).pvalue > 1e-3


@pytest.mark.parametrize("neighbour,mode", [("replace_one", "replace"), ("add_remove", "add")])
def test_one_peeling_step_exact_log_ratio(neighbour, mode):
    """Exact law of the k picks of one iteration on neighbouring datasets: <= k eps_0."""
    rng = np.random.default_rng(1)
    n, p, k = 6, 4, 2
    X = rng.uniform(-1, 1, size=(n, p))
    y = X[:, 0] - X[:, 1] + 0.1 * rng.normal(size=n)
    eta, c, eps0 = 1 / B ** 2, B, 0.5
    sens = iht_sensitivity(B, c, eta, n, neighbour)
    beta = np.array([0.3, 0.0, -0.2, 0.0])
    _, lp = laplace_peeling_distribution(_v(X, y, beta, eta, n, c), k, eps0, sens)
    worst = 0.0
    for X2, y2 in itertools.islice(_neighbours(X, y, rng, mode), 0, None, 5):
        _, lq = laplace_peeling_distribution(_v(X2, y2, beta, eta, n, c), k, eps0, sens)
        worst = max(worst, max_abs_log_ratio(lp, lq))
    assert 0.0 < worst <= k * eps0 + 1e-7


@pytest.mark.parametrize("neighbour", ["replace_one", "add_remove"])
def test_audit_rows_within_claim(neighbour):
    rows = audit_noisy_iht(seeds=(0,), neighbours=(neighbour,))
    assert len(rows) == 1 and rows[0]["within_claim"]
    assert 0.0 < rows[0]["worst_log_ratio"] <= rows[0]["claimed_eps"] + 1e-7


def test_whole_run_empirical_log_ratio():
    """Whole releases (T = 2) on a corner-row neighbour: the 95 % Clopper-Pearson lower
    bound on the realised eps stays below the claim."""
    rng = np.random.default_rng(5)
    X = np.clip(rng.normal(size=(36, 5)) * 0.4, -B, B)
    y = np.clip(X[:, 0] - X[:, 2] + 0.2 * rng.normal(size=36), -B, B)
    Xn, yn = X.copy(), y.copy()
    Xn[0], yn[0] = np.r_[B, -B, B, -B, B], -B
    eps = 4.0

    def draw(A, b, m, seed):
        r = noisy_iht(A, b, 2, eps, bounds=(B, B), random_state=seed, n_draws=m)
        return [tuple(int(i) for i in S) for S in r.supports]

    row = audit_empirical("noisy IHT", draw, X, y, Xn, yn, eps, 0.0, 3000, 600)
    assert row["within_claim"] and row["worst_log_ratio"] <= eps


def test_calibration():
    eps0, m, tot = iht_calibration(5, 2, 1.0)
    assert m == 5 * 2 + 5 and eps0 == pytest.approx(1.0 / 15) and tot == 1.0
    # few mechanisms: advanced composition does not help, basic is kept
    e_small, _, t_small = iht_calibration(5, 2, 1.0, delta=1e-6)
    assert e_small == pytest.approx(1.0 / 15) and t_small <= 1.0
    # many mechanisms: more budget per mechanism, composed total still <= eps
    e_big, m_big, t_big = iht_calibration(50, 10, 1.0, delta=1e-6)
    assert e_big > 1.5 / m_big
    assert t_big <= 1.0 + 1e-12
    assert advanced_epsilon([e_big] * m_big, 1e-6) == pytest.approx(1.0, rel=1e-9)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 15)) * 0.3
    y = X[:, [1, 4, 9]] @ np.array([1.0, -1.0, 1.0]) + 0.1 * rng.normal(size=500)
    return X, y


def test_guarantee_records(data):
    X, y = data
    res = noisy_iht(X, y, 3, 20.0, bounds=(1.0, 1.0), random_state=0)
    np.testing.assert_array_equal(res.support, [1, 4, 9])
    assert res.guarantee.is_pure and res.epsilon == pytest.approx(20.0)
    assert res.neighbour == "replace-one" and res.method == "noisy_iht"
    assert res.info["sensitivity"] == pytest.approx(2 * 1.0 * 1.0 * 0.5 / 500)   # c = b_y / 2
    approx = noisy_iht(X, y, 3, 2.0, delta=1e-5, bounds=(1.0, 1.0), n_iter=20, random_state=0)
    assert approx.delta == 1e-5 and approx.epsilon <= 2.0 + 1e-12 and approx.guarantee.is_private
    assert approx.info["eps0"] > 2.0 / approx.info["n_mechanisms"]
    three = noisy_iht(X, y, 3, 1.0, bounds=(1.0, 1.0), n_draws=3, random_state=0)
    assert three.supports.shape == (3, 3) and three.epsilon == pytest.approx(3.0)
    ar = noisy_iht(X, y, 3, 1.0, bounds=(1.0, 1.0), neighbours="add_remove", n_public=400,
                   random_state=0)
    assert ar.neighbour == "add/remove-one"
    assert ar.info["sensitivity"] == pytest.approx(0.5 / 400)
    with pytest.warns(PrivacyLeakWarning):
        leak = noisy_iht(X, y, 3, 1.0, random_state=0)
    assert not leak.guarantee.is_private and "bounds_not_private" in leak.info


class _Untouchable:
    """Data that raises if anything reads it."""

    def __array__(self, *a, **k):
        raise AssertionError("the data was read")


@pytest.mark.parametrize("kwargs,name", [
    ({"eps": -1.0}, "eps"), ({"delta": 1.0}, "delta"), ({"n_iter": 0}, "n_iter"),
    ({"step": 0.0}, "step"), ({"residual_bound": -1.0}, "residual_bound"),
    ({"neighbours": "add_remove"}, "n_public"), ({"n_public": 0}, "n_public"),
    ({"k": 0}, "k"), ({"neighbours": "swap"}, "neighbours"), ({"bounds": (-1.0, 1.0)}, "bounds"),
])
def test_bad_input_raises_before_the_data_is_read(kwargs, name):
    args = {"k": 2, "eps": 1.0, "bounds": (1.0, 1.0), **kwargs}
    with pytest.raises(InvalidParameterError, match=name):
        noisy_iht(_Untouchable(), _Untouchable(), **args)


def test_k_at_least_p_and_accountant(data):
    X, y = data
    with pytest.raises(ValueError, match="k"):
        noisy_iht(X, y, 15, 1.0, bounds=(1.0, 1.0))
    acc = BudgetAccountant(epsilon=0.5)
    with pytest.raises(BudgetError):
        noisy_iht(_Untouchable(), _Untouchable(), 2, 1.0, bounds=(1.0, 1.0), accountant=acc)
    noisy_iht(X, y, 2, 0.25, bounds=(1.0, 1.0), accountant=acc, random_state=0)
    assert acc.total().epsilon == pytest.approx(0.25)


def test_reproducible_and_no_global_rng(data):
    X, y = data
    state = np.random.get_state()[1].copy()
    a = noisy_iht(X, y, 3, 0.5, bounds=(1.0, 1.0), n_draws=5, random_state=7)
    b = noisy_iht(X, y, 3, 0.5, bounds=(1.0, 1.0), n_draws=5,
                  random_state=np.random.default_rng(7))
    np.testing.assert_array_equal(a.supports, b.supports)
    c = noisy_iht(X, y, 3, 0.5, bounds=(1.0, 1.0), n_draws=5, random_state=8)
    assert not np.array_equal(a.supports, c.supports)
    np.testing.assert_array_equal(np.random.get_state()[1], state)
    assert get_method("noisy_iht") is noisy_iht


def test_prescreen_path(data):
    X, y = data
    res = prescreen("noisy_iht", X, y, 8, 5.0, bounds=(1.0, 1.0), random_state=0)
    assert res.support.shape == (8,) and res.info["prescreen"] is True and res.delta == 0.0
    assert {1, 4, 9} <= set(res.support.tolist())
    with pytest.raises(ValueError, match="delta"):
        prescreen("noisy_iht", X, y, 8, 5.0, bounds=(1.0, 1.0), delta=1e-6)
    out = private_bss(X, y, 3, 20.0, bounds=(1.0, 1.0), prescreen=("noisy_iht", 8, 0.3),
                      random_state=0)
    assert out.info["prescreen"]["method"] == "noisy_iht"
    assert out.epsilon == pytest.approx(20.0) and out.guarantee.is_pure
    np.testing.assert_array_equal(out.support, [1, 4, 9])
