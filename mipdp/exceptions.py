"""Exceptions and warnings raised by mipdp.

The bottom layer of the package: it imports nothing from :mod:`mipdp` or
:mod:`mipdp.solvers`, and both import their errors from here (the backends too).
"""

from __future__ import annotations

__all__ = ["PrivacyLeakWarning", "CertificationError", "TimeLimitError", "SolverError",
           "BackendUnavailableError", "SizeLimitError", "SolverTimeLimitError",
           "BudgetError", "ConditionalPrivacyWarning", "InvalidParameterError",
           "AccountantNotVisibleError", "ClippingWarning", "LedgerError",
           "PTRRefusedError", "LowUtilityWarning"]


class SolverError(RuntimeError):
    """A backend failed: it could not start, hit a limit, or returned no usable answer."""


class BackendUnavailableError(SolverError, ImportError):
    """The Python package behind a backend is not installed (or has no licence)."""


class SizeLimitError(SolverError):
    """The model exceeds what the installed solver licence allows."""


class SolverTimeLimitError(SolverError):
    """The solver hit its time limit before certifying optimality or infeasibility.

    Attributes
    ----------
    backend : str
        Name of the backend that stopped.
    limit : float or None
        The time limit of the interrupted :meth:`MIPBackend.solve` call, in seconds.  When
        the caller passes the time left of a larger budget (as the enumeration does) this
        is that remainder, not the user's budget: callers that own the budget should
        report it (and the phase) themselves.
    elapsed : float or None
        Seconds spent in the interrupted call.
    incumbent, bound : float or None
        Best objective found and dual bound when the solver stopped (``None`` if unknown).
    phase : str or None
        Set by callers that know which phase of their algorithm was running.
    """

    def __init__(self, message: str, *, backend: str | None = None, limit: float | None = None,
                 elapsed: float | None = None, incumbent: float | None = None,
                 bound: float | None = None, phase: str | None = None) -> None:
        super().__init__(message)
        self.backend = backend
        self.limit = limit
        self.elapsed = elapsed
        self.incumbent = incumbent
        self.bound = bound
        self.phase = phase


class InvalidParameterError(ValueError, TypeError):
    """A parameter of a public function has a wrong type or value.

    Raised by every public function of mipdp and by the backend adapters, always with a
    message naming the parameter.  It derives from both :class:`ValueError` and
    :class:`TypeError` (as scikit-learn's ``InvalidParameterError`` does) so callers can
    catch either.
    """



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

    # set by :meth:`mipdp.deadline.Deadline.error` (annotations only)
    phase: str
    time_limit: float | None
    elapsed: float


class BudgetError(ValueError):
    """The requested privacy budgets add up to more than the total the user allowed.

    Raised before the data is read (``max_epsilon=``, or an accountant's
    :meth:`~mipdp.accounting.BudgetAccountant.check`), so nothing was computed.
    """


class ConditionalPrivacyWarning(UserWarning):
    """The release is differentially private only under a data-dependent condition."""


class AccountantNotVisibleError(BudgetError):
    """A release would spend budget that an active default accountant cannot see.

    The default accountant of ``with BudgetAccountant(...):`` is per thread (and per
    process).  A release made in another thread while one is active, a release without
    ``accountant=`` in a process started by (or forked from) a process where one is active
    (a pool worker of multiprocessing or joblib), a
    :class:`~mipdp.selector.PrivateBestSubsetSelector` sent to another process (e.g.
    ``GridSearchCV(..., n_jobs=2)``) while one is active, or a copy of an in-memory
    accountant used in another process, raises this instead of releasing uncounted:
    nothing was computed.  Run the fits in the accountant's thread (``n_jobs=1``), or keep
    the budget in a ledger file (``BudgetAccountant(..., path=...)``) and pass it as
    ``accountant=``.
    """


class ClippingWarning(UserWarning):
    """Most of a column of ``X``, or most of ``y``, lies outside the clipping bounds.

    The release is still private (clipping is what makes it so), but a bound far below
    the data's scale throws the signal away: e.g. every ``y`` clipped to ``b_y`` makes the
    selection ignore ``y``.  **Not private**: whether it is issued depends on the data (it
    is a message to the analyst, who holds the data; it is not part of the release).
    """


class LowUtilityWarning(UserWarning):
    """At this number of rows and ``ε`` the bounds-free release is expected to say little.

    Issued by :func:`mipdp.private_bss` with a bounds-free score (``bounds=None``,
    ``"ranks"`` or ``"kendall"``),
    **before the data is read**, from public numbers only: the number of rows ``n``
    (public under replace-one neighbours; under add/remove ``n`` is private and the
    warning is never issued), the selection's ``ε`` per draw and ``s``.  It is the same for
    every data set with that ``n``, so it reveals nothing.  The threshold is where the
    real-data benchmark's bounds-free releases stop beating a uniformly random support by
    test R² (docs/real_data.md, :func:`mipdp.low_utility.low_utility_level`).  The release
    is still made and still private; the message says what helps: more ``ε``, a smaller
    ``s``, or public ranges (``bounds=(b_x, b_y)``).
    """


class LedgerError(BudgetError):
    """A privacy ledger file (``BudgetAccountant(..., path=...)``) cannot be used.

    The file is not a mipdp ledger, is corrupt, holds another budget than the one given,
    or another process kept it locked for longer than the accountant's ``timeout``.
    Raised when the accountant is created or before the data is read (the message names
    the file and what to do): nothing was computed.  A :class:`BudgetError`, so code that
    treats a refused release as "nothing spent" stays correct.
    """


class PTRRefusedError(RuntimeError):
    """A propose-test-release check refused: nothing was released.

    Raised by :func:`mipdp.tukey.tukey_regression` when its noisy test of the models'
    stability fails (or cannot pass with the given number of models).  The refusal itself is
    an output of the private mechanism, so whether it happens may depend on the data only
    as the guarantee allows; when the data was read, the call's whole guarantee is recorded
    with the accountant.  The message says what to change: more rows, a larger ``eps``, a
    larger ``delta`` or fewer columns.
    """
