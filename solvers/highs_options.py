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
"""

#: HiGHS option name -> value, applied unless the user overrides it.
HIGHS_MASTER_OPTIONS: dict[str, object] = {
    "presolve": "off",
    "mip_heuristic_run_feasibility_jump": False,
    "mip_heuristic_effort": 0.0,
    "mip_heuristic_run_rins": False,
    "mip_heuristic_run_rens": False,
    "mip_heuristic_run_root_reduced_cost": False,
}
