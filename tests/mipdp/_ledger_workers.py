"""Functions run in worker processes by tests/mipdp/test_ledger.py.

A module of its own (not collected by pytest) so that spawn, forkserver and loky workers
can import them by name: the tests put this directory on ``sys.path`` before starting
the workers.
"""

import os
import time


def _data():
    from mipdp.datasets import make_bss_regression
    X, y, _ = make_bss_regression(n=60, p=4, s=1, random_state=0)
    return X, y


def pid_after(seconds):
    """This worker's pid, after importing mipdp and sleeping ``seconds``."""
    import mipdp.datasets  # noqa: F401
    time.sleep(seconds)
    return os.getpid()


def release(accountant=None):
    """One private_bss release (eps 0.5); 'released', or 'refused: <message>'."""
    from mipdp import AccountantNotVisibleError, private_bss
    X, y = _data()
    try:
        private_bss(X, y, 1, 0.5, bounds=(0.5, 0.5), random_state=0, accountant=accountant)
        return "released"
    except AccountantNotVisibleError as exc:
        return f"refused: {exc}"


def spend(ledger, eps, times=1):
    """Spend ``eps`` ``times`` times on ``ledger`` (an accountant or a path); pid."""
    from mipdp import BudgetAccountant
    acc = BudgetAccountant.open(ledger) if isinstance(ledger, str) else ledger
    for _ in range(times):
        acc.spend(eps, method=f"worker {os.getpid()}")
    return os.getpid()


def race(paths, starts, eps):
    """For each ledger of ``paths``: wait until ``starts[i]`` (time.time()), then try to
    spend ``eps`` on it.  Returns one ``[won, t_begin, t_end]`` per race: whether this
    process's spend won, and when (time.time()) it began and returned."""
    from mipdp import BudgetAccountant, BudgetError
    won = []
    for path, start in zip(paths, starts, strict=True):
        acc = BudgetAccountant.open(path)
        _ = acc.spent                                 # connect and read before the start
        while time.time() < start:
            pass
        t_begin = time.time()
        try:
            acc.spend(eps, method="race")
            ok = True
        except BudgetError:
            ok = False
        won.append([ok, t_begin, time.time()])
    return won


def hold_locks(paths, starts, lead=0.01, hold=0.02):
    """Make the races tight: hold each ledger's write lock from ``lead`` s before its
    start to ``hold`` s after it, so that both racers' spends begin and wait for the same
    release of the lock.  Returns when each lock was released (time.time())."""
    import sqlite3
    released = []
    for path, start in zip(paths, starts, strict=True):
        while time.time() < start - lead:
            time.sleep(0.001)
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        while time.time() < start + hold:
            time.sleep(0.001)
        released.append(time.time())
        conn.execute("ROLLBACK")
        conn.close()
    return released


def barrier_starts(barrier_dir, n_procs, k, dt, register=True):
    """Start times shared by ``n_procs`` separate processes: each writes a file in
    ``barrier_dir`` when ready; all start 0.2 s after the last one is ready (the parent,
    ``register=False``, computes the same times)."""
    if register:
        open(os.path.join(barrier_dir, f"ready-{os.getpid()}"), "w").close()
    while True:
        names = [n for n in os.listdir(barrier_dir) if n.startswith("ready-")]
        if len(names) >= n_procs:
            break
        time.sleep(0.005)
    t0 = max(os.path.getmtime(os.path.join(barrier_dir, n)) for n in names) + 0.2
    return [t0 + dt * i for i in range(k)]


if __name__ == "__main__":       # a separate Python program: paths barrier_dir n_procs dt eps
    import json
    import sys

    import mipdp  # noqa: F401  (import before the barrier)
    paths = json.loads(sys.argv[1])
    starts = barrier_starts(sys.argv[2], int(sys.argv[3]), len(paths), float(sys.argv[4]))
    print(json.dumps(race(paths, starts, float(sys.argv[5]))))
