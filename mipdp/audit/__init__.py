"""Privacy audit: measured privacy loss of the package's mechanisms on neighbouring datasets.

Two kinds of audit:

* **exact** — for mechanisms whose output law the package computes exactly (top-R,
  mistakes, the PTR-guarded mistakes sampler — on the MIP path and on the exhaustive
  path —, canonical Lipschitz and Gumbel-peeling top-k, DP-SIS, DPKendall, noisy IHT's
  peeling iterations, objective perturbation with one coefficient, and the Tukey
  mechanism's refusal and cell law on model sets of ``d ≤ 2``), take small
  instances and pairs of neighbouring datasets (random ones, and adversarial ones: the
  replaced row at the clipping corners or far outside the bounds, rows that flip the
  optimum, exact ties from duplicated columns) and compute the worst
  ``|log P(o | D) - log P(o | D')|`` over **all** outputs ``o``.  For an approximate-DP
  claim ``(ε, δ)`` the exact hockey-stick divergence
  ``max(Σ_o [P(o|D) - e^ε P(o|D')]_+, same with D and D' swapped)`` is measured too.
* **adversarial** (exact) — the exponential mechanism of ``private_bss`` (least squares
  and hinge, both neighbour notions) on pairs found by a seeded hill climb over the whole
  dataset and the replaced / added row (:mod:`mipdp.audit.adversarial`), where the score
  moves by close to its proven sensitivity: its ``worst log-ratio / ε`` is the audit's power
  (a per-sample bound ``B`` calibrated at half its value is caught).
* **empirical** — for mechanisms without a closed form (MCMC, DP Frank-Wolfe,
  Two-Stage with Laplace top-k, whole runs of noisy IHT), many draws on a neighbouring
  pair; an output event is chosen on a pilot sample and a Clopper–Pearson bound on fresh
  draws gives a lower confidence bound on the realised ε (it must not exceed the claim).

Every audit returns a list of rows (dicts) with the keys of :data:`COLUMNS`;
:func:`run_audit` collects them and :func:`to_markdown` formats them.
``python -m mipdp.audit [--quick]`` prints the table.
"""

from __future__ import annotations

import logging
from typing import Any, cast

import numpy as np

from ._common import (  # noqa: F401
    COLUMNS,
    PATHS,
    TOL,
    B,
    _corner_rows,
    _instance,
    _ls_table,
    _row,
    add_remove_neighbours,
    hockey_stick,
    max_abs_log_ratio,
    replace_one_neighbours,
)
from .adversarial import ADVERSARIAL_CASES, audit_adversarial, proven_sample_bound  # noqa: F401
from .coefficients import (  # noqa: F401
    OP_CASES,
    OP_EVENT,
    _laplace_logcdf,
    _op_bases,
    _op_rows,
    audit_private_coefficients,
    op_k1_log_law,
    op_k1_worst,
)
from .comparators import (  # noqa: F401
    _add_remove_neighbours,
    _kendall_neighbours,
    _score_vectors,
    audit_dp_kendall,
    audit_dp_sis,
    audit_noisy_iht,
    audit_topk,
)
from .empirical import _empirical_rows, audit_empirical, clopper_pearson_epsilon  # noqa: F401
from .mip import (  # noqa: F401
    _LS,
    METHOD_AUDITS,
    _audit_bss_exact,
    _bss_log_probs,
    _check_path,
    _em_worst,
    _flip_score,
    _ptr_log_probs,
    _ptr_pass_prob,
    _stable,
    audit_exponential,
    audit_mistakes,
    audit_permute_and_flip,
    audit_ptr_mistakes,
    audit_top_r,
)
from .tukey import audit_tukey, tukey_cell_log_law  # noqa: F401

__all__ = ["COLUMNS", "PATHS", "max_abs_log_ratio", "hockey_stick", "replace_one_neighbours",
           "add_remove_neighbours", "audit_exponential", "audit_permute_and_flip",
           "audit_top_r", "audit_mistakes", "audit_ptr_mistakes", "audit_topk", "audit_dp_sis",
           "audit_dp_kendall", "audit_noisy_iht", "audit_private_coefficients", "op_k1_log_law",
           "audit_tukey", "tukey_cell_log_law",
           "op_k1_worst",
           "clopper_pearson_epsilon", "audit_empirical", "run_audit", "to_markdown",
           "METHOD_AUDITS", "audit_adversarial", "proven_sample_bound", "ADVERSARIAL_CASES"]


logger = logging.getLogger(__name__)


