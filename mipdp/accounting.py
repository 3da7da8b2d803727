"""A privacy budget accountant across calls (``accountant=`` on every public function).

The interface follows diffprivlib's ``BudgetAccountant`` (total budget ``(epsilon, delta)``,
:meth:`~BudgetAccountant.check`, :meth:`~BudgetAccountant.spend`,
:meth:`~BudgetAccountant.remaining`, :meth:`~BudgetAccountant.total`, a default accountant
set with ``with accountant:`` or :meth:`~BudgetAccountant.set_default`), but it composes
the :class:`~mipdp.guarantee.Guarantee` records of the releases rather than bare
``(ε, δ)`` pairs, so it also knows their neighbour notion and whether they are proven.

How a public function uses it
-----------------------------
1. Before the data is read, the function computes the guarantee it *plans* to give from
   its arguments alone (budget, number of draws, pre-screen, whether clipping bounds were
   given, ...) and calls :meth:`BudgetAccountant.check`.  A release that would exceed the
   budget, is not private, is only conditionally private (unless the accountant allows
   that) or is stated under another neighbour notion raises
   :class:`~mipdp.exceptions.BudgetError` there: the data has not been touched.
2. After the release, its actual guarantee is recorded with :meth:`spend`.

A release that is *not private* (e.g. bounds read off the data) is never counted as
private: an accountant with a finite budget refuses it; one with an infinite budget
records it and its :meth:`total` then says "not private".

Outside a ``with accountant:`` block and without ``accountant=``, nothing is recorded
(diffprivlib keeps an always-on global accountant; mipdp does not keep global state).

>>> from mipdp.accounting import BudgetAccountant
>>> acc = BudgetAccountant(epsilon=2.0)
>>> acc.spend(1.5, 0.0)
>>> acc.remaining()
(0.5, 0.0)
"""

from __future__ import annotations

import math
import os
import threading
from typing import Any, Callable

from .exceptions import BudgetError
from .guarantee import Guarantee, Neighbour, compose

__all__ = ["BudgetAccountant", "account", "check_release", "record_release", "NOT_RECORDED",
           "accountant_active_in_process"]

_REL_TOL = 1e-12
_local = threading.local()
#: per thread id, how many default accountants that thread has active (process-wide, so a
#: call in another thread can tell that an accountant it cannot see is active)
_active_lock = threading.Lock()
_active: dict[int, int] = {}


def _default_stack() -> list:
    if not hasattr(_local, "stack"):
        _local.stack = []
    return _local.stack


def _note_active(change: int) -> None:
    tid = threading.get_ident()
    with _active_lock:
        count = _active.get(tid, 0) + change
        if count > 0:
            _active[tid] = count
        else:
            _active.pop(tid, None)


def accountant_active_in_process() -> bool:
    """Whether any thread of this process has a default accountant active.

    The default accountant (``with BudgetAccountant(...):``) is per thread; this lets a
    release in another thread, or an estimator about to be sent to another process,
    notice that an accountant exists that would not see its spend.
    """
    with _active_lock:
        return bool(_active)


def _check_visible() -> None:
    """Refuse a release that would silently escape an active default accountant."""
    if _default_stack() or not accountant_active_in_process():
        return
    from .exceptions import AccountantNotVisibleError
    raise AccountantNotVisibleError(
        "accountant: a default accountant (with BudgetAccountant(...):) is active in another "
        "thread of this process, but not in the thread making this release, so its spend "
        "would not be recorded. Make the release in the thread that entered the 'with' "
        "block (e.g. model selection with n_jobs=1), or pass accountant= explicitly. "
        "Nothing was computed.")


