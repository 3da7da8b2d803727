"""Registry: names, common calling style, pre-screening."""

import numpy as np
import pytest

import mipdp.comparators as comparators
from mipdp.comparators import PRESCREENERS, get_method, list_methods, prescreen
from mipdp.exceptions import PrivacyLeakWarning
from mipdp.result import SelectionResult


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 25)) * 0.3
    y = X[:, [1, 4, 9]].sum(axis=1) + 0.1 * rng.normal(size=400)
    return X, y


def test_names():
    assert list_methods() == ["dp_sis", "kendall", "mcmc", "noisy_iht", "two_stage"]
    assert set(PRESCREENERS) == {"dp_sis", "kendall", "two_stage", "noisy_iht"}
    assert get_method("dp_sis") is comparators.dp_sis
    assert get_method("kendall") is comparators.dp_kendall
    with pytest.raises(ValueError, match="unknown method"):
        get_method("lasso")
    with pytest.raises(TypeError, match="name"):
        get_method(3)


EXTRA = {"dp_sis": {"bounds": (1.0, 1.0)}, "kendall": {}, "two_stage": {},
         "mcmc": {"bounds": (1.0, 1.0), "l1_radius": 3.0, "n_iter": 300},
         "noisy_iht": {"bounds": (1.0, 1.0)}}


@pytest.mark.parametrize("name", ["dp_sis", "kendall", "two_stage", "mcmc", "noisy_iht"])
def test_common_calling_style(name, data):
    X, y = data
    X0, y0 = X.copy(), y.copy()
    state = np.random.get_state()[1].copy()
    res = get_method(name)(X, y, 3, 20.0, random_state=1, **EXTRA[name])
    again = get_method(name)(X, y, 3, 20.0, random_state=1, **EXTRA[name])
    assert isinstance(res, SelectionResult) and res.method == name
    assert res.support.shape == (3,) and res.support.dtype.kind == "i"
    assert np.all(np.diff(res.support) > 0)
    assert res.supports.shape == (1, 3)
    np.testing.assert_array_equal(res.support, again.support)
    np.testing.assert_array_equal(res.support, [1, 4, 9])
    assert res.epsilon == pytest.approx(20.0)
    assert res.neighbour in ("replace-one", "add/remove-one")
    assert str(res.guarantee) and "total" in res.timings
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)
    np.testing.assert_array_equal(np.random.get_state()[1], state)


@pytest.mark.parametrize("name", PRESCREENERS)
def test_prescreen(name, data):
    X, y = data
    # noisy IHT pays for k = 10 picks and values per iteration: it needs more budget here
    eps = 20.0 if name == "noisy_iht" else 5.0
    res = prescreen(name, X, y, 10, eps, bounds=(1.0, 1.0), random_state=0)
    assert res.support.shape == (10,) and res.neighbour == "replace-one"
    assert res.info["prescreen"] is True and res.delta == 0.0
    assert {1, 4, 9} <= set(res.support.tolist())


def test_prescreen_refusals_and_warning(data):
    X, y = data
    with pytest.raises(ValueError, match="approximately DP"):
        prescreen("mcmc", X, y, 5, 1.0, bounds=(1.0, 1.0))
    with pytest.raises(ValueError, match="unknown pre-screener"):
        prescreen("lasso", X, y, 5, 1.0)
    with pytest.raises(ValueError, match="neighbour"):
        prescreen("kendall", X, y, 5, 1.0, neighbours="add_remove")
    with pytest.raises(ValueError, match="k"):
        prescreen("dp_sis", X, y, 25, 1.0, bounds=(1.0, 1.0))
    with pytest.warns(PrivacyLeakWarning):
        prescreen("dp_sis", X, y, 5, 1.0, random_state=0)
