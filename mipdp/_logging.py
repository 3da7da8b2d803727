"""Progress messages without configuring :mod:`logging`: ``verbose=`` and :func:`set_verbosity`.

mipdp logs its phases on the ``"mipdp"`` logger hierarchy (never ``print``): a one-line
start, a line at most every few seconds while a phase runs long (enumeration, sampling),
and a summary at the end.  Python shows nothing below WARNING unless logging is
configured, so a long call looks frozen.  Two ways to see the lines on stderr:

* ``private_bss(..., verbose=1)`` (and ``PrivateBestSubsetSelector(verbose=1)``): for
  that call only, as scikit-learn's ``verbose=``; ``verbose=2`` also shows every phase's
  start and end (DEBUG).
* ``mipdp.set_verbosity("info")``: for every later call, until
  ``mipdp.set_verbosity(None)``.

If the application already configured logging (e.g. ``logging.basicConfig(level=INFO)``)
the lines also reach its handlers; use one mechanism or the other.  The figures in these
lines (timings, proposals, objective values) depend on the data: **not private**.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import sys
from collections.abc import Callable

__all__ = ["set_verbosity", "verbosity", "with_verbose"]

_LOGGER = "mipdp"
_FORMAT = "mipdp %(levelname)s %(name)s: %(message)s"
_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING}
#: the handler installed by set_verbosity (one at most)
_installed: list[logging.Handler] = []


def _level(value) -> int | None:
    """``None``/``0``/``False``: off; ``True``/``1``/"info": INFO; ``>= 2``/"debug": DEBUG."""
    if value is None or value is False:
        return None
    if isinstance(value, str):
        key = value.strip().lower()
        if key in ("", "off", "none"):
            return None
        if key not in _LEVELS:
            from ._param_validation import InvalidParameterError
            raise InvalidParameterError(f"The 'level' parameter of set_verbosity must be one of "
                                        f"{sorted(_LEVELS)} or None. Got {value!r} instead.")
        return _LEVELS[key]
    value = int(value)
    if value <= 0:
        return None
    return logging.INFO if value == 1 else logging.DEBUG


def _handler(level: int, stream=None) -> logging.Handler:
    h = logging.StreamHandler(stream if stream is not None else sys.stderr)
    h.setFormatter(logging.Formatter(_FORMAT))
    h.setLevel(level)
    return h


def set_verbosity(level="info", stream=None) -> None:
    """Show mipdp's progress lines on ``stream`` (stderr) from now on.

    Parameters
    ----------
    level : {"info", "debug", "warning"}, int, bool or None, default "info"
        ``"info"`` (or ``1``/``True``): phase starts and summaries and a line every few
        seconds during long phases; ``"debug"`` (or ``2``): every step; ``None`` (or
        ``0``/``False``/``"off"``): remove the handler this function installed.
    stream : file-like, optional
        Where to write (default ``sys.stderr``).

    Examples
    --------
    >>> import mipdp
    >>> mipdp.set_verbosity("info")
    >>> mipdp.set_verbosity(None)
    """
    logger = logging.getLogger(_LOGGER)
    for h in _installed:
        logger.removeHandler(h)
    _installed.clear()
    lvl = _level(level)
    if lvl is None:
        logger.setLevel(logging.NOTSET)
        return
    h = _handler(lvl, stream)
    logger.addHandler(h)
    logger.setLevel(lvl)
    _installed.append(h)


@contextlib.contextmanager
def verbosity(verbose, stream=None):
    """Within the block, show mipdp's progress lines at ``verbose``'s level (see
    :func:`set_verbosity`); ``verbose=0`` changes nothing."""
    lvl = _level(verbose)
    logger = logging.getLogger(_LOGGER)
    if lvl is None or (_installed and logger.level and logger.level <= lvl):
        yield
        return
    h = _handler(lvl, stream)
    old = logger.level
    # child loggers given a stricter level of their own (the command line sets its
    # progress loggers to INFO) are lowered for the block too, then restored
    children = [lg for name, lg in list(logging.root.manager.loggerDict.items())
                if name.startswith(_LOGGER + ".") and isinstance(lg, logging.Logger)
                and lg.level > lvl]
    saved = [lg.level for lg in children]
    logger.addHandler(h)
    logger.setLevel(lvl if not old else min(old, lvl))
    for lg in children:
        lg.setLevel(lvl)
    try:
        yield
    finally:
        logger.removeHandler(h)
        logger.setLevel(old)
        for lg, level in zip(children, saved, strict=True):
            lg.setLevel(level)


def with_verbose(func: Callable) -> Callable:
    """Decorator: run ``func`` inside :func:`verbosity` of its ``verbose`` argument."""
    sig = inspect.signature(func)
    default = sig.parameters["verbose"].default

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        verbose = kwargs.get("verbose", default)
        if "verbose" not in kwargs:
            try:
                verbose = sig.bind(*args, **kwargs).arguments.get("verbose", default)
            except TypeError:
                verbose = default
        if not verbose or isinstance(verbose, str):
            return func(*args, **kwargs)
        with verbosity(verbose):
            return func(*args, **kwargs)

    return wrapper