class BudgetAccountant:
    """Track and limit the privacy spent by a sequence of releases on the same data.

    Parameters
    ----------
    epsilon : float, default inf
        Total ``ε`` the releases may spend together.
    delta : float, default 0.0
        Total ``δ`` (0: only pure-DP releases fit, unless ``delta_slack`` buys some).
    neighbour : {"replace-one", "add/remove"} or Neighbour, optional
        Neighbour notion of the budget.  Default: that of the first release.  Releases
        under another notion are refused (guarantees under different notions do not
        compose).
    delta_slack : float, optional
        If given, the total is the smaller of basic composition and the advanced
        composition theorem with this ``δ'`` (added to the spent ``δ``); see
        :mod:`mipdp.guarantee`.  Useful for many approximate-DP releases (DP Frank-Wolfe,
        the screening rules, propose-test-release).
    allow_conditional : bool, default False
        Whether releases whose guarantee is only conditional (``mistakes`` without
        propose-test-release, MCMC, the seeds' calibrations) may be recorded; the total
        is then conditional too.  Releases that are not private at all are refused by any
        accountant with a finite budget.
    spent : list of Guarantee or (epsilon, delta), optional
        Releases already made (e.g. ``other.spent``).

    Attributes
    ----------
    spent : list of Guarantee
        One record per release, in order.
    """

    def __init__(self, epsilon: float = math.inf, delta: float = 0.0, *, neighbour=None,
                 delta_slack: float | None = None, allow_conditional: bool = False,
                 spent=None) -> None:
        from ._param_validation import (EPSILON_OR_INF, Interval, validate_parameter_constraints)
        from numbers import Real
        validate_parameter_constraints(
            {"epsilon": EPSILON_OR_INF, "delta": [Interval(Real, 0, 1, closed="left")],
             "neighbour": [None, "neighbour"], "delta_slack": [None, Interval(Real, 0, 1,
                                                                              closed="neither")],
             "allow_conditional": ["boolean"]},
            {"epsilon": epsilon, "delta": delta, "neighbour": neighbour,
             "delta_slack": delta_slack, "allow_conditional": allow_conditional},
            "BudgetAccountant")
        self.epsilon = float(epsilon)
        self.delta = float(delta)
        self.neighbour = None if neighbour is None else Neighbour.parse(neighbour)
        self.delta_slack = delta_slack
        self.allow_conditional = bool(allow_conditional)
        self.spent: list[Guarantee] = []
        for item in spent or []:
            self.spend(item)

    # -- records -----------------------------------------------------------------------
    def _as_guarantee(self, epsilon, delta) -> Guarantee:
        if isinstance(epsilon, Guarantee):
            return epsilon
        nb = self.neighbour or Neighbour.REPLACE_ONE
        return Guarantee.approximate(float(epsilon), float(delta), nb, "user-declared spend")

    def _composed(self, records: list[Guarantee]) -> Guarantee | None:
        return compose(records, delta_slack=self.delta_slack) if records else None

    @property
    def finite(self) -> bool:
        """Whether the accountant has a finite budget."""
        return math.isfinite(self.epsilon)

    def total(self) -> Guarantee:
        """The guarantee of everything spent so far.

        Before the first release it is a zero guarantee: ``0-DP (pure)`` with
        ``epsilon == 0.0`` and ``delta == 0.0`` (under the accountant's ``neighbour``,
        replace-one if none was given), so ``acc.total().epsilon`` is always a number.
        """
        if not self.spent:
            return Guarantee.pure(0.0, self.neighbour or Neighbour.REPLACE_ONE,
                                  "nothing spent yet (0 releases)")
        total = self._composed(self.spent)
        assert total is not None  # records are not empty
        return total

    def __len__(self) -> int:
        return len(self.spent)

    # -- the budget ----------------------------------------------------------------------
    def check(self, epsilon, delta: float = 0.0) -> Guarantee:
        """Raise :class:`~mipdp.exceptions.BudgetError` unless this release may be made.

        Parameters
        ----------
        epsilon : float or Guarantee
            The planned release's guarantee (or its ``ε``).
        delta : float, default 0
            Its ``δ`` when ``epsilon`` is a number.

        Returns
        -------
        Guarantee
            The composed total the accountant would report after this release.
        """
        g = self._as_guarantee(epsilon, delta)
        nb = self.neighbour or (self.spent[0].neighbour if self.spent else None)
        if nb is not None and g.neighbour != nb:
            raise BudgetError(f"accountant: this release is stated under {g.neighbour.value} "
                              f"neighbours but the budget is under {nb.value} neighbours; "
                              "guarantees under different notions do not compose. Pass "
                              f"neighbour='{nb.value}' to the call (neighbours="
                              f"'{'add_remove' if nb is Neighbour.ADD_REMOVE else 'replace_one'}'"
                              " for private_bss and private_coefficients).")
        if g.status == "not private" and self.finite:
            raise BudgetError(f"accountant: this release is not private "
                              f"({g.not_private_reason}); it cannot be counted against a "
                              "privacy budget. Nothing was computed.")
        if g.status == "conditional" and self.finite and not self.allow_conditional:
            raise BudgetError(f"accountant: this release is only conditionally private "
                              f"({g.condition}); pass allow_conditional=True to the "
                              "accountant to record it anyway. Nothing was computed.")
        total = self._composed(self.spent + [g])
        assert total is not None  # records are not empty
        if self.finite and (total.epsilon_or_nominal > self.epsilon * (1 + _REL_TOL)
                            or _delta_of(total) > self.delta * (1 + _REL_TOL) + 1e-300):
            spent = self._composed(self.spent)
            spent_txt = ("nothing yet" if spent is None else
                         f"epsilon = {spent.epsilon_or_nominal:g}, delta = {_delta_of(spent):g}")
            raise BudgetError(
                f"accountant: this release (epsilon = {g.epsilon_or_nominal:g}, delta = "
                f"{_delta_of(g):g}) would bring the total to epsilon = "
                f"{total.epsilon_or_nominal:g}, delta = {_delta_of(total):g}, over the budget "
                f"(epsilon = {self.epsilon:g}, delta = {self.delta:g}; spent {spent_txt} in "
                f"{len(self.spent)} release(s)). Nothing was computed.")
        return total

    def spend(self, epsilon, delta: float = 0.0) -> None:
        """Record a release (checked first, so a spend never exceeds the budget)."""
        g = self._as_guarantee(epsilon, delta)
        self.check(g)
        if self.neighbour is None and not self.spent:
            pass  # the first release fixes the notion through self.spent[0]
        self.spent.append(g)

    def remaining(self, k: int = 1) -> tuple[float, float]:
        """``(ε, δ)`` that each of ``k`` further pure/approximate releases may spend.

        With basic composition this is ``((ε_budget − ε_spent)/k, (δ_budget − δ_spent)/k)``;
        with ``delta_slack`` the ``ε`` is found by bisection on the composed total (as
        diffprivlib does).
        """
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            from ._param_validation import InvalidParameterError
            raise InvalidParameterError(f"The 'k' parameter of remaining must be an int in the "
                                        f"range [1, inf). Got {k!r} instead.")
        total = self._composed(self.spent)
        eps_spent = 0.0 if total is None else total.epsilon_or_nominal
        delta_spent = 0.0 if total is None else _delta_of(total)
        if total is not None and total.status == "not private":
            return (0.0, 0.0) if self.finite else (math.inf, max(0.0, self.delta))
        d_left = max(0.0, self.delta - delta_spent) / k
        if not self.finite:
            return math.inf, d_left
        if self.delta_slack is None:
            return max(0.0, self.epsilon - eps_spent) / k, d_left
        nb = self.neighbour or (self.spent[0].neighbour if self.spent else Neighbour.REPLACE_ONE)
        lo, hi = 0.0, self.epsilon
        for _ in range(100):
            mid = 0.5 * (lo + hi)
            probe = self._composed(self.spent + [Guarantee.pure(mid, nb, "probe")] * k)
            assert probe is not None  # k >= 1 records
            if probe.epsilon <= self.epsilon:
                lo = mid
            else:
                hi = mid
        return lo, d_left

    # -- default accountant ------------------------------------------------------------------
    def set_default(self) -> "BudgetAccountant":
        """Make this the accountant used by calls without ``accountant=`` (this thread)."""
        _default_stack().append(self)
        _local.pid = os.getpid()       # a forked child inherits the stack, not the owner
        _note_active(+1)
        return self

    @staticmethod
    def pop_default() -> "BudgetAccountant | None":
        """Remove and return the current default accountant (``None`` if there is none)."""
        stack = _default_stack()
        if not stack:
            return None
        _note_active(-1)
        return stack.pop()

    @staticmethod
    def load_default(accountant: "BudgetAccountant | None" = None) -> "BudgetAccountant | None":
        """``accountant`` if given, else the current default (``None``: no accounting)."""
        if accountant is not None:
            return accountant
        stack = _default_stack()
        if stack and getattr(_local, "pid", None) != os.getpid():
            # a process forked while the accountant was active (multiprocessing's "fork"
            # start method): this is a copy, and what it records never reaches the parent
            from .exceptions import AccountantNotVisibleError
            raise AccountantNotVisibleError(
                "accountant: this process was forked from the one whose default accountant "
                "(with BudgetAccountant(...):) is active; a release here would be recorded "
                "only in this process's copy. Make the release in the parent (e.g. model "
                "selection with n_jobs=1). Nothing was computed.")
        return stack[-1] if stack else None

    def __enter__(self) -> "BudgetAccountant":
        return self.set_default()

    def __exit__(self, *exc) -> None:
        stack = _default_stack()
        if stack and stack[-1] is self:
            stack.pop()
            _note_active(-1)

    def __repr__(self) -> str:
        total = self._composed(self.spent)
        spent = "nothing" if total is None else str(total.status) + (
            f" epsilon={total.epsilon_or_nominal:g}, delta={_delta_of(total):g}")
        return (f"BudgetAccountant(epsilon={self.epsilon:g}, delta={self.delta:g}, "
                f"releases={len(self.spent)}, spent: {spent})")


