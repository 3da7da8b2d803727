"""Independent review (review2) of the certified bounds merged with fuzzfix and parclass.

* Capped cuts (:func:`mipdp.enumeration.master.capped_cut`): the capped cut, summed in
  exact rational arithmetic, stays <= the value at every support of a brute-force
  enumeration (least squares, hinge, Huber; bounds 1, 1e100, tiny ridge, duplicated and
  negated columns).
* ``ridge_ball_values`` is scale-free: ``L`` of ``(bX, by, b²λ, r)`` is ``b² L(X, y, λ, r)``.
  The plain eigh path stopped its Newton iteration on an *absolute* step of 1e-15, so at
  bounds 1e-8 the values (and one-swaps) came out up to 2% below ``L(S)`` (12% at 1e-20):
  not an upper bound, and the exhaustive law is built from them.  Fixed (step relative to
  ``min(1, ||A||)``).
* The default hinge/Huber ridge was refused by ``check_certifiable`` at about one ``b_x``
  in seven above 2236 (``(1e-6·b)·b`` against ``1e-6·b**2``, one ulp apart).  Fixed.
* Huber at bounds 1e100 (delta 0.1 b, ridge at the floor) does not certify (xfail).
* Hinge at ``b_x > ~1e80`` and Huber at ``b_x, b_y ~ 1e100`` raised a raw ``OverflowError``
  (Python float ``**``) after reading the data.  Fixed (``x * x``; the optional tangent
  cuts are dropped when not finite).
"""

import warnings
from fractions import Fraction

import numpy as np
import pytest

from mipdp import private_bss
from mipdp.brute_force import all_supports
from mipdp.enumeration.master import capped_cut
from mipdp.losses import Hinge, Huber, LeastSquares
from mipdp.losses.score_rule import check_certifiable


def _data(seed, b, n=30, p=6, dup=True):
    rng = np.random.default_rng(seed)
    X = np.clip(rng.standard_t(2, size=(n, p)), -1, 1) * b
    if dup:
        X[:, 1] = X[:, 0]
        X[:, 3] = -X[:, 2]
    y = np.clip(X[:, 0] / b - X[:, 2] / b + 0.3 * rng.standard_normal(n), -1, 1) * b
    return X, y, np.where(y > 0, 1.0, -1.0)


CASES = [("ls", 1.0, 1e-8), ("ls", 1e100, 1e-8), ("hinge", 1.0, 1e-6), ("hinge", 1e100, 1e194),
         ("huber", 1.0, 1e-6), ("huber", 1e50, 1e94)]


