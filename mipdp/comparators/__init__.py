"""Comparator selection methods and DP pre-screeners (docs/math.md §4, docs/comparators.md).

``dp_sis`` (Swope et al., 2024), ``dp_kendall`` (Dick et al., 2023), ``two_stage``
(Kifer et al. 2012),
``mcmc`` (Roy & Tewari 2023) and ``noisy_iht`` (Cai, Wang & Zhang 2021), all returning
:class:`mipdp.result.SelectionResult`;
``prescreen`` chooses candidate columns for the MIP methods.
"""

from .dp_sis import dp_sis
from .kendall import dp_kendall, kendall_tau, scaled_kendall
from .mcmc import mcmc
from .noisy_iht import noisy_iht
from .registry import PRESCREENERS, get_method, list_methods, prescreen
from .two_stage import two_stage

__all__ = ["dp_sis", "dp_kendall", "kendall_tau", "scaled_kendall", "two_stage", "mcmc",
           "noisy_iht", "get_method", "list_methods", "prescreen", "PRESCREENERS"]
