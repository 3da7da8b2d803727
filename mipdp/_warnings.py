"""Warnings that point at the caller's line, not at a line inside mipdp.

Every warning mipdp issues sets ``stacklevel`` with :func:`find_stack_level` (or goes
through :func:`warn`, which does): the level of the first frame outside the package (the
approach pandas takes).  A fixed ``stacklevel`` breaks as soon as a decorator or a helper
adds a frame between the user's call and the ``warnings.warn`` line (it pointed e.g. at
``_param_validation.py``).
"""

from __future__ import annotations

import inspect
import os
import sys
import warnings

__all__ = ["find_stack_level", "warn"]


def _package_dirs() -> tuple[str, ...]:
    """Directories whose files belong to mipdp (the solvers folder is installed apart)."""
    here = os.path.dirname(os.path.abspath(__file__))
    dirs = {here, os.path.realpath(here)}
    solvers = sys.modules.get("mipdp.solvers")
    solvers_file = getattr(solvers, "__file__", None) if solvers is not None else None
    if solvers_file:
        d = os.path.dirname(os.path.abspath(solvers_file))
        dirs.update({d, os.path.realpath(d)})
    return tuple(d + os.sep for d in dirs)


def find_stack_level() -> int:
    """The ``stacklevel`` of the first frame outside mipdp, for a ``warnings.warn`` call.

    Counts the frames from the caller of this function up to the first one whose file is
    not in the package: ``warnings.warn(msg, cat, stacklevel=find_stack_level())`` called
    from mipdp then reports the user's line.
    """
    prefixes = _package_dirs()
    frame = inspect.currentframe()
    n = 0
    try:
        while frame is not None:
            filename = os.path.abspath(frame.f_code.co_filename)
            if not filename.startswith(prefixes):
                break
            frame = frame.f_back
            n += 1
    finally:
        del frame
    return max(n, 1)


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn(message, category)`` reported at the first frame outside mipdp."""
    # find_stack_level's own frame stands in for this one: the count is the same
    warnings.warn(message, category, stacklevel=find_stack_level())
