"""Permute-and-flip against the exponential mechanism (the first draw, envelope included).

Goal (issue 19): permute-and-flip's first draw within 2 × the exponential mechanism's at
p = 100, 1000, 10 000.  ``time_release`` times each method; ``track_pf_over_em`` measures
both in the same process, one after the other, and returns the ratio, so the goal reads
directly off one number however loaded the machine is.
"""

import time

from mipdp import private_bss

from .common import BOUNDS, EPS, N, RELEASE_SEED, S, load, quiet


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
    """``time(permute_and_flip) / time(exponential)`` measured in the same process."""

    params = [[100, 1000]]
    param_names = ["p"]
    processes = 1
    timeout = 900
    unit = "ratio"

    def setup(self, p):
        quiet()
        self.X, self.y, _ = load("regression", N, p)

    def track_pf_over_em(self, p):
        times = {}
        for method in ("exponential", "permute_and_flip"):
            start = time.perf_counter()
            _release(self.X, self.y, method)
            times[method] = time.perf_counter() - start
        return times["permute_and_flip"] / times["exponential"]
