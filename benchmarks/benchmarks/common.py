"""Shared constants and the on-disk data cache of the asv suites.

Every suite releases on seed 002's design (:func:`mipdp.datasets.make_bss_regression`,
or :func:`~mipdp.datasets.make_bss_classification` for the hinge loss): ``s = 5``,
``ε = 1``, ``n = 3000`` unless a suite says otherwise, a fixed data seed and a fixed
``random_state`` for the release.

Data generation is never timed.  ``setup`` calls :func:`load`: the first time a design is
asked for, a child process generates it and writes it as ``.npy`` files under the cache
folder; every later ``setup`` (each repeat, each run, each checkout compared) only loads
the files (``np.load``, or ``mmap_mode="r"`` for the memmap input).  Because the generator
runs in a child, its temporaries never count in the benchmark process's peak memory: a
``peakmem_`` benchmark counts the data once, as loaded, plus the call.

Environment variables
---------------------
``MIPDP_BENCH_CACHE``
    The cache folder (default: ``benchmarks/.cache``, git-ignored).  Delete it to
    regenerate; the p = 10⁵ design takes 2.4 GB.
``MIPDP_BENCH_TINY``
    If set (and not ``0``), every design shrinks to ``n <= 200``, ``p <= 30``: the test
    ``tests/test_benchmarks.py`` runs each suite's code in seconds this way.  Never set
    it for a real run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np

#: sparsity, budget, clipping bounds of seed 002's study
S = 5
EPS = 1.0
BOUNDS = (0.5, 0.5)
N = 3000
#: ``random_state`` of every release and of every design
RELEASE_SEED = 0
DATA_SEED = 2

#: a long timeout (s) for the p = 10⁵ cases; asv's default is 60 s
LONG_TIMEOUT = 3600

TINY = os.environ.get("MIPDP_BENCH_TINY", "") not in ("", "0")


def cache_dir() -> Path:
    """The folder of the cached designs (created if missing)."""
    default = Path(__file__).resolve().parents[1] / ".cache"
    path = Path(os.environ.get("MIPDP_BENCH_CACHE", default))
    path.mkdir(parents=True, exist_ok=True)
    return path


def shrink(n: int, p: int) -> tuple[int, int]:
    """``(n, p)``, or the tiny sizes when ``MIPDP_BENCH_TINY`` is set."""
    if TINY:
        return min(n, 200), min(p, 30)
    return n, p


def _name(kind: str, n: int, p: int, rho: float) -> str:
    return f"{kind}-n{n}-p{p}-rho{rho:g}-seed{DATA_SEED}"


def _generate(kind: str, n: int, p: int, rho: float):
    if kind == "regression":
        from mipdp.datasets import make_bss_regression
        return make_bss_regression(n=n, p=p, s=S, rho=rho, random_state=DATA_SEED)
    if kind == "classification":
        from mipdp.datasets import make_bss_classification
        return make_bss_classification(n=n, p=p, s=S, rho=rho, random_state=DATA_SEED)
    if kind == "sparse":
        return _sparse_design(n, p)
    raise ValueError(f"unknown design kind {kind!r}")


def _sparse_design(n: int, p: int):
    """A CSR design of density 0.001 plus ``s`` dense true columns, ``y = Xβ + noise``."""
    import scipy.sparse as sp
    rng = np.random.default_rng(DATA_SEED)
    X = sp.random(n, p, density=0.001, format="csr", random_state=rng, dtype=np.float64,
                  data_rvs=rng.standard_normal)
    support = np.arange(1, 2 * S, 2)
    dense = sp.csr_matrix((rng.standard_normal((n, S)).ravel(),
                           (np.repeat(np.arange(n), S), np.tile(support, n))), shape=(n, p))
    X = (X + dense).tocsr()
    beta = np.zeros(p)
    beta[support] = 1.0 / np.sqrt(S)
    y = np.asarray(X @ beta).ravel() + 0.1 * rng.standard_normal(n)
    return X, y, support


def ensure(kind: str, n: int, p: int, rho: float = 0.1) -> Path:
    """Write the design to the cache unless it is there; return its folder."""
    folder = _folder(kind, n, p, rho)
    n, p = shrink(n, p)
    if (folder / "done").exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    X, y, support = _generate(kind, n, p, rho)
    if kind == "sparse":
        import scipy.sparse as sp
        sp.save_npz(folder / "X.npz", X)
    else:
        np.save(folder / "X.npy", np.ascontiguousarray(X))
    np.save(folder / "y.npy", y)
    np.save(folder / "support.npy", np.asarray(support))
    (folder / "done").touch()
    return folder


def _folder(kind: str, n: int, p: int, rho: float) -> Path:
    n, p = shrink(n, p)
    return cache_dir() / _name(kind, n, p, rho)


def ensure_in_child(kind: str, n: int, p: int, rho: float = 0.1) -> Path:
    """:func:`ensure` in a child process (this process's peak memory stays untouched)."""
    folder = _folder(kind, n, p, rho)
    if TINY:                    # tiny designs: no memory to protect, skip the child's start-up
        return ensure(kind, n, p, rho)
    if not (folder / "done").exists():
        code = ("import sys; sys.path.insert(0, sys.argv[1]); import common; "
                "common.ensure(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), "
                "float(sys.argv[5]))")
        subprocess.run([sys.executable, "-c", code, str(Path(__file__).resolve().parent),
                        kind, str(n), str(p), repr(float(rho))], check=True)
    return folder


def load(kind: str, n: int, p: int, rho: float = 0.1, *, mmap: bool = False):
    """``(X, y, support)`` of a cached design (``X`` a read-only memmap if ``mmap``)."""
    folder = ensure_in_child(kind, n, p, rho)
    if kind == "sparse":
        import scipy.sparse as sp
        X = sp.load_npz(folder / "X.npz")
    else:
        X = np.load(folder / "X.npy", mmap_mode="r" if mmap else None)
    return X, np.load(folder / "y.npy"), np.load(folder / "support.npy")


def quiet() -> None:
    """Silence the warnings every release on seed 002's design raises (clipping at 0.5)."""
    warnings.filterwarnings("ignore", module="mipdp")
    warnings.filterwarnings("ignore", category=UserWarning)
