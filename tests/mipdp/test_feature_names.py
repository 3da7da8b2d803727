"""Issue 30 item 4: a DataFrame's column names come back as ``result.feature_names``."""

import numpy as np
import pandas as pd
import pytest

from mipdp import PrivateBestSubsetSelector, private_bss
from mipdp.comparators import dp_kendall, dp_sis, mcmc, prescreen, two_stage
from mipdp.datasets import make_bss_regression

B = (3.0, 3.0)


@pytest.fixture(scope="module")
def frame():
    X, y, _ = make_bss_regression(n=300, p=8, s=2, random_state=0)
    names = np.array([f"col_{j}" for j in range(X.shape[1])], dtype=object)
    return X, y, pd.DataFrame(X, columns=names), pd.Series(y, name="target"), names


CALLS = {
    "private_bss": lambda X, y: private_bss(X, y, 2, 1.0, bounds=B, random_state=0),
    "private_bss_prescreen": lambda X, y: private_bss(X, y, 2, 1.0, bounds=B, random_state=0,
                                                      prescreen=("kendall", 4, 0.3), n_draws=2),
    "dp_sis": lambda X, y: dp_sis(X, y, 2, 1.0, bounds=B, random_state=0),
    "dp_kendall": lambda X, y: dp_kendall(X, y, 2, 1.0, random_state=0),
    "two_stage": lambda X, y: two_stage(X, y, 2, 1.0, n_blocks=4, random_state=0),
    "mcmc": lambda X, y: mcmc(X, y, 2, 1.0, bounds=B, n_iter=5, random_state=0),
    "prescreen": lambda X, y: prescreen("kendall", X, y, 3, 1.0, random_state=0),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_dataframe_round_trip_keeps_the_names(frame, name):
    X, y, df, ys, names = frame
    on_frame = CALLS[name](df, ys)
    on_array = CALLS[name](X, y)
    np.testing.assert_array_equal(on_frame.supports, on_array.supports)   # same release
    np.testing.assert_array_equal(on_frame.feature_names_in, names)
    np.testing.assert_array_equal(on_frame.feature_names, names[on_frame.support])
    assert on_array.feature_names is None and on_array.feature_names_in is None


def test_selector_result_carries_the_names(frame):
    X, y, df, ys, names = frame
    sel = PrivateBestSubsetSelector(s=2, eps=1.0, bounds=B, random_state=0).fit(df, ys)
    np.testing.assert_array_equal(sel.feature_names_in_, names)
    np.testing.assert_array_equal(sel.result_not_private_.feature_names, names[sel.support_])
    np.testing.assert_array_equal(sel.get_feature_names_out(), names[sel.support_])


def test_non_string_column_names_give_no_names(frame):
    X, y, *_ = frame
    res = private_bss(pd.DataFrame(X), y, 2, 1.0, bounds=B, random_state=0)   # int names
    assert res.feature_names is None
    mixed = pd.DataFrame(X, columns=["a", 1, "b", 2, "c", 3, "d", 4])
    assert private_bss(mixed, y, 2, 1.0, bounds=B, random_state=0).feature_names is None
