"""Exceptions and warnings raised by mipdp."""

from solvers.base import (BackendUnavailableError, SizeLimitError, SolverError,
                          SolverTimeLimitError)

__all__ = ["PrivacyLeakWarning", "CertificationError", "SolverError",
           "BackendUnavailableError", "SizeLimitError", "SolverTimeLimitError",
           "BudgetError", "ConditionalPrivacyWarning"]


class PrivacyLeakWarning(UserWarning):
    """A parameter was derived from the data, so the stated guarantee does not cover it.

    Raised, as in diffprivlib, when clipping bounds are not given and are read off the
    data: the release is then *not* differentially private with respect to them.
    """


class CertificationError(RuntimeError):
    """The enumeration could not certify that its candidate set is exactly the best one.

    The samplers' privacy proof needs the exact top supports, so mipdp refuses to
    release anything rather than sample from an uncertified set.
    """


class BudgetError(ValueError):
    """The requested privacy budgets add up to more than the total the user allowed."""


class ConditionalPrivacyWarning(UserWarning):
    """The release is differentially private only under a data-dependent condition."""
