"""Privacy mechanisms as functions (or small objects) of scores."""

from .em_rejection import ExponentialMechanismSampler
from .exponential import gumbel_argmax, log_comb, log_normalize, uniform_subset
from .mistakes import MistakesMechanism, ptr_distance, ptr_test
from .permute_flip import PermuteAndFlipSampler, permute_and_flip_log_law
from .top_r import TopRMechanism
from .topk import (
                   canonical_lipschitz_topk,
                   canonical_lipschitz_topk_distribution,
                   gumbel_peeling_topk,
                   gumbel_peeling_topk_distribution,
                   laplace_topk,
)

__all__ = ["ExponentialMechanismSampler", "PermuteAndFlipSampler", "permute_and_flip_log_law",
           "TopRMechanism", "canonical_lipschitz_topk", "canonical_lipschitz_topk_distribution",
           "gumbel_peeling_topk", "gumbel_peeling_topk_distribution", "laplace_topk",
           "MistakesMechanism", "ptr_test", "ptr_distance", "gumbel_argmax",
           "log_comb", "log_normalize", "uniform_subset"]