class _NotRecorded(BudgetAccountant):
    """Used for calls nested inside another public call, which accounts for them."""

    def check(self, epsilon, delta: float = 0.0):
        return self._as_guarantee(epsilon, delta)

    def spend(self, epsilon, delta: float = 0.0) -> None:
        return None


#: Pass as ``accountant=`` to a nested call whose budget the outer call accounts for.
NOT_RECORDED = _NotRecorded()


def _delta_of(g: Guarantee) -> float:
    d = g.delta if g.nominal_delta is None else g.nominal_delta
    return 0.0 if math.isnan(d) else d


def account(accountant: BudgetAccountant | None, planned: Guarantee,
            release: Callable[[], Any]):
    """Check ``planned`` with the accountant (before the data is read), run ``release``, and
    record the result's actual guarantee.

    ``release`` is a function of no argument that reads the data and returns a result with
    a ``guarantee``.  The recorded guarantee is the result's, which must not claim less
    than ``planned`` (checked).
    """
    if accountant is None:
        _check_visible()
    acc = BudgetAccountant.load_default(accountant)
    if acc is not None:
        acc.check(planned)
    result = release()
    if acc is not None:
        actual = result.guarantee
        if (actual.is_private and planned.is_private
                and actual.epsilon > planned.epsilon * (1 + 1e-9) + 1e-12):
            raise RuntimeError(f"internal error: the release spent epsilon = {actual.epsilon} "
                               f"> planned {planned.epsilon}")  # pragma: no cover
        acc.spend(actual)
    return result


def check_release(accountant: BudgetAccountant | None, planned: Guarantee):
    """Step 1 of :func:`account`: the accountant to use (or ``None``), after checking ``planned``.

    Call it before the data is read.  Raises
    :class:`~mipdp.exceptions.AccountantNotVisibleError` when no accountant is given, this
    thread has no default one, but another thread of the process has: the release would
    escape it.
    """
    if accountant is None:
        _check_visible()
    acc = BudgetAccountant.load_default(accountant)
    if acc is not None:
        acc.check(planned)
    return acc


def record_release(acc: BudgetAccountant | None, result):
    """Step 2 of :func:`account`: record ``result.guarantee``; return ``result``."""
    if acc is not None:
        acc.spend(result.guarantee)
    return result
