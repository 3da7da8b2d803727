"""Independent searches of one enumeration on the call's workers, merged in a fixed order.

The mistake classes of the envelope (:func:`mipdp.enumeration.envelope.build_envelope`) are
bounded by independent searches.  Run on the enumerator itself they would share its master
problem, cuts and evaluations, so each search's path (and its bound's value) would depend on
the searches before it, and on the schedule if they ran at once.  :func:`run_forked` runs
each job on a **fork** of the enumerator instead:

* the fork starts from the enumerator's state when the jobs start (the evaluated supports,
  the cuts, the no-goods) and has its own master problem (a copy of the enumerator's where
  the backend can copy its model, HiGHS; otherwise a new one with every cut of the store
  and every no-good), its own objective view (:meth:`~mipdp.losses.base.SupportObjective.fork`)
  and its own statistics;
* what a fork adds (evaluations, cuts, no-goods, statistics) is journaled, and the journals
  are merged into the enumerator **in the jobs' order**, after every job has finished.

So what each job computes is meant to depend only on the state before the jobs and on its
own work, and the enumerator after the merge to be the same for every ``n_jobs``, and the
release with it (tests/mipdp/test_parallel.py).  An independent review found two exceptions,
both fixed (docs/algorithms.md, "Run to run: no decision reads the clock"): the explicit
search chose between evaluating and cutting from measured times (now a cost model,
:mod:`mipdp.enumeration.costs`), and HiGHS returned other optimal points among ties from
run to run (now ``parallel="off"``); the bounds, and so the law, were never affected.
Every bound a fork certifies is valid for the enumerator:
its cuts are global lower bounds of ``L`` and the supports its no-goods exclude are in the
merged evaluations.  Forks run in parallel only on a backend that is safe in threads
(:attr:`~mipdp.solvers.base.MIPBackend.thread_safe`: HiGHS); otherwise one after another
(the same results).

Memory: a fork holds a copy of the cut store and of the master (``T`` dense cuts of ``p``
entries each), and one fork per worker is alive at a time.
"""

from __future__ import annotations

import copy
import dataclasses
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np

from .._parallel import n_jobs_context, parallel_map
from .dominance import DominanceCache
from .master import MasterProblem

__all__ = ["run_forked", "can_fork"]

T = TypeVar("T")


class _JournalDict(dict):
    """``found`` of a fork: a dict that records its writes in order."""

    def __init__(self, base: dict) -> None:
        super().__init__(base)
        self.journal: list[tuple[bool, tuple, float]] = []   # (setdefault?, key, value)

    def __setitem__(self, key, value) -> None:
        super().__setitem__(key, value)
        self.journal.append((False, key, value))

    def setdefault(self, key, value=None):
        if key not in self:
            self.journal.append((True, key, value))
        return super().setdefault(key, value)


class _JournalSet(set):
    """``nogoods`` of a fork: a set that records its new members in order."""

    def __init__(self, base: set) -> None:
        super().__init__(base)
        self.journal: list[tuple] = []

    def add(self, key) -> None:
        if key not in self:
            self.journal.append(key)
        super().add(key)


class _LockedProgress:
    """The enumerator's :class:`~mipdp.enumeration.progress.Progress`, one event at a time."""

    def __init__(self, progress, lock: threading.Lock) -> None:
        self._p, self._lock = progress, lock

    def __getattr__(self, name: str):       # its settings (callback_interval, ...)
        return getattr(self._p, name)

    def start(self, phase: str, **fields) -> None:
        with self._lock:
            self._p.start(phase, **fields)

    def update(self, phase: str, **fields) -> None:
        with self._lock:
            self._p.update(phase, **fields)

    def done(self, phase: str, **fields) -> None:
        with self._lock:
            self._p.done(phase, **fields)


def can_fork(enum) -> bool:
    """Whether the enumerator's searches can run on forks: a master exists (the enumeration
    is not exhaustive), and a fork can have its own (the backend copies its model, or it is
    given by name so a new one can be made).  Never depends on the data or ``n_jobs``."""
    return (enum.master is not None and enum.table is None
            and (hasattr(enum.master.backend_kind, "clone") or isinstance(enum._backend_spec, str)))


