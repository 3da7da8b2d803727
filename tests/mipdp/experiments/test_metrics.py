import numpy as np
import pytest

from mipdp.datasets import make_bss_regression
from mipdp.experiments.metrics import SupportLoss, exact_recovery, support_f1, utility_loss
from mipdp.experiments.metrics import test_mse as mse_fn


def test_recovery_and_f1():
    truth = [1, 3, 5]
    S = [[5, 3, 1], [1, 3, 7], [0, 2, 4]]
    assert exact_recovery(S, truth).tolist() == [True, False, False]
    np.testing.assert_allclose(support_f1(S, truth), [1.0, 2 / 3, 0.0])


def test_utility_loss_zero_at_optimum():
    X, y, truth = make_bss_regression(n=800, p=12, s=3, random_state=0)
    sl = SupportLoss(X, y, 3)
    best, v = sl.best()
    # brute force over all supports agrees with the enumerator
    from itertools import combinations
    allS = np.array(list(combinations(range(12), 3)))
    vals = sl.values(allS)
    assert vals.min() == pytest.approx(v, rel=1e-12)
    np.testing.assert_array_equal(allS[vals.argmin()], best)
    u = utility_loss([best, truth, [0, 2, 4]], sl)
    assert u[0] == pytest.approx(0.0, abs=1e-14) and (u >= -1e-14).all()


def test_mse_on_held_out():
    X = np.array([[1.0, 2.0], [0.0, 1.0]])
    assert mse_fn(X, [1.0, 1.0], [1], [0.5]) == pytest.approx((0 + 0.25) / 2)
