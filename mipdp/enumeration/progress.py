"""Progress of a long enumeration: one small reporter the enumerator calls.

The enumeration reports every step (a master solve, a batch of an explicit search, the
end of a phase) to a :class:`Progress` object, which

* logs each step at DEBUG on ``mipdp.enumeration.progress``,
* logs a one-line summary at INFO at most every ``interval`` seconds (and the end of any
  phase that took longer than that), so a call that takes minutes is never silent, and
* passes each event to an optional ``callback(event: dict)`` (at most every
  ``callback_interval`` seconds, plus every phase start and end) — the command line
  uses it to drive a progress bar; library code never imports ``tqdm``.

An event is a dict with ``"phase"``, ``"event"`` (``"start"``, ``"update"`` or
``"done"``), ``"elapsed"`` (seconds since the phase started) and the step's own
counters (``solves``, ``evaluations``, ``cuts``, ``best``, ``bound``, ``threshold``,
``found``, ``candidates`` …).  **Not private**: the counters and values depend on the
data.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

__all__ = ["Progress"]

logger = logging.getLogger(__name__)

_NAMES = {"best": "best L", "bound": "bound", "threshold": "threshold"}


def _fmt(fields: dict) -> str:
    out = []
    for k, v in fields.items():
        if isinstance(v, float):
            out.append(f"{_NAMES.get(k, k)} {v:.6g}")
        else:
            out.append(f"{_NAMES.get(k, k)} {v}")
    return ", ".join(out)


class Progress:
    """Reporter of an enumeration's progress (see the module notes).

    Parameters
    ----------
    callback : callable, optional
        ``callback(event)`` with ``event`` a dict; exceptions it raises propagate.
    interval : float, default 5
        Seconds between INFO lines.
    callback_interval : float, default 0.2
        Least seconds between two ``"update"`` events passed to ``callback``.
    """

    def __init__(self, callback: Callable[[dict], None] | None = None, *, interval: float = 5.0,
                 callback_interval: float = 0.2) -> None:
        if callback is not None and not callable(callback):
            raise TypeError(f"progress: expected a callable or None, got {callback!r}")
        self.callback = callback
        self.interval = float(interval)
        self.callback_interval = float(callback_interval)
        self._t0: dict[str, float] = {}
        self._last_info = time.perf_counter()
        self._last_cb = 0.0

    def _emit(self, phase: str, event: str, fields: dict, force: bool = False) -> dict:
        now = time.perf_counter()
        t0 = self._t0.setdefault(phase, now)
        ev = {"phase": phase, "event": event, "elapsed": now - t0, **fields}
        if self.callback is not None and (force or now - self._last_cb >= self.callback_interval):
            self._last_cb = now
            self.callback(ev)
        return ev

    def start(self, phase: str, **fields) -> None:
        """A phase begins (DEBUG; the callback always hears it)."""
        self._t0[phase] = time.perf_counter()
        logger.debug("%s: started (%s; not private)", phase, _fmt(fields))
        self._emit(phase, "start", fields, force=True)

    def update(self, phase: str, **fields) -> None:
        """A step of a phase (DEBUG; INFO at most every ``interval`` seconds)."""
        ev = self._emit(phase, "update", fields)
        now = time.perf_counter()
        if now - self._last_info >= self.interval:
            self._last_info = now
            logger.info("%s: %.1f s, %s (not private)", phase, ev["elapsed"], _fmt(fields))
        else:
            logger.debug("%s: %s (not private)", phase, _fmt(fields))

    def done(self, phase: str, **fields) -> None:
        """A phase ended (INFO if it took at least ``interval`` seconds, else DEBUG)."""
        ev = self._emit(phase, "done", fields, force=True)
        level = logging.INFO if ev["elapsed"] >= self.interval else logging.DEBUG
        logger.log(level, "%s: done in %.2f s (%s; not private)", phase, ev["elapsed"],
                   _fmt(fields))
        self._t0.pop(phase, None)
