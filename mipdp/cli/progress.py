"""Progress bars of the command line (tqdm, optional) for the enumeration's events.

Part of :mod:`mipdp.cli`.
"""

from __future__ import annotations

import sys

#: loggers of the periodic progress lines (INFO, at most every few seconds, only for long
#: phases); the command line always shows them
PROGRESS_LOGGERS = ("mipdp.enumeration.progress", "mipdp.mechanisms.em_rejection.progress")


#: seconds between two redraws of a progress bar while nothing reports (so its clock moves
#: during a long solve or the sampling phase)
TICK_SECONDS = 0.5


def _progress_bar(desc: str, position: int = 0):
    """``(callback, close)``: a tqdm bar fed by the enumeration's progress events.

    The bar shows the current phase (``warm_start``, ``class_2``, ..., ``sampling``), its
    latest counters and the elapsed time; a background ticker redraws it every
    :data:`TICK_SECONDS` so it never looks frozen while one step runs long (a MIP solve,
    the rejection sampler).  The number of steps of an enumeration is not known in
    advance, so this bar has no total; :func:`_overall_bar` has one.

    tqdm is optional (the ``experiments`` extra has it); without it the callback is
    ``None`` and the periodic INFO lines of :data:`PROGRESS_LOGGERS` are the progress.
    """
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None, lambda: None
    import threading
    bar = tqdm(desc=desc, unit=" steps", leave=False, file=sys.stderr, dynamic_ncols=True,
               position=position, disable=None)  # no bar when stderr is not a terminal
    lock = threading.Lock()
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(TICK_SECONDS):
            with lock:
                bar.refresh()

    ticker = threading.Thread(target=tick, name="mipdp-progress", daemon=True)
    if not bar.disable:
        ticker.start()

    def callback(event: dict) -> None:
        fields = {k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in event.items()
                  if k not in ("phase", "event", "elapsed")}
        with lock:
            bar.set_description(f"{desc} [{event['phase']}]", refresh=False)
            bar.set_postfix(fields, refresh=False)
            bar.update(1)

    def close() -> None:
        stop.set()
        if ticker.is_alive():
            ticker.join()
        bar.close()

    return callback, close


def _overall_bar(total: int, desc: str):
    """A bar with a known total (one step per method run) and its ETA; ``None`` without
    tqdm or when stderr is not a terminal."""
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc=desc, unit=" method", file=sys.stderr, dynamic_ncols=True,
                position=0, leave=False, disable=None)
