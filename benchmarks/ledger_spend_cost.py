"""The cost of one spend on the privacy ledger: medians and 95th percentiles.

    PYTHONPATH=. python benchmarks/ledger_spend_cost.py [--n 300] [--fills 0 1000 10000]

Times ``BudgetAccountant.spend`` (one ``BEGIN IMMEDIATE`` transaction) and a reserve +
settle pair (what a public function adds to a release) on a fresh ledger in a temporary
directory already holding ``fill`` releases, with ``durable=True`` and ``durable=False``,
and the in-memory accountant as the baseline; ``journal`` prints SQLite's journal mode.
``--bare`` also times the disk's own flush (``write`` + ``fsync``) and a bare SQLite
transaction (one insert) with the rollback journal and with a write-ahead log, both
``synchronous=FULL``: the floor under a durable spend on that disk.
"""

import argparse
import os
import sqlite3
import statistics
import tempfile
import time

from mipdp import BudgetAccountant


def _times(f, n):
    out = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        out.append(1e3 * (time.perf_counter() - t))
    out.sort()
    return statistics.median(out), out[int(0.95 * (n - 1))]


def _bare(d: str, n: int) -> None:
    fd = os.open(os.path.join(d, "raw"), os.O_WRONLY | os.O_CREAT)

    def flush():
        os.write(fd, b"x" * 100)
        os.fsync(fd)
    med, p95 = _times(flush, n)
    print(f"disk write + fsync          median {med:.3f} ms p95 {p95:.3f} ms", flush=True)
    os.close(fd)
    for mode in ("DELETE", "WAL"):
        conn = sqlite3.connect(os.path.join(d, f"bare-{mode}.sqlite"), isolation_level=None)
        conn.execute(f"PRAGMA journal_mode={mode}")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("CREATE TABLE t(x)")

        def tx(conn=conn):
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO t VALUES (1)")
            conn.execute("COMMIT")
        med, p95 = _times(tx, n)
        print(f"bare transaction {mode:6s} FULL median {med:.3f} ms p95 {p95:.3f} ms", flush=True)
        conn.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--fills", type=int, nargs="+", default=[0, 1000, 10000])
    ap.add_argument("--bare", action="store_true", help="also time the disk's flush and "
                    "bare SQLite transactions")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="mipdp-ledger-") as d:
        if args.bare:
            _bare(d, args.n)
        for fill in args.fills:
            for kind in ("memory", "durable=False", "durable=True"):
                if kind == "memory":
                    acc = BudgetAccountant(1e9)
                else:
                    path = os.path.join(d, f"{fill}-{kind}.sqlite")
                    acc = BudgetAccountant(1e9, path=path, durable=kind == "durable=True")
                for _ in range(fill):
                    acc.spend(1e-9)
                sp = _times(lambda acc=acc: acc.spend(1e-9), args.n)
                rs = _times(lambda acc=acc: acc.reserve(1e-9, method="bench").settle(), args.n)
                mode = ("-" if kind == "memory" else    # the accountant's own connection
                        acc._store._connection().execute("PRAGMA journal_mode").fetchone()[0])
                print(f"fill {fill:6d}  {kind:14s} journal {mode:8s} spend median "
                      f"{sp[0]:.3f} ms p95 {sp[1]:.3f} ms | reserve+settle median "
                      f"{rs[0]:.3f} ms p95 {rs[1]:.3f} ms", flush=True)


if __name__ == "__main__":
    main()
