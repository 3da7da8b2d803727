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
