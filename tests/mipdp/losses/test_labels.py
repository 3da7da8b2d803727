"""Issue 30 item 4: ``private_bss(loss="hinge")`` takes any two-class labels, as the selector.

The labels map to ±1 in sorted class order (``classes[0] → -1``), so the same data with
its labels spelt ±1, 0/1, False/True or as two sorted strings give the same release; the
errors name no label found in the data.
"""

import numpy as np
import pytest

from mipdp import PrivateBestSubsetSelector, private_bss
from mipdp.datasets import make_bss_regression
from mipdp.losses.hinge import encode_labels

B = (3.0, None)


@pytest.fixture(scope="module")
def data():
    X, y, _ = make_bss_regression(n=300, p=6, s=2, random_state=0)
    return X, y > 0


SPELLINGS = {
    "pm1": lambda b: np.where(b, 1.0, -1.0),
    "bool": lambda b: b,
    "01": lambda b: b.astype(int),
    "01_float": lambda b: b.astype(float),
    "strings": lambda b: np.where(b, "yes", "no"),
    "object_strings": lambda b: np.where(b, "spam", "ham").astype(object),
}


@pytest.mark.parametrize("name", list(SPELLINGS))
def test_any_two_class_labels_release_as_pm1(data, name):
    X, b = data
    ref = private_bss(X, np.where(b, 1.0, -1.0), 2, 1.0, bounds=B, loss="hinge",
                      random_state=0, n_draws=3)
    res = private_bss(X, SPELLINGS[name](b), 2, 1.0, bounds=B, loss="hinge",
                      random_state=0, n_draws=3)
    np.testing.assert_array_equal(res.supports, ref.supports)


def test_the_selector_and_private_bss_share_the_encoding(data):
    X, b = data
    y = np.where(b, "yes", "no")
    sel = PrivateBestSubsetSelector(s=2, eps=1.0, bounds=B, loss="hinge", random_state=0)
    sel.fit(X, y)
    assert sel.classes_.tolist() == ["no", "yes"]
    res = private_bss(X, y, 2, 1.0, bounds=B, loss="hinge", random_state=0)
    np.testing.assert_array_equal(sel.support_, res.support)


def test_sorted_order_and_one_class():
    classes, pm = encode_labels(np.array(["b", "a", "b"]))
    assert classes.tolist() == ["a", "b"] and pm.tolist() == [1.0, -1.0, 1.0]
    # one class: the standard labels keep the side they have beside a second class
    for lab, side in [(0, -1.0), (False, -1.0), (-1.0, -1.0), (1, 1.0), (True, 1.0),
                      ("only", 1.0)]:
        assert encode_labels(np.array([lab, lab]))[1].tolist() == [side, side]


@pytest.mark.parametrize("y", [np.array(["cat", "dog", "eel", "cat"]), np.array([0, 1, 2, 1]),
                               np.array(["x", 1, "y", 2], dtype=object)])
def test_errors_name_no_label(data, y):
    X, _ = data
    with pytest.raises(ValueError, match="two classes") as exc:
        private_bss(X[:4], y, 2, 1.0, bounds=B, loss="hinge", random_state=0)
    for label in map(str, y.tolist()):
        assert f"'{label}'" not in str(exc.value) and f"[{label}" not in str(exc.value)


def test_nan_labels_still_refused_by_the_data_checks(data):
    X, b = data
    y = np.where(b, 1.0, 0.0)
    y[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        private_bss(X, y, 2, 1.0, bounds=B, loss="hinge", random_state=0)
