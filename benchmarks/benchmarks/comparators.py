"""The comparators on the data of the core release, with ``private_bss`` as the baseline.

``dp_kendall``, ``dp_sis``, ``two_stage``, ``noisy_iht`` (pure ε) and ``mcmc`` each
select k = s = 5 features at ε = 1 on seed 002's design (n = 3000); the methods that
clip take ``bounds=(0.5, 0.5)`` as ``private_bss`` does.  The row ``private_bss`` is the
baseline measured in the same run: a comparator's time over it is the ratio to report.
"""

from mipdp import private_bss
from mipdp.comparators import dp_kendall, dp_sis, mcmc, noisy_iht, two_stage

from .common import BOUNDS, EPS, RELEASE_SEED, N, S, load, quiet

_METHODS = {
    "private_bss": lambda X, y: private_bss(X, y, S, EPS, bounds=BOUNDS,
                                            random_state=RELEASE_SEED),
    "dp_kendall": lambda X, y: dp_kendall(X, y, S, EPS, random_state=RELEASE_SEED),
    "dp_sis": lambda X, y: dp_sis(X, y, S, EPS, bounds=BOUNDS, random_state=RELEASE_SEED),
    "two_stage": lambda X, y: two_stage(X, y, S, EPS, random_state=RELEASE_SEED),
    "noisy_iht": lambda X, y: noisy_iht(X, y, S, EPS, bounds=BOUNDS,
                                        random_state=RELEASE_SEED),
    "mcmc": lambda X, y: mcmc(X, y, S, EPS, bounds=BOUNDS, random_state=RELEASE_SEED),
}


class Comparators:
    """One selection of 5 features per repeat, by each method, at p = 1000 and 10 000."""

    params = [list(_METHODS), [1000, 10_000]]
    param_names = ["method", "p"]
    number = 1
    repeat = (1, 3, 60.0)
    warmup_time = 0.0
    processes = 1
    timeout = 900

    def setup(self, method, p):
        quiet()
        self.X, self.y, _ = load("regression", N, p)

    def time_select(self, method, p):
        _METHODS[method](self.X, self.y)
