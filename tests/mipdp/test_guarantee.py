"""The Guarantee record: text form, composition, neighbour notions, status flags."""

import dataclasses
import math

import numpy as np
import pytest

from mipdp.guarantee import Guarantee, Neighbour, advanced_epsilon, compose
from mipdp.screening import advanced_composition


def test_text_forms_and_flags():
    g = Guarantee.pure(1.0, "replace-one", "exponential mechanism", sensitivity=0.5)
    assert str(g) == ("1-DP (pure) under replace-one neighbours: exponential mechanism "
                      "(sensitivity 0.5)")
    assert g.is_private and g.is_pure and g.proven and g.status == "proven"
    a = Guarantee.approximate(0.5, 1e-6, Neighbour.ADD_REMOVE, "Gaussian")
    assert str(a).startswith("(0.5, 1e-06)-DP under add/remove-one neighbours")
    assert a.is_private and not a.is_pure
    c = g.conditional("the optimum is stable")
    assert not c.proven and not c.is_private and c.status == "conditional"
    assert "ONLY IF the optimum is stable" in str(c) and c.epsilon == 1.0
    n = g.not_private("bounds were read off the data")
    assert n.status == "not private" and not n.is_private and not n.proven
    assert math.isnan(n.epsilon) and math.isnan(n.delta) and n.nominal_epsilon == 1.0
    assert str(n).startswith("NOT PRIVATE: bounds were read off the data.")
    assert n.conditional("x") is n                     # a void guarantee stays void
    with pytest.raises(ValueError):
        Guarantee(1.0, condition="c", proven=True)
    with pytest.raises(dataclasses.FrozenInstanceError):  # frozen
        g.epsilon = 2.0


def test_neighbour_parse_keeps_only_documented_spellings():
    assert Neighbour.parse("replace-one") is Neighbour.REPLACE_ONE
    assert Neighbour.parse(" Add/Remove ") is Neighbour.ADD_REMOVE
    assert Neighbour.parse("add/remove-one") is Neighbour.ADD_REMOVE
    assert Neighbour.parse("add_remove") is Neighbour.ADD_REMOVE       # the neighbours= spelling
    assert Neighbour.parse("replace_one") is Neighbour.REPLACE_ONE
    assert Neighbour.REPLACE_ONE == "replace-one" and str(Neighbour.ADD_REMOVE) == "add/remove-one"
    for alias in ("bounded", "unbounded", "replace", "add-remove", 1):
        with pytest.raises(ValueError, match="neighbour"):
            Neighbour.parse(alias)


def test_basic_composition_and_repeat():
    g = Guarantee.pure(0.3, "replace-one", "a", sensitivity=1.0)
    h = Guarantee.approximate(0.2, 1e-5, "replace-one", "b")
    t = g + h
    assert t.epsilon == pytest.approx(0.5) and t.delta == pytest.approx(1e-5) and t.is_private
    assert [p.mechanism for p in t.leaves()] == ["a", "b"]
    r = g.repeat(4)
    assert r.epsilon == pytest.approx(1.2) and r.sensitivity == 1.0
    assert "4 independent" in r.mechanism
    assert (g + g.conditional("C")).status == "conditional"
    assert (g + g.not_private("R")).status == "not private"
    assert math.isnan((g + g.not_private("R")).epsilon)


def test_composition_refuses_mixed_neighbour_notions():
    g = Guarantee.pure(1.0, "replace-one", "a")
    h = Guarantee.pure(1.0, "add/remove", "b")
    with pytest.raises(ValueError, match="different neighbour"):
        g + h
    with pytest.raises(ValueError, match="different neighbour"):
        compose([g, h])


def test_advanced_composition_theorem():
    # homogeneous case: never above the Dwork-Rothblum-Vadhan bound, never above basic
    for eps, k, d in ((0.01, 1000, 1e-6), (0.1, 50, 1e-5), (1.0, 3, 1e-6)):
        adv = advanced_epsilon([eps] * k, d)
        assert adv <= advanced_composition(eps, k, d) + 1e-12
        assert adv <= k * eps + 1e-12
    many = compose([Guarantee.pure(0.01, "replace-one", "m")] * 1000, delta_slack=1e-6)
    assert many.epsilon < 10.0 * 0.5 and many.delta == pytest.approx(1e-6)
    assert "advanced composition" in many.notes
    few = compose([Guarantee.pure(1.0, "replace-one", "m")] * 2, delta_slack=1e-6)
    assert few.epsilon == 2.0 and few.delta == 0.0      # basic is smaller: kept
    # exact value of the heterogeneous bound for two parts
    e = np.array([0.1, 0.2])
    want = float(np.sum(e * np.tanh(e / 2)) + np.sqrt(2 * np.log(1e5) * np.sum(e ** 2)))
    assert advanced_epsilon(e, 1e-5) == pytest.approx(min(want, 0.3))
