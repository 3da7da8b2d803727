"""Returned fields and log lines that depend on the data without noise say so.

Convention (docs/privacy.md, "What each output reveals"): a dict key whose value depends on
the data without noise ends in ``_not_private`` (or sits under such a key); a log line whose
values do says ``not private`` in its message.  The tests run each method with the *same*
random stream on two different datasets: whatever differs between the two runs depends on
the data, so it must carry the label (the release itself is the private output and is not
compared).
"""

import logging
import re
import warnings

import numpy as np
import pytest

from mipdp import private_bss
from mipdp.comparators import dp_kendall, dp_sis, mcmc, noisy_iht, two_stage
from mipdp.exceptions import ClippingWarning
from mipdp.mechanisms.topk import canonical_lipschitz_topk
from mipdp.result import SelectionResult

B = 0.5


def _data(seed, n=60, p=8):
    rng = np.random.default_rng(seed)
    X = np.clip(rng.normal(size=(n, p)) * 0.4, -B, B)
    beta = np.zeros(p)
    beta[rng.choice(p, 3, replace=False)] = 1.0
    y = np.clip(X @ beta * 0.5 + 0.2 * rng.normal(size=n), -B, B)
    return X, y


METHODS = {
    "dp_sis": lambda X, y: dp_sis(X, y, 3, 1.0, bounds=(B, B), random_state=0),
    "kendall": lambda X, y: dp_kendall(X, y, 4, 2.0, random_state=0, n_draws=3),
    "two_stage": lambda X, y: two_stage(X, y, 3, 1.0, n_blocks=4, random_state=0),
    "mcmc": lambda X, y: mcmc(X, y, 2, 1.0, bounds=(B, B), n_iter=30, random_state=0),
    "noisy_iht": lambda X, y: noisy_iht(X, y, 3, 1.0, bounds=(B, B), random_state=0),
}


def _unlabelled_differences(a: dict, b: dict, prefix="") -> list[str]:
    out = []
    for key in sorted(set(a) | set(b)):
        if str(key).endswith("_not_private"):
            continue
        va, vb = a.get(key), b.get(key)
        if isinstance(va, dict) and isinstance(vb, dict):
            out += _unlabelled_differences(va, vb, f"{prefix}{key}.")
        elif repr(va) != repr(vb):
            out.append(f"{prefix}{key}")
    return out


def _records(caplog, fn, *args):
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="mipdp"):
        fn(*args)
    return [(r.name, r.getMessage()) for r in caplog.records if r.name.startswith("mipdp")]


@pytest.mark.parametrize("name", sorted(METHODS))
def test_info_differs_only_in_labelled_keys(name):
    ra = METHODS[name](*_data(0))
    rb = METHODS[name](*_data(1))
    assert _unlabelled_differences(ra.info, rb.info) == []


def test_kendall_diagnostics_are_labelled():
    ra = METHODS["kendall"](*_data(0))
    rb = METHODS["kendall"](*_data(1))
    assert "exact_scores" not in ra.info and "pair_correlations" not in ra.info
    keys = ("exact_scores_not_private", "pair_correlations_not_private")
    assert all(k in ra.info for k in keys)
    assert any(ra.info[k] != rb.info[k] for k in keys)     # they do depend on the data
    assert "not private" in dp_kendall.__doc__


@pytest.mark.parametrize("name", sorted(METHODS))
def test_log_lines_that_depend_on_the_data_are_labelled(name, caplog):
    la = _records(caplog, METHODS[name], *_data(0))
    lb = _records(caplog, METHODS[name], *_data(1))
    # the runs may log different numbers of lines: pairs first, then the longer run's tail
    unlabelled = [(x, y) for x, y in zip(la, lb, strict=False)
                  if x != y and "not private" not in x[1]]
    unlabelled += [x for x in la[len(lb):] + lb[len(la):] if "not private" not in x[1]]
    assert unlabelled == []


def test_canonical_lipschitz_does_not_log_its_winning_class(caplog):
    """The class (h, t) names the true top-h scores: not released, so not logged."""
    scores = np.array([5.0, 4.0, 3.0, 2.0, 1.0, 0.0])
    with caplog.at_level(logging.DEBUG, logger="mipdp"):
        for seed in range(20):
            canonical_lipschitz_topk(scores, 3, 1.0, 1.0, np.random.default_rng(seed))
    assert not [r for r in caplog.records if r.name.startswith("mipdp.mechanisms")]


def test_screening_clip_count_is_labelled(caplog):
    from mipdp.screening import dp_frank_wolfe
    X, y = _data(0)
    X[0, 0] = 3.0                                      # one entry is clipped
    with caplog.at_level(logging.INFO, logger="mipdp"):
        dp_frank_wolfe(X, y, l1_radius=1.0, n_iter=5, eps=1.0, delta=1e-5, bounds=(B, B),
                       random_state=0)
    msgs = [r.getMessage() for r in caplog.records if "clipped" in r.getMessage()]
    assert msgs and all("not private" in m for m in msgs)