# ------------------------------------------------------------------ driver
def run_audit(quick: bool = False, as_frame: bool = False, backend: str = "highs"):
    """Run every audit; return the rows (a list of dicts, or a pandas DataFrame).

    The ``private_bss`` rows run the MIP path (outer approximation on ``backend``, forced
    with ``exhaustive_max = explicit_max = 0``); one top-R row runs the exhaustive path.  Each row's
    ``backend`` says which path its calls really took.  ``quick=True`` uses fewer
    instances, neighbours and draws.
    """
    seeds = (0,) if quick else (0, 1, 2)
    rows = []
    rows += audit_top_r(seeds=seeds[:2], Rs=(None, 1, "all") if quick else (None, 1, 4, "all"),
                        kinds=("ties", "near_tie") if quick else ("random", "ties", "near_tie"),
                        n_random=1 if quick else 3, n_corner=2 if quick else 4, path="mip",
                        backend=backend)
    rows += audit_top_r(seeds=seeds[:2], Rs=(None, 1, "all") if quick else (None, 1, 4, "all"),
                        n_random=2 if quick else 3, n_corner=2 if quick else 4,
                        path="exhaustive")
    rows += audit_exponential(seeds=seeds[:2],
                              kinds=(("ties", "near_tie") if quick
                                     else ("random", "ties", "near_tie")),
                              n_random=1 if quick else 3, n_corner=2 if quick else 4, path="mip",
                              backend=backend)
    rows += audit_permute_and_flip(seeds=seeds[:2],
                                   kinds=("ties", "near_tie") if quick
                                   else ("random", "ties", "near_tie"),
                                   n_random=1 if quick else 3, n_corner=2 if quick else 4,
                                   path="mip", backend=backend)
    for method_audit in (audit_exponential, audit_top_r,
                         audit_permute_and_flip):   # add/remove, MIP path
        rows += method_audit(seeds=seeds[:2], kinds=("ties", "near_tie") if quick
                             else ("random", "ties", "near_tie"),
                             n_random=1 if quick else 3, n_corner=1 if quick else 3,
                             path="mip", backend=backend, neighbours="add_remove",
                             **cast("dict[str, Any]", {"Rs": (None, 1, "all")}
                                    if method_audit is audit_top_r else {}))
    rows += audit_mistakes(seeds=(0,) if quick else (0, 1, 2), n_random=1 if quick else 3,
                           n_corner=2 if quick else 4, path="mip", backend=backend)
    rows += audit_mistakes(seeds=(0,) if quick else (0, 1, 2), n_random=1 if quick else 3,
                           n_corner=2 if quick else 3, path="mip", backend=backend,
                           neighbours="add_remove")
    rows += audit_ptr_mistakes(seeds=seeds[:2], n_random=1 if quick else 2,
                               n_corner=1 if quick else 3, path="mip", backend=backend)
    rows += audit_ptr_mistakes(seeds=seeds[:2], n_random=1 if quick else 2,
                               n_corner=1 if quick else 2, path="mip", backend=backend,
                               neighbours="add_remove")
    rows += audit_adversarial(seeds=(0,) if quick else (0, 1, 2), iters=200 if quick else 600)
    rows += audit_private_coefficients()
    rows += audit_private_coefficients(neighbours="add_remove")
    rows += audit_topk(eps_values=(1.0,) if quick else (0.5, 1.0, 4.0))
    rows += audit_dp_sis(seeds=seeds)
    rows += audit_dp_kendall(seeds=seeds)
    rows += audit_noisy_iht(seeds=seeds[:2])
    rows += audit_tukey(seeds=seeds)
    rows += audit_tukey("add_remove", seeds=seeds)
    rows += _empirical_rows(1000 if quick else 5000)
    if as_frame:
        import pandas as pd
        return pd.DataFrame(rows, columns=list(COLUMNS))
    return rows


def _path_label(backend: str) -> str:
    if backend in ("—", ""):
        return "—"
    return ", ".join("exhaustive" if b == "exhaustive" else f"MIP ({b})"
                     for b in backend.split(", "))


def to_markdown(rows: list[dict]) -> str:
    """The audit rows as a markdown table."""
    head = ["mechanism", "neighbours", "audit", "enumeration", "instances", "neighbour pairs",
            "worst log-ratio", "claimed ε", "claimed δ", "measured δ", "within claim"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        md = "—" if not np.isfinite(r["measured_delta"]) or r["claimed_delta"] == 0 \
            else f"{r['measured_delta']:.2e}"
        kind = "exact" if r["kind"] == "exact" else "empirical (95% CP lower bound)"
        lines.append("| " + " | ".join([
            r["mechanism"], r["neighbour"], kind, _path_label(r.get("backend", "—")),
            str(r["instances"]), str(r["pairs"]),
            f"{r['worst_log_ratio']:.4f}", f"{r['claimed_eps']:g}",
            f"{r['claimed_delta']:g}", md, "yes" if r["within_claim"] else "**NO**"]) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m mipdp.audit [--quick]``: print the audit table as markdown."""
    import argparse
    import sys
    import time
    parser = argparse.ArgumentParser(prog="python -m mipdp.audit",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer instances and draws")
    parser.add_argument("--backend", default="highs",
                        help="MIP backend of the private_bss rows (default highs)")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    rows = run_audit(quick=args.quick, backend=args.backend)
    sys.stdout.write(to_markdown(rows) + "\n")
    sys.stdout.write(f"\n{'quick' if args.quick else 'full'} audit, "
                     f"{time.perf_counter() - t0:.1f} s; all within claim: "
                     f"{all(r['within_claim'] for r in rows)}\n")
    return 0 if all(r["within_claim"] for r in rows) else 1
