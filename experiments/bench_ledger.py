"""What does one spend on the SQLite privacy ledger cost?  (issue 28, item 3)

Times ``BudgetAccountant.spend`` (one ``BEGIN IMMEDIATE`` transaction) and a
reserve + settle pair (what a public function adds to a release: the planned guarantee
booked before the data is read, the actual one recorded after) on a ledger file already
holding ``--fill`` releases (budget ε = 10⁶, so every spend is checked), for ``durable=True`` (``synchronous=FULL``: a disk flush per
transaction) and ``durable=False`` (``synchronous=NORMAL`` in WAL mode).  The in-memory
accountant, in the same run, is the baseline.  Reports the median and the 95th
percentile in milliseconds.  A bare SQLite transaction (``BEGIN IMMEDIATE``, one
``INSERT``, ``COMMIT``) on the same disk, for each ``synchronous`` setting, is the floor
the ledger cannot go below (the disk's flush time for ``FULL``).

Usage::

    python experiments/bench_ledger.py                      # 300 spends, fills 0 and 1000
    python experiments/bench_ledger.py --n 1000 --fill 0 100 10000 --dir /tmp

Timings depend on the machine, its disk and its load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

from mipdp import BudgetAccountant


def _times(fn, n: int) -> tuple[float, float]:
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    ts.sort()
    return statistics.median(ts) * 1e3, ts[min(len(ts) - 1, int(0.95 * len(ts)))] * 1e3


def _filled(kind: str, fill: int, where: str) -> BudgetAccountant:
    # a finite budget, so that every spend is checked against it
    if kind == "memory":
        acc = BudgetAccountant(1e6)
    else:
        path = os.path.join(where, f"{kind.replace(' ', '-')}-{fill}.sqlite")
        acc = BudgetAccountant(1e6, path=path, durable=(kind == "sqlite durable"))
    for _ in range(fill):
        acc.spend(1e-6)
    return acc


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=300, help="timed operations per cell")
    ap.add_argument("--fill", type=int, nargs="+", default=[0, 1000],
                    help="releases already in the ledger")
    ap.add_argument("--dir", default=None, help="directory of the ledger files")
    args = ap.parse_args(argv)
    where = tempfile.mkdtemp(prefix="mipdp-ledger-bench-", dir=args.dir)
    print(f"ledger files in {where}; load average {os.getloadavg()[0]:.2f} "
          f"(cores: {os.cpu_count()})")
    print(f"{'storage':<16} {'fill':>6} {'spend median':>13} {'p95':>8} "
          f"{'reserve+settle median':>22} {'p95':>8}  (ms)")
    import sqlite3
    for sync in ("FULL", "NORMAL"):
        conn = sqlite3.connect(os.path.join(where, f"raw-{sync}.sqlite"), isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={sync}")
        conn.execute("CREATE TABLE t(x REAL)")

        def raw(conn=conn):
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO t VALUES (1.0)")
            conn.execute("COMMIT")
        med, p95 = _times(raw, args.n)
        print(f"{'raw ' + sync:<16} {'-':>6} {med:>13.3f} {p95:>8.3f} {'-':>22} {'-':>8}")
    for fill in args.fill:
        for kind in ("memory", "sqlite durable", "sqlite fast"):
            acc = _filled(kind, fill, where)
            med, p95 = _times(lambda acc=acc: acc.spend(1e-6), args.n)

            def pair(acc=acc):
                acc.reserve(1e-6, method="bench").settle()
            med2, p952 = _times(pair, args.n)
            print(f"{kind:<16} {fill:>6} {med:>13.3f} {p95:>8.3f} {med2:>22.3f} {p952:>8.3f}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
