"""The privacy guarantee of a release, as a record a program can check and compose.

Every function of :mod:`mipdp` that releases something derived from data returns a
result with a :class:`Guarantee`: the privacy parameters ``(epsilon, delta)``, the
neighbouring-dataset notion (:class:`Neighbour`) they are stated under, the mechanism and
its sensitivity, whether the guarantee is a theorem (``proven``) or holds only under a
data-dependent or unverified ``condition``, and whether the release is private at all.
``str(guarantee)`` is the guarantee in words, generated from the record.

>>> g = Guarantee.pure(1.0, "replace-one", "exponential mechanism", sensitivity=0.01)
>>> str(g)
'1-DP (pure) under replace-one neighbours: exponential mechanism (sensitivity 0.01)'
>>> (g + g).epsilon, g.repeat(3).epsilon
(2.0, 3.0)
>>> g.not_private("clipping bounds were read off the data").is_private
False

Composition
-----------
*Basic composition* (``a + b``, :meth:`Guarantee.repeat`, :func:`compose`): running
mechanisms that are ``(ε_i, δ_i)``-DP under the same neighbour notion, each on the same
data and possibly chosen adaptively from the previous outputs, is
``(Σ ε_i, Σ δ_i)``-DP (Dwork & Roth 2014, Theorem 3.16).

*Advanced composition* (:func:`advanced_epsilon`, ``compose(..., delta_slack=δ')``): for
any ``δ' ∈ (0, 1)`` the adaptive composition of ``k`` mechanisms that are
``(ε_i, δ_i)``-DP under the same neighbour notion is ``(ε', δ' + Σ δ_i)``-DP with

    ε' = min( Σ ε_i,  Σ ε_i (e^{ε_i} − 1)/(e^{ε_i} + 1) + √(2 log(1/δ') Σ ε_i²) )

(Kairouz, Oh & Viswanath 2017, Theorem 3.5, the heterogeneous form of Dwork, Rothblum &
Vadhan 2010; ``1 − (1 − δ')Π(1 − δ_i) <= δ' + Σ δ_i`` is used for the δ part). It pays off
for many small-ε parts; for a few parts basic composition is smaller and is kept.

Guarantees under different neighbour notions are never composed (``ValueError``): a
replace-one guarantee says nothing about adding a row, and an add/remove-one guarantee
is one of ``2ε`` for replacing one — a conversion made only explicitly, with
:meth:`Guarantee.as_replace_one`.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

__all__ = ["Neighbour", "Guarantee", "compose", "advanced_epsilon", "parse_neighbour"]


class Neighbour(str, enum.Enum):
    """Neighbouring-dataset notion of a guarantee.

    ``REPLACE_ONE``: the datasets have the same number of rows ``n`` (public) and differ in
    one row.  ``ADD_REMOVE``: one dataset is the other with one row added.
    The members are strings (``Neighbour.REPLACE_ONE == "replace-one"``).
    """

    REPLACE_ONE = "replace-one"
    ADD_REMOVE = "add/remove-one"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, value) -> Neighbour:
        """A :class:`Neighbour` from itself or one of its documented spellings.

        Accepted: ``Neighbour.REPLACE_ONE``, ``"replace_one"``, ``"replace-one"``;
        ``Neighbour.ADD_REMOVE``, ``"add_remove"``, ``"add/remove-one"``, ``"add/remove"``
        (case and surrounding spaces ignored).  This parses a record's field; the
        ``neighbours=`` arguments of the public functions warn on the old spellings
        (:mod:`mipdp._neighbours`).
        """
        from .exceptions import InvalidParameterError
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            key = value.strip().lower()
            if key in _SPELLINGS:
                return _SPELLINGS[key]
        raise InvalidParameterError(
            "The 'neighbours' parameter must be a str among {'replace_one', 'add_remove'} or "
            f"a mipdp.Neighbour. Got {value!r} instead.")


_SPELLINGS = {"replace_one": Neighbour.REPLACE_ONE, "add_remove": Neighbour.ADD_REMOVE,
              "replace-one": Neighbour.REPLACE_ONE, "add/remove-one": Neighbour.ADD_REMOVE,
              "add/remove": Neighbour.ADD_REMOVE}


def parse_neighbour(value) -> Neighbour:
    """Function form of :meth:`Neighbour.parse`."""
    return Neighbour.parse(value)


def _fmt(x: float) -> str:
    return f"{x:g}"


@dataclass(frozen=True)
class Guarantee:
    """A differential-privacy guarantee of one release (immutable).

    Attributes
    ----------
    epsilon : float
        ``ε`` of the whole release.  NaN when the release is not private (see
        :attr:`is_private`): no ``ε`` applies then.
    delta : float
        ``δ`` (0 for pure DP).  NaN when unknown or not applicable.
    neighbour : Neighbour
        Neighbouring-dataset notion.
    mechanism : str
        The mechanism, in words.
    sensitivity : float or None
        Sensitivity of the mechanism's score (``None`` for a composition of several
        mechanisms: see :attr:`parts`).
    condition : str or None
        For a *conditional* guarantee: what ``(ε, δ)`` depends on (a data-dependent or
        unverified condition).  ``None`` otherwise.
    proven : bool
        Whether ``(ε, δ)``-DP is a theorem for this release, whatever the data.
    notes : str
        Further details (noise scale, composition used, ...).
    nominal_epsilon, nominal_delta : float or None
        For a release that is not private: the parameters its noise was calibrated for,
        which do not hold.
    not_private_reason : str or None
        Why the release is not private (e.g. clipping bounds read off the data).
    parts : tuple of Guarantee
        The components of a composition (empty for a single mechanism).
    """

    epsilon: float
    delta: float = 0.0
    neighbour: Neighbour = Neighbour.REPLACE_ONE
    mechanism: str = ""
    sensitivity: float | None = None
    condition: str | None = None
    proven: bool = True
    notes: str = ""
    nominal_epsilon: float | None = None
    nominal_delta: float | None = None
    not_private_reason: str | None = None
    parts: tuple = field(default=(), repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "neighbour", Neighbour.parse(self.neighbour))
        object.__setattr__(self, "epsilon", float(self.epsilon))
        object.__setattr__(self, "delta", float(self.delta))
        if self.not_private_reason is not None or math.isnan(self.epsilon):
            object.__setattr__(self, "proven", False)
        if self.proven and self.condition is not None:
            raise ValueError("Guarantee: a guarantee with a condition cannot be proven")
        if self.proven and not (self.epsilon >= 0 and 0 <= self.delta <= 1):
            raise ValueError(f"Guarantee: a proven guarantee needs epsilon >= 0 and delta in "
                             f"[0, 1], got ({self.epsilon}, {self.delta})")

    # -- constructors ------------------------------------------------------------------
    @classmethod
    def pure(cls, epsilon: float, neighbour, mechanism: str, *,
             sensitivity: float | None = None, notes: str = "") -> Guarantee:
        """A proven ``epsilon``-DP (``δ = 0``) guarantee."""
        return cls(epsilon, 0.0, neighbour, mechanism, sensitivity, notes=notes)

    @classmethod
    def approximate(cls, epsilon: float, delta: float, neighbour, mechanism: str, *,
                    sensitivity: float | None = None, notes: str = "") -> Guarantee:
        """A proven ``(epsilon, delta)``-DP guarantee."""
        return cls(epsilon, delta, neighbour, mechanism, sensitivity, notes=notes)

    @classmethod
    def none(cls, reason: str, neighbour=Neighbour.REPLACE_ONE, mechanism: str = "",
             *, sensitivity: float | None = None) -> Guarantee:
        """No privacy at all (e.g. a non-private baseline, ``eps = inf``)."""
        return cls(math.nan, math.nan, neighbour, mechanism, sensitivity,
                   not_private_reason=reason)

    def not_private(self, reason: str) -> Guarantee:
        """This guarantee voided: the release is **not** private, for ``reason``.

        ``epsilon`` and ``delta`` become NaN (not applicable); the calibrated values are
        kept in ``nominal_epsilon`` / ``nominal_delta``.
        """
        if self.not_private_reason is not None:
            reason = f"{self.not_private_reason}; {reason}"
        nom_e = self.epsilon if self.nominal_epsilon is None else self.nominal_epsilon
        nom_d = self.delta if self.nominal_delta is None else self.nominal_delta
        return replace(self, epsilon=math.nan, delta=math.nan, proven=False, condition=None,
                       nominal_epsilon=nom_e, nominal_delta=nom_d, not_private_reason=reason)

    def conditional(self, condition: str) -> Guarantee:
        """This guarantee, holding only if ``condition`` holds (never proven)."""
        if self.not_private_reason is not None:
            return self
        if self.condition is not None:
            condition = f"{self.condition}; and {condition}"
        return replace(self, proven=False, condition=condition)

    def as_replace_one(self) -> Guarantee:
        """This guarantee restated under replace-one neighbours (explicit conversion).

        Replacing a row is removing it and then adding the new one: two add/remove steps.
        By group privacy an ``(ε, δ)``-DP guarantee under add/remove neighbours is
        ``(2ε, (1 + e^ε) δ)``-DP under replace-one (``2ε``-DP for pure DP; docs/privacy.md,
        "Converting between notions").  A replace-one guarantee is returned unchanged; the
        converse conversion does not exist (a replace-one guarantee says nothing about a
        change of ``n``).  Composed guarantees are converted part by part and recomposed.
        """
        if self.neighbour is Neighbour.REPLACE_ONE:
            return self
        if self.parts:
            out = compose([p.as_replace_one() for p in self.parts])
            return replace(out, notes=_join(out.notes, "converted from add/remove-one"))

        def conv(eps, delta):
            if eps is None:
                return None, delta
            if delta is None or math.isnan(delta):
                return 2.0 * eps, delta
            d = 0.0 if delta == 0 else min(1.0, (1.0 + math.exp(eps)) * delta)
            return 2.0 * eps, d

        eps, delta = conv(self.epsilon, self.delta)
        nom_e, nom_d = conv(self.nominal_epsilon, self.nominal_delta)
        how = ("converted from add/remove-one by group privacy (replace = remove + add): "
               f"{self._params(self.epsilon, self.delta)} add/remove-one => "
               f"{self._params(eps, delta)} replace-one")
        return replace(self, epsilon=eps, delta=delta, neighbour=Neighbour.REPLACE_ONE,
                       nominal_epsilon=nom_e, nominal_delta=nom_d,
                       notes=_join(self.notes, how))

    # -- what a program checks -----------------------------------------------------------
    @property
    def is_private(self) -> bool:
        """True only for a proven guarantee with finite ``ε`` and known ``δ``."""
        return (self.proven and self.not_private_reason is None and math.isfinite(self.epsilon)
                and math.isfinite(self.delta))

    @property
    def is_pure(self) -> bool:
        """Proven with ``δ = 0``."""
        return self.is_private and self.delta == 0.0

    @property
    def status(self) -> str:
        """``"proven"``, ``"conditional"`` or ``"not private"``."""
        if self.is_private:
            return "proven"
        if self.not_private_reason is None and not math.isnan(self.epsilon):
            return "conditional"
        return "not private"

    # -- composition -----------------------------------------------------------------------
    def __add__(self, other: Guarantee) -> Guarantee:
        if not isinstance(other, Guarantee):
            return NotImplemented
        return compose([self, other])

    def repeat(self, k: int) -> Guarantee:
        """``k`` independent runs of this mechanism on the same data (basic composition)."""
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"repeat: k must be a positive integer, got {k!r}")
        if k == 1:
            return self
        nom_e = None if self.nominal_epsilon is None else k * self.nominal_epsilon
        nom_d = None if self.nominal_delta is None else min(1.0, k * self.nominal_delta)
        delta = min(1.0, k * self.delta) if math.isfinite(self.delta) else self.delta
        return replace(self, epsilon=k * self.epsilon, delta=delta,
                       mechanism=f"{k} independent draws of: {self.mechanism}",
                       nominal_epsilon=nom_e, nominal_delta=nom_d, parts=())

    @property
    def epsilon_or_nominal(self) -> float:
        """``epsilon``, or the calibrated ``nominal_epsilon`` when not private."""
        return self.epsilon if self.nominal_epsilon is None else self.nominal_epsilon

    def leaves(self) -> list[Guarantee]:
        """The single-mechanism guarantees this one is composed of (itself if none)."""
        if not self.parts:
            return [self]
        out: list[Guarantee] = []
        for p in self.parts:
            out.extend(p.leaves())
        return out

    # -- text --------------------------------------------------------------------------
    def _params(self, eps: float, delta: float) -> str:
        if delta == 0:
            return f"{_fmt(eps)}-DP"
        if math.isnan(delta):
            return f"({_fmt(eps)}, unknown δ)-DP"
        return f"({_fmt(eps)}, {_fmt(delta)})-DP"

    def _body(self) -> str:
        body = self.mechanism or "composition"
        if self.sensitivity is not None:
            body += f" (sensitivity {self.sensitivity:.6g})"
        if self.notes:
            body += f"; {self.notes}"
        return body

    def __str__(self) -> str:
        nb = f"under {self.neighbour.value} neighbours"
        if self.status == "not private":
            if self.nominal_epsilon is not None and not math.isnan(self.nominal_epsilon):
                cal = (f" The noise was calibrated for "
                       f"{self._params(self.nominal_epsilon, self.nominal_delta or 0.0)} {nb}, "
                       "which does not hold.")
            else:
                cal = ""
            return (f"NOT PRIVATE: {self.not_private_reason or 'no guarantee'}.{cal} "
                    f"Mechanism: {self._body()}")
        if self.status == "conditional":
            return (f"{self._params(self.epsilon, self.delta)} {nb} ONLY IF "
                    f"{self.condition or 'unverified assumptions hold'} (not proven): "
                    f"{self._body()}")
        kind = " (pure)" if self.delta == 0 else ""
        return f"{self._params(self.epsilon, self.delta)}{kind} {nb}: {self._body()}"


def _join(*texts: str, sep: str = "; ") -> str:
    return sep.join(t for t in texts if t)


def advanced_epsilon(epsilons: Sequence[float], delta_slack: float) -> float:
    """``ε'`` of the advanced composition theorem (module docstring), never above ``Σ ε_i``."""
    if not 0.0 < delta_slack < 1.0:
        raise ValueError(f"delta_slack: must lie in (0, 1), got {delta_slack}")
    eps = [float(e) for e in epsilons]
    basic = math.fsum(eps)
    sq = math.fsum(e * e for e in eps)
    drift = math.fsum(e * math.tanh(e / 2.0) for e in eps)   # (e^ε − 1)/(e^ε + 1) = tanh(ε/2)
    return min(basic, drift + math.sqrt(2.0 * math.log(1.0 / delta_slack) * sq))


