"""One spend on the privacy ledger (``BudgetAccountant``), in memory and on SQLite.

``spend`` (one ``BEGIN IMMEDIATE`` transaction on SQLite) and a reserve + settle pair (what
a public function adds to a release) on a ledger already holding ``fill`` releases,
in memory (the baseline of the same run), on SQLite with ``durable=False``
(``synchronous=NORMAL``) and ``durable=True`` (``synchronous=FULL``: disk flushes per commit).
Replaces ``experiments/bench_ledger.py``; compare the SQLite cases with the in-memory one.
"""

import os
import shutil
import tempfile


class LedgerSpend:
    params = [["memory", "sqlite", "sqlite durable"], [0, 1000]]
    param_names = ["ledger", "fill"]
    number = 20
    repeat = (1, 5, 30.0)
    timeout = 300

    def setup(self, kind, fill):
        from mipdp import BudgetAccountant
        self.dir = tempfile.mkdtemp(prefix="mipdp-ledger-")
        if kind == "memory":
            self.acc = BudgetAccountant(1e6)
        else:
            self.acc = BudgetAccountant(1e6, path=os.path.join(self.dir, "ledger.sqlite"),
                                        durable=(kind == "sqlite durable"))
        for _ in range(fill):
            self.acc.spend(1e-6)

    def teardown(self, kind, fill):
        shutil.rmtree(self.dir, ignore_errors=True)

    def time_spend(self, kind, fill):
        self.acc.spend(1e-6)

    def time_reserve_settle(self, kind, fill):
        self.acc.reserve(1e-6, method="bench").settle()
