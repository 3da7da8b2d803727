"""Where a :class:`~mipdp.accounting.BudgetAccountant` keeps its records.

Two storage backends of the same accountant (the composition rules live in
:mod:`mipdp.accounting`, once):

* :class:`MemoryStore` — a list in this process (``BudgetAccountant(epsilon)``);
* :class:`SQLiteStore` — a SQLite file (``BudgetAccountant(epsilon, path="ledger.sqlite")``)
  that every thread and process opening the same file reads and spends: one
  ``BEGIN IMMEDIATE`` transaction per check-and-spend, so two releases, in any two
  processes, can never jointly exceed the budget.  The file runs with SQLite's rollback
  journal, whose locks are POSIX locks on the file itself: they hold for every name of
  it (a hard link, a file-only bind mount), which a write-ahead log's name-bound
  ``-wal``/``-shm`` files do not.

A store holds two kinds of rows: *releases* (settled spends, with the history a data
custodian keeps: time, entry point, ``ε``, ``δ``, neighbour notion, the guarantee in
words and as a record) and *reservations* (a release in progress: its planned guarantee,
booked when it was checked, before the data was read, and replaced by the actual one when
it is recorded).  Reservations count against the budget like releases.

The file format (version 1) has three tables::

    meta(key TEXT PRIMARY KEY, value TEXT)        -- format, version, the budget
    releases(id, time, method, epsilon, delta, neighbour, status, guarantee, record,
             pid, host)
    reservations(token TEXT PRIMARY KEY, time, pid, host, method, record)

A reservation's ``host`` holds its holder as JSON (host name, boot id, PID namespace,
pid, process start time), so that only a holder certainly gone is dropped as stale.

``record`` is the :class:`~mipdp.guarantee.Guarantee` as JSON (never pickle: opening a
ledger never runs code from the file).
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import os
import socket
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import fields

from .exceptions import LedgerError
from .guarantee import Guarantee

__all__ = ["MemoryStore", "SQLiteStore", "guarantee_to_json", "guarantee_from_json"]

logger = logging.getLogger(__name__)

FORMAT = "mipdp privacy ledger"
_CONFIG_KEYS = ("epsilon", "delta", "neighbour", "delta_slack", "allow_conditional")
VERSION = "1"
#: SQLite's rollback journal, whose locks are keyed on the file (not on its name)
_JOURNAL = "DELETE"
_HOST = socket.gethostname()
#: connections inherited through fork: never used or closed in the child (SQLite forbids
#: it), only kept referenced so that garbage collection does not close them there
_INHERITED: list = []


# -- Guarantee <-> JSON ------------------------------------------------------------------------
def _to_dict(g: Guarantee) -> dict:
    out = {}
    for f in fields(Guarantee):
        v = getattr(g, f.name)
        if f.name == "neighbour":
            v = v.value
        elif f.name == "parts":
            v = [_to_dict(p) for p in v]
        out[f.name] = v
    return out


def _from_dict(d: dict) -> Guarantee:
    d = dict(d)
    d["parts"] = tuple(_from_dict(p) for p in d.get("parts", ()))
    return Guarantee(**d)


def guarantee_to_json(g: Guarantee) -> str:
    """A :class:`~mipdp.guarantee.Guarantee` as JSON (NaN and infinity kept)."""
    return json.dumps(_to_dict(g), allow_nan=True, separators=(",", ":"))


def guarantee_from_json(text: str) -> Guarantee:
    """Inverse of :func:`guarantee_to_json`."""
    return _from_dict(json.loads(text))


def _history_row(rid, when, method, g: Guarantee, pid, host) -> dict:
    return {"id": rid, "time": when, "method": method,
            "epsilon": g.epsilon_or_nominal,
            "delta": g.delta if g.nominal_delta is None else g.nominal_delta,
            "neighbour": g.neighbour.value, "status": g.status, "guarantee": str(g),
            "pid": pid, "host": host}


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def _start_time(pid: int) -> str | None:
    """Start time of process ``pid`` (clock ticks after boot, ``/proc/<pid>/stat`` field
    22), or ``None`` where unknown (no such process, or no ``/proc``)."""
    stat = _read(f"/proc/{pid}/stat")
    if stat is None:
        return None
    rest = stat.rpartition(")")[2].split()     # the name (field 2) may hold spaces
    return rest[19] if len(rest) > 19 else None


def _pid_namespace() -> str | None:
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return None


_SELF: dict = {}


def _holder(pid: int) -> dict:
    """Who holds a reservation: host name, boot id, PID namespace (the inode of
    ``/proc/self/ns/pid``), pid and start time (``None`` where the system has none)."""
    if _SELF.get("pid") != os.getpid():          # once per process (again after fork)
        _SELF.clear()
        _SELF.update(host=_HOST, boot=_read("/proc/sys/kernel/random/boot_id"),
                     pidns=_pid_namespace(), pid=os.getpid(),
                     start=_start_time(os.getpid()))
    if pid == os.getpid():
        return dict(_SELF)
    return dict(_SELF, pid=pid, start=_start_time(pid))


def _holder_text(h: dict) -> str:
    """The holder as stored in a reservation's ``host`` column (JSON).  A mipdp that
    stored the bare host name compares it with its own, never equal to this: it keeps
    such reservations (it never drops them as stale)."""
    return json.dumps(h, separators=(",", ":"), sort_keys=True)


def _stale(pid: int, host: str) -> bool:
    """Whether a reservation's holder is certainly gone, so its share may be dropped.

    Only a holder of this host *and* this boot *and* this PID namespace can be checked
    here (the same pid elsewhere is another process); it is gone if no process has its
    pid, or the process with its pid started at another time (the pid was reused).
    A record of an older ledger (the host name alone): gone if the host is this one and
    the pid is dead here.
    """
    me = _holder(os.getpid())
    if not host.startswith("{"):                                  # legacy record
        return host == _HOST and pid != os.getpid() and not _pid_alive(pid)
    try:
        h = json.loads(host)
    except ValueError:
        return False
    if not isinstance(h, dict) or any(h.get(k) != me[k] for k in ("host", "boot", "pidns")):
        return False                      # elsewhere: its holder may be alive where it runs
    if h.get("pid") != pid:
        return False
    if not _pid_alive(pid):
        return True
    start = h.get("start")
    return start is not None and _start_time(pid) not in (None, start)


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` of this host may still run (True when unsure)."""
    if os.name != "posix":
        return True                           # os.kill(pid, 0) would terminate it on Windows
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True                           # e.g. another user's process
    return True