# -- issue 28 (6): private_bss's info, timings and log lines -----------------------------------
_MIP = {"exhaustive_max": 0, "explicit_max": 0}
BSS = {
    "exponential": lambda X, y: private_bss(X, y, 2, 1.0, bounds=(B, B), random_state=0),
    "exponential_mip": lambda X, y: private_bss(X, y, 2, 1.0, bounds=(B, B), random_state=0,
                                                enumeration_options=_MIP),
    "permute_and_flip": lambda X, y: private_bss(X, y, 2, 1.0, bounds=(B, B), random_state=0,
                                                 method="permute_and_flip",
                                                 enumeration_options=_MIP),
    "prescreen_two_stage": lambda X, y: private_bss(X, y, 2, 1.0, bounds=(B, B), random_state=0,
                                                    prescreen=("two_stage", 4, 0.2)),
    "prescreen_dp_sis": lambda X, y: private_bss(X, y, 2, 1.0, bounds=(B, B), random_state=0,
                                                 prescreen=("dp_sis", 4, 0.2)),
    "private_ranges": lambda X, y: private_bss(X, y, 2, 1.0, bounds="private", random_state=0),
}
_TIME = re.compile(r"\d s\b|\d+\.\d+ s\b|seconds")


@pytest.mark.parametrize("name", sorted(BSS))
def test_private_bss_info_differs_only_in_labelled_keys(name):
    """Issue 28 (6): info["prescreen"]["time"] (a wall time) was not labelled."""
    ra = BSS[name](*_data(0))
    rb = BSS[name](*_data(1))
    diff = _unlabelled_differences(ra.info, rb.info)
    # the release itself and the fields computed from it (the prescreen's chosen columns,
    # the envelope's centre and candidates) are private outputs
    assert [d for d in diff if d not in ("prescreen.columns",)] == []
    if "prescreen" in ra.info:
        assert "time" not in ra.info["prescreen"]
        assert "time_not_private" in ra.info["prescreen"]


def test_every_wall_time_is_labelled():
    """result.timings (wall times) says it is not private; so does every log line with a
    time in it (the INFO 'private ranges ... s' and DEBUG 'sampling: done in ... s' lines
    did not)."""
    entry = SelectionResult.__doc__.split("timings : dict")[1].split(" : ")[0]
    assert "not private" in entry.lower()


@pytest.mark.parametrize("name", sorted(BSS))
def test_private_bss_log_lines_with_times_are_labelled(name, caplog):
    lines = _records(caplog, BSS[name], *_data(0))
    timed = [m for _, m in lines if _TIME.search(m) and "not private" not in m]
    assert timed == []
    lb = _records(caplog, BSS[name], *_data(1))
    assert [m for _, m in lb if _TIME.search(m) and "not private" not in m] == []
    # strict=False: the runs may log different numbers of lines (only the pairs are compared)
    unlabelled = [(x, y) for x, y in zip(lines, lb, strict=False)
                  if x != y and "not private" not in x[1]]
    assert unlabelled == []


def test_private_ranges_report_the_fraction_the_map_clips():
    """With bounds="private" the clipped fraction was always 0 and no ClippingWarning was
    raised although the map clips (the interquartile range maps onto [-1/2, 1/2])."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 6)) * 3 + 1
    y = X[:, 0] - X[:, 1] + rng.normal(size=300)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = private_bss(X, y, 2, 2.0, bounds="private", random_state=0)
    lo, hi = res.info["private_ranges"]["x_range"].T
    ylo, yhi = res.info["private_ranges"]["y_range"]
    frac = res.info["clipped_fraction_not_private"]
    np.testing.assert_allclose(frac["X"], np.mean((X < lo) | (X > hi)))
    assert frac["y"] == pytest.approx(np.mean((y < ylo) | (y > yhi)))
    assert frac["X"] > 0.5
    assert any(issubclass(w.category, ClippingWarning) for w in caught)


def test_hinge_label_errors_do_not_echo_the_data():
    """The label errors printed the label values found in y (data in an exception)."""
    from mipdp import PrivateBestSubsetSelector
    X, _ = _data(0)
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    y[3] = 0.123456789
    with pytest.raises(ValueError) as info:
        private_bss(X, y, 2, 1.0, bounds=(B, B), loss="hinge")
    assert "0.123" not in str(info.value)
    y3 = np.array([0.37, 2.71, 5.55])[np.arange(X.shape[0]) % 3]     # three classes
    with pytest.raises(ValueError) as info:
        PrivateBestSubsetSelector(s=2, eps=1.0, bounds=(B, B), loss="hinge").fit(X, y3)
    assert not any(v in str(info.value) for v in ("0.37", "2.71", "5.55"))


def test_logistic_label_error_does_not_echo_the_data():
    from mipdp.screening import dp_frank_wolfe
    X, _ = _data(0)
    y = np.where(X[:, 0] > 0, 1.0, 0.0)
    y[5] = 7.654321
    with pytest.raises(ValueError) as info:
        dp_frank_wolfe(X, y, 1.0, 5, eps=1.0, delta=1e-5, loss="logistic", bounds=(B, B),
                       random_state=0)
    assert "7.65" not in str(info.value) and "[0, 1]" in str(info.value)
