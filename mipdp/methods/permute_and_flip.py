"""``method="permute_and_flip"``: permute-and-flip over all ``C(p, s)`` supports.

The release is ``argmax_S -ε L(S) / (2Δ) + E_S`` with ``E_S`` i.i.d. Exp(1)
(report-noisy-max with exponential noise, McKenna & Sheldon 2020), sampled exactly by
best-first search over the certified envelope, or region by region by thinning over the
cuts' linear envelopes (:class:`~mipdp.mechanisms.PermuteAndFlipSampler`).  Neighbours: replace-one
(``Δ = B/n``) or add/remove (monotone sum-form score, scale ``B/(2n)``; docs/privacy.md).
Pure ε-DP per draw for every dataset.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..guarantee import Guarantee, Neighbour
from ..mechanisms.permute_flip import PermuteAndFlipSampler
from .base import EnvelopeMethod

__all__ = ["PermuteAndFlipMethod", "PERMUTE_AND_FLIP"]


@dataclass(frozen=True)
class PermuteAndFlipMethod(EnvelopeMethod):
    """Permute-and-flip over all supports, sampled exactly."""

    sampler = PermuteAndFlipSampler

    def _sampler_options(self, env) -> dict:
        # regions with a linear envelope may be searched by thinning (only the time changes);
        # the split decision weighs modelled costs (the same draws in every run)
        return {"cuts": env.cuts, "reveal_cost": env.reveal_cost}

    def _stage_guarantee(self, eps_select: float, n_draws: int, nb: Neighbour, *,
                         sensitivity, R, delta, eps_test, ptr_passed) -> Guarantee:
        per_draw = Guarantee.pure(eps_select, nb, "permute-and-flip (report-noisy-max with "
                                  "exponential noise) over all C(p, s) supports, sampled "
                                  "exactly by best-first search over certified bounds",
                                  sensitivity=sensitivity)
        return per_draw.repeat(n_draws)


PERMUTE_AND_FLIP = PermuteAndFlipMethod(
    "permute_and_flip", add_remove_factor=0.5,
    summary="permute-and-flip over all supports, sampled exactly (pure ε-DP)")
