"""The pre-screen in front of the MIP methods (``mipdp/prescreen.py``)."""

import warnings

import numpy as np
import pytest

from mipdp import PrivacyLeakWarning, private_bss
from mipdp.comparators import dp_sis
from mipdp.datasets import make_bss_classification
from mipdp.prescreen import LABEL_BOUND, run_prescreen


@pytest.fixture(scope="module")
def labels():
    X, y, _ = make_bss_classification(n=200, p=12, s=2, random_state=0)
    return X, y


def test_hinge_prescreen_uses_the_public_label_bound(labels):
    """±1 labels are public: b_y = None must not read max|y| off the data (no warning)."""
    X, y = labels
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        res = private_bss(X, y, 2, 1.0, bounds=(0.5, None), loss="hinge",
                          prescreen=("dp_sis", 6, 0.3), random_state=0)
    assert "|y| <= 1" in str(res.info["prescreen"]["guarantee"])
    assert "read off the data" not in str(res.guarantee)
    assert res.is_private


def test_run_prescreen_clips_y_by_the_label_bound(labels):
    X, y = labels
    cols, info = run_prescreen(("dp_sis", 6, 0.3), X, y, 2, 1.0, (0.5, None),
                               np.random.default_rng(5))
    ref = dp_sis(X, y, 6, 0.3, bounds=(0.5, LABEL_BOUND), random_state=np.random.default_rng(5))
    np.testing.assert_array_equal(cols, ref.support)
    assert info["guarantee"] == ref.guarantee
    # an explicit b_y is used as given
    _, info2 = run_prescreen(("dp_sis", 6, 0.3), X, y, 2, 1.0, (0.5, 2.0),
                             np.random.default_rng(5))
    assert "|y| <= 2" in str(info2["guarantee"])
    with pytest.raises(ValueError, match="label_bound"):
        run_prescreen(("dp_sis", 6, 0.3), X, y, 2, 1.0, (0.5, None), np.random.default_rng(5),
                      label_bound=0.0)
