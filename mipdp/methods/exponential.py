"""``method="exponential"``: the exponential mechanism over all ``C(p, s)`` supports.

``P(S) ∝ exp(-ε L(S) / (2Δ))``, sampled exactly by rejection from lower bounds certified
by outer approximation (:class:`~mipdp.mechanisms.ExponentialMechanismSampler`).
Neighbours: replace-one (``Δ = B/n``) or add/remove (monotone sum-form score, scale
``B/(2n)``; docs/privacy.md).  Pure ε-DP per draw for every dataset: the envelope built
from the data changes only the running time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..enumeration.envelope import build_envelope
from ..guarantee import Guarantee, Neighbour
from ..mechanisms import ExponentialMechanismSampler
from .base import Release, SelectionMethod

__all__ = ["ExponentialMethod", "EXPONENTIAL"]


@dataclass(frozen=True)
class ExponentialMethod(SelectionMethod):
    """The exponential mechanism over all supports (the default method)."""

    def _stage_guarantee(self, eps_select: float, n_draws: int, nb: Neighbour, *,
                         sensitivity, R, delta, eps_test, ptr_passed) -> Guarantee:
        per_draw = Guarantee.pure(eps_select, nb, "exponential mechanism over all C(p, s) "
                                  "supports, sampled exactly by rejection from certified "
                                  "bounds", sensitivity=sensitivity)
        return per_draw.repeat(n_draws)

    def release(self, enum, objective, *, p, s, eps_select, scale, R, delta=None,
                eps_test=None, rng_test=None, report_gap=False) -> Release:
        env = build_envelope(enum, eps_select, scale)
        mech = ExponentialMechanismSampler(objective.values, env.singletons, env.values,
                                           env.regions, p, eps_select, scale,
                                           refine=env.refine, deadline=enum.clock)
        # the envelope's centre: the optimum when the class bounds certified it, else a
        # one-swap local optimum.  The mechanism never needs the optimum certified, so it
        # is not certified only to fill the (non-private) ``candidates`` field; whether it
        # was is ``stats["optimum_certified"]``.
        center, L0 = enum.warm_center()
        enum.stats.optimum_certified = enum.optimum_certified
        enum.stats.certified = True  # every region bound is certified
        return Release(mech, center[None, :], np.array([L0]), self.name)


EXPONENTIAL = ExponentialMethod(
    "exponential", add_remove_factor=0.5,
    summary="exponential mechanism over all supports, sampled exactly (pure ε-DP)")
