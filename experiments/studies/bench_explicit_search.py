"""Releases where the explicit search (and permute-and-flip's refinements) do real work.

The before/after check of the deterministic cost model (:mod:`mipdp.enumeration.costs`;
docs/algorithms.md, "Run to run: no decision reads the clock")::

    python -m experiments.studies.bench_explicit_search            # every case
    python -m experiments.studies.bench_explicit_search --cases 2 3 4 5

Every case is one ``private_bss`` call (``s = 5``, ``ε = 1``, bounds ``(0.5, 0.5)``,
``random_state=2``) on seed 002's design (:func:`mipdp.datasets.make_bss_regression`,
``random_state=p``).  Printed per case: wall and CPU seconds of the call, the time spent in
:func:`~mipdp.enumeration.explicit.explicit_search` (a wrapper times every call), the
members it evaluated and the cuts it took, the refinements of permute-and-flip, and a
digest of the draws (the same in every run of the same code).  Run two checkouts one
after the other on the same machine and compare.  Every figure is computed from the data
without noise: **not private**.
"""

from __future__ import annotations

import argparse
import hashlib
import time
import warnings
from typing import Any

__all__ = ["main", "CASES"]

#: (name, n, p, ρ, keyword arguments of private_bss)
CASES: list[tuple[str, int, int, float, dict[str, Any]]] = [
    ("ls", 300, 100, 0.7, {}),
    ("ls", 1000, 1000, 0.1, {}),
    ("ls", 1000, 1000, 0.1, {"method": "top_r"}),
    ("ls", 300, 100, 0.7, {"method": "top_r"}),
    ("huber", 300, 100, 0.7, {"loss": "huber", "method": "top_r"}),
    ("ls", 300, 100, 0.7, {"method": "mistakes"}),
    ("ls", 300, 100, 0.7, {"enumeration_options": {"full_class_max": 0}}),
    ("huber", 300, 100, 0.7, {"loss": "huber"}),
    ("pf", 1000, 1000, 0.1, {"method": "permute_and_flip", "n_draws": 100}),
]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", nargs="*", type=int, default=None,
                    help="indices into CASES (default: all)")
    args = ap.parse_args(argv)
    import numpy as np

    import mipdp.enumeration.enumerator as en
    import mipdp.enumeration.explicit as ex
    import mipdp.enumeration.region_search as rs
    from mipdp import private_bss
    from mipdp.datasets import make_bss_regression
    from mipdp.mechanisms.permute_flip import PermuteAndFlipSampler

    acc = {"t": 0.0, "evaluated": 0, "cuts": 0}
    orig = ex.explicit_search

    def timed(*a, **k):
        t0 = time.perf_counter()
        res = orig(*a, **k)
        acc["t"] += time.perf_counter() - t0
        acc["evaluated"] += res.n_evaluated
        acc["cuts"] += res.n_cuts
        return res

    ex.explicit_search = rs.explicit_search = en.explicit_search = timed
    refinements = [0]
    orig_split = PermuteAndFlipSampler._split

    def split(self, st, rng):
        refinements[0] += 1
        return orig_split(self, st, rng)

    PermuteAndFlipSampler._split = split  # type: ignore[method-assign]
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    private_bss(rng.uniform(-0.5, 0.5, (10, 50)), rng.uniform(-0.5, 0.5, 10), 5, 1.0,
                bounds=(0.5, 0.5), random_state=1)              # imports, first calls
    for i, (name, n, p, rho, kw) in enumerate(CASES):
        if args.cases is not None and i not in args.cases:
            continue
        X, y, _ = make_bss_regression(n, p, 5, rho=rho, random_state=p)
        acc.update(t=0.0, evaluated=0, cuts=0)
        refinements[0] = 0
        t0, c0 = time.perf_counter(), time.process_time()
        res = private_bss(X, y, 5, 1.0, bounds=(0.5, 0.5), random_state=2, **kw)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        digest = hashlib.md5(np.ascontiguousarray(res.supports).tobytes()).hexdigest()[:8]
        print(f"{i} {name} n={n} p={p} rho={rho} {kw}: wall {wall:.2f} s, CPU {cpu:.2f} s; "
              f"explicit search {acc['t']:.2f} s, {acc['evaluated']} evaluated, "
              f"{acc['cuts']} cuts; {refinements[0]} refinements; draws {digest}",
              flush=True)


if __name__ == "__main__":
    main()
