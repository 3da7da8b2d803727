"""``method="exponential"``: the exponential mechanism over all ``C(p, s)`` supports.

``P(S) ∝ exp(-ε L(S) / (2Δ))``, sampled exactly by rejection from lower bounds certified
by outer approximation (:class:`~mipdp.mechanisms.ExponentialMechanismSampler`).
Neighbours: replace-one (``Δ = B/n``) or add/remove (monotone sum-form score, scale
``B/(2n)``; docs/privacy.md).  Pure ε-DP per draw for every dataset: the envelope built
from the data changes only the running time.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..guarantee import Guarantee, Neighbour
from ..mechanisms import ExponentialMechanismSampler
from .base import EnvelopeMethod

__all__ = ["ExponentialMethod", "EXPONENTIAL"]


@dataclass(frozen=True)
class ExponentialMethod(EnvelopeMethod):
    """The exponential mechanism over all supports (the default method)."""

    sampler = ExponentialMechanismSampler

    def _sampler_options(self, env) -> dict:
        # regions may sample from their best cut's linear envelope
        return {"cuts": env.cuts}

    def _stage_guarantee(self, eps_select: float, n_draws: int, nb: Neighbour, *,
                         sensitivity, R, delta, eps_test, ptr_passed) -> Guarantee:
        per_draw = Guarantee.pure(eps_select, nb, "exponential mechanism over all C(p, s) "
                                  "supports, sampled exactly by rejection from certified "
                                  "bounds", sensitivity=sensitivity)
        return per_draw.repeat(n_draws)


EXPONENTIAL = ExponentialMethod(
    "exponential", add_remove_factor=0.5,
    summary="exponential mechanism over all supports, sampled exactly (pure ε-DP)")
