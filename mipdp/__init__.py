"""mipdp: differentially private best subset selection by mixed-integer optimization.

>>> from mipdp import private_bss
>>> from mipdp.datasets import make_bss_regression
>>> X, y, true_support = make_bss_regression(n=500, p=20, s=3, random_state=0)
>>> res = private_bss(X, y, s=3, eps=1.0, bounds=(0.5, 0.5), random_state=0)
>>> res.support.shape
(3,)

``import mipdp`` loads only the exceptions; every other public name is imported on first
use (PEP 562 module ``__getattr__``), so that scikit-learn, scipy, pandas and the solvers
are not imported by ``import mipdp`` itself (tests/mipdp/test_import_light.py).
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING

from .exceptions import (
    AccountantNotVisibleError,
    BackendUnavailableError,
    BudgetError,
    CertificationError,
    ClippingWarning,
    ConditionalPrivacyWarning,
    InvalidParameterError,
    LedgerError,
    LowUtilityWarning,
    PrivacyLeakWarning,
    PTRRefusedError,
    SizeLimitError,
    SolverError,
    TimeLimitError,
)

__version__ = "0.1.0"

__all__ = ["private_bss", "PrivateBSSResult", "PrivateBestSubsetSelector", "SelectionResult",
           "Guarantee", "Neighbour", "BudgetAccountant", "PrivacyLeakWarning",
           "ConditionalPrivacyWarning", "CertificationError", "TimeLimitError", "BudgetError",
           "SolverError",
           "BackendUnavailableError", "SizeLimitError", "InvalidParameterError",
           "ClippingWarning", "AccountantNotVisibleError", "LedgerError", "LowUtilityWarning",
           "available_backends", "set_verbosity", "comparators", "private_coefficients",
           "PrivateCoefficients", "PrivateBounds", "PTRRefusedError", "tukey_regression",
           "TukeyResult", "private_n_lower_bound", "PrivateSparseRegression",
           "PrivateSparseClassifier"]

#: public name -> module that defines it (imported on first access)
_LAZY = {
    "private_bss": ".selection", "PrivateBSSResult": ".selection",
    "PrivateBestSubsetSelector": ".selector", "SelectionResult": ".result",
    "Guarantee": ".guarantee", "Neighbour": ".guarantee", "BudgetAccountant": ".accounting",
    "PrivateBounds": ".private_ranges", "private_coefficients": ".coefficients",
    "PrivateCoefficients": ".coefficients", "set_verbosity": "._logging",
    "tukey_regression": ".tukey", "TukeyResult": ".tukey", "private_n_lower_bound": ".tukey",
    "PrivateSparseRegression": ".estimators", "PrivateSparseClassifier": ".estimators",
}
#: public subpackages imported on first access (any other submodule too, as ``mipdp.x``
#: worked when ``import mipdp`` imported everything)
_SUBMODULES = {"comparators", "solvers"}

if TYPE_CHECKING:   # for type checkers and IDEs: the names as eager imports
    from . import comparators
    from ._logging import set_verbosity
    from .accounting import BudgetAccountant
    from .coefficients import PrivateCoefficients, private_coefficients
    from .estimators import PrivateSparseClassifier, PrivateSparseRegression
    from .guarantee import Guarantee, Neighbour
    from .private_ranges import PrivateBounds
    from .result import SelectionResult
    from .selection import PrivateBSSResult, private_bss
    from .selector import PrivateBestSubsetSelector
    from .tukey import TukeyResult, private_n_lower_bound, tukey_regression


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    elif name in _SUBMODULES or (not name.startswith("__")
                                 and importlib.util.find_spec(f"{__name__}.{name}")):
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value          # later accesses skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def available_backends() -> list[str]:
    """Names of the MIP backends whose solver package is installed."""
    from mipdp.solvers import available_backends as _ab
    return _ab()
