"""Every valid input releases per its mechanism at n ≪ p (issue 20, finding 1).

Regression: with few rows the sensitivity Δ = B/n is large against the objective, so the
envelope's search cutoffs (``best - tol·2Δ/ε``, or a small region's level) fell below the
objective's floor ``L >= 0`` and the master was handed ``η <= cutoff < floor``:
``ValueError: set_variable_bounds: lb > ub`` on every backend, for least squares and Huber.
A cutoff at or below the floor now needs no search (every support has ``L >= 0``), and a
region bound is never below the floor nor above the region's true minimum.

The fuzz runs every backend × method × loss on tiny n and (for a test) large p; the
larger sizes of the report are marked slow.
"""

import warnings

import numpy as np
import pytest

from mipdp import private_bss
from mipdp.brute_force import all_supports, exponential_mechanism_log_probs
from mipdp.exceptions import ConditionalPrivacyWarning

#: the MIP path even where exhaustive / explicit search would apply (the crash was there)
MIP = {"exhaustive_max": 0, "explicit_max": 0}
LOSSES = ("least_squares", "huber", "hinge")
METHODS = ("exponential", "top_r", "mistakes")


def _data(seed, n, p, loss):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n, p))
    y = rng.uniform(-1.0, 1.0, size=n)
    if loss == "hinge":
        y = np.where(y > 0, 1.0, -1.0)
    return X, y


def _release(X, y, s, loss, method, backend, options=None, seed=0):
    if options is None:  # the MIP envelope for the exponential mechanism (where it crashed);
        # top-R / mistakes by their default (explicit) search: by the MIP alone they take
        # a minute here (flat objectives, R = 1 + s(p - s) supports found by no-goods)
        options = MIP if method == "exponential" else {}
    kw = {"delta": 1e-6} if method == "mistakes" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConditionalPrivacyWarning)
        return private_bss(X, y, s, 1.0, bounds=(1.0, 1.0), loss=loss, method=method,
                           backend=backend, random_state=seed, enumeration_options=options,
                           **kw)


def _check_release(res, p, s):
    assert res.is_private
    assert res.support.shape == (s,)
    assert np.all(np.diff(res.support) > 0) and 0 <= res.support[0] and res.support[-1] < p


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("loss", LOSSES)
def test_tiny_n_releases_on_every_backend(backend, loss, method):
    n, p, s = 5, 60, 3          # crashed before the fix (least squares and Huber)
    X, y = _data(1, n, p, loss)
    res = _release(X, y, s, loss, method, backend)
    _check_release(res, p, s)


@pytest.mark.parametrize("loss,p", [("least_squares", 100), ("huber", 40)])
def test_envelope_below_the_floor_is_certified(backend, loss, p):
    """The exponential mechanism's envelope at n ≪ p: every region bound is at least the
    floor 0 and at most its region's true minimum (brute force), and the certified bounds
    on the release's probability bracket the exact law."""
    n, s = 5, 3     # least squares: classes of > 100 000 supports stay regions
    X, y = _data(0, n, p, loss)
    res = _release(X, y, s, loss, "exponential", backend)
    _check_release(res, p, s)
    mech = res.mechanism
    sup = all_supports(p, s)
    vals = np.asarray(mech._values(sup), dtype=float)
    assert mech.regions, "the MIP envelope should have regions at this size"
    for R in mech.regions:
        inside = R.contains(sup)
        assert R.bound >= 0.0
        assert R.bound <= vals[inside].min() + 1e-9 * max(1.0, abs(vals[inside].min()))
    logp = exponential_mechanism_log_probs(vals, mech.epsilon, mech.sensitivity)
    index = {tuple(S): i for i, S in enumerate(sup.tolist())}
    for S in (res.support, res.candidates[0], sup[np.argmax(vals)]):
        lo, hi = mech.log_probability_bounds(S)
        true = logp[index[tuple(int(i) for i in S)]]
        assert lo - 1e-9 <= true <= hi + 1e-9


@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("n,p", [(4, 30), (6, 100), (8, 150), (10, 300)])
@pytest.mark.parametrize("seed", [0, 1])
def test_fuzz_tiny_n(backend, loss, method, n, p, seed):
    if backend == "gurobi" and p > 150:
        pytest.skip("the pip wheel of Gurobi is limited to 2000 variables/constraints")
    X, y = _data(seed, n, p, loss)
    _check_release(_release(X, y, 3, loss, method, backend), p, 3)


@pytest.mark.slow
@pytest.mark.parametrize("n,p", [(10, 500), (10, 5000), (20, 1000)])
def test_reported_sizes_default_options(n, p):
    """Sizes from the report, default options (least squares, exponential, HiGHS)."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-0.5, 0.5, size=(n, p))
    y = rng.uniform(-0.5, 0.5, size=n)
    res = private_bss(X, y, 5, 1.0, bounds=(0.5, 0.5), random_state=0)
    _check_release(res, p, 5)
