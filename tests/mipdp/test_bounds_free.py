"""bounds=None: the data-free rule between the rank and the Kendall scores."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

from mipdp import private_bss
from mipdp.bounds_free import KENDALL_BELOW, default_bounds_free
from mipdp.plan.plan import planned_guarantee


def _data(n, p=5, seed=0, ties=False):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(n, p)).astype(float) if ties else rng.standard_normal((n, p))
    return X, X[:, 0] - 0.5 * X[:, 1] + rng.standard_normal(n)


def _release(X, y, s, eps, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return private_bss(X, y, s, eps, random_state=0, **kw)


def test_rule_table():
    assert default_bounds_free(100, 1.0, loss="least_squares") == "kendall"
    assert default_bounds_free(int(KENDALL_BELOW), 1.0, loss="least_squares") == "ranks"
    assert default_bounds_free(100, 20.0, loss="least_squares") == "kendall"   # n < 1000
    assert default_bounds_free(1500, 5.0, loss="least_squares") == "ranks"
    assert default_bounds_free(3000, 0.2, loss="least_squares") == "kendall"   # n eps < 1000
    assert default_bounds_free(None, 1.0, loss="least_squares") == "ranks"
    assert default_bounds_free(100, 1.0, loss="hinge") == "ranks"
    assert default_bounds_free(100, 1.0, loss="least_squares", neighbours="add_remove") \
        == "ranks"
    assert default_bounds_free(100, 1.0, loss="least_squares", method="mistakes") == "kendall"
    assert default_bounds_free(100, 1.0, loss="least_squares", method="other") == "ranks"
    assert default_bounds_free(100, 1.0, loss="least_squares", radius=1.0) == "ranks"
    assert default_bounds_free(100, 1.0, loss="least_squares",
                               prescreen=("dp_sis", 3, 0.5)) == "ranks"
    assert default_bounds_free(100, 1.0, loss="least_squares",
                               prescreen=("kendall", 3, 0.5)) == "kendall"
    # the speed cell (p = 1e4, n = 3000, eps = 1) and the README's n = 2000 stay on ranks
    assert default_bounds_free(3000, 1.0, loss="least_squares") == "ranks"
    assert default_bounds_free(2000, 1.0, loss="least_squares") == "ranks"


@pytest.mark.parametrize("n,eps,kind", [(60, 1.0, "kendall"), (1200, 1.0, "ranks")])
def test_default_is_the_named_score_exactly(n, eps, kind):
    """bounds=None's exact law is the law of the score the rule names."""
    X, y = _data(n, ties=True)
    a, b = _release(X, y, 2, eps), _release(X, y, 2, eps, bounds=kind)
    assert a.info["bounds"] == kind and kind in a.info["bounds_rule"]
    for S in itertools.combinations(range(5), 2):
        assert a.log_probability(S) == pytest.approx(b.log_probability(S), abs=1e-12)
    assert str(a.guarantee) == str(b.guarantee)


def test_hinge_and_add_remove_stay_on_ranks():
    X, y = _data(40)
    assert _release(X, np.sign(y), 2, 1.0, loss="hinge").info["bounds"] == "ranks"
    assert _release(X, y, 2, 1.0, neighbours="add_remove").info["bounds"] == "ranks"


def test_neighbour_fuzz_same_choice():
    """Replace-one neighbours (ties, rows at ±1e9) run the same score with the same record;
    add/remove pairs straddling the level both run ranks."""
    rng = np.random.default_rng(3)
    kinds = set()
    for trial in range(8):
        n = int(rng.integers(8, 40)) if trial % 2 else int(rng.integers(1000, 1100))
        eps = float(rng.choice([0.5, 5.0]))          # n >= 1000: 0.5 -> kendall, 5 -> ranks
        X, y = _data(n, seed=trial, ties=True)
        X2, y2 = X.copy(), y.copy()
        k = int(rng.integers(n))
        X2[k], y2[k] = rng.choice([-1e9, 1e9], size=X.shape[1]), 1e9
        a, b = _release(X, y, 2, eps), _release(X2, y2, 2, eps)
        assert a.info["bounds"] == b.info["bounds"]
        kinds.add(a.info["bounds"])
        assert a.info["bounds_rule"] == b.info["bounds_rule"]
        assert str(a.guarantee) == str(b.guarantee)
    assert kinds == {"ranks", "kendall"}
    n = int(KENDALL_BELOW) - 1                   # n * 1 below, (n + 1) * 1 at the level
    X, y = _data(n + 1)
    assert _release(X[:n], y[:n], 2, 1.0, neighbours="add_remove").info["bounds"] == "ranks"
    assert _release(X, y, 2, 1.0, neighbours="add_remove").info["bounds"] == "ranks"


def test_planned_guarantee_applies_the_rule():
    kendall = planned_guarantee(1.0, n=100)
    ranks = planned_guarantee(1.0)
    assert "kendall" in str(kendall).lower() and "ranks" in str(ranks)
