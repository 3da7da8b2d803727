"""Private clipping ranges (bounds="private" / PrivateBounds): privacy, composition, use."""

import math

import numpy as np
import pytest
from sklearn.base import clone

from mipdp import PrivateBestSubsetSelector, private_bss
from mipdp.accounting import BudgetAccountant
from mipdp.datasets import make_bss_classification, make_bss_regression
from mipdp.exceptions import BudgetError, InvalidParameterError
from mipdp.guarantee import Neighbour
from mipdp.mechanisms.quantile import grid_counts
from mipdp.private_ranges import (
    PrivateBounds,
    default_grid,
    estimate_ranges,
    ranges_log_probabilities,
)
from mipdp.selection import planned_epsilon, planned_guarantee


class _Unreadable:
    """Data that raises if anything reads it (checks run before the data is read)."""

    def __array__(self, *a, **k):
        raise AssertionError("the data was read")


@pytest.fixture(scope="module")
def raw():
    X, y, support = make_bss_regression(n=400, p=10, s=2, random_state=0)
    return 3.0 * X + 1.0, 10.0 * y - 2.0, support           # raw units: ranges matter


# -- privacy: exact law of the whole ranges stage on neighbours ------------------------------
SMALL_GRID = (-4.0, -2.0, -1.0, 0.0, 1.0, 2.0, 4.0)


@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
@pytest.mark.parametrize("need_y", [True, False])
def test_ranges_law_on_neighbours(shared, neighbours, need_y):
    """The ranges stage is a product of independent quantile releases; the log-ratio of
    its joint law is at most the sum of each release's worst log-ratio, and that sum must
    stay within eps_r (both neighbour notions)."""
    rng = np.random.default_rng(0)
    spec = PrivateBounds(fraction=0.5, grid=SMALL_GRID, shared=shared)
    eps_r = 0.6
    vals = np.array([-5.0, -1.5, 0.0, 0.5, 2.0, 3.0])
    worst = 0.0
    for _ in range(20):
        X = rng.choice(vals, size=(5, 3))
        y = rng.choice(vals, size=5)
        if neighbours == "replace_one":
            i = rng.integers(5)
            X2, y2 = X.copy(), y.copy()
            X2[i], y2[i] = rng.choice(vals, size=3), rng.choice(vals)
        else:
            X2 = np.vstack([X, rng.choice(vals, size=(1, 3))])
            y2 = np.append(y, rng.choice(vals))
        la = ranges_log_probabilities(X, y if need_y else None, spec, eps_r, neighbours)
        lb = ranges_log_probabilities(X2, y2 if need_y else None, spec, eps_r, neighbours)
        assert len(la) == len(lb) == 2 * ((1 if shared else 3) + int(need_y))
        joint = sum(float(np.max(np.abs(a - b))) for a, b in zip(la, lb, strict=True))
        worst = max(worst, joint)
    assert worst <= eps_r + 1e-9


