"""Experiments: sweeps of Prastakos et al.'s (2025) studies, metrics, private coefficients, plots.

Every study of the documentation is a named table of ``experiments/studies.toml``
(:func:`~mipdp.experiments.config.load_studies`): a runner study (:func:`run_study`, the
real-data benchmark) or a study module (:mod:`mipdp.experiments.studies` finds the
research modules of a clone's ``experiments/studies/``, which are not installed);
``mipdp experiment report`` (:mod:`mipdp.experiments.report`) runs the missing ones and
rewrites the tables of docs/experiments.md.

Needs the ``experiments`` extra (pandas, matplotlib, joblib; dask/distributed for
``backend="dask"``; pyarrow for Parquet output).
"""

from .coefficients import private_coefficients, split_budget
from .config import StudyConfig, load_config
from .methods import METHODS, get_adapter
from .metrics import SupportLoss, exact_recovery, support_f1, test_mse, utility_loss
from .runner import LossUnavailable, load_table, run_cell, run_study, summarize

__all__ = ["StudyConfig", "load_config", "run_study", "run_cell", "load_table", "summarize",
           "LossUnavailable", "METHODS", "get_adapter", "private_coefficients",
           "split_budget", "SupportLoss", "exact_recovery", "support_f1", "test_mse",
           "utility_loss"]
