"""Noisy IHT in scaled units: no intermediate overflows for any public bounds.

The review's reproducer (bounds ``(1e154, 1e154)``, default step ``1 / b_x**2``, n = 10,
k = 1, T = 1): in the data's units ``X^T r`` overflows to ``inf`` on the neighbour only,
and the picks were [75, 63, 60, 139, 63] of 400 on D against [0, 0, 0, 400, 0] on D'.  In
scaled units both laws equal the exact ones, within chi-square, and stay within ``eps``.
"""

import numpy as np
import pytest
from scipy import stats

from mipdp.comparators import noisy_iht
from mipdp.comparators.noisy_iht import (
    _clip_difference,
    _scale_pair,
    gradient_step,
    iht_calibration,
    laplace_peeling_distribution,
    scaled_gradient_step,
)

B = 1e154


def _reviewer_pair():
    """D: column 3 holds +B in rows 0-2 (its gradient 1.5e308 fits a double); D' sets
    row 3's entry too (2e308: inf in the data's units).  y = -B everywhere, so every
    residual at beta = 0 is clipped to c = B / 2."""
    n, p = 10, 5
    X = np.zeros((n, p))
    X[:, 0] = B * np.array([1, 1, -1, 1, 0, 0, 0, 0, 0, 0])
    X[:, 1] = B * np.array([1, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    X[:, 2] = B * np.array([-1, -1, 0, 0, 0, 0, 0, 0, 0, 0])
    X[:, 3] = B * np.array([1, 1, 1, 0, 0, 0, 0, 0, 0, 0])
    X[:, 4] = B * np.array([0, 0, 0, 0, 0, 0, 0, 0, 1, -1])
    y = np.full(n, -B)
    X2 = X.copy()
    X2[3] = [0.0, 0.0, 0.0, B, 0.0]            # one row replaced
    return X, y, X2, y.copy()


def _exact_law(X, y, eps):
    """Exact law of the pick (T = 1, k = 1) from the scaled gradient computed by hand:
    nu_j = -(1 / n) sum_i (x_ij / B) * rho_i with rho_i = clip((0 - y_i) / c, -1, 1) = 1,
    sensitivity 2 in these units (2 eta B c / n divided by u = eta B c / n)."""
    n = X.shape[0]
    nu = -(X / B).sum(axis=0)              # rho = 1 for every row; u = eta b_x c / n
    eps0, _, _ = iht_calibration(1, 1, eps)
    tuples, logp = laplace_peeling_distribution(nu, 1, eps0, 2.0)
    assert [t[0] for t in tuples] == list(range(X.shape[1]))
    del n
    return logp


def test_the_data_units_overflow_on_the_neighbour_only():
    """The defect itself, in the public gradient_step of the data's units."""
    X, y, X2, y2 = _reviewer_pair()
    eta, c = 1.0 / B ** 2, B / 2
    with np.errstate(over="ignore"):
        v = gradient_step(X, y, np.zeros(5), eta, 10.0, c)
        v2 = gradient_step(X2, y2, np.zeros(5), eta, 10.0, c)
    assert np.all(np.isfinite(v)) and not np.all(np.isfinite(v2))


def test_reviewer_reproducer_equal_laws_on_both_neighbours():
    """The reproducer: 4000 draws on D and on D' match their exact laws (chi-square,
    p > 1e-3), the laws are within eps of each other, and the neighbour's pick of
    column 3 is no longer certain."""
    X, y, X2, y2 = _reviewer_pair()
    eps, draws = 1.0, 4000
    laws = []
    for i, (Xd, yd) in enumerate(((X, y), (X2, y2))):
        logp = _exact_law(Xd, yd, eps)
        with np.errstate(all="raise"):        # no overflow, no invalid value anywhere
            res = noisy_iht(Xd, yd, 1, eps, bounds=(B, B), n_iter=1, n_draws=draws,
                            random_state=i)
        counts = np.bincount(res.supports[:, 0], minlength=5)
        expected = draws * np.exp(logp)
        assert stats.chisquare(counts, expected).pvalue > 1e-3, (counts, expected)
        laws.append(logp)
    assert np.max(np.abs(laws[0] - laws[1])) <= eps + 1e-9
    assert np.exp(laws[1][3]) < 0.6


@pytest.mark.parametrize("b", [1e-300, 1e-160, 1.0, 1e154, 1e200, 1e300,
                               np.finfo(float).max])
@pytest.mark.parametrize("step, c", [(None, None), (1e300, 1e-300), (1e-300, 1e300)])
def test_every_intermediate_is_finite_and_within_the_sensitivity(b, step, c):
    """Worst-case data at the bounds (every entry ±b, the neighbour's row flipped): the
    scaled gradient step is finite and moves by at most its sensitivity 2 in every
    coordinate, at beta = 0 and at a large iterate, for extreme steps and residual bounds."""
    rng = np.random.default_rng(0)
    n, p = 12, 6
    X = rng.choice([-1.0, 1.0], size=(n, p)) * b
    y = rng.choice([-1.0, 1.0], size=n) * b
    X2, y2 = X.copy(), y.copy()
    X2[0], y2[0] = -X[0], -y[0]
    cc = b / 2 if c is None else c
    kappa = _scale_pair(1.0, div=(n,)) if step is None else _scale_pair(step, b, b, div=(n,))
    inv_c = _scale_pair(b, div=(cc,))
    for gamma in (np.zeros(p), np.array([1e250, 0, -3.0, 0, 0, 0]),
                  np.array([0, 7.0, 0, 0, -2.0, 0])):
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            nus = [scaled_gradient_step(Xd / b, yd / b, gamma, kappa, inv_c)
                   for Xd, yd in ((X, y), (X2, y2))]
        assert all(np.all(np.isfinite(nu)) for nu in nus)
        # |Xs^T rho| <= n, and one row moves each coordinate by at most 2
        assert np.max(np.abs(nus[0] - nus[1])) <= 2.0 * (1 + 1e-12)
        assert np.max(np.abs(nus[0] - gamma)) <= n


def test_the_clipped_difference_matches_exact_arithmetic():
    """clip(A z - B w, -1, 1) for scalars far beyond the double range, against exact
    rational arithmetic."""
    from fractions import Fraction
    rng = np.random.default_rng(3)
    for _ in range(300):
        ea, eb = rng.integers(-3000, 3000, size=2)
        a, b = (0.75, int(ea)), (0.625, int(eb))
        z = rng.choice([0.0, 1.0, -1.0, 1e-300, 3.5]) * rng.standard_normal(4)
        w = rng.choice([0.0, 1.0, 1e300]) * rng.standard_normal(4)
        got = _clip_difference(a, z, b, w)
        for i in range(4):
            A = Fraction(3, 4) * Fraction(2) ** int(ea)
            Bv = Fraction(5, 8) * Fraction(2) ** int(eb)
            exact = A * Fraction(float(z[i])) - Bv * Fraction(float(w[i]))
            want = float(max(Fraction(-1), min(Fraction(1), exact)))
            assert got[i] == pytest.approx(want, rel=1e-12, abs=1e-300)


def test_a_noise_scale_beyond_the_double_range_is_refused_before_the_data():
    with pytest.raises(ValueError, match="eps"):
        noisy_iht(Untouchable(), Untouchable(), 1, 1e-300, bounds=(1.0, 1.0))


class Untouchable:
    """Data that raises on any access: the refusal comes before the data is read."""

    def __getattr__(self, name):
        raise AssertionError(f"the data was read ({name})")

    def __array__(self, *a, **k):
        raise AssertionError("the data was read")
