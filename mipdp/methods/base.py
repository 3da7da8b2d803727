"""What a selection method of :func:`mipdp.private_bss` is: one object, one file.

A method (``method="exponential"``, ``"top_r"``, ...) is a :class:`SelectionMethod`: its
``name``, the factor of its noise scale under add/remove neighbours, its
:meth:`~SelectionMethod.guarantee` computed from the arguments alone (OpenDP's
measurement with its privacy map: the accountant checks it before the data is read), and
its :meth:`~SelectionMethod.release`, which builds the mechanism on an enumerator of the
data.  :mod:`mipdp.methods.registry` lists them; the parameter table, the budget planner,
the command line, the experiments and the selector all read that list.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from .._neighbours import neighbours_argument
from ..enumeration.envelope import build_envelope
from ..guarantee import Guarantee, Neighbour

__all__ = ["SelectionMethod", "EnvelopeMethod", "Release", "as_neighbour"]


@dataclass(frozen=True)
class Release:
    """What :meth:`SelectionMethod.release` built on the data (**not private**).

    Attributes
    ----------
    mechanism : object
        The sampler (``sample(rng, size)``, ``log_probability(S)``,
        ``log_probability_bounds(S)``); :func:`~mipdp.private_bss` draws from it.
    candidates, candidate_values : ndarray
        The supports the mechanism was built around (the optimum, the top-R set) and
        their objectives, in the mechanism's column indices.
    method_run : str
        The method that actually ran (the mistakes sampler's guard may fall back to
        ``"top_r"``).
    ptr_passed : bool or None
        Outcome of a propose-test-release test (``None``: no test).
    info : dict
        Entries added to ``result.info`` (data-dependent ones are labelled
        ``_not_private``).
    R : int or None
        Size of the top-R set when the mechanism is a top-R sampler.
    """

    mechanism: Any   # a sampler (sample, log_probability, log_probability_bounds)
    candidates: np.ndarray
    candidate_values: np.ndarray
    method_run: str
    ptr_passed: bool | None = None
    info: dict = field(default_factory=dict)
    R: int | None = None

    def sampler_stats(self) -> dict | None:
        """The sampler's own statistics (proposals, regions...) if it keeps any."""
        stats = getattr(self.mechanism, "stats", None)
        return stats() if callable(stats) else None


def as_neighbour(neighbour) -> Neighbour:
    """``"replace_one"`` / ``"add_remove"`` (``private_bss``'s spellings) or any
    :meth:`Neighbour.parse` spelling, as a :class:`~mipdp.guarantee.Neighbour`."""
    if neighbour == "add_remove":
        return Neighbour.ADD_REMOVE
    if neighbour == "replace_one":
        return Neighbour.REPLACE_ONE
    return Neighbour.parse(neighbour)


def _add_remove_note(sensitivity: float | None) -> str:
    base = "monotone sum-form score F(S) = n L(S): weights exp(-eps F(S) / B)"
    return base if sensitivity is None else f"{base}, B = {sensitivity:.6g}"