def test_ranges_log_probabilities_match_the_sampler():
    """estimate_ranges draws from the law ranges_log_probabilities states (y's lower
    quantile, chi-square)."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((30, 2))
    y = rng.standard_normal(30)
    spec = PrivateBounds(grid=SMALL_GRID, shared=True)
    laws = ranges_log_probabilities(X, y, spec, 0.8, "replace_one")
    # y's two quantiles are the last two releases; recover the pair from the released range
    grid = np.array(SMALL_GRID)
    pairs = {}
    for _ in range(3000):
        yr = estimate_ranges(X, y, spec, 0.8, rng).y_range
        pairs[yr] = pairs.get(yr, 0) + 1
    # the law of the released y range: sum over index pairs (a, b) giving the same range
    from mipdp.private_ranges import _ranges_from_indices
    law = {}
    for a in range(grid.size):
        for b in range(grid.size):
            r = tuple(float(v) for v in _ranges_from_indices(grid, a, b, spec.widen)[0])
            law[r] = law.get(r, 0.0) + math.exp(laws[-2][a] + laws[-1][b])
    from scipy import stats
    keys = [k for k in law if law[k] * 3000 > 5]
    obs = np.array([pairs.get(k, 0) for k in keys], float)
    exp = np.array([law[k] for k in keys]) * 3000
    rest_obs, rest_exp = 3000 - obs.sum(), 3000 - exp.sum()
    chi2 = np.sum((obs - exp) ** 2 / exp) + (rest_obs - rest_exp) ** 2 / max(rest_exp, 1e-9)
    assert stats.chi2.sf(chi2, len(keys)) > 1e-4


# -- composition and accounting ------------------------------------------------------------------
def test_composed_guarantee_equals_eps(raw):
    X, y, _ = raw
    res = private_bss(X, y, 2, 1.3, bounds="private", random_state=0)
    assert res.is_private and res.guarantee.is_pure
    assert res.epsilon == pytest.approx(1.3, rel=1e-12)
    ranges_part, select_part = res.guarantee.leaves()
    assert ranges_part.epsilon == pytest.approx(0.13) and "quantile" in ranges_part.mechanism
    assert select_part.epsilon == pytest.approx(1.17)
    assert planned_epsilon(1.3, bounds="private") == pytest.approx(1.3)
    assert planned_guarantee(1.3, bounds="private").epsilon == pytest.approx(1.3)
    # n_draws: the ranges once, the selection per draw
    res3 = private_bss(X, y, 2, 1.0, bounds=PrivateBounds(fraction=0.2), n_draws=3,
                       random_state=0)
    assert res3.epsilon == pytest.approx(0.2 + 3 * 0.8)
    assert planned_epsilon(1.0, n_draws=3, bounds=PrivateBounds(fraction=0.2)) == \
        pytest.approx(res3.epsilon)


def test_accountant_sees_the_ranges_before_the_data():
    acc = BudgetAccountant(epsilon=0.95)
    with pytest.raises(BudgetError):     # 1.0 planned (ranges included) > 0.95
        private_bss(_Unreadable(), _Unreadable(), 2, 1.0, bounds="private", accountant=acc)
    with pytest.raises(BudgetError, match="max_epsilon"):
        private_bss(_Unreadable(), _Unreadable(), 2, 1.0, bounds="private", n_draws=2,
                    max_epsilon=1.5)
    assert len(acc) == 0


def test_accountant_records_once(raw):
    X, y, _ = raw
    acc = BudgetAccountant(epsilon=2.0)
    private_bss(X, y, 2, 1.0, bounds="private", accountant=acc, random_state=0)
    assert len(acc) == 1 and acc.total().epsilon == pytest.approx(1.0)


def test_add_remove(raw):
    X, y, _ = raw
    res = private_bss(X, y, 2, 1.0, bounds="private", neighbours="add_remove", random_state=0)
    assert res.neighbour == Neighbour.ADD_REMOVE and res.epsilon == pytest.approx(1.0)
    assert all(g.neighbour == Neighbour.ADD_REMOVE for g in res.guarantee.leaves())
    assert res.info["private_ranges"]["shared"]     # n is not public: never per column (auto)


# -- use ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", ["highs", "gurobi", "pyomo"])
def test_every_backend_and_reproducible(raw, backend):
    pytest.importorskip({"highs": "highspy", "gurobi": "gurobipy", "pyomo": "pyomo"}[backend])
    X, y, support = raw
    opts = dict(bounds="private", backend=backend, random_state=3,
                enumeration_options={"exhaustive_max": 0, "explicit_max": 0})
    a = private_bss(X, y, 2, 4.0, **opts)
    b = private_bss(X, y, 2, 4.0, **opts)
    np.testing.assert_array_equal(a.support, b.support)
    np.testing.assert_array_equal(a.info["private_ranges"]["x_range"],
                                  b.info["private_ranges"]["x_range"])
    assert a.info["private_ranges"]["private"] and a.is_private
    assert a.info["bounds"] == (0.5, 0.5)                # public bounds of the mapped data


def test_ranges_cover_the_data_in_raw_units(raw):
    X, y, support = raw
    res = private_bss(X, y, 2, 20.0, bounds="private", random_state=0)
    lo, hi = res.info["private_ranges"]["x_range"][0]
    assert lo < 1.0 < hi and 2.0 < hi - lo < 8.0         # column sd 3, centre 1: IQR 4.05
    ylo, yhi = res.info["private_ranges"]["y_range"]
    assert ylo < np.median(y) < yhi
    np.testing.assert_array_equal(np.sort(res.support), support)


def test_per_column_and_shared(raw):
    X, y, _ = raw
    Xs = X * np.arange(1, 11)                            # columns on different scales
    per = private_bss(Xs, y, 2, 50.0, bounds=PrivateBounds(shared=False), random_state=0)
    rng_ = per.info["private_ranges"]["x_range"]
    assert not per.info["private_ranges"]["shared"]
    assert rng_[9, 1] - rng_[9, 0] > 3 * (rng_[0, 1] - rng_[0, 0])
    sh = private_bss(Xs, y, 2, 50.0, bounds=PrivateBounds(shared=True), random_state=0)
    r = sh.info["private_ranges"]["x_range"]
    assert np.all(r == r[0])
    # auto: per column only when n eps_q is large enough (public inputs)
    assert PrivateBounds().per_column(10 ** 7, 10, 0.1, True)
    assert not PrivateBounds().per_column(1000, 10, 0.1, True)
    assert not PrivateBounds().per_column(10 ** 9, 10, 0.1, True, "add_remove")


def test_nearly_constant_columns():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 6))
    X[:, 0] = 7.0                                        # constant
    X[:, 1] = 1e-9 * rng.standard_normal(300)            # nearly constant
    y = X[:, 2] - X[:, 3] + 0.1 * rng.standard_normal(300)
    res = private_bss(X, y, 2, 2.0, bounds=PrivateBounds(shared=False), random_state=0)
    r = res.info["private_ranges"]["x_range"]
    assert np.all(np.isfinite(r)) and np.all(r[:, 1] > r[:, 0])
    res = private_bss(X, y, 2, 2.0, bounds="private", random_state=0)
    assert res.is_private


def test_n_much_smaller_than_p():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 60))
    y = X[:, 0] + rng.standard_normal(20)
    res = private_bss(X, y, 2, 1.0, bounds="private", random_state=0)
    assert res.support.shape == (2,) and res.epsilon == pytest.approx(1.0)


def test_hinge_needs_no_y_range():
    X, y, _ = make_bss_classification(n=300, p=8, s=2, random_state=0)
    res = private_bss(5.0 * X, y, 2, 1.0, loss="hinge", bounds="private", random_state=0)
    assert res.info["private_ranges"]["y_range"] is None
    assert "and of y" not in res.guarantee.leaves()[0].mechanism
    assert res.epsilon == pytest.approx(1.0)


def test_selector_accepts_private_bounds(raw):
    X, y, _ = raw
    sel = PrivateBestSubsetSelector(s=2, eps=1.0, bounds=PrivateBounds(fraction=0.2),
                                    random_state=0)
    sel2 = clone(sel)
    assert sel2.bounds == sel.bounds
    sel.fit(X, y)
    assert sel.guarantee_.epsilon == pytest.approx(1.0) and sel.support_.shape == (2,)
    PrivateBestSubsetSelector(s=2, eps=1.0, bounds="private", random_state=0).fit(X, y)


# -- bad input: raised before the data is read, naming the argument -------------------------------
@pytest.mark.parametrize("kw, name", [
    ({"fraction": 0.0}, "fraction"), ({"fraction": 1.0}, "fraction"),
    ({"fraction": 1.5}, "fraction"), ({"fraction": "a"}, "fraction"),
    ({"fraction": math.nan}, "fraction"), ({"quantile": 0.5}, "quantile"),
    ({"quantile": 0.0}, "quantile"), ({"widen": 0.0}, "widen"),
    ({"grid": [3.0, 1.0, 2.0]}, "grid"), ({"grid": [0.0, 1.0]}, "grid"),
    ({"grid": [0.0, 1.0, 1.0]}, "grid"), ({"grid": [[0.0, 1.0, 2.0]]}, "grid"),
    ({"grid": [0.0, np.inf, 1e9]}, "grid"), ({"grid": ["a", "b", "c"]}, "grid"),
    ({"shared": "yes"}, "shared")])
def test_bad_private_bounds(kw, name):
    with pytest.raises(InvalidParameterError, match=name):
        PrivateBounds(**kw)


def test_bad_bounds_string_and_pre_data_checks():
    with pytest.raises(InvalidParameterError, match="bounds"):
        private_bss(_Unreadable(), _Unreadable(), 2, 1.0, bounds="privat")
    with pytest.raises(InvalidParameterError, match="ridge"):
        private_bss(_Unreadable(), _Unreadable(), 2, 1.0, bounds="private", ridge=-1.0)
    with pytest.raises(InvalidParameterError, match="neighbours"):
        private_bss(_Unreadable(), _Unreadable(), 2, 1.0, bounds="private",
                    neighbours="add_remove", prescreen=("kendall", 5, 0.2))
    with pytest.raises(Exception, match="backend"):
        private_bss(_Unreadable(), _Unreadable(), 2, 1.0, bounds="private", backend="nope")


def test_default_grid_is_public_and_symmetric():
    g = default_grid()
    np.testing.assert_array_equal(g, -g[::-1])
    assert np.all(np.diff(g) > 0) and g.size == 291


def test_every_argument_is_passed_on(monkeypatch):
    """private_bss hands the plan all of its arguments (new ones included)."""
    import inspect

    import mipdp.selection as sel
    seen = {}

    def fake_plan(args):
        seen.update(args)
        raise RuntimeError("planned")

    monkeypatch.setattr(sel, "make_plan", fake_plan)
    with pytest.raises(RuntimeError, match="planned"):
        private_bss(np.zeros((4, 3)), np.zeros(4), 1, 1.0, bounds="private")
    assert set(seen) - {"t_start"} == set(inspect.signature(private_bss).parameters)


# -- lazy inputs: the same ranges and the same release as the dense float64 path -------------
def _dense_path(X, y, **kw):
    """The private-ranges path as it was before it became lazy: ``X`` densified to float64,
    grid counts of the whole ``(n, p)`` matrix, the whole mapped matrix formed."""
    import scipy.sparse as sp

    import mipdp.private_ranges as pr
    from mipdp.mechanisms.quantile import column_grid_counts

    X = X.toarray() if sp.issparse(X) else np.array(X, dtype=np.float64)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pr, "lazy_column_grid_counts", column_grid_counts)
        mp.setattr(pr, "lazy_pooled_grid_counts", grid_counts)
        mp.setattr(pr.PrivateRanges, "mapped", lambda self, X: self.transform(X, None)[0])
        return private_bss(X, y, **kw)


def _lazy_inputs(X, tmp_path):
    import scipy.sparse as sp
    Xs = np.where(np.abs(X) > 2.5, X, 0.0)          # sparse: ~half the entries are zero
    path = tmp_path / "X.npy"
    np.save(path, X)
    return {"float64": (X, X), "float32": (X.astype(np.float32), X.astype(np.float32)),
            "fortran": (np.asfortranarray(X), X), "memmap": (np.load(path, mmap_mode="r"), X),
            "csr": (sp.csr_matrix(Xs), Xs), "csc": (sp.csc_matrix(Xs), Xs),
            **_dask_input(X)}


def _dask_input(X):
    try:
        import dask.array as da
    except ImportError:      # pragma: no cover - dask is optional
        return {}
    return {"dask": (da.from_array(X, chunks=(X.shape[0], 4)), X)}


def _same_release(a, b):
    np.testing.assert_array_equal(a.info["private_ranges"]["x_range"],
                                  b.info["private_ranges"]["x_range"])
    assert a.info["private_ranges"]["y_range"] == b.info["private_ranges"]["y_range"]
    np.testing.assert_array_equal(a.supports, b.supports)
    assert a.epsilon == b.epsilon
    np.testing.assert_allclose(a.candidate_values, b.candidate_values, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("loss", ["least_squares", "hinge"])
@pytest.mark.parametrize("shared", [True, False])
def test_lazy_inputs_give_the_dense_release(loss, shared, tmp_path):
    if loss == "hinge":
        X, y, _ = make_bss_classification(n=400, p=10, s=2, random_state=1)
        X = 3.0 * X + 1.0
    else:
        X, y, _ = make_bss_regression(n=400, p=10, s=2, random_state=1)
        X, y = 3.0 * X + 1.0, 10.0 * y - 2.0
    spec = PrivateBounds(fraction=0.3, shared=shared)
    kw = dict(s=2, eps=4.0, bounds=spec, loss=loss, n_draws=3)
    for Xin, Xref in _lazy_inputs(X, tmp_path).values():
        for seed in (0, 1):
            ref = _dense_path(Xref, y, random_state=seed, **kw)
            got = private_bss(Xin, y, random_state=seed, **kw)
            _same_release(got, ref)
            assert (got.info["private_ranges"]["y_range"] is None) == (loss == "hinge")


@pytest.mark.parametrize("screen", ["kendall", "dp_sis", "two_stage"])
def test_lazy_inputs_with_prescreen(screen, tmp_path):
    X, y, _ = make_bss_regression(n=400, p=12, s=2, random_state=2)
    X, y = 3.0 * X + 1.0, 10.0 * y - 2.0
    kw = dict(s=2, eps=4.0, bounds=PrivateBounds(fraction=0.2, shared=False),
              prescreen=(screen, 6, 0.3))
    for Xin, Xref in _lazy_inputs(X, tmp_path).values():
        ref = _dense_path(Xref, y, random_state=3, **kw)
        got = private_bss(Xin, y, random_state=3, **kw)
        _same_release(got, ref)
        np.testing.assert_array_equal(got.info["prescreen"]["columns"],
                                      ref.info["prescreen"]["columns"])


def test_sparse_input_is_never_densified(monkeypatch):
    """bounds="private" on a sparse X: no dense (n, p) array of X or of the mapped X is
    formed (every toarray of rows of X is of a few columns; tracemalloc peak far below
    n p floats)."""
    import tracemalloc

    import scipy.sparse as sp

    import mipdp.private_ranges as pr
    from mipdp.mapped import MappedMatrix

    n, p = 600, 3000                    # p > 2048: no p × p Gram
    rng = np.random.default_rng(0)
    X = sp.random(n, p, density=0.004, format="csr", random_state=1,
                  data_rvs=lambda k: 5.0 + 3.0 * rng.standard_normal(k))
    X = sp.hstack([X, sp.csr_matrix(rng.standard_normal((n, 2)) * 4.0 + 1.0)]).tocsr()
    y = 8.0 * np.asarray(X[:, -2:].sum(axis=1)).ravel() + rng.standard_normal(n)

    def fail(*a, **k):
        raise AssertionError("the whole matrix was densified")

    for cls in (sp.csr_matrix, sp.csc_matrix):
        orig = cls.toarray

        def guarded(self, *a, _orig=orig, **k):
            # columns of X (n rows) only a few at a time (a p × p Gram may be formed)
            assert self.shape[0] != n or self.shape[1] <= 64, f"densified {self.shape}"
            return _orig(self, *a, **k)

        monkeypatch.setattr(cls, "toarray", guarded)
    monkeypatch.setattr(MappedMatrix, "toarray", fail)
    monkeypatch.setattr(pr.PrivateRanges, "transform", fail)
    tracemalloc.start()
    try:
        res = private_bss(X, y, 2, 20.0, bounds=PrivateBounds(shared=True), random_state=0,
                          method="top_r", R=50)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert res.support.shape == (2,)
    assert peak < 8 * n * (p + 2) / 4, f"peak {peak / 2**20:.1f} MiB"


@pytest.mark.parametrize("shared", [True, False])
def test_chunked_mapped_design_gives_the_dense_release(shared, tmp_path, monkeypatch):
    """No mapped copy at all (copy budgets 0: every product maps tile by tile): the same
    ranges and supports as the dense path on this small problem (the objectives agree to
    rounding)."""
    import mipdp.data as data_mod
    X, y, _ = make_bss_regression(n=400, p=10, s=2, random_state=4)
    X, y = 3.0 * X + 1.0, 10.0 * y - 2.0
    kw = dict(s=2, eps=4.0, bounds=PrivateBounds(fraction=0.3, shared=shared), n_draws=3)
    inputs = {k: v for k, v in _lazy_inputs(X, tmp_path).items() if k not in ("csr", "csc")}
    refs = {(name, seed): _dense_path(Xref, y, random_state=seed, **kw)
            for name, (_, Xref) in inputs.items() for seed in (0, 1)}
    monkeypatch.setattr(data_mod, "DENSE_CACHE_BYTES", 0)
    monkeypatch.setattr(data_mod, "MEMMAP_CACHE_BYTES", 0)
    kinds = []
    init = data_mod.ClippedDesign.__init__

    def spy(self, *a, **k):
        init(self, *a, **k)
        kinds.append(self.kind)

    monkeypatch.setattr(data_mod.ClippedDesign, "__init__", spy)
    for (name, seed), ref in refs.items():
        kinds.clear()
        _same_release(private_bss(inputs[name][0], y, random_state=seed, **kw), ref)
        # least squares on a dask X: its sufficient statistics (mipdp.statistics), no
        # ClippedDesign for the selection
        assert kinds[:1] == ([] if name == "dask" else ["chunked"])


# -- issue 28 (2): no released range can collapse ---------------------------------------------
def _collapse_pair():
    """A data set and its neighbour: one y value moved to 1.5, the centre of the range
    [1, 2] the quantiles release on the integer grid."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(40, 4))
    y = np.where(rng.uniform(size=40) < 0.5, 1.2, 1.8)
    y2 = y.copy()
    y2[0] = 1.5
    return X, y, y2


