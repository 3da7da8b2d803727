"""The method registry is the one list: every consumer reads it, every unit's privacy map
is what :func:`planned_guarantee` reports, and a new unit works end to end."""

import inspect
import itertools
from dataclasses import dataclass

import numpy as np
import pytest

from mipdp import selection
from mipdp._param_validation import InvalidParameterError
from mipdp.methods import SelectionMethod, registry
from mipdp.methods.top_r import TopRMethod

NAMES = registry.method_names()
BOUNDS = (0.5, 0.5)


def _data(seed=0, n=60, p=7):
    rng = np.random.default_rng(seed)
    X = np.clip(rng.normal(size=(n, p)) * 0.4, -0.5, 0.5)
    y = np.clip(X[:, [0, 3]] @ np.array([1.0, -1.0]) * 0.6 + 0.2 * rng.normal(size=n), -0.5, 0.5)
    return X, y


def test_registry_is_a_name_to_unit_table():
    assert NAMES == ("exponential", "top_r", "mistakes", "permute_and_flip")
    for name, unit in registry.METHODS.items():
        assert isinstance(unit, SelectionMethod) and unit.name == name
        assert registry.get_method(name) is unit
    with pytest.raises(InvalidParameterError, match="method"):
        registry.get_method("exponentail")


@pytest.mark.parametrize("name", NAMES)
def test_every_method_in_the_parameter_table_and_selector(name):
    from mipdp.selector import PrivateBestSubsetSelector
    table = selection.PRIVATE_BSS_CONSTRAINTS["method"]
    assert any(c.is_satisfied_by(name) for c in table)
    sel_table = PrivateBestSubsetSelector._parameter_constraints["method"]
    assert any(c.is_satisfied_by(name) for c in sel_table)
    assert name in selection.METHODS          # the compatibility tuple
    assert selection.ADD_REMOVE_SCALE.get(name) == registry.METHODS[name].add_remove_factor
    assert dict(selection.ADD_REMOVE_SCALE) == registry.add_remove_scale()


def _cli_method_choices():
    from mipdp.cli import build_parser
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    demo = sub.choices["demo"]
    return next(a for a in demo._actions if a.dest == "methods").choices


@pytest.mark.parametrize("name", NAMES)
def test_every_method_in_the_cli_experiments_and_audit(name):
    from mipdp import audit
    from mipdp.experiments.config import DEFAULT_METHODS
    from mipdp.experiments.methods import BSS_METHODS, METHODS, get_adapter
    assert name in _cli_method_choices()
    assert name in METHODS and name in BSS_METHODS and callable(get_adapter(name))
    assert all(m in METHODS for m in DEFAULT_METHODS)
    audits = audit.METHOD_AUDITS[name]
    if registry.METHODS[name].add_remove_factor is not None:   # both notions audited
        assert all("neighbours" in inspect.signature(f).parameters for f in audits)


def test_cli_and_audit_list_exactly_the_registry():
    from mipdp import audit
    assert list(_cli_method_choices()) == list(NAMES)
    assert set(audit.METHOD_AUDITS) == set(NAMES)


def _method_args(unit):
    yield {}
    yield {"R": 4}
    if unit.takes_delta:
        for ptr in (None, True, False):
            yield {"delta": 1e-4, "ptr_passed": ptr}
        yield {"delta": 1e-3, "eps_test": 0.3}


@pytest.mark.parametrize("name", NAMES)
def test_unit_guarantee_is_planned_guarantee(name):
    unit = registry.METHODS[name]
    for kw, n_draws, nb, sens in itertools.product(
            list(_method_args(unit)), (1, 3), ("replace_one", "add_remove"), (None, 0.01)):
        planned = selection.planned_guarantee(0.7, method=name, n_draws=n_draws, bounds=BOUNDS,
                                              neighbours=nb, sensitivity=sens, **kw)
        mine = unit.guarantee(0.7, n_draws, nb, sensitivity=sens, **kw)
        assert mine == planned, (kw, n_draws, nb, sens)
        assert str(mine.neighbour) == ("add/remove-one" if nb == "add_remove" else "replace-one")
        spent = selection.planned_epsilon(0.7, method=name, n_draws=n_draws,
                                          **{k: v for k, v in kw.items()
                                             if k in ("delta", "eps_test")})
        if mine.condition is None:
            assert mine.epsilon == pytest.approx(spent, rel=1e-12)
        assert mine.epsilon_or_nominal == pytest.approx(spent, rel=1e-12)


def test_only_methods_taking_delta_accept_it():
    users = [n for n, m in registry.METHODS.items() if m.takes_delta]
    assert users == ["mistakes"]
    X, y = _data()
    for name in NAMES:
        if name not in users:
            with pytest.raises(ValueError, match="delta: only used by method='mistakes'"):
                selection.private_bss(X, y, 2, 1.0, bounds=BOUNDS, method=name, delta=1e-3)


@dataclass(frozen=True)
class _FakeMethod(TopRMethod):
    """A test-only unit: the top-R sampler with ``R = 1`` under another name."""

    def _stage_guarantee(self, eps_select, n_draws, nb, **kw):
        from mipdp.guarantee import Guarantee
        return Guarantee.pure(eps_select, nb, "fake: top-1 sampler").repeat(n_draws)

    def release(self, enum, objective, *, p, s, eps_select, scale, R, **kw):
        return super().release(enum, objective, p=p, s=s, eps_select=eps_select, scale=scale,
                               R=1)


def test_a_registered_method_runs_end_to_end(monkeypatch):
    from mipdp.selector import PrivateBestSubsetSelector
    fake = _FakeMethod("fake_top1", add_remove_factor=None)
    monkeypatch.setitem(registry.METHODS, fake.name, fake)
    assert "fake_top1" in _cli_method_choices()
    X, y = _data()
    res = selection.private_bss(X, y, 2, 1.0, bounds=BOUNDS, method="fake_top1", n_draws=5,
                                random_state=0)
    assert res.method == "fake_top1" and res.info["method_run"] == "fake_top1"
    assert res.R == 1 and res.supports.shape == (5, 2)
    assert "fake: top-1 sampler" in str(res.guarantee) and res.epsilon == pytest.approx(5.0)
    assert res.guarantee == selection.planned_guarantee(
        1.0, method="fake_top1", n_draws=5, bounds=BOUNDS, sensitivity=res.sensitivity, R=1)
    sel = PrivateBestSubsetSelector(2, 1.0, bounds=BOUNDS, method="fake_top1",
                                    random_state=0).fit(X, y)
    assert sel.get_support(indices=True).shape == (2,)
    # no add_remove_factor: refused under add/remove before the data is read
    with pytest.raises(InvalidParameterError, match="method='fake_top1'.*add/remove"):
        selection.private_bss(None, None, 2, 1.0, bounds=BOUNDS, method="fake_top1",
                              neighbours="add_remove")
    monkeypatch.delitem(registry.METHODS, fake.name)
    with pytest.raises(InvalidParameterError, match="method"):
        selection.private_bss(X, y, 2, 1.0, bounds=BOUNDS, method="fake_top1")


def test_register_refuses_duplicates_and_non_units():
    with pytest.raises(ValueError, match="already registered"):
        registry.register(registry.METHODS["top_r"])
    with pytest.raises(TypeError):
        registry.register("top_r")
