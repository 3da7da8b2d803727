"""A data-free warning when a bounds-free release is expected to say little.

:func:`mipdp.private_bss` with ``bounds=None`` (the rank score) or ``bounds="kendall"``
issues a :class:`~mipdp.exceptions.LowUtilityWarning` **before the data is read** when
``n · ε`` is below the level at which the real-data benchmark's releases stop beating a
uniformly random support by test R² (docs/real_data.md, "When a release says little").
Only public numbers enter: ``n`` (public under replace-one neighbours), the selection's
``ε`` per draw and ``s``.  Under add/remove neighbours ``n`` is private, so the warning is
never issued.  The warning does not change the release.
"""

from __future__ import annotations

__all__ = ["LOW_UTILITY_LEVEL", "low_utility_level", "low_utility_message", "warn_low_utility",
           "public_rows"]

#: ``n · ε`` below which each bounds-free score is expected to say little: where, on the
#: real-data benchmark's 14 regression sets subsampled to ``n`` rows, the release's median
#: gain over a uniformly random support falls below 5 % of the way to the best training
#: support (crossings measured at n·ε ≈ 70-85 for ranks, 20-30 for the Kendall score, s = 3
#: and 5: ``experiments/test_r2/low_n.py``; docs/real_data.md, "When a release says little")
LOW_UTILITY_LEVEL = {"ranks": 80.0, "kendall": 25.0}


def low_utility_level(kind: str) -> float:
    """The ``n · ε`` level of :data:`LOW_UTILITY_LEVEL` for the score ``kind``."""
    return LOW_UTILITY_LEVEL[kind]


def low_utility_message(n: int | None, eps: float, s: int, kind: str,
                        neighbours: str = "replace_one") -> str | None:
    """The warning's text, or ``None`` when no warning is due.  Data-free.

    Parameters
    ----------
    n : int or None
        The number of rows (public under replace-one); ``None``: not public.
    eps : float
        The selection's ``ε`` per draw.
    s : int
        Support size.
    kind : {"ranks", "kendall"}
        The bounds-free score.
    neighbours : {"replace_one", "add_remove"}
        Under add/remove ``n`` is private: never a warning.
    """
    if n is None or neighbours != "replace_one":
        return None
    level = low_utility_level(kind)
    if n * eps >= level:
        return None
    need = level / n
    score = "the rank score" if kind == "ranks" else "the Kendall score"
    return (f"n * eps = {n} * {eps:g} = {n * eps:.3g} is below {level:g}, where the "
            f"real-data benchmark's releases of {score} stop beating a uniformly random "
            f"support by test R^2 (docs/real_data.md); this release of s = {s} columns is "
            f"likely to say little. What helps: eps >= {need:.3g} at this n, a smaller s, or "
            "public ranges "
            "(bounds=(b_x, b_y) from the variables' definitions)")


def public_rows(X) -> int | None:
    """The number of rows of ``X`` from its shape alone (no entry is read); ``None`` if unknown."""
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) >= 1:
        try:
            return int(shape[0])
        except (TypeError, ValueError):      # a lazy array with an unknown number of rows
            return None
    try:
        return len(X)
    except TypeError:
        return None


def warn_low_utility(n: int | None, eps: float, s: int, kind: str,
                     neighbours: str = "replace_one") -> None:
    """Issue :class:`~mipdp.exceptions.LowUtilityWarning` when :func:`low_utility_message`
    returns a text."""
    msg = low_utility_message(n, eps, s, kind, neighbours)
    if msg is not None:
        from ._warnings import warn
        from .exceptions import LowUtilityWarning
        warn(msg, LowUtilityWarning)