# -- in memory ---------------------------------------------------------------------------------
class MemoryStore:
    """Records in this process; the accountant's lock makes every transaction atomic."""

    path = None

    def __init__(self) -> None:
        self.records: list[Guarantee] = []
        self.meta: list[tuple] = []                     # (time, method, pid, host)
        self.reservations: dict[str, Guarantee] = {}

    @contextlib.contextmanager
    def transaction(self, flush: bool = False) -> Iterator[MemoryStore]:
        yield self

    def spent(self) -> list[Guarantee]:
        return list(self.records)

    def reserved(self) -> dict[str, Guarantee]:
        return dict(self.reservations)

    def append(self, g: Guarantee, method: str) -> None:
        self.records.append(g)
        self.meta.append((time.time(), method, os.getpid(), _HOST))

    def reserve(self, token: str, g: Guarantee, method: str) -> None:
        self.reservations[token] = g

    def unreserve(self, token: str) -> None:
        self.reservations.pop(token, None)

    def history(self) -> list[dict]:
        rows = zip(self.records, self.meta, strict=True)   # appended together in record()
        return [_history_row(i + 1, t, m, g, pid, host)
                for i, (g, (t, m, pid, host)) in enumerate(rows)]

    def __getstate__(self):
        state = dict(self.__dict__)
        state["reservations"] = {}              # a copy has no release in progress
        return state


