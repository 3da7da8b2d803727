"""Research studies of mipdp: the record of how its defaults were chosen (not installed).

Each module measures one question of the documentation and runs from a clone of the
repository (its root as the working directory)::

    python -m experiments.studies.NAME --help

or as a named study of ``experiments/studies.toml`` (``mipdp experiment run
experiments/studies.toml --study NAME``), which finds these modules next to the file.
A study module has ``main(argv=None)``: it parses its own options, prints its progress and
its markdown table(s).  Every figure a study prints is an evaluation quantity computed with
the truth or the data without noise: **not private**.  The package's machinery
(:mod:`mipdp.experiments.studies`) runs them and copies their tables into the docs.
"""

from __future__ import annotations

__all__ = ["STUDIES"]

#: study module name -> what it measures (the module's docstring says how)
STUDIES: dict[str, str] = {
    "bounds_free_speed": "time of the bounds-free releases against known bounds",
    "bench_correlated": "correlated designs: envelope variants and certified intervals",
    "bench_dask": "Dask input at scale (memory and time of the client)",
    "bench_explicit_search": "explicit search and refinements: time, work, draws' digest",
    "bench_dask_losses": "the losses' sufficient statistics on dask arrays",
    "bench_dask_scale": "Dask scale runs: tall n = 1e8 and wide p = 1e7",
    "bench_hard": "hard landscapes: hinge and real data, today's code against a baseline",
    "bench_mechanisms": "the samplers against the exponential mechanism (time, P(truth))",
    "bench_memory": "peak memory of dense, memmap and sparse input (fresh process per case)",
    "bench_neighbours": "add/remove against replace-one neighbours: laws and frequencies",
    "bench_parallel": "n_jobs = 1, 2, all: phase times, parallel fraction, abess",
    "bench_permute_flip": "permute-and-flip against the exponential mechanism",
    "bench_prescreen": "private pre-screens at large p: containment and P(truth)",
    "bench_private_bounds": "private clipping ranges against numeric bounds",
    "bench_scale": "large p (1e4 ... 1e6, memmap) and correlated designs",
    "bench_score_scale": "the score's passes over X at large p",
    "bench_time_limit": "what a time limit releases at large p",
    "bench_utility": "the default score against the seed's, and the comparators",
    "breast_cancer_hinge": "hinge loss on scikit-learn's breast-cancer data",
    "calibrate_search_costs": "measured cost of a value and of a cut against the cost model",
    "dpk_lead": "DPKendall's lead on College and Boston: oracle pre-screen, ordered score",
    "envelope_slack": "slack of the linear envelope at large p",
    "guide_em_vs_n": "the exponential mechanism's P(truth) against n (the guide's figure)",
    "guide_intercept": "centring and the missing intercept (the guide)",
    "guide_real_data": "the guide's real-data walk-through",
    "mcmc_mixing": "MCMC's frequency of the truth against its chain length",
    "noisy_iht_prescreen": "noisy IHT after a pre-screen at p = 1000",
    "prescreen_large_p": "pre-screen time on a p = 1e6 memmap",
    "rank_redundancy": "the redundancy-aware Kendall score: exact laws, tuning and held-out",
    "rank_transforms": "stretched-rank / normal-score transforms: Δ, audit, tuning and held-out",
    "ranks_audit": "exact neighbour audit of the rank score",
    "ranks_combined": "combined rank scores (least squares and Kendall)",
    "ranks_hinge_intercept": "hinge on ranks with and without a constant column",
    "ranks_rho07": "ranks against known bounds and DPKendall at rho = 0.7",
    "ranks_scores": "candidate rank scores: exact laws on real sets and seed 002",
    "review_linear_envelope": "review of the linear envelope's regions",
    "score_rule_sweep": "the default score's ridge and radius rule",
    "seed004_screening": "seed 004's private screening study",
    "tune_noisy_iht": "noisy IHT's tuning",
}
