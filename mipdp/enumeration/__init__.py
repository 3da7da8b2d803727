"""Exact enumeration of the best supports by outer approximation."""

from .enumerator import MistakeScores, SupportEnumerator, TopSupports, default_R
from .master import MasterProblem
from .warm_start import iht_support, local_search

__all__ = ["SupportEnumerator", "TopSupports", "MistakeScores", "default_R", "MasterProblem",
           "iht_support", "local_search"]
