"""Dask input on a local in-process cluster: the same release as in memory.

Tall data with least squares go through the sufficient statistics (mipdp.statistics: one
``dask.compute`` of XcᵀXc, Xcᵀyc, ycᵀyc); wide data through the DP-SIS pre-screen on the
cluster, then the selection on the candidates' columns.  Same ``random_state``: the same
release, and the same objective values to 1e-9 relative.
"""

from itertools import combinations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

# after the importorskip calls above (the module is skipped without dask)
from mipdp import private_bss  # noqa: E402
from mipdp._validation import check_X_y, clip_design  # noqa: E402
from mipdp.losses import LeastSquares  # noqa: E402
from mipdp.losses.least_squares import GramLeastSquaresObjective  # noqa: E402
from mipdp.solvers import available_backends  # noqa: E402
from mipdp.statistics import GramDesign  # noqa: E402

BOUNDS = (0.5, 0.5)


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as c:
        yield c


def _tall(n=600, p=14, seed=0, signal=0.15):
    rng = np.random.default_rng(seed)
    X = 0.4 * rng.standard_normal((n, p))
    y = signal * (X[:, 2] + X[:, 5] + X[:, 9]) + 0.3 * rng.standard_normal(n)
    return X, y


def _releases(X, y, chunks, **kw):
    ref = private_bss(X, y, 3, 1.0, bounds=BOUNDS, **kw)
    got = private_bss(da.from_array(X, chunks=chunks),
                      da.from_array(y, chunks=chunks[0]), 3, 1.0, bounds=BOUNDS, **kw)
    return ref, got


def test_statistics_objective_equals_in_memory(client):
    X, y = _tall()
    s = 3
    loss = LeastSquares().resolve(s, *BOUNDS)
    Xd, yd = check_X_y(da.from_array(X, chunks=(150, 14)), da.from_array(y, chunks=150),
                       lazy=True)
    G, none = clip_design(Xd, yd, *BOUNDS, statistics=True)
    assert isinstance(G, GramDesign) and none is None and G.n == 600
    obj = loss.bind(G, None)
    assert isinstance(obj, GramLeastSquaresObjective)
    Xc, yc = clip_design(*check_X_y(X, y, lazy=True), *BOUNDS)
    ref = loss.bind(Xc, yc)
    supports = np.array(list(combinations(range(14), s)))
    np.testing.assert_allclose(obj.values(supports), ref.values(supports), rtol=1e-9)
    for S in supports[::97]:
        v0, lo0, g0 = ref.value_and_cut(S)
        v1, lo1, g1 = obj.value_and_cut(S)
        np.testing.assert_allclose([v1, lo1], [v0, lo0], rtol=1e-9)
        np.testing.assert_allclose(g1, g0, rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(obj.one_swap_values(supports[5]),
                               ref.one_swap_values(supports[5]), rtol=1e-9)


@pytest.mark.parametrize("options", [None, {"exhaustive_max": 0}],
                         ids=["exhaustive", "outer-approximation"])
def test_tall_dask_release_equals_in_memory(client, options):
    X, y = _tall()
    ref, got = _releases(X, y, (150, 14), random_state=7, n_draws=30,
                         enumeration_options=options)
    assert len({tuple(S) for S in ref.supports.tolist()}) > 1   # a random release
    np.testing.assert_array_equal(got.supports, ref.supports)
    np.testing.assert_array_equal(got.candidates, ref.candidates)
    np.testing.assert_allclose(got.candidate_values, ref.candidate_values, rtol=1e-9)
    assert str(got.guarantee) == str(ref.guarantee)
    assert got.info["clipped_fraction_not_private"] == pytest.approx(
        ref.info["clipped_fraction_not_private"])


@pytest.mark.parametrize("backend", available_backends())
def test_tall_dask_release_equals_in_memory_every_backend(client, backend):
    """Outer approximation with its master problems solved on every installed backend
    (p = 100, s = 5: 6 master solves on HiGHS): the same release."""
    rng = np.random.default_rng(4)
    X = 0.4 * rng.standard_normal((1000, 100))
    y = 0.15 * (X[:, 2] + X[:, 5] + X[:, 9]) + 0.3 * rng.standard_normal(1000)
    opts = {"exhaustive_max": 0, "explicit_max": 0, "screening": False}
    kw = dict(bounds=BOUNDS, random_state=1, n_draws=10, backend=backend,
              enumeration_options=opts)
    ref = private_bss(X, y, 5, 1.0, **kw)
    got = private_bss(da.from_array(X, chunks=(250, 100)), da.from_array(y, chunks=250), 5,
                      1.0, **kw)
    assert sum(v["solves"] for v in got.stats["phases"].values()) > 0
    assert len({tuple(S) for S in ref.supports.tolist()}) > 1
    np.testing.assert_array_equal(got.supports, ref.supports)
    np.testing.assert_allclose(got.candidate_values, ref.candidate_values, rtol=1e-9)


def test_tall_dask_numpy_y_and_row_column_chunks(client):
    """A numpy y next to a dask X, and X chunked by columns too (rechunked for the pass)."""
    X, y = _tall(seed=1)
    ref = private_bss(X, y, 3, 1.0, bounds=BOUNDS, random_state=2, n_draws=10)
    got = private_bss(da.from_array(X, chunks=(200, 5)), y, 3, 1.0, bounds=BOUNDS,
                      random_state=2, n_draws=10)
    np.testing.assert_array_equal(got.supports, ref.supports)


def test_wide_dask_prescreen_release_equals_in_memory(client):
    rng = np.random.default_rng(3)
    n, p = 300, 400
    X = 0.4 * rng.standard_normal((n, p)).astype(np.float32)
    y = 0.4 * (X[:, 1] + X[:, 3]) + 0.2 * rng.standard_normal(n)
    kw = dict(bounds=BOUNDS, random_state=5, n_draws=10, prescreen=("dp_sis", 12, 0.5))
    ref = private_bss(X, y, 2, 2.0, **kw)
    got = private_bss(da.from_array(X, chunks=(n, 100)), da.from_array(y, chunks=n), 2, 2.0,
                      **kw)
    np.testing.assert_array_equal(got.info["prescreen"]["columns"],
                                  ref.info["prescreen"]["columns"])
    np.testing.assert_array_equal(got.supports, ref.supports)
    np.testing.assert_allclose(got.candidate_values, ref.candidate_values, rtol=1e-9)


def test_non_finite_dask_input_raises(client):
    X, y = _tall(n=200)
    X[17, 3] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        private_bss(da.from_array(X, chunks=(50, 14)), da.from_array(y, chunks=50), 3, 1.0,
                    bounds=BOUNDS, random_state=0)
    X[17, 3] = 0.0
    y[3] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        private_bss(da.from_array(X, chunks=(50, 14)), da.from_array(y, chunks=50), 3, 1.0,
                    bounds=BOUNDS, random_state=0, loss="huber")


def test_large_dask_input_is_not_persisted(client, monkeypatch):
    """An X larger than half the workers' memory is read from its source at each pass."""
    from mipdp import data
    from mipdp.data import ClippedDesign
    X = da.from_array(np.ones((40, 30)), chunks=(40, 10))
    assert data._fits_cluster(client, X.nbytes)
    monkeypatch.setattr(data, "PERSIST_MEMORY_SHARE", 1e-12)
    d = ClippedDesign(X, 0.5)
    assert d._da_raw is X
