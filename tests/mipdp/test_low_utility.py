"""LowUtilityWarning: data-free, before the data is read, the same on neighbours."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from mipdp import LowUtilityWarning, private_bss
from mipdp.low_utility import low_utility_level, low_utility_message, public_rows


def _records(X, y, s, eps, **kw):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        private_bss(X, y, s, eps, random_state=0, **kw)
    return [(w.category, str(w.message)) for w in got if w.category is LowUtilityWarning]


def _data(n, p=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    return X, X[:, 0] + rng.standard_normal(n)


#: the score each bounds value runs at n * eps < 1000 (bounds=None: the rule's Kendall score)
KIND = {None: "kendall", "kendall": "kendall", "ranks": "ranks"}


@pytest.mark.parametrize("bounds", [None, "ranks", "kendall"])
def test_fires_below_the_level_with_the_figure_and_the_advice(bounds):
    X, y = _data(20)
    got = _records(X, y, 3, 1.0, bounds=bounds)
    assert len(got) == 1
    msg = got[0][1]
    assert "20 * 1 = 20" in msg and f"below {low_utility_level(KIND[bounds]):g}" in msg
    assert "eps >=" in msg and "smaller s" in msg and "public ranges" in msg


def test_silent_at_the_readme_sizes_and_with_known_bounds():
    from sklearn.datasets import load_diabetes

    from mipdp.datasets import make_bss_regression
    d = load_diabetes(as_frame=True)               # a DataFrame, no ranges: n = 442
    assert _records(d.data, d.target, 5, 1.0) == []
    assert _records(d.data, d.target, 3, 1.0) == []
    X, y, _ = make_bss_regression(n=2000, p=20, s=5, random_state=0)
    assert _records(X, y, 5, 1.0) == []
    X, y = _data(20)
    assert _records(X, y, 3, 1.0, bounds=(0.5, 0.5)) == []
    assert _records(X, y, 3, 4.0, bounds="ranks") == []         # 80 = the ranks' level
    assert _records(X, y, 3, 1.25) == []                        # 25 = the Kendall level


def test_issued_before_the_data_is_read():
    class Unreadable:
        shape = (10, 4)
        ndim = 2

        def __array__(self, *args, **kwargs):
            raise RuntimeError("the data was read")

    with pytest.warns(LowUtilityWarning):
        with pytest.raises((RuntimeError, TypeError, ValueError)):
            private_bss(Unreadable(), np.zeros(10), 2, 1.0, random_state=0)


def test_add_remove_never_warns():
    """n is private under add/remove: the warning cannot depend on it."""
    X, y = _data(12)
    assert _records(X, y, 2, 0.5, neighbours="add_remove") == []
    assert low_utility_message(5, 0.1, 3, "ranks", "add_remove") is None
    assert low_utility_message(None, 0.1, 3, "ranks") is None


def test_neighbour_fuzz_same_warning():
    """Replace-one neighbours (ties, adversarial rows) get the same warning or none."""
    rng = np.random.default_rng(5)
    for trial in range(12):
        n = int(rng.integers(6, 60))
        eps = float(rng.choice([0.3, 1.0, 3.0]))
        s = int(rng.integers(1, 4))
        bounds = [None, "ranks", "kendall"][trial % 3]
        X = rng.integers(0, 3, size=(n, 5)).astype(float)     # many ties
        y = rng.integers(0, 2, size=n).astype(float)
        X2, y2 = X.copy(), y.copy()
        k = int(rng.integers(n))
        X2[k] = rng.choice([-1e9, 1e9], size=5)                # an adversarial row
        y2[k] = 1e9
        a = _records(X, y, s, eps, bounds=bounds)
        b = _records(X2, y2, s, eps, bounds=bounds)
        assert a == b
        assert bool(a) == (n * eps < low_utility_level(KIND[bounds]))


def test_public_rows_reads_no_entry():
    assert public_rows(np.zeros((7, 2))) == 7
    assert public_rows([[1, 2], [3, 4]]) == 2
    assert public_rows(object()) is None