# -- SQLite ------------------------------------------------------------------------------------
_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE releases(id INTEGER PRIMARY KEY AUTOINCREMENT, time REAL NOT NULL,
    method TEXT NOT NULL, epsilon REAL, delta REAL, neighbour TEXT NOT NULL,
    status TEXT NOT NULL, guarantee TEXT NOT NULL, record TEXT NOT NULL,
    pid INTEGER, host TEXT);
CREATE TABLE reservations(token TEXT PRIMARY KEY, time REAL NOT NULL, pid INTEGER NOT NULL,
    host TEXT NOT NULL, method TEXT NOT NULL, record TEXT NOT NULL);
"""


class SQLiteStore:
    """Records in a SQLite file shared by every thread and process that opens ``path``.

    Parameters
    ----------
    path : str or os.PathLike
        The ledger file (created with ``config`` if it does not exist).
    config : dict of str to str
        The budget (``epsilon``, ``delta``, ``neighbour``, ``delta_slack``,
        ``allow_conditional``), as text; an existing file must hold the same, or
        :class:`~mipdp.exceptions.LedgerError` is raised.  ``None``: read it from the file
        (which must exist).
    timeout : float
        Seconds to wait for another process's transaction before giving up with
        :class:`~mipdp.exceptions.LedgerError`.
    durable : bool, default True
        ``True``: every transaction that records a release is flushed to the disk before
        it returns (SQLite's ``synchronous=FULL``; the disk's flush times).  ``False``:
        ``synchronous=NORMAL``: still atomic and safe if a process crashes, but the last
        releases may be lost if the *machine* loses power.  Reservations and
        checks are never flushed on their own.
    """

    def __init__(self, path, config: dict | None, timeout: float, durable: bool = True) -> None:
        self.path = os.path.abspath(os.fspath(path))
        self.timeout = float(timeout)
        self.durable = bool(durable)
        self._pid = os.getpid()
        self._conn: sqlite3.Connection | None = None
        self._cache: list[Guarantee] = []           # releases read so far (append-only)
        self._last_id = 0
        self._reserved: dict | None = None
        self.config = self._open(config)

    # -- connection and errors ---------------------------------------------------------
    def _error(self, what: str, exc: BaseException | None = None) -> LedgerError:
        why = f": {exc}" if exc is not None else ""
        return LedgerError(f"privacy ledger {self.path!r}: {what}{why}. Nothing was computed.")

    def _connection(self) -> sqlite3.Connection:
        if self._conn is not None and self._pid != os.getpid():
            _INHERITED.append(self._conn)        # forked: SQLite connections do not cross fork
            self._conn = None
        if self._conn is None:
            self._pid = os.getpid()
            try:
                conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None,
                                       check_same_thread=False)
            except sqlite3.Error as exc:
                raise self._error("cannot open the file (check the path and its "
                                  "permissions)", exc) from exc
            with self._guard("opening the ledger"):
                conn.execute(f"PRAGMA synchronous={'FULL' if self.durable else 'NORMAL'}")
                self._rollback_journal(conn)
            self._sync = "FULL" if self.durable else "NORMAL"
            self._conn = conn
        return self._conn

    def _rollback_journal(self, conn: sqlite3.Connection) -> None:
        """Put the file in rollback-journal mode (``journal_mode=DELETE``).

        Its locks are POSIX locks on the ledger file itself, so they hold for every name
        of the file (a hard link, a bind mount): a write-ahead log, which mipdp used
        before, finds its ``-wal`` and ``-shm`` files by name, and two names of one file
        then no longer serialise their transactions.  A ledger in WAL mode is converted
        here (this needs no other connection open on it).
        """
        mode = conn.execute(f"PRAGMA journal_mode={_JOURNAL}").fetchone()
        if mode is None or str(mode[0]).lower() != _JOURNAL.lower():
            raise self._error(
                f"cannot switch the file to SQLite's rollback journal (journal mode "
                f"{mode[0] if mode else None!r}): another program, an older mipdp, holds it "
                "open in write-ahead-log mode; close it and retry")

    @contextlib.contextmanager
    def _guard(self, doing: str):
        try:
            yield
        except LedgerError:
            raise
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise self._error(
                    f"locked by another connection for more than timeout={self.timeout:g} s "
                    f"while {doing} (another process holds a long transaction on it: wait "
                    "and retry, or pass a larger timeout=)", exc) from exc
            raise self._error(f"SQLite error while {doing} (is the file a mipdp ledger "
                              "on a local file system?)", exc) from exc
        except sqlite3.DatabaseError as exc:
            raise self._error(f"not a readable SQLite file while {doing} (corrupt, or not a "
                              "ledger): restore it from a backup, or give another path",
                              exc) from exc

    def _open(self, config: dict | None) -> dict:
        exists = os.path.exists(self.path) and os.path.getsize(self.path) > 0
        if config is None and not exists:
            raise self._error("no ledger at this path (create it with "
                              "BudgetAccountant(epsilon, delta, path=...))")
        conn = self._connection()
        with self._guard("opening the ledger"):
            conn.execute("BEGIN IMMEDIATE")
            try:
                tables = {r[0] for r in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table'")}
                if not tables:
                    if config is None:
                        raise self._error("the file is an empty database, not a ledger")
                    for stmt in _SCHEMA.strip().split(";"):
                        if stmt.strip():
                            conn.execute(stmt)
                    rows = [("format", FORMAT), ("version", VERSION),
                            ("created", repr(time.time()))] + sorted(config.items())
                    conn.executemany("INSERT INTO meta VALUES (?, ?)", rows)
                    stored = dict(rows)
                elif "meta" not in tables:
                    raise self._error("this SQLite file is not a mipdp ledger (no 'meta' "
                                      "table); give the path of a ledger or a new file")
                else:
                    stored = dict(conn.execute("SELECT key, value FROM meta"))
                    if stored.get("format") != FORMAT:
                        raise self._error("this SQLite file is not a mipdp ledger; give the "
                                          "path of a ledger or a new file")
                    if stored.get("version") != VERSION:
                        raise self._error(f"ledger format version {stored.get('version')!r}"
                                          f" is not supported (this mipdp reads {VERSION})")
                    missing = sorted(set(_CONFIG_KEYS) - set(stored))
                    if missing:
                        raise self._error(f"the budget is incomplete (no {missing}): the "
                                          "ledger is corrupt; restore it from a backup")
                    if config is not None:
                        diff = [f"{k}: file {stored.get(k)!r}, given {v!r}"
                                for k, v in sorted(config.items()) if stored.get(k) != v]
                        if diff:
                            raise self._error(
                                "it holds another budget (" + "; ".join(diff) + "). A ledger "
                                "keeps the budget it was created with: open it with "
                                "BudgetAccountant.open(path), or give another path for a "
                                "new budget")
                conn.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise
        return {k: v for k, v in stored.items() if k not in ("format", "version", "created")}

    # -- transactions --------------------------------------------------------------------
    @contextlib.contextmanager
    def transaction(self, flush: bool = False) -> Iterator[SQLiteStore]:
        """One ``BEGIN IMMEDIATE`` transaction: committed on success, rolled back on error.

        ``flush``: with ``durable=True``, the commit is flushed to the disk
        (``synchronous=FULL``); otherwise ``synchronous=NORMAL``.  The caller (the accountant) also
        holds its thread lock, so one connection per store serves every thread of the
        process.
        """
        conn = self._connection()
        sync = "FULL" if (flush and self.durable) else "NORMAL"
        with self._guard("starting a transaction"):
            if sync != self._sync:
                conn.execute(f"PRAGMA synchronous={sync}")
                self._sync = sync
            conn.execute("BEGIN IMMEDIATE")
        try:
            with self._guard("reading and writing the ledger"):
                self._reserved = self._read_reserved(conn)
                self._refresh(conn)
                yield self
            with self._guard("committing"):
                conn.execute("COMMIT")
        except BaseException:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:                  # pragma: no cover
                pass
            raise
        finally:
            self._reserved = None

    def _refresh(self, conn) -> None:
        for rid, rec in conn.execute("SELECT id, record FROM releases WHERE id > ? ORDER BY id",
                                     (self._last_id,)):
            try:
                self._cache.append(guarantee_from_json(rec))
            except (ValueError, TypeError, KeyError) as exc:
                raise self._error(f"release {rid} is not a readable guarantee record "
                                  "(corrupt ledger)", exc) from exc
            self._last_id = rid

    def _read_reserved(self, conn) -> dict[str, Guarantee]:
        out = {}
        stale = []
        for token, pid, host, rec in conn.execute(
                "SELECT token, pid, host, record FROM reservations"):
            if _stale(pid, host):
                stale.append(token)               # its process died before releasing
                continue
            try:
                out[token] = guarantee_from_json(rec)
            except (ValueError, TypeError, KeyError) as exc:
                raise self._error(f"reservation {token} is not a readable guarantee record "
                                  "(corrupt ledger)", exc) from exc
        if stale:
            conn.executemany("DELETE FROM reservations WHERE token = ?",
                             [(t,) for t in stale])
        return out

    def spent(self) -> list[Guarantee]:
        if getattr(self, "_reserved", None) is None:          # outside a transaction
            conn = self._connection()
            with self._guard("reading the ledger"):
                self._refresh(conn)
        return list(self._cache)

    def reserved(self) -> dict[str, Guarantee]:
        if getattr(self, "_reserved", None) is None:
            conn = self._connection()
            with self._guard("reading the ledger"):
                return self._read_reserved_readonly(conn)
        assert self._reserved is not None  # inside transaction()
        return dict(self._reserved)

    def _read_reserved_readonly(self, conn) -> dict[str, Guarantee]:
        return {t: guarantee_from_json(r) for t, r in
                conn.execute("SELECT token, record FROM reservations")}

    def append(self, g: Guarantee, method: str) -> None:
        delta = g.delta if g.nominal_delta is None else g.nominal_delta
        eps = g.epsilon_or_nominal
        assert self._conn is not None  # inside transaction()
        self._conn.execute(
            "INSERT INTO releases (time, method, epsilon, delta, neighbour, status, guarantee,"
            " record, pid, host) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (time.time(), method, None if math.isnan(eps) else eps,
             None if math.isnan(delta) else delta, g.neighbour.value, g.status, str(g),
             guarantee_to_json(g), os.getpid(), _HOST))

    def reserve(self, token: str, g: Guarantee, method: str) -> None:
        assert self._conn is not None and self._reserved is not None  # inside transaction()
        self._conn.execute("INSERT INTO reservations VALUES (?, ?, ?, ?, ?, ?)",
                           (token, time.time(), os.getpid(),
                            _holder_text(_holder(os.getpid())), method,
                            guarantee_to_json(g)))
        self._reserved[token] = g

    def unreserve(self, token: str) -> None:
        assert self._conn is not None and self._reserved is not None  # inside transaction()
        self._conn.execute("DELETE FROM reservations WHERE token = ?", (token,))
        self._reserved.pop(token, None)

    def history(self) -> list[dict]:
        conn = self._connection()
        with self._guard("reading the history"):
            rows = conn.execute("SELECT id, time, method, record, pid, host FROM releases "
                                "ORDER BY id").fetchall()
            return [_history_row(rid, t, m, guarantee_from_json(rec), pid, host)
                    for rid, t, m, rec, pid, host in rows]

    # -- pickling (joblib, multiprocessing): the path travels, the connection does not ----
    def __getstate__(self):
        return {"path": self.path, "timeout": self.timeout, "config": self.config,
                "durable": self.durable}

    def __setstate__(self, state) -> None:
        self.path = state["path"]
        self.timeout = state["timeout"]
        self.durable = state["durable"]
        self._pid = os.getpid()
        self._conn = None
        self._cache, self._last_id = [], 0
        self._reserved = None
        self.config = self._open(state["config"])
