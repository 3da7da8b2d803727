"""Seed 002's AR(1) design written to a float32 ``.npy`` memmap column chunk by column chunk.

Shared by the benchmarks that run on data larger than memory (``bench_memory.py``,
``bench_scale.py``, ``bench_dask.py``); X is never whole in RAM (peak: one float64 chunk
of ``n × chunk``).
"""

from __future__ import annotations

import numpy as np


def write_ar1_memmap(path: str, n: int, p: int, rho: float, rng: np.random.Generator,
                     chunk: int) -> np.memmap:
    """Write ``X`` (``corr(x_i, x_j) = ρ^|i-j|``, standard-normal columns) to ``path``.

    The values depend on ``chunk`` (each chunk is one ``standard_normal`` draw of ``rng``).
    Returns the open memmap (flushed); the caller reads what it needs and drops it.
    """
    X = np.lib.format.open_memmap(path, mode="w+", dtype=np.float32, shape=(n, p))
    c = np.sqrt(1.0 - rho * rho)
    prev = None
    for lo in range(0, p, chunk):
        Z = rng.standard_normal((n, min(chunk, p - lo)))
        for j in range(Z.shape[1]):
            if prev is not None:
                Z[:, j] = rho * prev + c * Z[:, j]
            prev = Z[:, j]
        X[:, lo:lo + Z.shape[1]] = Z
        prev = Z[:, -1].copy()
    X.flush()
    return X
