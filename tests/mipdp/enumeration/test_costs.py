"""The explicit search's cost model: a function of sizes and the loss only."""

import numpy as np
import pytest

from mipdp.enumeration.costs import (
    SearchCosts,
    call_cost,
    cut_cost,
    refine_cost,
    reveal_cost,
    search_costs,
    value_cost,
)
from mipdp.losses import Hinge, Huber, LeastSquares
from mipdp.mechanisms.regions import Region


class _Enum:
    def __init__(self, objective):
        self.objective = objective


def _objective(name, n=40, p=9, seed=0):
    rng = np.random.default_rng(seed)
    X = np.clip(rng.standard_normal((n, p)), -0.5, 0.5)
    y = np.clip(X[:, 0] + 0.1 * rng.standard_normal(n), -0.5, 0.5)
    if name == "hinge":
        y = np.where(y > 0, 1.0, -1.0)
    loss = {"least_squares": LeastSquares(), "huber": Huber(), "hinge": Hinge()}[name]
    return loss.resolve(3, 0.5, 0.5).bind(X, y)


@pytest.mark.parametrize("name", ["least_squares", "huber", "hinge"])
def test_objectives_name_their_cost_kind_and_the_model_ignores_the_data(name):
    obj = _objective(name)
    assert obj.cost_kind == name
    region = Region(np.array([0, 1, 2]), 2, obj.p)
    c = search_costs(_Enum(obj), region)
    assert c == search_costs(_Enum(_objective(name, seed=1)), region)   # other data, same sizes
    assert c == search_costs(_Enum(obj.fork()), region)                 # a fork's
    assert 0 < c.value < c.per_value(16) < c.per_value(1) < c.cut
    assert c.ratio(4096) > c.ratio(16) > 1


def test_model_grows_with_the_sizes():
    for kind in ("least_squares", "huber", "hinge", "iterative", "unknown"):
        assert cut_cost(kind, 3000, 1000, 5) > cut_cost(kind, 300, 1000, 5)
        assert cut_cost(kind, 300, 10_000, 5) > cut_cost(kind, 300, 1000, 5)
        assert call_cost(kind) > 0 and reveal_cost(kind, 100, 100, 5) > value_cost(kind, 100,
                                                                                  100, 5)
    assert value_cost("huber", 3000, 100, 5) > value_cost("huber", 300, 100, 5)
    assert value_cost("least_squares", 3000, 100, 5) == value_cost("least_squares", 30, 100, 5)
    assert value_cost("least_squares", 3000, 10_000, 5) > value_cost("least_squares", 3000,
                                                                     1000, 5)
    assert refine_cost(10 ** 12) == refine_cost(10 ** 8) > refine_cost(1000)
    assert SearchCosts(1.0, 2.0, 10.0).ratio(2) == 5.0
