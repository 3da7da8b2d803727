"""Shared comparator conventions: ``s=`` is an alias of the support size ``k`` (issue 20, 9)."""

import numpy as np
import pytest

from mipdp import InvalidParameterError
from mipdp.comparators import dp_kendall, dp_sis, two_stage
from mipdp.datasets import make_bss_regression


@pytest.fixture(scope="module")
def data():
    X, y, _ = make_bss_regression(n=200, p=8, s=2, random_state=0)
    return X, y


@pytest.mark.parametrize("fn,kw", [(dp_sis, {"bounds": (0.5, 0.5)}), (dp_kendall, {}),
                                   (two_stage, {})])
def test_s_is_an_alias_of_k(data, fn, kw):
    X, y = data
    by_k = fn(X, y, 2, 1.0, random_state=0, **kw)
    by_s = fn(X, y, s=2, eps=1.0, random_state=0, **kw)
    assert np.array_equal(by_k.support, by_s.support)
    with pytest.raises(InvalidParameterError, match="alias of 'k'"):
        fn(X, y, 2, 1.0, s=2, **kw)
    with pytest.raises(InvalidParameterError, match=f"'s' parameter of {fn.__name__}"):
        fn(X, y, s=0, eps=1.0, **kw)
    assert "Alias ``s=``" in fn.__doc__