def compose(guarantees: Iterable[Guarantee], *, delta_slack: float | None = None) -> Guarantee:
    """Compose guarantees of releases on the same data (adaptively chosen allowed).

    Parameters
    ----------
    guarantees : iterable of Guarantee
        All under one neighbour notion (``ValueError`` otherwise).
    delta_slack : float, optional
        ``δ'`` of the advanced composition theorem; ``None`` uses basic composition.
        The result is the smaller of the two bounds.

    Returns
    -------
    Guarantee
        Not private if any part is not private; conditional (with all the conditions)
        if any part is conditional; proven otherwise.
    """
    gs = list(guarantees)
    if not gs:
        raise ValueError("compose: nothing to compose")
    for g in gs:
        if not isinstance(g, Guarantee):
            raise TypeError(f"compose: expected Guarantee records, got {type(g).__name__}")
    neighbours = {g.neighbour for g in gs}
    if len(neighbours) > 1:
        raise ValueError("compose: cannot compose guarantees stated under different neighbour "
                         f"notions ({sorted(n.value for n in neighbours)}); state every release "
                         "under the same one")
    if len(gs) == 1 and delta_slack is None:
        return gs[0]
    nb = gs[0].neighbour
    mech = " + ".join(f"[{g.mechanism}]" for g in gs)
    eps_nominal = [g.epsilon_or_nominal for g in gs]
    delta_nominal = [g.delta if g.nominal_delta is None else g.nominal_delta for g in gs]
    eps = math.fsum(eps_nominal)
    delta = math.fsum(delta_nominal)
    how = "basic composition"
    if delta_slack is not None and all(math.isfinite(e) for e in eps_nominal):
        adv = advanced_epsilon(eps_nominal, delta_slack)
        if adv < eps:
            eps, delta = adv, delta + delta_slack
            how = f"advanced composition with δ' = {_fmt(delta_slack)}"
    delta = min(delta, 1.0) if math.isfinite(delta) else delta
    out = Guarantee(eps, delta, nb, mech, None, notes=f"{len(gs)} releases, {how}",
                    parts=tuple(gs))
    reasons = [g.not_private_reason for g in gs if g.status == "not private"]
    if reasons:
        return out.not_private("; ".join(r or "a part is not private" for r in reasons))
    conditions = [g.condition for g in gs if g.status == "conditional"]
    if conditions:
        return out.conditional("; and ".join(c or "unverified assumptions hold"
                                             for c in conditions))
    return out
