"""Privacy mechanisms as functions (or small objects) of scores."""

from .exponential import gumbel_argmax, log_comb, log_normalize, uniform_subset
from .mistakes import MistakesMechanism, ptr_distance, ptr_test
from .top_r import TopRMechanism

__all__ = ["TopRMechanism", "MistakesMechanism", "ptr_test", "ptr_distance", "gumbel_argmax",
           "log_comb", "log_normalize", "uniform_subset"]
