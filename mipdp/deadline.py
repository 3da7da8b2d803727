"""One wall-clock budget (``time_limit=``) shared by every phase of a release.

:class:`Deadline` starts when the public call starts, is checked by every phase (the
enumeration's solves and evaluations, the envelope, the sampler's proposals) and, once
spent, raises :class:`~mipdp.exceptions.TimeLimitError` with one message shape: the
user's limit, the phase that was running, the time spent, and what to change.  Solver
internals (which backend call stopped, how many lazy rows were added) are logged at DEBUG
level only.
"""

from __future__ import annotations

import logging
import math
import time

from .exceptions import TimeLimitError

logger = logging.getLogger(__name__)

__all__ = ["Deadline", "advice"]

_ENUMERATION_ADVICE = ("raise time_limit, pre-screen to fewer features "
                       "(prescreen=(name, k, fraction)), or ask for a smaller s")
_SAMPLING_ADVICE = ("raise time_limit, ask for fewer draws per call (n_draws), or pre-screen "
                    "to fewer features (prescreen=(name, k, fraction))")


def advice(phase: str) -> str:
    """What a user can change when ``phase`` ran out of time."""
    return _SAMPLING_ADVICE if phase.startswith("sampling") else _ENUMERATION_ADVICE


def no_limit_as_none(time_limit: float | None) -> float | None:
    """``time_limit`` as a float, ``None`` for no limit (``None`` or ``float("inf")``)."""
    if time_limit is None or math.isinf(float(time_limit)):
        return None
    return float(time_limit)


class Deadline:
    """A ``time_limit`` in seconds from ``start`` (``time.perf_counter()`` clock).

    Parameters
    ----------
    time_limit : float or None
        The user's limit (``None``: no limit; every check passes).
    start : float, optional
        ``time.perf_counter()`` when the public call started (default: now).
    """

    def __init__(self, time_limit: float | None, *, start: float | None = None) -> None:
        self.time_limit = no_limit_as_none(time_limit)
        self.start = time.perf_counter() if start is None else float(start)
        self.end = None if self.time_limit is None else self.start + self.time_limit

    @classmethod
    def coerce(cls, deadline: Deadline | float | None) -> Deadline | None:
        """``deadline`` as a :class:`Deadline`: a bare ``time.perf_counter()`` value becomes
        one that ends then (with no user limit to name); ``None`` and a Deadline pass."""
        if deadline is None or isinstance(deadline, cls):
            return deadline
        assert not isinstance(deadline, Deadline)  # a perf_counter() value
        clock = cls(None)
        clock.end = float(deadline)
        clock.time_limit = max(0.0, float(deadline) - clock.start)
        return clock

    def elapsed(self) -> float:
        """Seconds since ``start``."""
        return time.perf_counter() - self.start

    def expired(self) -> bool:
        """Whether the limit is spent."""
        return self.end is not None and time.perf_counter() >= self.end

    def message(self, phase: str) -> str:
        """The :class:`TimeLimitError` message for ``phase``."""
        return (f"time_limit={self.time_limit:g} s reached; not private: after "
                f"{self.elapsed():.1f} s, during the {phase} phase (whether and where a call "
                f"reaches its limit depends on the data); nothing was released. To finish, "
                f"{advice(phase)}.")

    def error(self, phase: str, detail: str | None = None) -> TimeLimitError:
        """The exception to raise (``detail``, e.g. the solver's own report, goes to DEBUG)."""
        if detail:
            logger.debug("time limit in the %s phase (not private): %s", phase, detail)
        exc = TimeLimitError(self.message(phase))
        exc.phase, exc.time_limit, exc.elapsed = phase, self.time_limit, self.elapsed()
        return exc

    def check(self, phase: str) -> None:
        """Raise :class:`TimeLimitError` if the limit is spent."""
        if self.expired():
            raise self.error(phase)

    def remaining(self, phase: str) -> float | None:
        """Seconds left (``None``: no limit); raises once the limit is spent."""
        if self.end is None:
            return None
        left = self.end - time.perf_counter()
        if left <= 0:
            raise self.error(phase)
        return left
