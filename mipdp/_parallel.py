"""``n_jobs``: the workers of one release, with scikit-learn's semantics.

``n_jobs=None`` means one worker and ``-1`` all the cores (``-2`` all but one, and so on),
as in scikit-learn.  :func:`private_bss` (and the selector and comparators, which pass it
on) sets the number for the duration of the call with :func:`n_jobs_context`; the code
that has independent work asks :func:`parallel_map` to run it.

**Threads.**  The parallel work is numerical (NumPy's clipping and products, BLAS calls,
LAPACK's ``eigh``) and releases the GIL, as does HiGHS's ``run`` (measured: a spinning
Python thread keeps running while another thread solves a MIP), so the workers are threads
of one process: no data is copied.  While they run, the BLAS pool is limited to one thread
(:mod:`threadpoolctl`), so ``n_jobs`` workers use ``n_jobs`` cores, not ``n_jobs`` times
BLAS's pool.

**Determinism.**  The law of a release never depends on the schedule, and neither does the
release: the work is split into pieces whose boundaries do not depend on ``n_jobs``, each
piece is computed by the same code whatever thread runs it (one BLAS thread), and the
results are combined in the pieces' order.  So a release with a given ``random_state`` is
the same, bit for bit, for every ``n_jobs`` (tests/mipdp/test_parallel.py).  No worker
draws random numbers.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = ["effective_n_jobs", "n_jobs_context", "current_n_jobs", "parallel_map",
           "blas_single"]

T = TypeVar("T")
R = TypeVar("R")

#: workers of the current call (each thread sees its own value: workers see 1, so the
#: work they run never nests another pool)
_N_JOBS: contextvars.ContextVar[int] = contextvars.ContextVar("mipdp_n_jobs", default=1)


def cpu_count() -> int:
    """Cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def effective_n_jobs(n_jobs: int | None) -> int:
    """Workers for ``n_jobs`` (scikit-learn's semantics): ``None`` -> 1, ``-1`` -> all
    cores, ``-k`` -> all but ``k - 1`` (at least 1).  ``0`` is refused by the parameter
    tables before this is called."""
    if n_jobs is None:
        return 1
    n = int(n_jobs)
    if n == 0:
        raise ValueError("n_jobs: 0 is not a number of workers (None or 1: one, -1: all "
                         "cores)")
    if n < 0:
        return max(1, cpu_count() + 1 + n)
    return n


def current_n_jobs() -> int:
    """Workers available to the code running now (1 outside a call, and in a worker)."""
    return _N_JOBS.get()


@contextlib.contextmanager
def n_jobs_context(n_jobs: int | None) -> Iterator[int]:
    """Run the enclosed code with ``effective_n_jobs(n_jobs)`` workers."""
    token = _N_JOBS.set(effective_n_jobs(n_jobs))
    try:
        yield _N_JOBS.get()
    finally:
        _N_JOBS.reset(token)


_CONTROLLER = None


def blas_single():
    """Limit the BLAS pool to one thread (process-wide) for the enclosed code.

    One :class:`threadpoolctl.ThreadpoolController`, made on first use (after NumPy's and
    SciPy's BLAS are loaded), serves every call: building one scans the loaded libraries
    (about 20 ms), limiting with it takes microseconds.
    """
    global _CONTROLLER
    if _CONTROLLER is None:
        import numpy  # noqa: F401 - their BLAS libraries loaded before the scan
        import scipy.linalg  # noqa: F401
        from threadpoolctl import ThreadpoolController
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")


_LOCAL = threading.local()

#: optional observer of the parallel maps (benchmarks only, e.g. the repository's
#: ``experiments/studies/bench_parallel.py``): called after each map with the CPU seconds
#: (``time.thread_time``) of its pieces, in the items' order.  ``None``: nothing is timed.
OBSERVER: Callable[[list[float]], None] | None = None


def parallel_map(fn: Callable[[T], R], items: Iterable[T], *, blas: bool = True) -> list[R]:
    """``[fn(x) for x in items]``, on :func:`current_n_jobs` threads, in the items' order.

    With ``blas`` (default) the BLAS pool is limited to one thread around the whole map,
    for one worker too: each piece then runs the same arithmetic whatever ``n_jobs`` is
    (a multi-threaded BLAS call may sum in another order).  A worker's exception is raised
    here (the first in the items' order).
    """
    items = list(items)
    observer = OBSERVER if not getattr(_LOCAL, "depth", 0) else None   # not nested maps
    if observer is None:
        return _map(fn, items, blas)
    timed = _map(_timed(fn), items, blas)
    observer([t for t, _ in timed])
    return [r for _, r in timed]


def _map(fn: Callable[[T], R], items: list[T], blas: bool) -> list[R]:
    n = min(current_n_jobs(), len(items))
    ctx = blas_single() if blas else contextlib.nullcontext()
    with ctx:
        if n <= 1:
            return [fn(x) for x in items]
        with ThreadPoolExecutor(max_workers=n, thread_name_prefix="mipdp") as pool:
            return list(pool.map(fn, items))


def _timed(fn: Callable[[T], R]) -> Callable[[T], tuple[float, R]]:
    """``fn`` returning ``(CPU seconds of this thread, value)``; maps inside it are nested."""
    import time

    def run(x: T) -> tuple[float, R]:
        _LOCAL.depth = getattr(_LOCAL, "depth", 0) + 1
        t0 = time.thread_time()
        try:
            r = fn(x)
        finally:
            _LOCAL.depth -= 1
        return time.thread_time() - t0, r

    return run


def with_n_jobs(func: Callable) -> Callable:
    """Decorator: run ``func`` inside :func:`n_jobs_context` of its ``n_jobs`` argument
    (apply it below the parameter validation, which refuses a bad value first)."""
    import functools
    import inspect
    sig = inspect.signature(func)
    default = sig.parameters["n_jobs"].default

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        n_jobs = kwargs.get("n_jobs", default)
        if "n_jobs" not in kwargs:
            try:
                n_jobs = sig.bind(*args, **kwargs).arguments.get("n_jobs", default)
            except TypeError:
                n_jobs = default
        with n_jobs_context(n_jobs):
            return func(*args, **kwargs)

    return wrapper
