"""Exceptions and warnings raised by mipdp."""

from solvers.base import (BackendUnavailableError, InvalidParameterError, SizeLimitError,
                          SolverError, SolverTimeLimitError)

__all__ = ["PrivacyLeakWarning", "CertificationError", "TimeLimitError", "SolverError",
           "BackendUnavailableError", "SizeLimitError", "SolverTimeLimitError",
           "BudgetError", "ConditionalPrivacyWarning", "InvalidParameterError"]


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


class TimeLimitError(CertificationError):
    """The call's ``time_limit`` ran out before the release was certified (or drawn).

    A :class:`CertificationError`: nothing was released.  Raised instead of the plain
    class when the time limit, not a failed certificate, is the reason.
    """


class BudgetError(ValueError):
    """The requested privacy budgets add up to more than the total the user allowed.

    Raised before the data is read (``max_epsilon=``, or an accountant's
    :meth:`~mipdp.accounting.BudgetAccountant.check`), so nothing was computed.
    """


class ConditionalPrivacyWarning(UserWarning):
    """The release is differentially private only under a data-dependent condition."""
