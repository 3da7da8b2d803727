"""A privacy budget accountant across calls (``accountant=`` on every public function).

The interface follows diffprivlib's ``BudgetAccountant`` (total budget ``(epsilon, delta)``,
:meth:`~BudgetAccountant.check`, :meth:`~BudgetAccountant.spend`,
:meth:`~BudgetAccountant.remaining`, :meth:`~BudgetAccountant.total`, a default accountant
set with ``with accountant:`` or :meth:`~BudgetAccountant.set_default`), but it composes
the :class:`~mipdp.guarantee.Guarantee` records of the releases rather than bare
``(ε, δ)`` pairs, so it also knows their neighbour notion and whether they are proven.

How a public function uses it
-----------------------------
1. Before the data is read, the function computes the guarantee it *plans* to give from
   its arguments alone (budget, number of draws, pre-screen, whether clipping bounds were
   given, ...) and *reserves* it (:func:`check_release`, :meth:`BudgetAccountant.reserve`):
   one atomic step checks it against everything spent and reserved so far and books it.
   A release that would exceed the budget, is not private, is only conditionally private
   (unless the accountant allows that) or is stated under another neighbour notion raises
   :class:`~mipdp.exceptions.BudgetError` there: the data has not been touched.
2. After the release, the reservation is replaced by the actual guarantee
   (:func:`record_release`).  If the call raises in between, the reservation is dropped
   as the exception leaves the public function (:func:`cancels_on_error`, on every
   function that reserves), or at the latest when the failed call's frame is freed.

Every check-and-spend holds the accountant's lock, so releases in concurrent threads can
never jointly exceed the budget; reservations make this true of whole calls too (two
threads cannot both pass the check for the last share).

Storage: in memory or in a ledger file
--------------------------------------
``BudgetAccountant(epsilon, delta)`` keeps its records in this process.
``BudgetAccountant(epsilon, delta, path="ledger.sqlite")`` keeps them in a SQLite file
(:mod:`mipdp.ledger`): every thread and every process that opens the same path (threads,
multiprocessing with spawn or fork, joblib's loky workers, separate Python programs)
checks and spends the same budget, one ``BEGIN IMMEDIATE`` transaction per step, so no
two releases anywhere can jointly exceed it.  The file stores the budget (a second opener
with another budget gets :class:`~mipdp.exceptions.LedgerError`;
:meth:`BudgetAccountant.open` reads it) and the history (:meth:`BudgetAccountant.history`).
The accountant pickles as its path, so ``accountant=ledger`` may be sent to workers.
The composition rules are the same for both storages (this module).

A release that is *not private* (e.g. bounds read off the data) is never counted as
private: an accountant with a finite budget refuses it; one with an infinite budget
records it and its :meth:`total` then says "not private".

Outside a ``with accountant:`` block and without ``accountant=``, nothing is recorded
(diffprivlib keeps an always-on global accountant; mipdp does not keep global state).
A call without ``accountant=`` that an active default accountant would not see is
refused (:class:`~mipdp.exceptions.AccountantNotVisibleError`): in another thread of the
process, in a process forked from it, or in a process started by it — a pool worker of
multiprocessing or joblib — while it is active (see :func:`foreign_accountant_process`).

>>> from mipdp.accounting import BudgetAccountant
>>> acc = BudgetAccountant(epsilon=2.0)
>>> acc.spend(1.5, 0.0)
>>> acc.remaining()
(0.5, 0.0)
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import math
import os
import sys
import threading
import uuid
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ._process_marker import ENV_MARKER, foreign_accountant_process
from ._process_marker import disown as _disown_marker
from ._process_marker import mark as _marker_on
from ._process_marker import unmark as _marker_off
from .exceptions import AccountantNotVisibleError, BudgetError
from .guarantee import Guarantee, Neighbour, compose

if TYPE_CHECKING:
    from .ledger import MemoryStore, SQLiteStore

__all__ = ["BudgetAccountant", "Reservation", "account", "cancels_on_error", "check_release",
           "record_release",
           "NOT_RECORDED", "accountant_active_in_process", "foreign_accountant_process",
           "mark_estimator_state", "check_estimator_accountant_visible",
           "ENV_MARKER"]

_REL_TOL = 1e-12
_local = threading.local()
#: per thread id, how many default accountants that thread has active (process-wide, so a
#: call in another thread can tell that an accountant it cannot see is active)
_active_lock = threading.Lock()
_active: dict[int, int] = {}
#: every live accountant (their locks are renewed in a forked child)
_ACCOUNTANTS: weakref.WeakSet[BudgetAccountant] = weakref.WeakSet()

_LEDGER_HINT = ("To account across processes, keep the budget in a ledger file: "
                "ledger = BudgetAccountant(epsilon, delta, path='ledger.sqlite') and pass "
                "accountant=ledger (it pickles as its path) or "
                "accountant=BudgetAccountant.open('ledger.sqlite') to the calls in the "
                "workers; see docs/privacy.md, 'A privacy ledger across processes'.")


def _marker_at_exit() -> None:
    with _active_lock:
        _marker_off()


atexit.register(_marker_at_exit)


def _after_fork_in_child() -> None:
    global _active_lock
    _active_lock = threading.Lock()
    _active.clear()                       # the child has no thread in a 'with' block ...
    _disown_marker()                      # ... and never removes its parent's marker
    for acc in list(_ACCOUNTANTS):
        acc._lock = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _default_stack() -> list:
    if not hasattr(_local, "stack"):
        _local.stack = []
    return _local.stack


def _note_active(change: int) -> None:
    tid = threading.get_ident()
    with _active_lock:
        was = bool(_active)
        count = _active.get(tid, 0) + change
        if count > 0:
            _active[tid] = count
        else:
            _active.pop(tid, None)
        if bool(_active) != was:
            _marker_on() if _active else _marker_off()


def accountant_active_in_process() -> bool:
    """Whether any thread of this process has a default accountant active.

    The default accountant (``with BudgetAccountant(...):``) is per thread; this lets a
    release in another thread, or an estimator about to be sent to another process,
    notice that an accountant exists that would not see its spend.
    """
    with _active_lock:
        return bool(_active)


#: the state key a pickled estimator carries while a default accountant is active
_ORIGIN_KEY = "_accountant_active_in_pid"


def mark_estimator_state(state: dict) -> dict:
    """Mark an estimator's pickle state with this pid while a default accountant is active.

    A copy sent to another process (joblib) must refuse to fit there: it cannot reach that
    accountant (:func:`check_estimator_accountant_visible`).  Returns ``state``.
    """
    if accountant_active_in_process():
        state[_ORIGIN_KEY] = os.getpid()
    else:
        state.pop(_ORIGIN_KEY, None)
    return state


def check_estimator_accountant_visible(est) -> None:
    """Refuse ``est.fit`` where an active default accountant cannot see its spend: in a
    thread that does not hold it, or in a process ``est`` was sent to while one was active
    (:func:`mark_estimator_state`)."""
    if BudgetAccountant.load_default() is not None:
        return
    origin = est.__dict__.get(_ORIGIN_KEY)
    if origin is not None and origin != os.getpid():
        where = (f"in process {os.getpid()}, but it was sent here from process {origin} "
                 "while a default accountant (with BudgetAccountant(...):) was active "
                 "there (to refit an estimator unpickled from such a pickle, fit "
                 "sklearn.base.clone(estimator))")
    elif accountant_active_in_process():
        where = ("in a thread that does not see the default accountant another thread "
                 "of this process made active (with BudgetAccountant(...):)")
    else:
        return
    raise AccountantNotVisibleError(
        f"{type(est).__name__}.fit: called {where}. Its release would spend privacy "
        "budget that accountant never records. Run the model selection in the thread "
        "that holds the accountant, sequentially (e.g. GridSearchCV(..., n_jobs=1)); "
        "see docs/privacy.md, 'Accounting and parallel model selection'. Nothing was "
        "computed.")


def _check_visible() -> None:
    """Refuse a release that would silently escape an active default accountant."""
    if _default_stack():
        return
    if accountant_active_in_process():
        raise AccountantNotVisibleError(
            "accountant: a default accountant (with BudgetAccountant(...):) is active in "
            "another thread of this process, but not in the thread making this release, so "
            "its spend would not be recorded. Make the release in the thread that entered "
            "the 'with' block (e.g. model selection with n_jobs=1), or pass accountant= "
            "explicitly. Nothing was computed.")
    other = foreign_accountant_process()
    if other is not None:
        raise AccountantNotVisibleError(
            f"accountant: process {other}, which started this one (a pool worker of "
            "multiprocessing or joblib, or a subprocess), has a default accountant (with "
            f"BudgetAccountant(...):) active, and a release in this process (pid "
            f"{os.getpid()}) would not be recorded by it. Make the release in that process "
            f"(e.g. model selection with n_jobs=1), or pass accountant= explicitly. "
            f"{_LEDGER_HINT} Nothing was computed.")


#: helpers that make a release on behalf of the public function that called them (none
#: now: private_bss records its release itself, after running the stages of its plan)
_HELPERS: set[str] = set()


def _caller(depth: int = 2) -> str:
    """The public function making the release (for the history)."""
    try:
        frame = sys._getframe(depth)
        while frame.f_back is not None and (frame.f_code.co_name in _HELPERS
                                            or frame.f_code.co_name.startswith("_")):
            frame = frame.f_back
        return frame.f_code.co_name
    except (AttributeError, ValueError):   # pragma: no cover
        return "unknown"


class Reservation:
    """A release in progress: its planned guarantee, booked by :meth:`BudgetAccountant.reserve`.

    It counts against the budget until :meth:`settle` replaces it by the actual guarantee
    or :meth:`cancel` drops it (also done when it is garbage-collected unsettled, and when
    a ``with`` block on it exits without :meth:`settle`).
    """

    __slots__ = ("accountant", "token", "planned", "method", "_finalizer", "__weakref__")

    def __init__(self, accountant: BudgetAccountant, token: str, planned: Guarantee,
                 method: str) -> None:
        self.accountant = accountant
        self.token = token
        self.planned = planned
        self.method = method
        self._finalizer = weakref.finalize(self, accountant._cancelled.append, token)

    def settle(self, actual: Guarantee | None = None) -> None:
        """Record ``actual`` (default: the planned guarantee) in place of the reservation.

        Raises :class:`~mipdp.exceptions.BudgetError` (and drops the reservation) if
        ``actual`` does not fit where the planned guarantee did.
        """
        if not self._finalizer.detach():
            raise RuntimeError("Reservation.settle: already settled or cancelled")
        self.accountant._settle(self.token, self.planned if actual is None else actual,
                                self.method)

    def cancel(self) -> None:
        """Drop the reservation (the release was not made)."""
        if self._finalizer.detach():
            self.accountant._cancel(self.token)

    def __enter__(self) -> Reservation:
        return self

    def __exit__(self, *exc) -> None:
        self.cancel()


class BudgetAccountant:
    """Track and limit the privacy spent by a sequence of releases on the same data.

    Parameters
    ----------
    epsilon : float, default inf
        Total ``ε`` the releases may spend together.
    delta : float, default 0.0
        Total ``δ`` (0: only pure-DP releases fit, unless ``delta_slack`` buys some).
    neighbours : {"replace_one", "add_remove"} or Neighbour, optional
        Neighbour notion of the budget.  Default: that of the first release.  Releases
        under another notion are refused (guarantees under different notions do not
        compose).  The old ``neighbour="replace-one" | "add/remove"`` still works, with a
        :class:`FutureWarning`.
    delta_slack : float, optional
        If given, the total is the smaller of basic composition and the advanced
        composition theorem with this ``δ'`` (added to the spent ``δ``); see
        :mod:`mipdp.guarantee`.  Useful for many approximate-DP releases (DP Frank-Wolfe,
        the screening rules, propose-test-release).
    allow_conditional : bool, default False
        Whether releases whose guarantee is only conditional (``mistakes`` without
        propose-test-release, MCMC, the papers' calibrations) may be recorded; the total
        is then conditional too.  Releases that are not private at all are refused by any
        accountant with a finite budget.
    spent : list of Guarantee or (epsilon, delta), optional
        Releases already made (e.g. ``other.spent``).  Not with ``path``.
    path : str or os.PathLike, optional
        Keep the records in this SQLite ledger file instead of in memory: every thread
        and process that opens the same path spends the same budget.  A new file is
        created with this budget; an existing one must hold the same ``epsilon``,
        ``delta``, ``neighbour``, ``delta_slack`` and ``allow_conditional``
        (:class:`~mipdp.exceptions.LedgerError` otherwise; :meth:`open` reads them from
        the file).  Use a local file system (SQLite's locking is unreliable on network
        file systems).
    timeout : float, default 10.0
        With ``path``: seconds to wait for another process's transaction on the file
        before raising :class:`~mipdp.exceptions.LedgerError` (before any data is read).
    durable : bool, default True
        With ``path``: flush every recorded release to the disk before it is returned
        (SQLite ``synchronous=FULL``: the disk's flush time per release).  ``False``
        (``synchronous=NORMAL``) is as atomic and survives a crashed process, but the last
        records may be lost if the machine loses power.

    Notes
    -----
    :attr:`spent` (one :class:`~mipdp.guarantee.Guarantee` per release, in order) and
    :attr:`path` (the ledger file, ``None`` in memory) are read-only properties.
    """

    def __init__(self, epsilon: float = math.inf, delta: float = 0.0, *, neighbours=None,
                 delta_slack: float | None = None, allow_conditional: bool = False,
                 spent=None, path=None, timeout: float = 10.0, durable: bool = True,
                 **deprecated) -> None:
        from ._neighbours import canonical_neighbours, resolve_renamed
        if deprecated:
            if set(deprecated) != {"neighbour"}:
                raise TypeError("BudgetAccountant: unexpected keyword argument(s) "
                                f"{sorted(set(deprecated) - {'neighbour'})}")
            if neighbours is not None:
                deprecated["neighbours"] = neighbours
            resolve_renamed(deprecated, "BudgetAccountant")
            neighbours = deprecated["neighbours"]
        if neighbours is not None:
            neighbours = canonical_neighbours(neighbours, "BudgetAccountant")
        from numbers import Real

        from ._param_validation import (
            EPSILON_OR_INF,
            Interval,
            InvalidParameterError,
            validate_parameter_constraints,
        )
        validate_parameter_constraints(
            {"epsilon": EPSILON_OR_INF, "delta": [Interval(Real, 0, 1, closed="left")],
             "neighbours": [None, "neighbour"], "delta_slack": [None, Interval(Real, 0, 1,
                                                                              closed="neither")],
             "allow_conditional": ["boolean"], "path": [None, str, os.PathLike],
             "timeout": [Interval(Real, 0, None, closed="left")], "durable": ["boolean"]},
            {"epsilon": epsilon, "delta": delta, "neighbours": neighbours,
             "delta_slack": delta_slack, "allow_conditional": allow_conditional,
             "path": path, "timeout": timeout, "durable": durable},
            "BudgetAccountant")
        if path is not None and spent:
            raise InvalidParameterError(
                "BudgetAccountant: spent= cannot be combined with path= (every opener of "
                "the ledger would add the same records again); record them once with "
                "ledger.spend(g) for g in spent.")
        self.epsilon = float(epsilon)
        self.delta = float(delta)
        self.neighbours = neighbours
        self.delta_slack = None if delta_slack is None else float(delta_slack)
        self.allow_conditional = bool(allow_conditional)
        self._init_runtime()
        if path is None:
            from .ledger import MemoryStore
            self._store: MemoryStore | SQLiteStore = MemoryStore()
        else:
            from .ledger import SQLiteStore
            self._store = SQLiteStore(path, self._config(), timeout, durable)
        for item in spent or []:
            self.spend(item)

    def _init_runtime(self) -> None:
        self._lock = threading.RLock()
        self._cancelled: collections.deque = collections.deque()
        self._home_pid = os.getpid()
        _ACCOUNTANTS.add(self)

    def _config(self) -> dict:
        return {"epsilon": repr(self.epsilon), "delta": repr(self.delta),
                "neighbour": "" if self.neighbour is None else self.neighbour.value,
                "delta_slack": "" if self.delta_slack is None else repr(self.delta_slack),
                "allow_conditional": str(self.allow_conditional)}

    @classmethod
    def open(cls, path, *, timeout: float = 10.0, durable: bool = True) -> BudgetAccountant:
        """The accountant of an existing ledger file, with the budget stored in it.

        Raises :class:`~mipdp.exceptions.LedgerError` if there is no ledger at ``path``,
        or it is corrupt or locked for longer than ``timeout`` seconds.
        """
        from .ledger import SQLiteStore
        config = SQLiteStore(path, None, timeout).config
        return cls(float(config["epsilon"]), float(config["delta"]),
                   neighbours=Neighbour(config["neighbour"]) if config["neighbour"] else None,
                   delta_slack=float(config["delta_slack"]) if config["delta_slack"] else None,
                   allow_conditional=config["allow_conditional"] == "True", path=path,
                   timeout=timeout, durable=durable)

    @property
    def path(self) -> str | None:
        """Absolute path of the ledger file, ``None`` for an in-memory accountant."""
        return self._store.path

    @property
    def spent(self) -> list[Guarantee]:
        """One record per release, in order (a copy; read from the file for a ledger)."""
        with self._lock:
            return self._store.spent()

    def history(self) -> list[dict]:
        """The releases recorded, oldest first, one dict per release.

        Keys: ``id`` (1, 2, ...), ``time`` (POSIX seconds, UTC), ``method`` (the public
        function that made the release, or ``"spend"`` / the ``method=`` given to
        :meth:`spend`), ``epsilon``, ``delta`` (for a release that is not private: the
        values its noise was calibrated for, see ``status``), ``neighbour``, ``status``
        (``"proven"``, ``"conditional"`` or ``"not private"``), ``guarantee`` (the
        guarantee in words), ``pid`` and ``host`` of the process that made it.
        """
        with self._lock:
            return self._store.history()

    @property
    def neighbour(self) -> Neighbour | None:
        """The :class:`~mipdp.guarantee.Neighbour` of ``neighbours`` (``None`` if unset)."""
        if self.neighbours is None:
            return None
        return Neighbour.ADD_REMOVE if self.neighbours == "add_remove" else Neighbour.REPLACE_ONE

    # -- records -----------------------------------------------------------------------
    def _as_guarantee(self, epsilon, delta) -> Guarantee:
        if isinstance(epsilon, Guarantee):
            return epsilon
        nb = self.neighbour or Neighbour.REPLACE_ONE
        return Guarantee.approximate(float(epsilon), float(delta), nb, "user-declared spend")

    def _composed(self, records: list[Guarantee]) -> Guarantee | None:
        return compose(records, delta_slack=self.delta_slack) if records else None

    @property
    def finite(self) -> bool:
        """Whether the accountant has a finite budget."""
        return math.isfinite(self.epsilon)

    def total(self) -> Guarantee:
        """The guarantee of everything spent so far (releases in progress not included).

        Before the first release it is a zero guarantee: ``0-DP (pure)`` with
        ``epsilon == 0.0`` and ``delta == 0.0`` (under the accountant's ``neighbour``,
        replace-one if none was given), so ``acc.total().epsilon`` is always a number.
        """
        spent = self.spent
        if not spent:
            return Guarantee.pure(0.0, self.neighbour or Neighbour.REPLACE_ONE,
                                  "nothing spent yet (0 releases)")
        total = self._composed(spent)
        assert total is not None  # records are not empty
        return total

    def __len__(self) -> int:
        return len(self.spent)

    # -- transactions ------------------------------------------------------------------
    @contextlib.contextmanager
    def _transaction(self, *, write: bool, record: bool = False):
        """The accountant's lock and one store transaction (atomic check-and-spend).

        ``record``: the transaction records a release, so a durable ledger flushes it to
        the disk before returning (a reservation or a check need not survive a power
        loss: the release they belong to has not been returned).
        """
        if write and self._store.path is None and self._home_pid != os.getpid():
            raise AccountantNotVisibleError(
                f"accountant: this in-memory accountant belongs to process "
                f"{self._home_pid}; this is a copy of it in process {os.getpid()} (forked, "
                "or pickled to a worker), and what it records never reaches the original. "
                f"{_LEDGER_HINT} Nothing was computed.")
        with self._lock:
            with self._store.transaction(flush=record) as store:
                drained = []
                try:
                    while self._cancelled:
                        token = self._cancelled.popleft()
                        drained.append(token)
                        store.unreserve(token)
                    yield store
                except BaseException:
                    self._cancelled.extend(drained)   # rolled back: drop them next time
                    raise

    def _totals(self, records: list[Guarantee]) -> tuple[float, float]:
        """``(ε, δ)`` of the composed ``records``, as the budget compares them.

        The numbers of ``compose(records, delta_slack=...)`` (``epsilon_or_nominal`` and
        the δ of :func:`_delta_of`); for basic composition they are summed directly,
        without building the composed record (a spend then costs microseconds per
        record already in the accountant, not the composition of all of them).
        """
        if not records:
            return 0.0, 0.0
        if self.delta_slack is not None or len(records) == 1:
            total = self._composed(records)
            assert total is not None  # records are not empty
            return total.epsilon_or_nominal, _delta_of(total)
        eps = math.fsum(r.epsilon_or_nominal for r in records)
        delta = math.fsum(r.delta if r.nominal_delta is None else r.nominal_delta
                          for r in records)
        delta = min(delta, 1.0) if math.isfinite(delta) else delta
        return eps, (0.0 if math.isnan(delta) else delta)

    def _admit(self, g: Guarantee, spent: list[Guarantee], reserved: list[Guarantee]
               ) -> None:
        """Raise :class:`BudgetError` unless ``g`` may be made after ``spent + reserved``."""
        records = spent + reserved
        nb = self.neighbour or (records[0].neighbour if records else None)
        if nb is not None and g.neighbour != nb:
            raise BudgetError(f"accountant: this release is stated under {g.neighbour.value} "
                              f"neighbours but the budget is under {nb.value} neighbours; "
                              "guarantees under different notions do not compose. Pass "
                              "neighbours="
                              f"'{'add_remove' if nb is Neighbour.ADD_REMOVE else 'replace_one'}'"
                              " to the call.")
        if g.status == "not private" and self.finite:
            raise BudgetError(f"accountant: this release is not private "
                              f"({g.not_private_reason}); it cannot be counted against a "
                              "privacy budget. Nothing was computed.")
        if g.status == "conditional" and self.finite and not self.allow_conditional:
            raise BudgetError(f"accountant: this release is only conditionally private "
                              f"({g.condition}); pass allow_conditional=True to the "
                              "accountant to record it anyway. Nothing was computed.")
        if not self.finite:
            return
        eps_total, delta_total = self._totals(records + [g])
        if (eps_total > self.epsilon * (1 + _REL_TOL)
                or delta_total > self.delta * (1 + _REL_TOL) + 1e-300):
            used_eps, used_delta = self._totals(records)
            used_txt = ("nothing yet" if not records else
                        f"epsilon = {used_eps:g}, delta = {used_delta:g}")
            pending = f" and {len(reserved)} in progress" if reserved else ""
            raise BudgetError(
                f"accountant: this release (epsilon = {g.epsilon_or_nominal:g}, delta = "
                f"{_delta_of(g):g}) would bring the total to epsilon = "
                f"{eps_total:g}, delta = {delta_total:g}, over the budget "
                f"(epsilon = {self.epsilon:g}, delta = {self.delta:g}; spent {used_txt} in "
                f"{len(spent)} release(s){pending}). Nothing was computed.")

    # -- the budget ----------------------------------------------------------------------
    def check(self, epsilon, delta: float = 0.0) -> Guarantee:
        """Raise :class:`~mipdp.exceptions.BudgetError` unless this release may be made.

        Releases in progress (reserved, not yet recorded) count as spent.  A check books
        nothing: between :meth:`check` and :meth:`spend` another thread or process may
        spend the budget (use :meth:`reserve`, or :meth:`spend` alone, which is atomic).

        Parameters
        ----------
        epsilon : float or Guarantee
            The planned release's guarantee (or its ``ε``).
        delta : float, default 0
            Its ``δ`` when ``epsilon`` is a number.

        Returns
        -------
        Guarantee
            The composed total the accountant would report after this release.
        """
        g = self._as_guarantee(epsilon, delta)
        with self._transaction(write=False) as store:
            spent, reserved = store.spent(), list(store.reserved().values())
        self._admit(g, spent, reserved)
        total = self._composed(spent + reserved + [g])
        assert total is not None  # records are not empty
        return total

    def spend(self, epsilon, delta: float = 0.0, *, method: str = "spend") -> None:
        """Check and record a release, atomically (a spend never exceeds the budget).

        ``method`` names the release in :meth:`history`.
        """
        g = self._as_guarantee(epsilon, delta)
        with self._transaction(write=True, record=True) as store:
            self._admit(g, store.spent(), list(store.reserved().values()))
            store.append(g, method)

    def reserve(self, epsilon, delta: float = 0.0, *, method: str = "reserve") -> Reservation:
        """Check a planned release and book it, atomically; return its :class:`Reservation`.

        The reservation counts against the budget (for every thread and process sharing
        the accountant) until it is settled with the actual guarantee or cancelled, so
        two releases checked concurrently can never jointly exceed the budget.  Raises
        :class:`~mipdp.exceptions.BudgetError` like :meth:`check`.
        """
        g = self._as_guarantee(epsilon, delta)
        token = uuid.uuid4().hex
        with self._transaction(write=True) as store:
            self._admit(g, store.spent(), list(store.reserved().values()))
            store.reserve(token, g, method)
        return Reservation(self, token, g, method)

    def _settle(self, token: str, actual: Guarantee, method: str) -> None:
        from .exceptions import LedgerError
        refused = None
        try:
            with self._transaction(write=True, record=True) as store:
                store.unreserve(token)
                try:
                    self._admit(actual, store.spent(), list(store.reserved().values()))
                except BudgetError as exc:
                    refused = exc                  # commit the drop, then raise
                else:
                    store.append(actual, method)
        except LedgerError as exc:
            # nothing committed: the release is not returned, so its reservation goes at
            # the next transaction of this accountant (or when this process ends)
            self._cancelled.append(token)
            raise LedgerError(str(exc).replace(
                "Nothing was computed.", "The release was computed but could not be "
                "recorded, so it is not returned.")) from exc
        if refused is not None:
            raise refused

    def _cancel(self, token: str) -> None:
        with self._transaction(write=True) as store:
            store.unreserve(token)

    def remaining(self, k: int = 1) -> tuple[float, float]:
        """``(ε, δ)`` that each of ``k`` further pure/approximate releases may spend.

        Releases in progress count as spent.  With basic composition this is
        ``((ε_budget − ε_spent)/k, (δ_budget − δ_spent)/k)``; with ``delta_slack`` the
        ``ε`` is found by bisection on the composed total (as diffprivlib does).
        """
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            from ._param_validation import InvalidParameterError
            raise InvalidParameterError(f"The 'k' parameter of remaining must be an int in the "
                                        f"range [1, inf). Got {k!r} instead.")
        with self._transaction(write=False) as store:
            records = store.spent() + list(store.reserved().values())
        total = self._composed(records)
        eps_spent = 0.0 if total is None else total.epsilon_or_nominal
        delta_spent = 0.0 if total is None else _delta_of(total)
        if total is not None and total.status == "not private":
            return (0.0, 0.0) if self.finite else (math.inf, max(0.0, self.delta))
        d_left = max(0.0, self.delta - delta_spent) / k
        if not self.finite:
            return math.inf, d_left
        if self.delta_slack is None:
            return max(0.0, self.epsilon - eps_spent) / k, d_left
        nb = self.neighbour or (records[0].neighbour if records else Neighbour.REPLACE_ONE)
        lo, hi = 0.0, self.epsilon
        for _ in range(100):
            mid = 0.5 * (lo + hi)
            probe = self._composed(records + [Guarantee.pure(mid, nb, "probe")] * k)
            assert probe is not None  # k >= 1 records
            if probe.epsilon <= self.epsilon:
                lo = mid
            else:
                hi = mid
        return lo, d_left

    # -- default accountant ------------------------------------------------------------------
    def set_default(self) -> BudgetAccountant:
        """Make this the accountant used by calls without ``accountant=`` (this thread)."""
        _default_stack().append(self)
        _local.pid = os.getpid()       # a forked child inherits the stack, not the owner
        _note_active(+1)
        return self

    @staticmethod
    def pop_default() -> BudgetAccountant | None:
        """Remove and return the current default accountant (``None`` if there is none)."""
        stack = _default_stack()
        if not stack:
            return None
        _note_active(-1)
        return stack.pop()

    @staticmethod
    def load_default(accountant: BudgetAccountant | None = None) -> BudgetAccountant | None:
        """``accountant`` if given, else the current default (``None``: no accounting)."""
        if accountant is not None:
            return accountant
        stack = _default_stack()
        if stack and getattr(_local, "pid", None) != os.getpid():
            # a process forked while the accountant was active (multiprocessing's "fork"
            # start method): this is a copy, and what it records never reaches the parent
            raise AccountantNotVisibleError(
                "accountant: this process was forked from the one whose default accountant "
                "(with BudgetAccountant(...):) is active; a release here would be recorded "
                "only in this process's copy. Make the release in the parent (e.g. model "
                f"selection with n_jobs=1). {_LEDGER_HINT} Nothing was computed.")
        return stack[-1] if stack else None

    def __enter__(self) -> BudgetAccountant:
        return self.set_default()

    def __exit__(self, *exc) -> None:
        stack = _default_stack()
        if stack and stack[-1] is self:
            stack.pop()
            _note_active(-1)

    # -- pickling: a ledger travels as its path; an in-memory accountant as a copy that
    # -- refuses to spend in another process (its records would never come back) ------------
    def __getstate__(self):
        state = {k: v for k, v in self.__dict__.items()
                 if k not in ("_lock", "_cancelled", "_home_pid")}
        state["_home_pid"] = self._home_pid
        return state

    def __setstate__(self, state) -> None:
        home = state.pop("_home_pid", os.getpid())
        self.__dict__.update(state)
        self._init_runtime()
        self._home_pid = home

    def __repr__(self) -> str:
        total = self._composed(self.spent)
        spent = "nothing" if total is None else str(total.status) + (
            f" epsilon={total.epsilon_or_nominal:g}, delta={_delta_of(total):g}")
        where = "" if self.path is None else f", path={self.path!r}"
        return (f"BudgetAccountant(epsilon={self.epsilon:g}, delta={self.delta:g}{where}, "
                f"releases={len(self.spent)}, spent: {spent})")


class _NotRecorded(BudgetAccountant):
    """Used for calls nested inside another public call, which accounts for them."""

    def check(self, epsilon, delta: float = 0.0):
        return self._as_guarantee(epsilon, delta)

    def spend(self, epsilon, delta: float = 0.0, *, method: str = "spend") -> None:
        return None

    def reserve(self, epsilon, delta: float = 0.0, *, method: str = "reserve"):
        raise RuntimeError("NOT_RECORDED books nothing")  # pragma: no cover

    def __reduce__(self):
        return (_not_recorded, ())


def _not_recorded() -> _NotRecorded:
    return NOT_RECORDED


#: Pass as ``accountant=`` to a nested call whose budget the outer call accounts for.
NOT_RECORDED = _NotRecorded()


def _delta_of(g: Guarantee) -> float:
    d = g.delta if g.nominal_delta is None else g.nominal_delta
    return 0.0 if math.isnan(d) else d


def check_release(accountant: BudgetAccountant | None, planned: Guarantee
                  ) -> Reservation | None:
    """Step 1 of :func:`account`: check ``planned`` and book it; call before reading data.

    Returns the :class:`Reservation` to pass to :func:`record_release` (``None`` when
    nothing is recorded: no accountant, or :data:`NOT_RECORDED`).  Raises
    :class:`~mipdp.exceptions.AccountantNotVisibleError` when no accountant is given and
    an active default accountant would not see the release (another thread of the
    process, or a process that started this one, has one active), and
    :class:`~mipdp.exceptions.BudgetError` when the release does not fit.
    """
    if accountant is None:
        _check_visible()
    acc = BudgetAccountant.load_default(accountant)
    if acc is None:
        return None
    if isinstance(acc, _NotRecorded):
        acc.check(planned)
        return None
    handle = acc.reserve(planned, method=_caller())
    stack = _open_reservations()
    if _OPEN.depth:              # inside a call decorated with cancels_on_error
        stack.append(weakref.ref(handle))
    return handle


#: reservations made by :func:`check_release` in this thread and not yet settled or
#: cancelled (what :func:`cancels_on_error` drops when the call raises)
_OPEN = threading.local()


def _open_reservations() -> list:
    """Weak references to this thread's reservations made inside a decorated call."""
    stack = getattr(_OPEN, "stack", None)
    if stack is None:
        stack = _OPEN.stack = []
        _OPEN.depth = 0
    return stack


def cancels_on_error(func: Callable) -> Callable:
    """Decorate a public function that reserves with :func:`check_release`: if it raises,
    the reservations it made and did not settle are cancelled before the exception leaves
    it (the release was not made; without this they counted until the call's frame, kept
    alive by the traceback, was freed)."""
    import functools

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        stack = _open_reservations()
        mark = len(stack)
        _OPEN.depth += 1
        try:
            return func(*args, **kwargs)
        except BaseException:
            for ref in stack[mark:]:
                handle = ref()
                if handle is not None:
                    handle.cancel()      # a no-op for one already settled or cancelled
            raise
        finally:
            _OPEN.depth -= 1
            del stack[mark:]
    return wrapper


def record_release(handle, result):
    """Step 2 of :func:`account`: record ``result.guarantee``; return ``result``.

    ``handle`` is what :func:`check_release` returned (a :class:`Reservation`, settled
    with the actual guarantee), or an accountant (spent directly), or ``None``.
    """
    if isinstance(handle, Reservation):
        handle.settle(result.guarantee)
    elif handle is not None:
        handle.spend(result.guarantee, method=_caller())
    return result


def account(accountant: BudgetAccountant | None, planned: Guarantee,
            release: Callable[[], Any]):
    """Check ``planned`` with the accountant (before the data is read), run ``release``, and
    record the result's actual guarantee.

    ``release`` is a function of no argument that reads the data and returns a result with
    a ``guarantee``.  The recorded guarantee is the result's, which must not claim less
    than ``planned`` (checked).
    """
    if accountant is None:
        _check_visible()
    acc = BudgetAccountant.load_default(accountant)
    handle = None
    if acc is not None and not isinstance(acc, _NotRecorded):
        handle = acc.reserve(planned, method=_caller())
    elif acc is not None:
        acc.check(planned)
    with handle if handle is not None else contextlib.nullcontext():
        result = release()
        if handle is not None:
            actual = result.guarantee
            if (actual.is_private and planned.is_private
                    and actual.epsilon > planned.epsilon * (1 + 1e-9) + 1e-12):
                raise RuntimeError(f"internal error: the release spent epsilon = "
                                   f"{actual.epsilon} > planned {planned.epsilon}"
                                   )  # pragma: no cover
            handle.settle(actual)
    return result