def _failures(X, y, widen, runs=40):
    out = 0
    spec = dict(fraction=0.5, grid=np.arange(-4.0, 5.0))
    for seed in range(runs):
        try:
            private_bss(X, y, 1, 4.0, bounds=PrivateBounds(widen=widen, **spec),
                        random_state=seed)
        except ValueError:
            out += 1
    return out


def test_widen_cannot_collapse_the_range():
    """Before the fix, widen=1e-20 collapsed the released range and ColumnMap.apply divided
    0/0 exactly when a row sat at the centre: 0 of 40 runs failed on one data set and
    some on its neighbour.  Now widen below MIN_WIDEN is refused before the data is read,
    and at the smallest widen accepted both data sets run every time."""
    from mipdp.private_ranges import MIN_WIDEN
    with pytest.raises(InvalidParameterError, match="widen"):
        PrivateBounds(widen=1e-20)
    with pytest.raises(InvalidParameterError, match="widen"):
        private_bss(_Unreadable(), _Unreadable(), 1, 1.0, bounds=PrivateBounds(widen=1e-3))
    X, y, y2 = _collapse_pair()
    assert _failures(X, y, MIN_WIDEN, runs=8) == _failures(X, y2, MIN_WIDEN, runs=8) == 0


@pytest.mark.parametrize("grid", [
    [1.0, np.nextafter(1.0, 2.0), 2.0],               # one ulp apart
    [0.0, 5e-324, 1.0],                               # a denormal step
    [-1e100, 1e100 * (1 - 1e-15), 1e100],             # the largest points accepted
])
def test_every_released_range_has_the_floor_width(grid):
    from mipdp.mapped import ColumnMap
    from mipdp.private_ranges import MIN_RANGE_WIDTH, _ranges_from_indices
    g = np.asarray(grid)
    for a, b in [(0, 1), (1, 1), (1, 2), (0, 2)]:
        for widen in (0.01, 1.0, 100.0):
            lo, hi = _ranges_from_indices(g, a, b, widen)[0]
            c = 0.5 * (lo + hi)
            assert np.isfinite(lo) and np.isfinite(hi)
            assert hi - lo >= 0.99 * MIN_RANGE_WIDTH * max(1.0, abs(c))
            vals = np.array([lo, c, hi, g[a], g[b]])
            assert np.all(np.isfinite(ColumnMap([lo], [hi]).apply(vals[:, None])))


def test_grid_points_are_bounded():
    with pytest.raises(InvalidParameterError, match="MAX_GRID_ABS"):
        PrivateBounds(grid=[-1e300, 0.0, 1e300])
