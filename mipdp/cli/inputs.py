"""Reading the command line's inputs: .npy/.npz arrays, CSV and Parquet tables.

Part of :mod:`mipdp.cli`.
"""

from __future__ import annotations

import numpy as np


def load_design(path: str):
    """``X`` from a file, without densifying or loading it whole.

    ``.npy``: ``np.load(path, mmap_mode="r")``, a read-only :class:`numpy.memmap` (pages are
    read as the products need them); ``.npz``: ``scipy.sparse.load_npz(path)``, a sparse
    matrix saved with ``scipy.sparse.save_npz``.  Both are passed to
    :func:`mipdp.private_bss` as they are (docs/guide.md, "Large, sparse and out-of-core X").

    Raises
    ------
    ValueError
        Another extension, a ``.npz`` archive that is not a scipy sparse matrix, or an
        array that is not 2-D numeric.
    """
    import os
    ext = os.path.splitext(str(path))[1].lower()
    if ext == ".npy":
        try:
            X = np.load(path, mmap_mode="r")
        except ValueError as exc:      # object arrays cannot be memory-mapped
            raise ValueError(f"X: could not memory-map {path} ({exc}); save a numeric array "
                             "with np.save") from None
    elif ext == ".npz":
        import scipy.sparse as sp
        try:
            X = sp.load_npz(path)
        except (ValueError, KeyError, OSError) as exc:
            raise ValueError(f"X: {path} is not a scipy sparse matrix saved with "
                             f"scipy.sparse.save_npz ({exc}); save a dense array with np.save "
                             "(.npy) instead") from None
    else:
        raise ValueError(f"X: expected a .npy file (dense, opened as a memmap), a .npz "
                         f"file (scipy.sparse.save_npz) or a .csv/.parquet table, got {path!r}")
    if X.ndim != 2:
        raise ValueError(f"X: expected a 2-D array in {path}, got shape {X.shape}")
    return X


#: extensions read as a table with a header (:func:`load_table`)
TABLE_EXTENSIONS = (".csv", ".parquet", ".pq")


def is_table(path: str) -> bool:
    """Whether ``path`` names a CSV or Parquet table (by its extension)."""
    import os
    return os.path.splitext(str(path))[1].lower() in TABLE_EXTENSIONS


def load_table(path: str, target: str | None = None, *, split: bool = True):
    """``(X, y)`` from a CSV file with a header or a Parquet file (pandas).

    ``target`` names the target column; by default it is the last column.  ``X`` is the
    DataFrame of the other columns (their names come back as ``result.feature_names``),
    ``y`` a Series.  With ``split=False`` every column is a feature and ``y`` is ``None``
    (the targets come from another file).  Column names are the file's schema (public);
    the values are never shown in a message.

    Raises
    ------
    ValueError
        An unknown target column or a table with fewer than two columns.  Columns that
        are not numeric are refused by the release's input check, which names them.
    """
    import os

    import pandas as pd
    ext = os.path.splitext(str(path))[1].lower()
    if ext == ".csv":
        df = pd.read_csv(path)
    elif ext in (".parquet", ".pq"):
        df = pd.read_parquet(path)
    else:
        raise ValueError(f"X: expected a .csv or .parquet table, got {path!r}")
    df.columns = [str(c) for c in df.columns]
    y = None
    if split:
        if df.shape[1] < 2:
            raise ValueError(f"X: {path} needs at least two columns (features and the target)")
        if target is None:
            target = df.columns[-1]
        elif target not in df.columns:
            raise ValueError(f"--target: no column {target!r} in {path}; its columns are "
                             f"{list(df.columns)}")
        y = df[target]
        df = df.drop(columns=[target])
    elif target is not None:
        raise ValueError("--target: pass either --target (the target is a column of X) or a "
                         "y file, not both")
    # the columns' types are checked where every interface checks them
    # (mipdp._validation.check_input: the non-numeric columns named; booleans accepted)
    return df, y


def load_targets(path: str) -> np.ndarray:
    """``y`` from a ``.npy`` file or a text file (``.csv``: comma-separated; otherwise
    whitespace), as a 1-D float array."""
    import os
    ext = os.path.splitext(str(path))[1].lower()
    if ext == ".npy":
        y = np.load(path)
    elif ext in (".csv", ".txt", ".dat", ""):
        y = np.loadtxt(path, delimiter="," if ext == ".csv" else None, ndmin=1)
    else:
        raise ValueError(f"y: expected a .npy, .csv or .txt file, got {path!r}")
    return np.asarray(y)
