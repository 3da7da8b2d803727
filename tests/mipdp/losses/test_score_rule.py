"""The default score ``(ridge, radius)``: a pure function of public inputs."""

import math

import numpy as np
import pytest

from mipdp import private_bss
from mipdp._param_validation import InvalidParameterError
from mipdp.datasets import make_bss_classification, make_bss_regression
from mipdp.losses import (
    DEFAULT_RIDGE,
    SEED_RADIUS,
    SEED_RIDGE,
    Hinge,
    Huber,
    LeastSquares,
    default_score,
    get_loss,
)


@pytest.mark.parametrize("loss,expected", [
    ("least_squares", lambda s, bx, by: by / (bx * math.sqrt(s))),
    ("huber", lambda s, bx, by: by / (bx * math.sqrt(s))),
    ("hinge", lambda s, bx, by: 1.0 / (bx * math.sqrt(s))),
])
@pytest.mark.parametrize("s,bx,by", [(1, 0.5, 0.5), (5, 0.5, 0.5), (3, 2.0, 0.1), (10, 1.0, 7.0)])
def test_rule_formula(loss, expected, s, bx, by):
    ridge, radius = default_score(loss, s, bx, by)
    assert ridge == DEFAULT_RIDGE
    assert radius == pytest.approx(expected(s, bx, by), rel=1e-15)
    # the loss class and an instance give the same
    assert default_score(get_loss(loss), s, bx, by) == (ridge, radius)


def test_balanced_prediction_range():
    """``b_x r √s = b_y``: the prediction range equals the label range (hinge: 1)."""
    for s in (1, 4, 9):
        _, r = default_score("least_squares", s, 0.25, 0.8)
        assert 0.25 * r * math.sqrt(s) == pytest.approx(0.8)
        _, r = default_score("hinge", s, 0.25, None)
        assert 0.25 * r * math.sqrt(s) == pytest.approx(1.0)


def test_rule_never_reads_the_data():
    """Two different data sets, same public bounds: same ridge and radius in the result."""
    infos = []
    for seed in (0, 1):
        X, y, _ = make_bss_regression(n=200 + 100 * seed, p=8, s=2, random_state=seed)
        res = private_bss(X, y, 2, 1.0, bounds=(0.5, 0.5), random_state=0)
        infos.append(res.info)
    assert infos[0]["ridge"] == infos[1]["ridge"] == DEFAULT_RIDGE
    assert infos[0]["radius"] == infos[1]["radius"] == pytest.approx(0.5 / (0.5 * math.sqrt(2)))
    assert infos[0]["score_rule"] == "default"


def test_rule_for_hinge_and_huber_through_private_bss():
    X, y, _ = make_bss_classification(n=150, p=6, s=2, random_state=0)
    res = private_bss(X, y, 2, 1.0, loss="hinge", bounds=(0.5, None), random_state=0)
    assert res.info["radius"] == pytest.approx(1.0 / (0.5 * math.sqrt(2)))
    assert res.sensitivity == pytest.approx((1.0 + 1.0) / 150)       # B = 1 + b_x r √s = 2
    X, y, _ = make_bss_regression(n=150, p=6, s=2, random_state=0)
    res = private_bss(X, y, 2, 1.0, loss="huber", bounds=(0.5, 0.5), random_state=0)
    assert res.info["radius"] == pytest.approx(0.5 / (0.5 * math.sqrt(2)))


def test_given_values_are_kept_and_reported():
    X, y, _ = make_bss_regression(n=200, p=8, s=2, random_state=0)
    res = private_bss(X, y, 2, 1.0, bounds=(0.5, 0.5), ridge=SEED_RIDGE, radius=SEED_RADIUS,
                      random_state=0)
    assert (res.info["ridge"], res.info["radius"], res.info["score_rule"]) == (120.0, 1.1, "given")
    # one of the two given: the other from the rule
    res = private_bss(X, y, 2, 1.0, bounds=(0.5, 0.5), radius=0.9, random_state=0)
    assert (res.info["ridge"], res.info["radius"]) == (DEFAULT_RIDGE, 0.9)


class _Unreadable:
    """Data that fails loudly if anything reads it."""

    def __array__(self, *a, **k):
        raise AssertionError("the data was read")


@pytest.mark.parametrize("bounds", [(0.5, 0.0), (0.0, 0.5), (0.5, -1.0), (0.5, float("nan"))])
def test_bad_bounds_raise_before_the_data_is_read(bounds):
    with pytest.raises((InvalidParameterError, ValueError), match="bounds"):
        private_bss(_Unreadable(), _Unreadable(), 2, 1.0, bounds=bounds)


def test_rule_errors_name_the_argument():
    with pytest.raises(ValueError, match=r"bounds\[1\]"):
        default_score("least_squares", 3, 0.5, None)
    with pytest.raises(ValueError, match=r"bounds\[0\]"):
        default_score("hinge", 3, 0.0, None)
    with pytest.raises(ValueError, match="s:"):
        default_score("least_squares", 0, 0.5, 0.5)


def test_unresolved_loss_refuses_to_bind():
    X = np.zeros((5, 3))
    with pytest.raises(ValueError, match="resolve"):
        LeastSquares().bind(X, np.zeros(5))
    with pytest.raises(ValueError, match="resolve"):
        Hinge().sensitivity(10, 2, 0.5, None)
    loss = Huber(ridge=3.0).resolve(2, 0.5, 0.5)
    assert loss.ridge == 3.0 and loss.radius == pytest.approx(0.5 / (0.5 * math.sqrt(2)))
