"""Mistake-class searches on forks of the enumerator (mipdp.enumeration.fork): certified
bounds, the same enumerator after the merge for every n_jobs, and the sampler's linear
envelopes built on the workers equal to those built one by one."""

import numpy as np
import pytest

from mipdp._parallel import n_jobs_context
from mipdp.brute_force import all_supports
from mipdp.enumeration import SupportEnumerator
from mipdp.enumeration.envelope import build_envelope
from mipdp.losses import LeastSquares
from mipdp.mechanisms import ExponentialMechanismSampler

B = 0.5


def _envelope(obj, s, scale, k, backend="highs", reduced=False):
    with n_jobs_context(k):
        enum = SupportEnumerator(obj, s, scale=scale, backend=backend, exhaustive_max=0,
                                 explicit_max=0, reduced_search=reduced)
        env = build_envelope(enum, 2.0, scale, full_class_max=0)
    return enum, env


@pytest.mark.parametrize("reduced", [False, True], ids=["mip", "reduced"])
@pytest.mark.parametrize("backend", ["highs", "pyomo"])
def test_forked_class_bounds_are_certified_and_the_same_for_every_n_jobs(instance, backend,
                                                                          reduced):
    from mipdp import solvers
    if backend not in solvers.available_backends():
        pytest.skip(f"{backend} is not installed")
    X, y = instance(2, n=70, p=11, kind="ill")
    loss = LeastSquares(5.0, 1.1)
    obj = loss.bind(X, y)
    s = 4                                  # classes 2, 3, 4: three forks
    scale = loss.sensitivity(X.shape[0], s, B, B)
    sup = all_supports(11, s)
    vals = obj.values(sup)
    ref_enum, ref = _envelope(obj, s, scale, 1, backend, reduced)
    center = ref_enum.center
    k_of = s - np.isin(sup, center).sum(axis=1)
    assert len(ref.regions) == s - 1
    for R in ref.regions:                  # a valid bound: below every member of its class
        assert R.bound <= vals[k_of == R.k].min() + 1e-9
    # every evaluation merged with its exact value; every cut of the store is in the master
    for key, v in ref_enum.found.items():
        assert v == pytest.approx(float(obj.values(np.array([key]))[0]), rel=1e-9, abs=1e-12)
    assert all(ref_enum.master.has_cut(np.array(S)) for S in ref_enum.cuts.supports)
    if not reduced:
        assert ref_enum.stats.phases["class_2"].solves > 0
    for k in (2, 4):
        enum, env = _envelope(obj, s, scale, k, backend, reduced)
        assert [R.bound for R in env.regions] == [R.bound for R in ref.regions]
        assert list(enum.found.items()) == list(ref_enum.found.items())
        assert enum.cuts.supports == ref_enum.cuts.supports
        np.testing.assert_array_equal(enum.cuts.arrays[1], ref_enum.cuts.arrays[1])
        assert enum.nogoods == ref_enum.nogoods
        assert enum.master.backend.n_rows == ref_enum.master.backend.n_rows


def test_prebuilt_linear_envelopes_equal_those_built_in_order(instance, monkeypatch):
    X, y = instance(4, n=70, p=12, kind="ill")
    loss = LeastSquares(5.0, 1.1)
    obj = loss.bind(X, y)
    s = 4
    scale = loss.sensitivity(X.shape[0], s, B, B)
    _, env = _envelope(obj, s, scale, 2)

    def sampler():
        with n_jobs_context(2):
            return ExponentialMechanismSampler(obj.values, env.singletons, env.values,
                                               env.regions, obj.p, 2.0, scale, cuts=env.cuts)

    pre = sampler()
    monkeypatch.setattr(ExponentialMechanismSampler, "_prebuild_linear", lambda self, r: {})
    seq = sampler()
    assert any(lin is not None for lin in seq._linear)
    for a, b in zip(pre._linear, seq._linear, strict=True):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.log_mass == pytest.approx(b.log_mass, rel=1e-12, abs=1e-12)
    assert pre.log_envelope_mass() == pytest.approx(seq.log_envelope_mass(), rel=1e-12)


def test_lazy_master_clone(instance):
    """A fork's master copies the backend's model when first used, with the original's
    rows; a copy asked for after the original changed is refused."""
    X, y = instance(1, n=60, p=10)
    loss = LeastSquares(5.0, 1.1)
    enum = SupportEnumerator(loss.bind(X, y), 3, scale=0.01, exhaustive_max=0, explicit_max=0)
    enum.optimum()
    m = enum.master
    lazy = m.clone(lazy=True)
    assert not lazy.backend_ready and m.clone().backend_ready
    assert lazy.backend.n_rows == m.backend.n_rows and lazy.backend_ready
    (a, Sa), (b, Sb) = lazy.solve(mip_rel_gap=1e-9), m.solve(mip_rel_gap=1e-9)
    assert a.status == b.status and a.objective == pytest.approx(b.objective, rel=1e-9)
    np.testing.assert_array_equal(Sa, Sb)
    late = m.clone(lazy=True)
    m.backend.add_rows([m.nogood_row(enum.center)])
    with pytest.raises(RuntimeError, match="changed"):
        late.backend  # noqa: B018


def test_deferred_rows_reach_the_backend_first_and_in_order(instance):
    """Rows given to defer_rows are in the model as soon as it is used — before any later
    row — and a clone (lazy or not) made while they wait has them too."""
    X, y = instance(1, n=60, p=10)
    loss = LeastSquares(5.0, 1.1)
    enum = SupportEnumerator(loss.bind(X, y), 3, scale=0.01, exhaustive_max=0, explicit_max=0)
    enum.optimum()
    m = enum.master
    n0 = m.backend.n_rows
    rows = [m.nogood_row(enum.center), m.nogood_row(np.array([0, 1, 2]))]
    m.defer_rows(rows[:1])
    lazy, eager = m.clone(lazy=True), m.clone()
    assert m.backend_kind.n_rows == n0 and eager.backend.n_rows == n0 + 1
    assert lazy.backend.n_rows == n0 + 1          # copied before the original changes
    m.defer_rows(rows[1:])
    assert m.backend.add_rows([m.nogood_row(np.array([3, 4, 5]))])[0] == n0 + 2
    assert m.backend.n_rows == n0 + 3
    res, S = m.solve(mip_rel_gap=1e-9)
    for T in (enum.center, [0, 1, 2], [3, 4, 5]):   # each excluded by its deferred no-good
        assert S is None or not np.array_equal(np.sort(S), np.sort(T))