@pytest.mark.parametrize("name,b,ridge", CASES, ids=[f"{c[0]}-{c[1]:g}" for c in CASES])
def test_capped_cut_below_every_value_in_exact_arithmetic(name, b, ridge):
    X, y, yc = _data(0, b)
    loss = {"ls": LeastSquares(ridge, 100.0), "hinge": Hinge(ridge, 100.0),
            "huber": Huber(ridge, 100.0, 0.1 * b)}[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        obj = loss.bind(X, yc if name == "hinge" else y)
        sup = all_supports(6, 2)
        v, _ = obj.value_bounds(sup)
        scale = float(np.max(v))
        sets = [set(S.tolist()) for S in sup]
        for k in range(0, len(sup), 2):
            _, lower, g = obj.value_and_cut(sup[k])
            cv, cg = capped_cut(lower, g, sup[k], 0.0)    # the master's floor is 0
            assert np.isfinite(cv) and np.all(np.isfinite(cg))
            Fg = [Fraction(float(x)) for x in cg]
            for t, T in enumerate(sets):
                S = sets[k]
                cut = (Fraction(cv) + sum(Fg[i] for i in T - S) - sum(Fg[i] for i in S - T))
                # rounding of the certified lower itself: a few ulps of the loss scale
                assert float(cut - Fraction(float(v[t]))) <= 1e-14 * scale


def _ls(b, ridge, radius, X, y):
    return LeastSquares(ridge * b * b, radius).bind(X * b, y * b)


@pytest.mark.parametrize("b", [1e-8, 1e-20, 1e50])
@pytest.mark.parametrize("radius", [0.3, 1e-3])
def test_least_squares_values_are_scale_free(b, radius):
    rng = np.random.default_rng(0)
    X = np.clip(rng.standard_normal((20, 6)), -1, 1)
    y = np.clip(X[:, 0] + X[:, 1] + 0.1 * rng.standard_normal(20), -1, 1)
    sup = all_supports(6, 3)
    ref = _ls(1.0, 1e-2, radius, X, y)
    obj = _ls(b, 1e-2, radius, X, y)
    np.testing.assert_allclose(obj.values(sup) / b / b, ref.values(sup), rtol=1e-12)
    S = np.array([0, 2, 4])
    sw, sw0 = obj.one_swap_values(S) / b / b, ref.one_swap_values(S)
    f = np.isfinite(sw0)
    np.testing.assert_allclose(sw[f], sw0[f], rtol=1e-12)
    np.testing.assert_allclose(obj.value_and_cut(S)[0] / b / b, ref.value_and_cut(S)[0],
                               rtol=1e-12)


def test_default_hinge_huber_ridge_is_never_refused():
    for b_x in np.logspace(-3, 150, 400):
        for loss in (Hinge(), Huber()):
            check_certifiable(loss, (float(b_x), 1.0))


@pytest.mark.parametrize("loss", ["hinge", "huber"])
def test_huge_bounds_run_without_overflow(loss):
    rng = np.random.default_rng(0)
    b = 1e100
    X = np.clip(rng.standard_normal((40, 6)), -1, 1) * b
    y = (np.where(X[:, 0] > X[:, 1], 1.0, -1.0) if loss == "hinge"
         else np.clip(X[:, 0] - X[:, 1], -b, b))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = private_bss(X, y, 2, 1.0, loss=loss, bounds=(b, 1.0 if loss == "hinge" else b),
                          random_state=0)
    assert len(res.support) == 2


@pytest.mark.xfail(strict=True, raises=Exception,
                   reason="Huber is not scale-free at bounds 1e100: delta = 0.1 b, ridge at the "
                          "floor 1e-6 b², radius 1/b (scale-free the same problem as at b = 1, "
                          "which certifies; so does b = 1e50) raises CertificationError after "
                          "reading the data, on every data set tried (review2, not fixed)")
def test_huber_certifies_at_bounds_1e100():
    X, y, _ = _data(0, 1e100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Huber(1e194, 1e-100, 1e99).bind(X, y).value_bounds(all_supports(6, 2))


def test_recenter_on_the_exhaustive_path_reads_the_table():
    """After a re-centre on the exhaustive path, the centre's value and one-swaps are the
    table's own values (one_swap_values differs from them in the last bits for most
    supports: the F7 hazard, no one-swap may undercut the table by rounding)."""
    from mipdp.enumeration import SupportEnumerator
    rng = np.random.default_rng(3)
    X = np.clip(rng.standard_normal((40, 9)), -0.5, 0.5)
    X[:, 1] = X[:, 0]
    y = np.clip(X[:, 0] + X[:, 2] + 0.1 * rng.standard_normal(40), -0.5, 0.5)
    enum = SupportEnumerator(LeastSquares(0.5, 1.0).bind(X, y), 3, scale=1.0)
    enum.warm_center()
    sup, vals = enum.table
    table = {tuple(r): v for r, v in zip(sup.tolist(), vals.tolist(), strict=True)}
    for i in range(0, len(sup), 17):
        enum._recenter(sup[i])
        S = enum.center
        assert enum.found[tuple(S.tolist())] == table[tuple(S.tolist())]
        for a in range(3):
            for j in np.setdiff1d(np.arange(9), S):
                T = tuple(sorted(set(S.tolist()) - {int(S[a])} | {int(j)}))
                assert enum.center_swaps[a, j] == table[T]


def _instance(name):
    """Huber with duplicated columns (seed 4: the instance whose envelope varied run to
    run), and least squares with duplicated and negated columns."""
    rng = np.random.default_rng(4 if name == "huber" else 7)
    n, p, s = 60, 12, 4
    X = np.clip(rng.standard_normal((n, p)) + 0.9 * rng.standard_normal((n, 1)), -0.5, 0.5)
    X[:, 5] = X[:, 4]
    if name == "ls":
        X[:, 8] = -X[:, 7]
    y = np.clip(X[:, :3].sum(1) + 0.2 * rng.standard_normal(n), -0.5, 0.5)
    loss = Huber(1e-3, 2.0, 0.1) if name == "huber" else LeastSquares(1e-2, 2.0)
    return X, y, s, loss


def _envelope_state(name, k, explicit_max=None, repeats=1, draws=30):
    """``repeats`` envelopes built with ``n_jobs = k``: the enumerator's evaluated supports
    (in order), the singletons and their values, the region bounds, and ``draws`` seeded
    draws of the exponential mechanism and 8 of permute-and-flip over the envelope (splits
    made cheap: ``reveal_cost`` 0.3 ms against 50 ms a refinement, so regions are refined)."""
    from mipdp._parallel import n_jobs_context
    from mipdp.enumeration import SupportEnumerator
    from mipdp.enumeration.envelope import build_envelope
    from mipdp.mechanisms import ExponentialMechanismSampler, PermuteAndFlipSampler
    X, y, s, loss = _instance(name)
    scale = loss.sensitivity(X.shape[0], s, 0.5, 0.5)
    kw = {} if explicit_max is None else {"explicit_max": explicit_max}
    out = []
    for _ in range(repeats):
        with n_jobs_context(k):
            obj = loss.bind(X, y)
            enum = SupportEnumerator(obj, s, scale=scale, backend="highs",
                                     exhaustive_max=0, **kw)
            env = build_envelope(enum, 2.0, scale, full_class_max=0)
            smp = ExponentialMechanismSampler(obj.values, env.singletons, env.values,
                                              env.regions, obj.p, 2.0, scale,
                                              refine=env.refine, cuts=env.cuts)
            sample = smp.sample(np.random.default_rng(5), draws).tolist() if draws else []
            pf = PermuteAndFlipSampler(obj.values, env.singletons, env.values,
                                       list(env.regions), obj.p, 2.0, scale,
                                       refine=env.refine, cuts=None, refine_after=2,
                                       reveal_cost=3e-4)
            pf_sample = pf.sample(np.random.default_rng(6), 8).tolist() if draws else []
        out.append((list(enum.found.items()), env.singletons.tolist(), env.values.tolist(),
                    [R.bound for R in env.regions], sample, pf_sample, pf.n_refinements))
    return out


def _explicit_work(records):
    """``(evaluated, cuts)`` summed over the explicit searches' DEBUG lines."""
    import re
    ev = cuts = 0
    for r in records:
        m = re.search(r"(\d+) evaluated .*?(\d+) new cuts", r.getMessage())
        if r.name == "mipdp.enumeration.explicit" and m:
            ev, cuts = ev + int(m.group(1)), cuts + int(m.group(2))
    return ev, cuts


#: the regions-refined path (huber, explicit_max 0) costs most: in the slow set
ENVELOPE_PATHS = [pytest.param("huber", 0, marks=pytest.mark.slow), ("huber", None),
                  ("ls", None)]


@pytest.mark.parametrize("name,explicit_max", ENVELOPE_PATHS)
def test_forked_envelope_is_the_same_run_to_run(name, explicit_max, caplog):
    """The envelope (evaluated supports in order, singletons, region bounds) and seeded draws
    are the same in 2 runs in one process and for n_jobs in {1, 2, 4}.  They used to vary:
    the explicit search chose between evaluating and cutting from measured times (now a
    cost model, mipdp.enumeration.costs), and HiGHS's default ``parallel`` option returned
    other optimal points among ties from run to run (now off, solvers/highs_options.py)."""
    with caplog.at_level("DEBUG", logger="mipdp.enumeration.explicit"):
        ref = _envelope_state(name, 1, explicit_max)[0]
    if explicit_max is None:    # the explicit search evaluated members and took cuts
        ev, cuts = _explicit_work(caplog.records)
        assert ev > 50 and cuts > 2
    else:                       # regions bounded by the master, refined by permute-and-flip
        assert ref[3] and ref[-1] > 0
    for k in (1, 2, 4):
        for state in _envelope_state(name, k, explicit_max):
            assert state == ref


@pytest.mark.parametrize("name,explicit_max", ENVELOPE_PATHS)
def test_envelope_does_not_read_the_clock(monkeypatch, name, explicit_max):
    """No choice of the enumeration or of the samplers follows the clock: with
    ``time.perf_counter`` jumping by random amounts from a microsecond to an hour between
    calls, the envelope, the draws and permute-and-flip's refinements are those of the
    real clock."""
    import itertools
    import time
    ref = _envelope_state(name, 1, explicit_max)[0]
    for seed in range(1):
        rng = np.random.default_rng(seed)
        steps = itertools.accumulate(10.0 ** rng.uniform(-6, 3.5, 100_000))
        monkeypatch.setattr(time, "perf_counter", lambda steps=steps: next(steps))
        assert _envelope_state(name, 1, explicit_max)[0] == ref
