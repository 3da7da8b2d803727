"""Peak memory (asv's ``peakmem_``) of one release on dense, memmap and sparse inputs.

asv reports a ``peakmem_`` benchmark as the peak resident set size of the process that
ran ``setup`` and the call, so it counts the data as loaded in ``setup`` (for the memmap,
the pages of the file the call reads).  ``peakmem_data`` is the same process without the
call: the goal is stated as ``peakmem_release / peakmem_data`` of the same input in the
same run (a release must not copy a large ``X``: the dense float64 design at p = 10⁵ is
2.4 GB).

At p = 10⁵ the release runs with a pre-screen, ``prescreen=("kendall", 200, 0.3)`` (a
private Kendall screen to 200 features with 30 % of ε), as a user would at that size;
that case has a long timeout (leave it out of a quick run with ``--bench
'^(?!.*100000\\))'``).  The sparse input is a CSR matrix of density 0.001 plus five
dense true columns (``common._sparse_design``), not seed 002's design.
"""

from mipdp import private_bss

from .common import BOUNDS, EPS, LONG_TIMEOUT, RELEASE_SEED, N, S, load, quiet

PRESCREEN_LARGE = ("kendall", 200, 0.3)


class Memory:
    """``private_bss`` on ``input`` in {dense, memmap, sparse} at p = 10⁴ and 10⁵."""

    params = [["dense", "memmap", "sparse"], [10_000, 100_000]]
    param_names = ["input", "p"]
    timeout = LONG_TIMEOUT

    def setup(self, input, p):
        quiet()
        kind = "sparse" if input == "sparse" else "regression"
        self.X, self.y, _ = load(kind, N, p, mmap=input == "memmap")
        name, k, fraction = PRESCREEN_LARGE
        # (k shrinks with the design only when MIPDP_BENCH_TINY shrinks p)
        self.prescreen = (name, min(k, self.X.shape[1] // 2), fraction) if p >= 100_000 else None

    def peakmem_release(self, input, p):
        private_bss(self.X, self.y, S, EPS, bounds=BOUNDS, prescreen=self.prescreen,
                    random_state=RELEASE_SEED)

    def peakmem_data(self, input, p):
        pass
