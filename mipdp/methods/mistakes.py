"""``method="mistakes"``: the exponential mechanism over mistake classes around the optimum.

Class ``k`` holds the ``m_k = C(s, k) C(p - s, k)`` supports sharing ``s - k`` features
with the optimum ``S*``; each class's score is capped at a data-independent level
``θ_k`` (:func:`mistakes_theta`), :class:`~mipdp.mechanisms.MistakesMechanism`.
Neighbours: replace-one (``Δ = B/n``) or add/remove (scale ``B/(2n)``; docs/privacy.md).

ε-DP per draw only when the optimum is stable (``L(S_(2)) - L(S_(1)) > 2Δ``), a
data-dependent condition: without ``delta`` the guarantee is marked conditional and a
:class:`~mipdp.exceptions.ConditionalPrivacyWarning` is issued.  With ``delta`` (and
``eps_test``) a propose-test-release test guards it and falls back to the top-R sampler:
``(n_draws ε + ε_test, δ)``-DP unconditionally.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from .._warnings import find_stack_level
from ..exceptions import ConditionalPrivacyWarning
from ..guarantee import Guarantee, Neighbour
from ..mechanisms import MistakesMechanism, ptr_test
from ..mechanisms.exponential import log_comb
from .base import Release, SelectionMethod
from .top_r import top_r_release

__all__ = ["MistakesMethod", "MISTAKES", "MISTAKES_LEVEL_C", "mistakes_theta", "ptr_level",
           "eps_test_default"]

#: ``c`` of the mistakes sampler's data-independent class levels ``θ_k = (2Δ/ε)(log m_k + c)``
MISTAKES_LEVEL_C = 10.0


def mistakes_theta(p: int, s: int, epsilon: float, sensitivity: float,
                   c: float = MISTAKES_LEVEL_C) -> np.ndarray:
    """The mistakes sampler's data-independent class levels ``θ_k = (2Δ/ε)(log m_k + c)``.

    Above ``L_0 + θ_k`` class ``k`` (``m_k = C(s,k) C(p-s,k)`` supports) carries less than
    ``e^{-c}`` of the optimum's weight whatever its minimum, so capping its score there
    costs no utility; ``θ_0 = 0``.
    """
    K = min(s, p - s)
    th = np.array([2.0 * sensitivity / epsilon * (log_comb(s, k) + log_comb(p - s, k) + c)
                   for k in range(K + 1)])
    th[0] = 0.0
    return th


def ptr_level(sensitivity: float, eps_test: float, delta: float, margin: float = 10.0) -> float:
    """Gap ``G`` above which the propose-test-release test passes with probability ``>= 1 -
    e^{-margin}/2``: ``2Δ (1 + (log(1/δ) + margin) / ε_test)``.

    The class searches of a guarded mistakes run reach at least this level, so the gap
    they report (``min(G, min_k θ_k)``, 2Δ-sensitive like ``G``) lets a stable optimum
    pass the test.
    """
    return 2.0 * sensitivity * (1.0 + (math.log(1.0 / delta) + margin) / eps_test)


def eps_test_default(eps_select: float, eps_test: float | None) -> float:
    """Budget of the propose-test-release test (default a tenth of the selection's)."""
    return eps_select / 10.0 if eps_test is None else float(eps_test)


@dataclass(frozen=True)
class MistakesMethod(SelectionMethod):
    """The paper's mistakes sampler, optionally guarded by propose-test-release."""

    def once_epsilon(self, eps_select, *, delta=None, eps_test=None) -> float:
        return 0.0 if delta is None else eps_test_default(eps_select, eps_test)

    def _stage_guarantee(self, eps_select: float, n_draws: int, nb: Neighbour, *,
                         sensitivity, R, delta, eps_test, ptr_passed) -> Guarantee:
        if delta is None:
            per_draw = Guarantee.pure(eps_select, nb, "mistakes sampler (exponential mechanism "
                                      "over mistake classes around the optimum)",
                                      sensitivity=sensitivity)
            if nb is Neighbour.ADD_REMOVE:
                b_txt = "B" if sensitivity is None else f"B = {sensitivity:.6g}"
                cond = f"n (L(S_(2)) - L(S_(1))) > {b_txt}"
            else:
                two_delta = "2Δ" if sensitivity is None else f"2Δ = {2 * sensitivity:.6g}"
                cond = f"L(S_(2)) - L(S_(1)) > {two_delta}"
            return per_draw.repeat(n_draws).conditional(
                f"the optimum is stable on this data: {cond} (not "
                "tested privately; pass delta= for a propose-test-release guard)")
        eps_t = eps_test_default(eps_select, eps_test)
        which = ("mistakes sampler" if ptr_passed else "top-R sampler (fallback)"
                 if ptr_passed is not None else "mistakes sampler, or top-R if the test fails")
        test = Guarantee.pure(eps_t, nb, "propose-test-release stability test (Laplace)")
        sampler = Guarantee.approximate(n_draws * eps_select, float(delta), nb,
                                        f"{n_draws} draw(s) of the {which}",
                                        sensitivity=sensitivity,
                                        notes="δ covers the test passing on unstable data")
        return test + sampler

    def release(self, enum, objective, *, p, s, eps_select, scale, R, delta=None,
                eps_test=None, rng_test=None, report_gap=False) -> Release:
        info: dict = {}
        theta = mistakes_theta(p, s, eps_select, scale)
        if delta is not None:  # searched high enough for the stability test to pass
            eps_test = eps_test_default(eps_select, eps_test)
            theta[2:] = np.maximum(theta[2:], ptr_level(scale, eps_test, delta))
        ms = enum.mistake_scores(theta)
        gap = ms.second_best - ms.scores[0]
        candidates, cand_values = ms.center[None, :], ms.scores[:1]
        if report_gap:
            info["gap_not_private"] = gap
            info["gap_is_lower_bound_not_private"] = bool(np.any(ms.scores[2:] >= ms.levels[2:]))
            info["stability_condition_held_not_private"] = bool(gap > 2 * scale)
        if delta is None:
            warnings.warn(
                "method='mistakes' is eps-DP only when the best support is stable "
                "(L(S_(2)) - L(S_(1)) > 2Δ), a data-dependent condition that was not checked "
                "privately. Pass delta= (and eps_test=) for an unconditional (eps + eps_test, "
                "delta)-DP release through propose-test-release.",
                ConditionalPrivacyWarning, stacklevel=find_stack_level())
            mech = MistakesMechanism(ms.center, ms.scores, p, eps_select, scale)
            return Release(mech, candidates, cand_values, self.name, info=info)
        passed = ptr_test(gap, scale, eps_test, delta, rng_test)
        info["ptr_passed"] = passed
        if not passed:
            return top_r_release(enum, R, p, eps_select, scale, ptr_passed=passed, info=info)
        mech = MistakesMechanism(ms.center, ms.scores, p, eps_select, scale)
        return Release(mech, candidates, cand_values, self.name, ptr_passed=passed, info=info)


MISTAKES = MistakesMethod(
    "mistakes", add_remove_factor=0.5, takes_delta=True,
    summary="exponential mechanism over mistake classes (conditional, or PTR-guarded "
            "with delta=)")
