"""Input checks shared by every public function: arrays, bounds, parameters, RNG."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import numbers
import warnings
from collections.abc import Callable, Iterator
from typing import cast

import numpy as np

from ._warnings import find_stack_level
from .exceptions import ClippingWarning, PrivacyLeakWarning
from .statistics import STATISTICS_MAX_P

__all__ = ["check_input", "interface", "named_interface", "current_interface", "check_X_y",
           "min_samples", "MIN_SAMPLES_REPLACE_ONE", "MIN_SAMPLES_ADD_REMOVE",
           "check_sparsity", "check_epsilon", "check_positive", "check_bounds", "clip_data",
           "clip_design", "clipping_diagnostic", "check_random_state", "check_labels_pm1",
           "data_derived_bounds", "bounds_not_private_reason"]


# ------------------------------------------------------------------ the interface called
#: the function the user called (``private_bss``, ``PrivateBestSubsetSelector.fit``,
#: ``mipdp select``): the input errors raised inside it start with its name
_INTERFACE: contextvars.ContextVar[str | None] = contextvars.ContextVar("mipdp_interface",
                                                                       default=None)


@contextlib.contextmanager
def interface(name: str) -> Iterator[None]:
    """Name ``name`` in the input errors raised inside (the outermost interface wins)."""
    if _INTERFACE.get() is not None:
        yield
        return
    token = _INTERFACE.set(name)
    try:
        yield
    finally:
        _INTERFACE.reset(token)


def named_interface(name: str) -> Callable[[Callable], Callable]:
    """Decorator: the function runs inside :func:`interface` ``(name)``."""
    def decorator(func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with interface(name):
                return func(*args, **kwargs)
        return wrapper
    return decorator


def current_interface(default: str | None = None) -> str | None:
    """The name of the interface the user called (``default`` outside one)."""
    name = _INTERFACE.get()
    return default if name is None else name


def _prefix(message: str) -> str:
    name = _INTERFACE.get()
    return message if name is None or message.startswith(f"{name}: ") else f"{name}: {message}"


# ------------------------------------------------------------------ the one input check
#: how a non-numeric column is fixed (the same words in every interface)
_ENCODE_HINT = ("encode them with public constants (e.g. pandas.get_dummies) or drop them "
                "first")
#: how a non-numeric target is fixed under a regression loss
_TARGET_HINT = ('for two classes pass loss="hinge" (any two labels; they become -1 and +1), '
                "or convert the target to numbers first")
#: at most this many column names or indices in a message
_SHOWN = 10


def _converts(values) -> tuple[bool, Exception | None]:
    """Whether ``values`` convert to float64 (bool, numbers, numeric objects)."""
    try:
        np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        return False, exc
    return True, None


def _numeric_dtype(dtype) -> bool:
    return isinstance(dtype, np.dtype) and dtype.kind in "biuf"


def _non_numeric_columns(X) -> tuple[list, Exception | None] | None:
    """The columns of ``X`` that are not numeric (names of a DataFrame whose names are all
    strings, indices otherwise) and the first conversion error; ``None``: not checked here
    (sparse, dask, memmaps and numeric arrays are checked by dtype downstream).  Boolean
    columns are numeric (0 and 1)."""
    from .data import is_dask, is_sparse
    from .mapped import MappedMatrix
    if (is_sparse(X) or is_dask(X) or isinstance(X, MappedMatrix)
            or isinstance(X, np.ndarray) and _numeric_dtype(X.dtype)):
        return None
    bad: list = []
    first: Exception | None = None
    if type(X).__module__.startswith("pandas") and hasattr(X, "dtypes") and X.ndim == 2:
        from pandas.api import types as pdt

        from ._feature_names import feature_names_of
        names = feature_names_of(X)
        for j, dtype in enumerate(X.dtypes):
            if pdt.is_bool_dtype(dtype) or (pdt.is_numeric_dtype(dtype)
                                            and not pdt.is_complex_dtype(dtype)):
                continue
            kind = getattr(dtype, "kind", "O")
            ok, exc = (False, None) if kind in "mMc" else _converts(X.iloc[:, j])
            if not ok:
                bad.append(str(names[j]) if names is not None else j)
                first = first or exc
        return bad, first
    try:
        arr = np.asarray(X)
    except Exception:   # ragged or exotic: the conversion downstream says what is wrong
        return None
    if arr.ndim != 2 or arr.dtype.kind not in "OUS":
        return None
    for j in range(arr.shape[1]):
        ok, exc = _converts(arr[:, j])
        if not ok:
            bad.append(j)
            first = first or exc
    return bad, first


def _columns_text(cols: list) -> str:
    more = f" and {len(cols) - _SHOWN} more" if len(cols) > _SHOWN else ""
    return f"{cols[:_SHOWN]}{more}"


def _non_numeric_message(cols: list, exc: Exception | None) -> str:
    """``X: column(s) [...] are not numeric; ...``: names the columns, never a value.

    A conversion's ``TypeError`` (an object that is no number, e.g. a dict) names only the
    object's type and is kept; a ``ValueError`` would quote the value and is not.
    """
    why = f" ({exc})" if isinstance(exc, TypeError) else ""
    return f"X: column(s) {_columns_text(cols)} are not numeric{why}; {_ENCODE_HINT}"


def _y_nonfinite_message(count: int) -> str:
    entries = f"{count} entr{'y' if count == 1 else 'ies'}"
    return (f"y: contains NaN or infinite values in {entries}; impute them or drop those rows "
            "of X and y first (the release needs every value finite)")


def _target_values(y):
    """``y`` as a 1-D array for the format checks, or ``None`` (its shape is checked later)."""
    from .data import is_dask, is_sparse
    if is_dask(y) or is_sparse(y):
        return None
    try:
        arr = np.asarray(y)
    except Exception:
        return None
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr.ravel()
    return arr if arr.ndim == 1 else None


def _shape_of(A) -> tuple | None:
    shape = getattr(A, "shape", None)
    if shape is None:
        try:
            shape = np.shape(A)
        except Exception:   # ragged: the conversion downstream says what is wrong
            return None
    return tuple(shape)


def _check_shapes(X, y) -> None:
    """``X`` 2-D, ``y`` 1-D (or a column), the same number of rows: :func:`check_X_y`'s
    messages."""
    if y is None:   # scikit-learn's words (its estimator checks look for them)
        raise ValueError(_prefix("y: the selection requires y to be passed, but the target y "
                                 "is None"))
    xs, ys = _shape_of(X), _shape_of(y)
    if xs is not None and len(xs) != 2:
        raise ValueError(_prefix("X: expected a 2-D array of shape (n_samples, n_features), "
                                 f"got shape {xs}"))
    if ys is not None and not (len(ys) == 1 or len(ys) == 2 and ys[1] == 1):
        raise ValueError(_prefix(f"y: expected a 1-D array of shape (n_samples,), got shape "
                                 f"{ys}"))
    if xs is not None and ys is not None and xs[0] != ys[0]:
        raise ValueError(_prefix(f"X and y: X has {xs[0]} rows but y has {ys[0]} entries"))


def check_input(X, y, *, labels: bool = False, finite_X: bool = False) -> None:
    """The input checks every interface runs first, with the same messages.

    :func:`mipdp.private_bss`, :class:`mipdp.PrivateBestSubsetSelector` and ``mipdp
    select`` call it before anything reads the data; the message starts with the name of
    the interface called (:func:`interface`).  Checks of the input's format only (types,
    NaN and inf), never of its values otherwise: a data set that fails them never runs a
    release, and no message quotes a value of the data.

    * ``X`` not 2-D, ``y`` not 1-D, or their lengths apart: ``ValueError``;
    * a column of ``X`` that is not numeric (strings, categories, dates): ``TypeError``
      naming the columns (a DataFrame's names, or indices) and the fix; boolean columns
      are numeric (``False`` 0, ``True`` 1), as are numbers stored as objects;
    * a target that is not numeric: ``TypeError`` suggesting ``loss="hinge"`` (unless
      ``labels``: the hinge loss takes any two labels);
    * NaN or inf in ``y``: ``ValueError`` with their count and the fix (as for ``X``);
    * with ``finite_X``: NaN or inf in ``X`` (the columns named), for a caller whose later
      checks would lose the names (the selector converts a DataFrame before
      :func:`check_X_y` runs).  ``X`` is otherwise checked for NaN where it is read.
    """
    found = _non_numeric_columns(X)
    if found is not None and found[0]:
        raise TypeError(_prefix(_non_numeric_message(*found)))
    _check_shapes(X, y)
    target = _target_values(y)
    if target is not None:
        if target.dtype.kind not in "biufc" and not _converts(target)[0]:
            if not labels:
                raise TypeError(_prefix(f"y: the target is not numeric; {_TARGET_HINT}"))
        elif target.dtype.kind != "c":
            values = np.asarray(target, dtype=np.float64)
            bad = int(np.count_nonzero(~np.isfinite(values)))
            if bad:
                raise ValueError(_prefix(_y_nonfinite_message(bad)))
    if finite_X:
        from ._feature_names import feature_names_of
        from .data import is_dask, is_sparse
        from .mapped import MappedMatrix
        if is_sparse(X) or is_dask(X) or isinstance(X, MappedMatrix):
            return                        # checked where they are read
        names = feature_names_of(X)
        if isinstance(X, np.ndarray) and _numeric_dtype(X.dtype):
            arr = X                       # a memmap is read by blocks, never copied
        else:
            try:
                arr = np.asarray(X, dtype=np.float64)
            except (TypeError, ValueError):   # ragged or exotic: refused downstream
                return
        if arr.ndim == 2 and arr.size and not _all_finite(arr):
            raise ValueError(_prefix(_nonfinite_message(arr, names)))


def _as_float_matrix(X, name: str) -> np.ndarray:
    given = X
    if hasattr(X, "toarray") and callable(X.toarray):  # scipy.sparse
        X = X.toarray()
    try:
        arr = np.asarray(X)
    except Exception as exc:  # pragma: no cover - exotic containers
        raise TypeError(f"{name}: could not convert to a numeric array ({exc})") from exc
    if arr.dtype == object or not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as exc:
            found = _non_numeric_columns(given) if name == "X" else None
            if found is not None and found[0]:
                raise TypeError(_prefix(_non_numeric_message(*found))) from None
            raise TypeError(_prefix(f"{name}: expected numeric values, got dtype {arr.dtype}")
                            ) from exc
    if np.iscomplexobj(arr):
        raise TypeError(f"{name}: complex values are not supported")
    return np.array(arr, dtype=np.float64, copy=True)


def _as_lazy_matrix(X, name: str):
    """``X`` without a copy when it is a numeric numpy array, memmap or scipy sparse matrix."""
    from .data import is_dask, is_sparse
    from .mapped import MappedMatrix
    if isinstance(X, MappedMatrix):
        return X    # private ranges: validated before it was mapped, values within ±½
    if is_dask(X):
        if not (np.issubdtype(X.dtype, np.number) or X.dtype == bool) or np.iscomplexobj(X):
            raise TypeError(f"{name}: expected real numeric values, got dtype {X.dtype}")
        if any(np.isnan(c) for c in X.shape):
            raise ValueError(f"{name}: a dask array with unknown chunk sizes; call "
                             "X.compute_chunk_sizes() first")
        return X
    if is_sparse(X):
        if X.ndim != 2:
            raise ValueError(f"{name}: expected a 2-D matrix, got shape {X.shape}")
        if np.iscomplexobj(X) or not (np.issubdtype(X.dtype, np.number) or X.dtype == bool):
            raise TypeError(f"{name}: expected real numeric values, got dtype {X.dtype}")
        if X.format not in ("csr", "csc"):
            X = X.tocsc()   # COO, LIL, DOK, ...: one sparse conversion (CSC is what is used)
        from .data import canonical_sparse
        return canonical_sparse(X)   # duplicate entries summed (X itself is not modified)
    if isinstance(X, np.ndarray) and (np.issubdtype(X.dtype, np.floating)
                                      or np.issubdtype(X.dtype, np.integer)
                                      or X.dtype == bool):
        return X
    return _as_float_matrix(X, name)


def _all_finite(X) -> bool:
    from .data import CHUNK_BYTES, is_dask, is_sparse
    from .mapped import MappedMatrix
    if isinstance(X, MappedMatrix):
        return True     # a finite X mapped by finite ranges, clipped to ±½
    if is_sparse(X):
        return bool(np.all(np.isfinite(X.data)))
    if is_dask(X):
        import dask.array as da
        return bool(da.isfinite(X).all().compute())
    if X.ndim != 2 or not np.issubdtype(X.dtype, np.floating):
        return bool(np.all(np.isfinite(X)))
    # contiguous blocks of about CHUNK_BYTES (rows of a C-ordered array, e.g. a .npy memmap
    # read sequentially; columns otherwise).  A block's sum is finite only if every entry
    # is (NaN and ±inf propagate), so the entry-wise test runs only on a block whose sum
    # is not finite (NaN, inf, or an overflowing sum of finite values)
    n, p = X.shape
    if X.flags.c_contiguous:
        step = max(1, CHUNK_BYTES // (X.itemsize * max(p, 1)))
        blocks = (X[lo:lo + step] for lo in range(0, n, step))
    else:
        step = max(1, CHUNK_BYTES // (X.itemsize * max(n, 1)))
        blocks = (X[:, lo:lo + step] for lo in range(0, p, step))
    # the blocks are read on the call's workers (mipdp._parallel; a sum releases the GIL)
    from ._parallel import parallel_map

    def finite(B) -> bool:
        with np.errstate(over="ignore", invalid="ignore"):   # the sum may overflow: then test
            return bool(np.isfinite(B.sum()) or np.all(np.isfinite(B)))

    return all(parallel_map(finite, list(blocks), blas=False))


#: The fewest rows an entry point accepts under replace-one neighbours, where ``n`` is public
#: (both data sets of a pair have the same ``n``, so refusing ``n = 1`` depends on no row).
MIN_SAMPLES_REPLACE_ONE = 2
#: The fewest rows an entry point accepts under add/remove neighbours, where ``n`` is not
#: public: every mechanism's law is defined for every ``n >= 1`` and no check compares
#: ``n`` with anything else (docs/privacy.md, "The number of rows").
MIN_SAMPLES_ADD_REMOVE = 1


def min_samples(add_remove: bool) -> int:
    """The fewest rows accepted: :data:`MIN_SAMPLES_ADD_REMOVE` (1) under add/remove,
    :data:`MIN_SAMPLES_REPLACE_ONE` (2) under replace-one."""
    return MIN_SAMPLES_ADD_REMOVE if add_remove else MIN_SAMPLES_REPLACE_ONE


def _nonfinite_columns(X) -> np.ndarray:
    """Indices of the columns of ``X`` holding a NaN or an inf (a second pass, on failure)."""
    from .data import CHUNK_BYTES, is_dask, is_sparse
    if is_sparse(X):
        bad = ~np.isfinite(X.data)
        if X.format == "csr":
            cols = X.indices[bad]
        else:
            cols = np.repeat(np.arange(X.shape[1]), np.diff(X.indptr))[bad]
        return np.unique(cols)
    if is_dask(X):
        import dask.array as da
        return np.flatnonzero(np.asarray((~da.isfinite(X)).any(axis=0).compute()))
    n, p = X.shape
    hit = np.zeros(p, dtype=bool)
    step = max(1, CHUNK_BYTES // (max(X.itemsize, 1) * max(p, 1)))
    for lo in range(0, n, step):
        hit |= ~np.isfinite(X[lo:lo + step]).all(axis=0)
    return np.flatnonzero(hit)


def _nonfinite_message(X, names) -> str:
    """``X: ... NaN or infinite values in column(s) ...`` naming the columns (at most 5)."""
    cols = _nonfinite_columns(X)
    shown = [f"{int(j)} ({names[j]!r})" if names is not None else str(int(j))
             for j in cols[:5]]
    more = f" and {cols.size - 5} more" if cols.size > 5 else ""
    where = f" in column(s) {', '.join(shown)}{more}" if cols.size else ""
    return (f"X: contains NaN or infinite values{where}; impute or drop them first (the "
            "release needs every value finite)")


def check_X_y(X, y, *, min_samples: int = 2, lazy: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Validate and copy ``X`` (n, p) and ``y`` (n,) as float64 arrays.

    ``y`` of shape ``(n, 1)`` is raveled with scikit-learn's
    :class:`~sklearn.exceptions.DataConversionWarning` (its ``column_or_1d`` rule); any
    other 2-D ``y`` (including ``(1, n)``) is rejected.

    With ``lazy=True`` ``X`` is not copied when it is a numeric numpy array (float32,
    float64, integer; a :class:`numpy.memmap` included) or a scipy sparse CSR/CSC matrix
    (other sparse formats become CSC): it is returned as it is, checked column chunk by
    column chunk, for a :class:`mipdp.data.ClippedDesign` (:func:`clip_design`).

    Raises
    ------
    TypeError
        Non-numeric data.
    ValueError
        Wrong dimensions, mismatched lengths, too few rows, NaN or inf.
    """
    from ._feature_names import feature_names_of
    from .data import is_dask
    names = feature_names_of(X)         # public metadata: to name a column in an error
    X = _as_lazy_matrix(X, "X") if lazy else _as_float_matrix(X, "X")
    # a dask y next to a dask X stays lazy (tall data: computing y alone would be a pass)
    lazy_y = lazy and is_dask(X) and is_dask(y)
    y = _as_lazy_vector(y) if lazy_y else _as_float_matrix(y, "y")
    if X.ndim != 2:
        raise ValueError(_prefix("X: expected a 2-D array of shape (n_samples, n_features), "
                                 f"got shape {X.shape}"))
    if y.ndim == 2 and y.shape[1] == 1:
        # scikit-learn's column_or_1d rule: a column vector is raveled, with a warning
        from sklearn.exceptions import DataConversionWarning  # lazy: import mipdp stays light
        warnings.warn("y: a column vector (shape (n, 1)) was passed where a 1-D array was "
                      "expected; it was raveled to shape (n,). Pass y.ravel() to silence "
                      "this warning.", DataConversionWarning,
                      stacklevel=find_stack_level())
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(_prefix(f"y: expected a 1-D array of shape (n_samples,), got shape "
                                 f"{y.shape}"))
    if X.shape[0] != y.shape[0]:
        raise ValueError(_prefix(f"X and y: X has {X.shape[0]} rows but y has {y.shape[0]} "
                                 "entries"))
    if X.shape[0] < min_samples:
        raise ValueError(_prefix(f"X: need at least {min_samples} "
                                 f"sample{'s' if min_samples != 1 else ''}, got {X.shape[0]}"))
    if X.shape[1] < 1:
        raise ValueError(_prefix("X: need at least one feature"))
    if is_dask(X):
        # checked lazily where the chunks are computed: a pass over a dask X of its own
        # would generate or read it once more (docs/algorithms.md, "Dask")
        X = finite_guard(X, "X")
    elif not _all_finite(X):
        raise ValueError(_prefix(_nonfinite_message(X, names)))
    if lazy_y:
        y = finite_guard(y, "y")
    elif not np.all(np.isfinite(y)):
        raise ValueError(_prefix(_y_nonfinite_message(int(np.count_nonzero(~np.isfinite(y))))))
    return X, y


def _raise_if_not_finite(block: np.ndarray, name: str) -> np.ndarray:
    # a finite sum means finite entries (NaN and inf propagate); an overflowing sum of
    # finite values is told apart by the entry-wise test
    with np.errstate(over="ignore", invalid="ignore"):
        ok = bool(np.isfinite(block.sum())) or bool(np.all(np.isfinite(block)))
    if not ok:
        raise ValueError(f"{name}: contains NaN or infinite values")
    return block


def finite_guard(A, name: str):
    """A dask array that raises ``ValueError("<name>: contains NaN or infinite values")``
    when a chunk holding such a value is computed: the finiteness check of a dask input
    runs in the passes that read it, not in a pass of its own."""
    return A.map_blocks(_raise_if_not_finite, name, dtype=A.dtype, meta=A._meta)


def _as_lazy_vector(y):
    """A dask ``y``: numeric, real, with known chunk sizes (the values are not read)."""
    if not (np.issubdtype(y.dtype, np.number) or y.dtype == bool) or np.iscomplexobj(y):
        raise TypeError(f"y: expected real numeric values, got dtype {y.dtype}")
    if any(np.isnan(c) for c in y.shape):
        raise ValueError("y: a dask array with unknown chunk sizes; call "
                         "y.compute_chunk_sizes() first")
    return y if y.dtype == np.float64 else y.astype(np.float64)


def check_sparsity(s, p: int, name: str = "s") -> int:
    """``s`` must be an integer with ``1 <= s < p``."""
    if isinstance(s, bool) or not isinstance(s, numbers.Integral):
        raise TypeError(f"{name}: expected an integer, got {type(s).__name__}")
    s = int(s)
    if not 1 <= s < p:
        raise ValueError(f"{name}: must satisfy 1 <= {name} < p = {p}, got {s}")
    return s


def check_positive(value, name: str, *, allow_zero: bool = False, allow_inf: bool = False) -> float:
    """A real number ``> 0`` (or ``>= 0``), finite unless ``allow_inf``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a real number, got {type(value).__name__}")
    value = float(value)
    if np.isnan(value) or (np.isinf(value) and not allow_inf):
        raise ValueError(f"{name}: must be finite, got {value}")
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name}: must be {'>= 0' if allow_zero else '> 0'}, got {value}")
    return value


def check_epsilon(eps, name: str = "eps") -> float:
    """Privacy parameter ``eps > 0`` (finite)."""
    return check_positive(eps, name)


def data_derived_bounds(bounds, *, need_y: bool = True) -> list[str]:
    """Names of the clipping bounds a call would read off the data, from the argument alone.

    ``bounds=None`` (or a ``None`` inside the pair) means the bound is taken from the data
    (``max |x_ij|``, ``max |y_i|``), which voids the privacy guarantee: the planned
    guarantee of a call can say so before the data is read.
    """
    if bounds is None:
        return ["bound_x"] + (["bound_y"] if need_y else [])
    if isinstance(bounds, str):
        return []          # "ranks", "private": nothing is read off the data
    if isinstance(bounds, numbers.Real) and not isinstance(bounds, bool):
        return []
    try:
        b_x, b_y = bounds
    except (TypeError, ValueError):
        return []          # malformed: check_bounds raises later
    return (["bound_x"] if b_x is None else []) + (["bound_y"] if need_y and b_y is None else [])


def bounds_not_private_reason(derived: list[str]) -> str:
    """The not-private reason for bounds read off the data."""
    return (f"the clipping bound{'s' if len(derived) > 1 else ''} {' and '.join(derived)} "
            f"{'were' if len(derived) > 1 else 'was'} read off the data (bounds='data', or "
            "a bound left None); pass bounds=(bound_x, bound_y) from domain knowledge")


def check_bounds(bounds, X: np.ndarray, y: np.ndarray | None, *, need_y: bool = True,
                 name: str = "bounds") -> tuple[float, float | None]:
    """Resolve clipping bounds ``(b_x, b_y)``.

    A missing bound is read off the data (``max |x_ij|`` or ``max |y_i|``) with a
    :class:`PrivacyLeakWarning`: such a bound is not private and voids the guarantee
    for whatever depends on it.
    """
    if bounds is None:
        bounds = (None, None)
    if isinstance(bounds, numbers.Real) and not isinstance(bounds, bool):
        bounds = (bounds, bounds)
    try:
        b_x, b_y = bounds
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name}: expected (bound_x, bound_y), got {bounds!r}") from exc
    derived = []
    if b_x is None:
        from .data import max_abs
        b_x = max_abs(X) or 1.0
        derived.append(f"bound_x = max|X| = {b_x:.6g}")
    else:
        b_x = check_positive(b_x, f"{name}[0] (bound on |x_ij|)")
    if need_y:
        if b_y is None:
            b_y = float(np.max(np.abs(cast(np.ndarray, y)))) or 1.0  # need_y: y is given
            derived.append(f"bound_y = max|y| = {b_y:.6g}")
        else:
            b_y = check_positive(b_y, f"{name}[1] (bound on |y_i|)")
    else:
        b_y = None if b_y is None else check_positive(b_y, f"{name}[1] (bound on |y_i|)")
    if derived:
        warnings.warn(
            f"{name}: no clipping bounds given, so they were read off the data ("
            + ", ".join(derived) + "). Bounds taken from the data are not private and the "
            "released output is not differentially private with respect to them; pass "
            f"{name}=(bound_x, bound_y) from domain knowledge.", PrivacyLeakWarning,
            stacklevel=find_stack_level())
    return b_x, b_y


def clip_data(X: np.ndarray, y: np.ndarray | None, b_x: float, b_y: float | None):
    """Coordinate-wise clipping to ``[-b_x, b_x]`` and ``[-b_y, b_y]`` (returns copies)."""
    Xc = np.clip(X, -b_x, b_x)
    yc = None if y is None else (y.copy() if b_y is None else np.clip(y, -b_y, b_y))
    return Xc, yc


#: a column of ``X`` (or ``y``) with more than this fraction of its entries clipped
#: triggers a :class:`~mipdp.exceptions.ClippingWarning`
CLIPPING_WARN_FRACTION = 0.5


def clipping_diagnostic(X, y: np.ndarray | None, b_x: float, b_y: float | None,
                        *, caller: str = "private_bss") -> dict:
    """How much of ``X`` and ``y`` the bounds clip, with a warning when it is most of it.

    Returns ``{"X": fraction of the entries of X with |x_ij| > b_x, "X_max_column": the
    largest such fraction over the columns, "X_columns_mostly_clipped": how many columns
    have more than half their entries clipped, "y": fraction of |y_i| > b_y (None when y is
    not clipped, e.g. hinge labels)}``.  Issues a :class:`~mipdp.exceptions.ClippingWarning`
    when a column of ``X`` or ``y`` has more than :data:`CLIPPING_WARN_FRACTION` of its
    entries clipped.

    **Not private**: every figure, and whether the warning is issued, depend on the data
    without noise.  They are a diagnostic for the analyst (who holds the data), reported
    under a ``_not_private`` key; they never raise and never change the release.
    """
    if hasattr(X, "clipped_per_column"):   # a lazy ClippedDesign: chunk by chunk, no copy
        n = max(X.n, 1)
        per_col = X.clipped_per_column()
    else:
        n = max(X.shape[0], 1)
        # two boolean temporaries (n·p bytes each) rather than a float copy of |X|
        per_col = (np.count_nonzero(X > b_x, axis=0) + np.count_nonzero(X < -b_x, axis=0)) / n
    if y is None or b_y is None:
        frac_y = None
    elif getattr(X, "y_clipped_fraction", None) is not None:   # counted in the same pass
        frac_y = float(X.y_clipped_fraction)
    else:
        frac_y = float(np.count_nonzero(np.abs(np.asarray(y)) > b_y)) / n
    report = {"X": float(per_col.mean()) if per_col.size else 0.0,
              "X_max_column": float(per_col.max()) if per_col.size else 0.0,
              "X_columns_mostly_clipped": int(np.count_nonzero(per_col > CLIPPING_WARN_FRACTION)),
              "y": frac_y}
    parts = []
    mapped = getattr(X, "_map", None) is not None      # private ranges: the map clips
    to_x = "by the private ranges" if mapped else f"to |x| <= b_x = {b_x:g}"
    if report["X_columns_mostly_clipped"]:
        parts.append(f"{report['X_columns_mostly_clipped']} of {per_col.size} column(s) of X "
                     f"have more than half their entries clipped {to_x} "
                     f"({report['X']:.0%} of all entries of X)")
    if frac_y is not None and frac_y > CLIPPING_WARN_FRACTION:
        parts.append(f"{frac_y:.0%} of y is clipped to |y| <= b_y = {b_y:g}")
    if parts:
        warnings.warn(
            f"{caller}: " + "; ".join(parts) + ". The release is still private, but bounds "
            "far below the data's scale discard its signal (e.g. a y clipped everywhere is "
            "ignored). Scale the data with public constants or pass bounds that fit its "
            "range. This warning and result.info['clipped_fraction_not_private'] depend on "
            "the data and are not private.", ClippingWarning, stacklevel=find_stack_level())
    return report



def clip_design(X, y: np.ndarray | None, b_x: float | None, b_y: float | None, *,
                statistics: bool = False, **options):
    """Like :func:`clip_data`, but ``X`` becomes a :class:`mipdp.data.ClippedDesign`.

    ``b_x=None``: ``X`` is not clipped (a design inside its bounds by construction, e.g.
    uniform ranks; no pass checks it).

    ``X`` (an array, memmap or sparse matrix from ``check_X_y(..., lazy=True)``) is
    neither copied whole nor modified: it is clipped column chunk by column chunk when a
    product needs it (:mod:`mipdp.data`).  ``options`` go to the design.

    With ``statistics=True`` (a loss that needs only ``XcᵀXc``, ``Xcᵀyc`` and ``ycᵀyc``:
    least squares), a dask ``X`` of at most
    :data:`mipdp.statistics.STATISTICS_MAX_P` columns becomes a
    :class:`mipdp.statistics.GramDesign` computed in one pass on the cluster, and the
    returned ``yc`` is ``None`` (no length-``n`` vector comes to the client).
    """
    from .data import ClippedDesign, is_dask
    X_raw = getattr(X, "raw", X)
    if statistics and is_dask(X_raw) and X.shape[1] <= STATISTICS_MAX_P:
        # tall dask data: the sufficient statistics in one pass on the cluster
        from .statistics import clipped_statistics
        return clipped_statistics(X, y, b_x, b_y), None
    if y is not None and is_dask(y):
        y = np.asarray(y, dtype=np.float64)   # computed (length n: the products need it)
    yc = None if y is None else (y.copy() if b_y is None else np.clip(y, -b_y, b_y))
    # Xcᵀyc comes out of the design's first pass over X (every loss asks for it)
    options.setdefault("vectors", () if yc is None else (yc,))
    Xc = ClippedDesign(X, b_x, **options)
    return Xc, yc


def check_labels_pm1(y: np.ndarray, name: str = "y") -> np.ndarray:
    """Labels must be exactly -1 or +1, in any counts.

    A label vector with one class only is a valid dataset (a neighbour of a two-class one
    with a label flipped), so it must run wherever its neighbours run: only values other
    than ±1 are rejected, never the counts.  The message says what is expected and never
    echoes the values found (an exception's text must not carry the data).
    """
    if not np.all((y == 1.0) | (y == -1.0)):
        raise ValueError(f"{name}: labels must be exactly -1 or +1 for the hinge loss, and "
                         "some are not; map the two classes to -1 and +1 first (e.g. "
                         "y = np.where(y == positive_class, 1.0, -1.0))")
    return y


def check_random_state(random_state) -> np.random.Generator:
    """Turn ``random_state`` into a :class:`numpy.random.Generator`.

    ``None`` draws fresh OS entropy; an int or :class:`numpy.random.SeedSequence`
    seeds a new PCG64 generator; a Generator is used as is (shared, not copied).
    A legacy :class:`numpy.random.RandomState` *instance* (as scikit-learn accepts) seeds a
    new generator from four 32-bit words drawn from it, so it advances as it would in
    scikit-learn and the same instance state gives the same result.  The global RNG is
    never used unless its instance is passed explicitly.
    """
    if isinstance(random_state, np.random.RandomState):
        words = random_state.randint(0, 2 ** 32, size=4, dtype=np.uint64)
        return np.random.default_rng(np.random.SeedSequence([int(w) for w in words]))
    if random_state is None or isinstance(random_state, (numbers.Integral, np.random.SeedSequence)):
        if isinstance(random_state, bool):
            raise TypeError("random_state: expected None, an int or a numpy Generator, got bool")
        if isinstance(random_state, numbers.Integral) and random_state < 0:
            raise ValueError(f"random_state: must be non-negative, got {random_state}")
        return np.random.default_rng(cast("int | np.random.SeedSequence | None", random_state))
    if isinstance(random_state, np.random.Generator):
        return random_state
    raise TypeError("random_state: expected None, an int, a SeedSequence, a "
                    "numpy.random.Generator or a numpy.random.RandomState, got "
                    f"{type(random_state).__name__}")
