"""The pre-screeners on float32, memmap and sparse inputs: the same release as on the dense
float64 array for the same random_state, without densifying X (docs/design.md, "Memory")."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from mipdp import private_bss
from mipdp.comparators import dp_kendall, dp_sis, prescreen, two_stage
from mipdp.comparators import kendall as kendall_mod
from mipdp.prescreen import run_prescreen


def _data(seed=0, n=120, p=40, density=0.35):
    """Values exactly representable in float32 (so every input holds the same numbers), many
    zeros (ties for Kendall), and a signal on columns 0, 3, 7."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p)).astype(np.float32)
    X[rng.random((n, p)) > density] = 0.0
    X[:, [0, 3, 7]] = rng.standard_normal((n, 3)).astype(np.float32)
    y = X[:, [0, 3, 7]].astype(np.float64) @ np.array([1.0, -1.0, 0.8])
    y += 0.3 * rng.standard_normal(n)
    return X, y


def _inputs(X32, tmp_path) -> dict:
    X64 = X32.astype(np.float64)
    np.save(tmp_path / "x32.npy", X32)
    np.save(tmp_path / "x64.npy", X64)
    return {
        "float64": X64,
        "fortran": np.asfortranarray(X64),
        "float32": X32,
        "memmap32": np.load(tmp_path / "x32.npy", mmap_mode="r"),
        "memmap64": np.load(tmp_path / "x64.npy", mmap_mode="r"),
        "csr": sp.csr_matrix(X64),
        "csc32": sp.csc_matrix(X32),
        "coo": sp.coo_matrix(X64),
    }


METHODS = {
    "kendall": lambda X, y, rs: dp_kendall(X, y, 4, 3.0, random_state=rs, n_draws=3),
    "two_stage": lambda X, y, rs: two_stage(X, y, 4, 3.0, random_state=rs, n_draws=2),
    "two_stage_alpha": lambda X, y, rs: two_stage(X, y, 4, 3.0, alpha=0.05, n_blocks=6,
                                                  random_state=rs, n_draws=2),
    "dp_sis": lambda X, y, rs: dp_sis(X, y, 4, 3.0, bounds=(1.5, 2.0), random_state=rs,
                                      n_draws=3),
}


@pytest.mark.parametrize("method", list(METHODS))
def test_release_identical_for_every_input_kind(method, tmp_path):
    X32, y = _data()
    inputs = _inputs(X32, tmp_path)
    before = {k: (v.toarray() if sp.issparse(v) else np.array(v)) for k, v in inputs.items()}
    for rs in (0, 1):
        ref = METHODS[method](inputs["float64"], y, rs).supports
        for kind, X in inputs.items():
            got = METHODS[method](X, y, rs).supports
            np.testing.assert_array_equal(got, ref, err_msg=f"{method} on {kind}, seed {rs}")
    for kind, X in inputs.items():                       # X is never modified
        after = X.toarray() if sp.issparse(X) else np.asarray(X)
        np.testing.assert_array_equal(after, before[kind])


@pytest.mark.parametrize("method", ["kendall", "two_stage", "dp_sis"])
def test_release_identical_on_a_dask_array(method):
    da = pytest.importorskip("dask.array")
    import dask
    X32, y = _data(3)
    X64 = X32.astype(np.float64)
    with dask.config.set(scheduler="synchronous"):
        got = METHODS[method](da.from_array(X64, chunks=(50, 16)), y, 0).supports
    np.testing.assert_array_equal(got, METHODS[method](X64, y, 0).supports)


@pytest.mark.parametrize("name", ["kendall", "two_stage", "dp_sis"])
def test_run_prescreen_identical_for_every_input_kind(name, tmp_path):
    """What private_bss calls: the chosen columns match the dense float64 array's."""
    X32, y = _data(1)
    inputs = _inputs(X32, tmp_path)
    ref = run_prescreen((name, 10, 0.3), inputs["float64"], y, 3, 2.0, (1.5, 2.0),
                        np.random.default_rng(5))[0]
    for kind, X in inputs.items():
        cols = run_prescreen((name, 10, 0.3), X, y, 3, 2.0, (1.5, 2.0),
                             np.random.default_rng(5))[0]
        np.testing.assert_array_equal(cols, ref, err_msg=f"{name} on {kind}")
        res = prescreen(name, X, y, 10, 0.6, bounds=(1.5, 2.0), random_state=3)
        assert res.info["prescreen"] and res.support.size == 10


def test_private_bss_with_prescreen_on_sparse_and_memmap(tmp_path):
    X32, y = _data(2, n=150, p=30)
    inputs = _inputs(X32, tmp_path)
    kw = dict(bounds=(1.5, 2.0), prescreen=("kendall", 8, 0.3), random_state=4, n_draws=3)
    ref = private_bss(inputs["float64"], y, 2, 4.0, **kw)
    for kind in ("csr", "memmap32", "float32"):
        res = private_bss(inputs[kind], y, 2, 4.0, **kw)
        np.testing.assert_array_equal(res.info["prescreen"]["columns"],
                                      ref.info["prescreen"]["columns"])
        np.testing.assert_array_equal(res.supports, ref.supports)
        assert res.epsilon == ref.epsilon


def _sparse_wide(n, p, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, p, density=0.02, format="csr", random_state=rng,
                  data_rvs=rng.standard_normal)
    y = np.asarray(X[:, :3].sum(axis=1)).ravel() + 0.1 * rng.standard_normal(n)
    return X, y


def _traced_peak(fn) -> float:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_kendall_never_densifies_a_sparse_X(monkeypatch):
    """Peak Python/numpy memory far below one dense float64 copy (8np bytes)."""
    monkeypatch.setattr(kendall_mod, "_BATCH_ENTRIES", 1 << 14)
    n, p = 200, 5000
    X, y = _sparse_wide(n, p)
    peak = _traced_peak(lambda: dp_kendall(X, y, 5, 2.0, random_state=0))
    assert peak < 8 * n * p / 4, peak / 2 ** 20


def test_two_stage_never_densifies_a_sparse_X():
    """Only one block of ~n/m rows is dense at a time."""
    n, p = 300, 4000
    X, y = _sparse_wide(n, p, 1)
    peak = _traced_peak(lambda: two_stage(X, y, 3, 2.0, n_blocks=15, random_state=0))
    assert peak < 8 * n * p / 3, peak / 2 ** 20
