"""What kind of matrix an input is, without importing scipy or dask."""

from __future__ import annotations

__all__ = ["is_sparse", "is_dask"]


def is_sparse(X) -> bool:
    """Whether ``X`` is a scipy sparse matrix or array (without importing scipy)."""
    mod = type(X).__module__
    return mod.startswith("scipy.sparse") and hasattr(X, "tocsc")


def is_dask(X) -> bool:
    """Whether ``X`` is a ``dask.array.Array`` (without importing dask)."""
    return type(X).__module__.startswith("dask.array") and hasattr(X, "compute")
