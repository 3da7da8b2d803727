"""HiGHS options for outer-approximation masters, shared by the HiGHS and Pyomo backends.

The primal heuristics (feasibility jump and the sub-MIP heuristics) dominate the time on
masters made of a few dense cut rows over thousands of binaries, whose incumbents come
from the oracle anyway: the top-R search at p = 1000 took 8.7 s with them and 2.8 s
without (``experiments/bench_enumeration.py``).

Presolve is off for correctness: HiGHS 1.15.1's presolve declares some of these masters
infeasible although they have feasible points (``tests/solvers/data/
highs_presolve_wrong_infeasible.mps``, kept as a regression test).  An infeasibility
claim is a privacy certificate here, so a wrong one would release from a wrong top-R
set.  Presolve would be faster at large p (it removes the columns the enumeration
fixes by dominance), but correctness comes first.

``parallel`` is off for reproducibility: with HiGHS 1.16's default (``"choose"``) the same
master model (same rows, bounds and costs) returned different optimal points among ties
from run to run in one process (the first solve of a process differed from the later
ones in 1 to 5 runs of 8 on a Huber master with duplicated columns), so the supports a
region search evaluated, and the envelope, were not reproducible; with ``"off"`` they
were the same in 3 × 13 runs (``tests/mipdp/test_review_bounds.py``,
``test_forked_envelope_is_the_same_run_to_run``).  Bounds are certified either way.
"""

#: HiGHS option name -> value, applied unless the user overrides it.
HIGHS_MASTER_OPTIONS: dict[str, object] = {
    "presolve": "off",
    "mip_heuristic_run_feasibility_jump": False,
    "mip_heuristic_effort": 0.0,
    "mip_heuristic_run_rins": False,
    "mip_heuristic_run_rens": False,
    "mip_heuristic_run_root_reduced_cost": False,
    "parallel": "off",
}