@dataclass(frozen=True)
class SelectionMethod:
    """One selection method of :func:`mipdp.private_bss` (subclass it, one file each).

    Subclasses implement :meth:`_stage_guarantee` (the guarantee of ``n_draws`` draws
    under one neighbour notion, from the arguments alone) and :meth:`release`.

    Attributes
    ----------
    name : str
        The ``method=`` string.
    add_remove_factor : float or None
        Factor applied to the replace-one noise scale ``Δ = B/n`` under
        ``neighbours="add_remove"`` (``0.5``: the monotone factor, proven per method in
        docs/privacy.md); ``None``: the method refuses add/remove neighbours.
    takes_delta : bool
        Whether ``delta=`` / ``eps_test=`` (a propose-test-release guard) apply.
    summary : str
        One line for ``--help`` texts and tables.
    """

    name: str
    add_remove_factor: float | None = None   # opt in, with a proof (docs/privacy.md)
    takes_delta: bool = False
    summary: str = ""

    # -- privacy map: from the arguments alone ---------------------------------------------
    def once_epsilon(self, eps_select: float, *, delta: float | None = None,
                     eps_test: float | None = None) -> float:
        """ε the method spends once per call besides its draws (a guard's test); 0 here."""
        return 0.0

    @neighbours_argument
    def guarantee(self, eps_select: float, n_draws: int = 1,
                  neighbours: str | Neighbour = "replace_one", *,
                  sensitivity: float | None = None, R: int | None = None,
                  delta: float | None = None, eps_test: float | None = None,
                  ptr_passed: bool | None = None) -> Guarantee:
        """Guarantee of ``n_draws`` draws with ``eps_select`` each, from the arguments alone.

        Parameters
        ----------
        eps_select : float
            ε of one draw (after any pre-screen's share).
        n_draws : int
            Independent draws (basic composition).
        neighbours : {"replace_one", "add_remove"} or Neighbour
            (The old name ``neighbour=`` still works, with a :class:`FutureWarning`.)
        sensitivity : float, optional
            ``Δ = B/n`` (replace-one) or ``B`` (add/remove), when known.
        R, delta, eps_test, ptr_passed
            The method's own arguments (ignored by methods that do not take them).

        Returns
        -------
        Guarantee
            Under add/remove it notes the monotone sum-form score it relies on.
        """
        nb = as_neighbour(neighbours)
        stage = self._stage_guarantee(float(eps_select), int(n_draws), nb,
                                      sensitivity=sensitivity, R=R, delta=delta,
                                      eps_test=eps_test, ptr_passed=ptr_passed)
        if nb is Neighbour.ADD_REMOVE:
            mono = _add_remove_note(sensitivity)
            stage = replace(stage, notes=f"{stage.notes}; {mono}" if stage.notes else mono)
        return stage

    def _stage_guarantee(self, eps_select: float, n_draws: int, nb: Neighbour, *,
                         sensitivity, R, delta, eps_test, ptr_passed) -> Guarantee:
        raise NotImplementedError

    # -- the release on the data -------------------------------------------------------------
    def release(self, enum, objective, *, p: int, s: int, eps_select: float, scale: float,
                R: int, delta: float | None = None, eps_test: float | None = None,
                rng_test=None, report_gap: bool = False) -> Release:
        """Build the mechanism on the data.

        Parameters
        ----------
        enum : SupportEnumerator
            The certified enumerator of the (clipped) data's objective.
        objective : object
            The bound objective (``objective.values(supports)``).
        p, s : int
            Columns the mechanism works on, support size.
        eps_select : float
            ε of one draw.
        scale : float
            The noise scale ``Δ`` (``B/n``, or ``B/(2n)`` under add/remove).
        R : int
            Size of a top-R set (``1 + s(p - s)`` unless given).
        delta, eps_test : float, optional
            A propose-test-release guard's parameters.
        rng_test : numpy.random.Generator
            The stream of a guard's test (never the draws' stream).
        report_gap : bool
            Whether to report data-dependent diagnostics (labelled ``_not_private``).
        """
        raise NotImplementedError


@dataclass(frozen=True)
class EnvelopeMethod(SelectionMethod):
    """A method whose sampler draws over every support from the certified envelope.

    Subclasses name their sampler class (``sampler``): the exponential mechanism and
    permute-and-flip build the same envelope and differ only in how they sample it.
    """

    sampler: ClassVar[type]

    def _sampler_options(self, env) -> dict:
        """Keyword arguments of the sampler beyond the envelope's (default: none)."""
        return {}

    def release(self, enum, objective, *, p, s, eps_select, scale, R, delta=None,
                eps_test=None, rng_test=None, report_gap=False) -> Release:
        env = build_envelope(enum, eps_select, scale)
        mech = self.sampler(objective.values, env.singletons, env.values, env.regions, p,
                            eps_select, scale, refine=env.refine, deadline=enum.clock,
                            **self._sampler_options(env))
        # the envelope's centre: the optimum when the class bounds certified it, else a
        # one-swap local optimum.  The mechanism never needs the optimum certified, so it
        # is not certified only to fill the (non-private) ``candidates`` field; whether it
        # was is ``stats["optimum_certified"]``.
        center, L0 = enum.warm_center()
        enum.stats.optimum_certified = enum.optimum_certified
        enum.stats.certified = True  # every region bound is certified
        return Release(mech, center[None, :], np.array([L0]), self.name)
