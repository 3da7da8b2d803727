"""The core release, the hinge loss, the correlated designs and the bounds-free ranks.

Every case is one ``private_bss`` call on seed 002's design (``s = 5``, ``ε = 1``, the
default method, the exponential mechanism; ``random_state`` fixed), the data loaded from
the cache in ``setup`` (generation is not timed; see ``common.py``).
"""

from mipdp import private_bss

from .common import BOUNDS, EPS, LONG_TIMEOUT, RELEASE_SEED, N, S, load, quiet


class _Release:
    """One ``private_bss`` call per repeat: heavy, so one call per sample, one process."""

    number = 1
    repeat = (1, 3, 120.0)
    warmup_time = 0.0
    processes = 1
    timeout = 900


class CoreRelease(_Release):
    """``private_bss(X, y, 5, 1.0, bounds=(0.5, 0.5))`` at n = 3000.

    p = 10⁵ (2.4 GB of float64) has a long timeout; leave it out of a quick run with
    ``--bench '^(?!.*100000\\))'`` (benchmarks/README.md).
    """

    params = [[100, 10_000, 100_000]]
    param_names = ["p"]
    timeout = LONG_TIMEOUT

    def setup(self, p):
        quiet()
        self.X, self.y, _ = load("regression", N, p)

    def time_release(self, p):
        private_bss(self.X, self.y, S, EPS, bounds=BOUNDS, random_state=RELEASE_SEED)


class HingeRelease(_Release):
    """The hinge loss on seed 002's classification design (labels ±1), n = 3000."""

    params = [[100, 1000]]
    param_names = ["p"]

    def setup(self, p):
        quiet()
        self.X, self.y, _ = load("classification", N, p)

    def time_release(self, p):
        private_bss(self.X, self.y, S, EPS, bounds=BOUNDS, loss="hinge",
                    random_state=RELEASE_SEED)


class CorrelatedRelease(_Release):
    """AR(1) columns with ρ = 0.7 against ρ = 0.1 (same n = 4000 and p) in the same run.

    The ratio ``time(ρ = 0.7) / time(ρ = 0.1)`` at each p is the cost of correlation
    (``asv compare`` or the table of ``asv run``); see benchmarks/README.md.
    """

    params = [[0.1, 0.7], [100, 1000]]
    param_names = ["rho", "p"]

    def setup(self, rho, p):
        quiet()
        self.X, self.y, _ = load("regression", 4000, p, rho)

    def time_release(self, rho, p):
        private_bss(self.X, self.y, S, EPS, bounds=BOUNDS, random_state=RELEASE_SEED)


class RankRelease(_Release):
    """The bounds-free release on ranks (``bounds="ranks"``, what ``bounds=None`` means).

    ``"ranks"`` is the explicit spelling, ``None`` the default call; both must time the
    same.  Compare with ``CoreRelease`` at p = 100 for the price of needing no bounds.
    """

    params = [["ranks", None], [100, 1000]]
    param_names = ["bounds", "p"]

    def setup(self, bounds, p):
        quiet()
        self.X, self.y, _ = load("regression", N, p)

    def time_release(self, bounds, p):
        private_bss(self.X, self.y, S, EPS, bounds=bounds, random_state=RELEASE_SEED)


class SmallNRelease(_Release):
    """Very few rows (n ≪ p): uniform data in [−½, ½], the default release (docs/guide.md).

    Replaces ``experiments/bench_small_n.py``.
    """

    params = [[(10, 500), (10, 5000), (20, 1000), (30, 1000)]]
    param_names = ["n, p"]

    def setup(self, size):
        import numpy as np

        from .common import shrink
        quiet()
        n, p = shrink(*size)
        rng = np.random.default_rng(0)
        self.X = rng.uniform(-0.5, 0.5, (n, p))
        self.y = rng.uniform(-0.5, 0.5, n)

    def time_release(self, size):
        private_bss(self.X, self.y, S, EPS, bounds=BOUNDS, random_state=RELEASE_SEED,
                    time_limit=900)


class BackendRelease(_Release):
    """``method="top_r"`` on each installed MIP backend (HiGHS, Pyomo, Gurobi), n = 3000.

    The enumeration layer end to end, per backend; a backend that is not installed (or
    Gurobi's size-limited licence beyond 2000 variables) is skipped.  Replaces
    ``experiments/bench_enumeration.py`` (its phases are ``result.timings``).
    """

    params = [["highs", "pyomo", "gurobi"], [100, 1000]]
    param_names = ["backend", "p"]

    def setup(self, backend, p):
        from mipdp import solvers
        if backend not in solvers.available_backends():
            raise NotImplementedError(f"backend {backend} not installed")
        if backend == "gurobi" and p + 1 > 2000:
            raise NotImplementedError("size-limited gurobi licence")
        quiet()
        self.X, self.y, _ = load("regression", N, p)

    def time_top_r(self, backend, p):
        private_bss(self.X, self.y, S, EPS, bounds=BOUNDS, method="top_r", backend=backend,
                    random_state=RELEASE_SEED)
