"""Permute-and-flip against the exponential mechanism (the first draw, envelope included).

Goal (issue 19): permute-and-flip's first draw within 2 × the exponential mechanism's at
p = 100, 1000, 10 000.  ``time_release`` times each method; ``track_pf_over_em`` measures
both in the same process, alternating, and returns the ratio of their best times, so the
goal reads off one number, measured under the same load.
"""

import time

from mipdp import private_bss

from .common import BOUNDS, EPS, RELEASE_SEED, TINY, N, S, load, quiet


def _release(X, y, method):
    return private_bss(X, y, S, EPS, bounds=BOUNDS, method=method,
                       random_state=RELEASE_SEED)


class Mechanisms:
    """``private_bss(..., method=M)`` for the exponential mechanism and permute-and-flip."""

    params = [["exponential", "permute_and_flip"], [100, 1000, 10_000]]
    param_names = ["method", "p"]
    number = 1
    repeat = (1, 3, 120.0)
    warmup_time = 0.0
    processes = 1
    timeout = 900

    def setup(self, method, p):
        quiet()
        self.X, self.y, _ = load("regression", N, p)

    def time_release(self, method, p):
        _release(self.X, self.y, method)


class MechanismRatio:
    """``time(permute_and_flip) / time(exponential)`` measured in the same process.

    The two methods alternate for ``rounds`` rounds and each keeps its best time, so a
    load spike on the shared machine hits both or neither.
    """

    params = [[100, 1000]]
    param_names = ["p"]
    processes = 1
    timeout = 900
    unit = "ratio"

    def setup(self, p):
        quiet()
        self.X, self.y, _ = load("regression", N, p)

    #: alternating rounds; each method's best time over them (robust to load spikes)
    rounds = 1 if TINY else 3

    def track_pf_over_em(self, p):
        best = {"exponential": float("inf"), "permute_and_flip": float("inf")}
        for _ in range(self.rounds):
            for method in best:
                start = time.perf_counter()
                _release(self.X, self.y, method)
                best[method] = min(best[method], time.perf_counter() - start)
        return best["permute_and_flip"] / best["exponential"]
