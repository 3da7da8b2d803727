"""The cost of one spend on the privacy ledger: medians and 95th percentiles.

    PYTHONPATH=. python benchmarks/ledger_spend_cost.py [--n 300] [--fills 0 1000 10000]

Times ``BudgetAccountant.spend`` (one ``BEGIN IMMEDIATE`` transaction) and a reserve +
settle pair (what a public function adds to a release) on a fresh ledger in a temporary
directory already holding ``fill`` releases, with ``durable=True`` and ``durable=False``,
and the in-memory accountant as the baseline; ``journal`` prints SQLite's journal mode.
"""

import argparse
import os
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--fills", type=int, nargs="+", default=[0, 1000, 10000])
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="mipdp-ledger-") as d:
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