def _fork(enum, lock: threading.Lock):
    """A fork of ``enum`` (see the module notes)."""
    child = copy.copy(enum)
    child.objective = enum.objective.fork()
    child.found = _JournalDict(enum.found)
    child.nogoods = _JournalSet(enum.nogoods)
    child.cuts = enum.cuts.copy()
    child._journal_cuts = []
    child._extra_cuts = {}
    child._dominance = DominanceCache()
    child._screen_prev = None
    child._solving = False
    child.stats = dataclasses.replace(enum.stats, phases={})
    child.progress = _LockedProgress(enum.progress, lock)
    m = enum.master
    master = m.clone(lazy=True)   # the same model, copied by the backend (HiGHS) when first used
    if master is not None:
        child._extra_cuts = {k: list(v) for k, v in enum._extra_cuts.items()}
    else:                   # a new model with every cut of the store and every no-good
        master = MasterProblem(enum.p, enum.s, offset=m.offset, scale=m.scale,
                               backend=enum._backend_spec,
                               backend_options=enum._backend_options, floor=m.floor)
        a, G = child.cuts.arrays
        rows = master.store_cut_rows(a, G, child.cuts.supports)
        for key in sorted(enum.nogoods):
            rows.append(master.nogood_row(np.asarray(key, dtype=np.intp)))
        if rows:
            master.backend.add_rows(rows)
    child.master = master
    return child


@dataclasses.dataclass
class _Outcome:
    value: Any
    found: list
    cuts: list
    nogoods: list
    phases: dict
    objective: Any


def _merge(enum, out: _Outcome, merged: set) -> None:
    """Replay a fork's journal on ``enum`` (its evaluations, cuts with their master rows,
    no-goods, statistics)."""
    for default, key, value in out.found:
        if default:
            enum.found.setdefault(key, value)
        else:
            enum.found[key] = value
    master = enum.master
    rows = []
    for S, cuts in out.cuts:
        key = tuple(int(i) for i in S)
        if key in merged or master.has_cut(S):
            continue
        merged.add(key)
        for lower, g in cuts:
            enum.cuts.add(S, lower, g)
            rows.append(master.cut_row(S, lower, g))
    for key in out.nogoods:
        if key not in enum.nogoods:
            enum.nogoods.add(key)
            rows.append(master.nogood_row(np.asarray(key, dtype=np.intp)))
    if rows:   # added to the backend when the master is next used (MasterProblem.defer_rows)
        master.defer_rows(rows)
    for name, ph in out.phases.items():
        mine = enum._phase(name)
        mine.time += ph.time
        mine.solves += ph.solves
        mine.evaluations += ph.evaluations
        mine.lazy_rows += ph.lazy_rows
        mine.fixed = max(mine.fixed, ph.fixed)
        mine.screened = max(mine.screened, ph.screened)
    enum.objective.merge_fork(out.objective)


def run_forked(enum, jobs: Sequence[T], fn: Callable[[Any, T], Any]) -> list:
    """``[fn(fork_of_enum, job) for job in jobs]``, each on its own fork, merged in order.

    Returns the values of ``fn`` in the jobs' order.  Runs on the call's workers
    (:mod:`mipdp._parallel`) when the backend is safe in threads, else one after another;
    the results and the merged enumerator are the same either way.
    """
    jobs = list(jobs)
    lock = threading.Lock()
    enum.found_array()      # the evaluated supports as an array, once, shared by the forks

    def one(job):
        child = _fork(enum, lock)
        value = fn(child, job)
        return _Outcome(value, child.found.journal, child._journal_cuts, child.nogoods.journal,
                        child.stats.phases, child.objective)

    threads_ok = bool(getattr(enum.master.backend_kind, "thread_safe", False))
    if threads_ok:
        outcomes = parallel_map(one, jobs)
    else:
        with n_jobs_context(1):
            outcomes = parallel_map(one, jobs)
    merged: set = set()
    for out in outcomes:
        _merge(enum, out, merged)
    enum._sync_stats()
    return [out.value for out in outcomes]
