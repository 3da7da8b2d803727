"""Which processes have a default accountant active: a marker other processes can read.

While any thread of a process has a default accountant (``with BudgetAccountant(...):``),
:mod:`mipdp.accounting` calls :func:`mark`: the environment variable
``MIPDP_ACCOUNTANT_PROCESS`` names the process (every process started meanwhile inherits
it: multiprocessing's spawn, fork and forkserver workers, joblib's loky workers,
subprocesses), and a file named by its pid in ``<tempdir>/mipdp-accountants-<uid>/`` says
that it is active *now* (a worker started before the block, e.g. by joblib's reusable loky
executor, finds it through its parent's pid).  :func:`unmark` undoes both when the last
block ends.  :func:`foreign_accountant_process` is what a release without ``accountant=``
checks.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from typing import Any

__all__ = ["ENV_MARKER", "mark", "unmark", "disown", "foreign_accountant_process"]

#: environment variable naming the process whose default accountant was active when this
#: process (or an ancestor) was started; inherited by spawn, fork, forkserver and loky
ENV_MARKER = "MIPDP_ACCOUNTANT_PROCESS"
_marker: dict[str, Any] = {"owned": False, "env_before": None}


def _marker_dir() -> str:
    uid = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    return os.path.join(tempfile.gettempdir(), f"mipdp-accountants-{uid}")


def _start_time(pid: int) -> str:
    """When process ``pid`` started (Linux; "" elsewhere): tells a reused pid apart."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
        return stat[stat.rindex(b")") + 2:].split()[19].decode()
    except (OSError, ValueError, IndexError):
        return ""


def _marker_file(pid: int) -> str:
    return os.path.join(_marker_dir(), f"{pid}.active")


def mark() -> None:
    """This process has a default accountant active: say so to the processes it starts
    (environment) and to workers it started before (a file named by its pid)."""
    pid = os.getpid()
    try:
        os.makedirs(_marker_dir(), mode=0o700, exist_ok=True)
        tmp = _marker_file(pid) + ".tmp"
        with open(tmp, "w") as fh:
            fh.write(_start_time(pid))
        os.replace(tmp, _marker_file(pid))
    except OSError:                     # pragma: no cover - unwritable temp dir
        pass                            # the environment variable still reaches new workers
    _marker["env_before"] = os.environ.get(ENV_MARKER)
    os.environ[ENV_MARKER] = str(pid)
    _marker["owned"] = True


def unmark() -> None:
    if not _marker["owned"]:
        return
    _marker["owned"] = False
    with contextlib.suppress(OSError):
        os.remove(_marker_file(os.getpid()))
    before = _marker["env_before"]
    if before is None:
        os.environ.pop(ENV_MARKER, None)
    else:
        os.environ[ENV_MARKER] = before


def foreign_accountant_process() -> int | None:
    """The id of a process that started this one and has a default accountant active now.

    Looks at the process named by the environment variable ``MIPDP_ACCOUNTANT_PROCESS``
    (set while a ``with BudgetAccountant(...):`` block is active, so inherited by every
    process started then: multiprocessing's spawn, fork and forkserver workers, joblib's
    loky workers, subprocesses) and at the parent process (a pool worker started *before*
    the block, e.g. joblib's reusable loky executor), and returns one whose marker file
    (in the temporary directory, removed when its last block ends) is present.

    Limits: only the parent and the process named by the environment are looked at (a
    worker of a worker started before the block is not), a marker file on a temporary
    directory the worker does not share (another ``TMPDIR``, another machine) is not
    seen, and a process killed inside the block leaves a file whose pid, if reused on a
    system without ``/proc``, is taken as active (a refusal, never an escape).
    """
    me = os.getpid()
    candidates = []
    env = os.environ.get(ENV_MARKER)
    if env and env.isdigit():
        candidates.append(int(env))
    candidates.append(os.getppid())
    for pid in candidates:
        if pid == me or pid <= 1:
            continue
        try:
            with open(_marker_file(pid)) as fh:
                stamp = fh.read().strip()
        except OSError:
            continue
        if stamp and _start_time(pid) not in ("", stamp):
            continue                      # the pid was reused by another process
        return pid
    return None


def disown() -> None:
    """In a forked child: the marker is the parent's, never to be removed here."""
    _marker["owned"] = False
