"""The missing intercept (docs/guide.md): what un-centred data does to the release.

Seed 002's design (p = 100, s = 5, n = 3000, ε = 1, bounds 0.5, the default score of
:func:`mipdp.losses.default_score`), three trials (about 45 s on a shared 2-core machine).
Three versions of the same data:

* ``centred``: as generated (every column and y have mean 0);
* ``offset``: the null columns 0, 2, 4, ... shifted by +0.25 and y by +0.25 (as raw,
  positive measurements are), no intercept;
* ``offset + constant column``: the same, with a public constant column (value 0.5) appended
  and s + 1 = 6 (the truth is then the 5 true features plus the constant).

For each: the non-private best support, whether it is the truth, and the exponential
mechanism's certified P(release = truth).  Everything printed is **not private**.

    python -m experiments.studies.guide_intercept
"""

from __future__ import annotations

import time

import numpy as np

from mipdp.datasets import make_bss_regression
from mipdp.experiments.em_reference import em_truth_probability
from mipdp.experiments.metrics import SupportLoss


def main(argv=None) -> None:
    print("| data | trial | non-private best support | = truth | EM P(truth) | time (s) |")
    print("|---|---|---|---|---|---|")
    for trial in range(3):
        X, y, truth = make_bss_regression(n=3000, p=100, s=5, random_state=trial)
        Xo = X.copy()
        Xo[:, 0::2] += 0.25
        yo = y + 0.25
        Xk = np.hstack([Xo, np.full((X.shape[0], 1), 0.5)])
        cases = [("centred", X, y, truth), ("offset", Xo, yo, truth),
                 ("offset + constant column", Xk, yo, np.append(truth, 100))]
        for name, A, b, t in cases:
            t0 = time.perf_counter()
            s = t.size
            best, _ = SupportLoss(A, b, s).best()
            ref = em_truth_probability(A, b, t, 1.0, s=s, ball=1)
            print(f"| {name} | {trial} | {best.tolist()} | {np.array_equal(best, np.sort(t))} | "
                  f"{ref['lo']:.3f}–{ref['hi']:.3f} | {time.perf_counter() - t0:.1f} |",
                  flush=True)


if __name__ == "__main__":
    main()
