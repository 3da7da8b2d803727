"""Region bounds stay valid across successive searches on one master, on every backend.

Regression: on a backend with native lazy rows (Gurobi) a search that lowered its cutoff
handed the cutoff to the solver as a lazy row, which the backend keeps after the solve;
every later search then saw a master cut off below its own members and "proved" bounds
of +inf (an invalid envelope for the exponential mechanism, wrong class minima).
"""

import numpy as np
import pytest

from mipdp.brute_force import all_supports
from mipdp.enumeration import SupportEnumerator
from mipdp.losses import Hinge, Huber, LeastSquares
from mipdp.mechanisms.regions import Region

MIP = dict(exhaustive_max=0, explicit_max=0)


@pytest.mark.parametrize("loss", [LeastSquares(5.0, 1.1), Hinge(2.0, 1.5),
                                  Huber(5.0, 1.1, huber_delta=0.3)], ids=["ls", "hinge", "huber"])
@pytest.mark.parametrize("seed", [2, 5])
def test_successive_region_bounds_are_valid(instance, backend, loss, seed):
    p, s = 10, 4
    X, y = instance(seed, n=50, p=p)
    if loss.name == "hinge":
        y = np.where(y >= np.median(y), 1.0, -1.0)
    obj = loss.bind(X, y)
    sup = all_supports(p, s)
    vals = obj.values(sup)
    enum = SupportEnumerator(obj, s, scale=0.01, backend=backend, **MIP)
    center, _ = enum.optimum()
    outside = np.setdiff1d(np.arange(p), center)
    regions = [Region(center, k, p) for k in (2, 3, 4)]
    regions += list(regions[2].split(int(center[0]))) + list(regions[1].split(int(outside[0])))
    for R in regions:  # each search lowers its cutoff as it finds members
        rb = enum.region_bound(R, abs_tol=1e-3)
        inside = R.contains(sup)
        true = vals[inside].min() if inside.any() else np.inf
        assert rb.lower <= true + 1e-9 * max(1.0, abs(true)), (R.describe(), rb.lower, true)
        if inside.any():
            assert rb.best >= true - 1e-9 and np.isfinite(rb.lower)


@pytest.mark.parametrize("reduced", [False, True])
def test_mistake_scores_settle_between_tied_supports(reduced):
    """Regression (found by the reduced-master sweep): with three identical columns the
    optimum is tied with a one-swap whose value by the one-swap update is a few ulps
    below the centre's full evaluation; ``mistake_scores`` compared them exactly and
    re-centred between the two tied supports until it raised ``CertificationError``."""
    rng = np.random.default_rng(1024)
    p, s = int(rng.integers(6, 13)), int(rng.integers(2, 5))   # p = 9, s = 2
    n = int(rng.integers(8, 70))
    X = rng.normal(size=(n, p))
    beta = np.zeros(p)
    beta[rng.choice(p, 3, replace=False)] = rng.choice([-1.0, 1.0], 3)
    y = X @ beta * 0.4 + 0.5 * rng.normal(size=n)
    cols = rng.permutation(p)
    X[:, cols[1]] = X[:, cols[0]]
    X[:, cols[2]] = X[:, cols[0]]
    X[:, cols[4]] = X[:, cols[3]]
    X, y = np.clip(X * 0.4, -0.5, 0.5), np.clip(y, -0.5, 0.5)
    loss = LeastSquares(float(rng.choice([0.5, 5.0, 20.0])), 1.1)
    obj = loss.bind(X, y)
    enum = SupportEnumerator(obj, s, scale=loss.sensitivity(n, s, 0.5, 0.5),
                             reduced_search=reduced, **MIP)
    ms = enum.mistake_scores()
    sup = all_supports(p, s)
    vals = obj.values(sup)
    k_of = s - np.isin(sup, ms.center).sum(axis=1)
    for k in range(s + 1):
        true = vals[k_of == k].min()
        assert abs(ms.scores[k] - true) <= 1e-9 * max(1.0, abs(true))
