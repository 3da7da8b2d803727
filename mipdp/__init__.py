"""mipdp: differentially private best subset selection by mixed-integer optimization.

>>> from mipdp import private_bss
>>> from mipdp.datasets import make_bss_regression
>>> X, y, true_support = make_bss_regression(n=500, p=20, s=3, random_state=0)
>>> res = private_bss(X, y, s=3, eps=1.0, bounds=(0.5, 0.5), random_state=0)
>>> res.support.shape
(3,)
"""

from .exceptions import (AccountantNotVisibleError, BackendUnavailableError, BudgetError,
                         LedgerError,
                         CertificationError, ClippingWarning, TimeLimitError,
                         ConditionalPrivacyWarning, InvalidParameterError, PrivacyLeakWarning,
                         SizeLimitError, SolverError)
from . import comparators
from .coefficients import PrivateCoefficients, private_coefficients
from .accounting import BudgetAccountant
from .guarantee import Guarantee, Neighbour
from .result import SelectionResult
from .private_ranges import PrivateBounds
from .selection import PrivateBSSResult, private_bss
from .selector import PrivateBestSubsetSelector
from ._logging import set_verbosity

__version__ = "0.1.0"

__all__ = ["private_bss", "PrivateBSSResult", "PrivateBestSubsetSelector", "SelectionResult",
           "Guarantee", "Neighbour", "BudgetAccountant", "PrivacyLeakWarning",
           "ConditionalPrivacyWarning", "CertificationError", "TimeLimitError", "BudgetError",
           "SolverError",
           "BackendUnavailableError", "SizeLimitError", "InvalidParameterError",
           "ClippingWarning", "AccountantNotVisibleError", "LedgerError",
           "available_backends", "set_verbosity", "comparators", "private_coefficients",
           "PrivateCoefficients", "PrivateBounds"]


def available_backends() -> list[str]:
    """Names of the MIP backends whose solver package is installed."""
    from mipdp.solvers import available_backends as _ab
    return _ab()
