"""Issue 30 item 4: every warning mipdp issues points at the caller's line.

``record.filename == __file__``: the frame reported is this test's, not one inside the
package (a fixed ``stacklevel`` pointed e.g. at ``_param_validation.py``).
"""

import warnings

import pytest
from sklearn.exceptions import DataConversionWarning

from mipdp import (
    ClippingWarning,
    ConditionalPrivacyWarning,
    PrivacyLeakWarning,
    PrivateBestSubsetSelector,
    private_bss,
)
from mipdp._warnings import find_stack_level, warn
from mipdp.comparators import two_stage
from mipdp.datasets import make_bss_regression
from mipdp.screening import dp_frank_wolfe


@pytest.fixture(scope="module")
def data():
    X, y, _ = make_bss_regression(n=300, p=6, s=2, random_state=0)
    return X, y


def _only(records, category):
    hits = [r for r in records if issubclass(r.category, category)]
    assert hits, f"no {category.__name__} issued"
    return hits


def test_privacy_leak_warning_points_at_caller(data):
    X, y = data
    with pytest.warns(PrivacyLeakWarning) as rec:     # bounds=None means ranks (private)
        private_bss(X, y, 2, 1.0, bounds="data", random_state=0)
    for r in _only(rec, PrivacyLeakWarning):
        assert r.filename == __file__


def test_clipping_warning_points_at_caller(data):
    X, y = data
    with pytest.warns(ClippingWarning) as rec:
        private_bss(X, y, 2, 1.0, bounds=(1e-3, 1e-3), random_state=0)
    for r in _only(rec, ClippingWarning):
        assert r.filename == __file__


def test_conditional_privacy_warning_points_at_caller(data):
    X, y = data
    with pytest.warns(ConditionalPrivacyWarning) as rec:
        private_bss(X, y, 2, 1.0, bounds=(0.5, 0.5), method="mistakes", random_state=0)
    for r in _only(rec, ConditionalPrivacyWarning):
        assert r.filename == __file__


def test_data_conversion_warning_points_at_caller(data):
    X, y = data
    with pytest.warns(DataConversionWarning) as rec:
        private_bss(X, y[:, None], 2, 1.0, bounds=(0.5, 0.5), random_state=0)
    for r in _only(rec, DataConversionWarning):
        assert r.filename == __file__


def test_selector_warning_points_at_caller(data):
    X, y = data
    sel = PrivateBestSubsetSelector(s=2, eps=1.0, bounds="data", random_state=0)
    with pytest.warns(PrivacyLeakWarning) as rec:
        sel.fit(X, y)
    for r in _only(rec, PrivacyLeakWarning):
        assert r.filename == __file__


def test_comparator_and_screening_warnings_point_at_caller(data):
    X, y = data
    with pytest.warns(PrivacyLeakWarning) as rec:
        two_stage(X, y, 2, 1.0, neighbours="add_remove", random_state=0)
    for r in _only(rec, PrivacyLeakWarning):
        assert r.filename == __file__
    with pytest.warns(PrivacyLeakWarning) as rec:
        dp_frank_wolfe(X / 10, y / 10, 1.0, n_iter=3, delta=1e-6, calibration="seed",
                       random_state=0)
    for r in _only(rec, PrivacyLeakWarning):
        assert r.filename == __file__


def test_find_stack_level_outside_package():
    # called from outside the package, the caller itself is the first outside frame
    assert find_stack_level() == 1
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        warn("hello", UserWarning)
    assert rec[0].filename == __file__
