"""``method="top_r"``: the exponential mechanism on the objective truncated at the top ``R``.

The ``R`` best supports (``R`` fixed without the data, default ``1 + s(p - s)``) keep
their scores, every other support the ``R``-th best one
(:class:`~mipdp.mechanisms.TopRMechanism`).  Neighbours: replace-one (``Δ = B/n``) or
add/remove (the truncated sum-form score stays monotone, scale ``B/(2n)``;
docs/privacy.md).  Pure ε-DP per draw for any fixed ``R``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..guarantee import Guarantee, Neighbour
from ..mechanisms import TopRMechanism
from .base import Release, SelectionMethod

__all__ = ["TopRMethod", "TOP_R", "top_r_release"]


def top_r_release(enum, R: int, p: int, eps_select: float, scale: float, *,
                  name: str = "top_r", **extra) -> Release:
    """The top-R sampler on the ``R`` best supports of ``enum`` (also the PTR fallback)."""
    top = enum.top_supports(R)
    mech = TopRMechanism(top.supports, top.values, p, eps_select, scale)
    return Release(mech, top.supports, top.values, name, R=mech.R, **extra)


@dataclass(frozen=True)
class TopRMethod(SelectionMethod):
    """The paper's top-R sampler."""

    def _stage_guarantee(self, eps_select: float, n_draws: int, nb: Neighbour, *,
                         sensitivity, R, delta, eps_test, ptr_passed) -> Guarantee:
        r_txt = "R = 1 + s(p - s)" if R is None else f"R = {R}"
        per_draw = Guarantee.pure(eps_select, nb, "exponential mechanism on the truncated "
                                  f"objective (top-R sampler, {r_txt} fixed in advance)",
                                  sensitivity=sensitivity)
        return per_draw.repeat(n_draws)

    def release(self, enum, objective, *, p, s, eps_select, scale, R, delta=None,
                eps_test=None, rng_test=None, report_gap=False) -> Release:
        return top_r_release(enum, R, p, eps_select, scale, name=self.name)


TOP_R = TopRMethod("top_r", add_remove_factor=0.5,
                   summary="exponential mechanism on the top-R truncation (pure ε-DP, R fixed)")
