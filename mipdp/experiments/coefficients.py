"""Budget split of the utility studies (Prastakos et al. (2025) App. D.1).

The support is released with ``ε_select`` and the coefficients on it are fitted with
``ε_fit`` by :func:`mipdp.coefficients.private_coefficients` (objective perturbation,
calibrated for replace-one neighbours); by basic composition the pair ``(Ŝ, β̂)`` is
``(ε_select + ε_fit)``-DP.  Prastakos et al. (2025) splits the budget in half.
"""

from __future__ import annotations

from ..coefficients import private_coefficients

__all__ = ["private_coefficients", "split_budget"]


def split_budget(eps: float, fraction_select: float = 0.5) -> tuple[float, float]:
    """``(ε_select, ε_fit)`` with ``ε_select = fraction_select · ε`` (one half in the paper)."""
    if not 0 < fraction_select < 1:
        raise ValueError(f"fraction_select: must be in (0, 1), got {fraction_select}")
    return fraction_select * eps, (1.0 - fraction_select) * eps
