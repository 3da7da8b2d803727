"""The default score: ``(ridge, radius)`` derived from the public bounds only.

The support objective ``L(S)`` of every loss depends on a ridge ``λ`` and a ball radius
``r``; its sensitivity is ``Δ = B / n`` with ``B`` the per-sample loss bound, which grows
with the prediction range ``b_x r √s`` (Cauchy–Schwarz on a clipped row of a size-``s``
support):

* least squares ``B = (b_y + b_x r √s)² / 2``, Huber ``B = ℓ_δ(b_y + b_x r √s)``;
* hinge ``B = 1 + b_x r √s``.

A prediction range larger than the label range buys no fit on labels clipped to
``|y| <= b_y`` (a margin beyond 1 earns no lower hinge loss) but inflates ``Δ``, and the
exponential mechanism's weights ``exp(-ε L / (2Δ))`` flatten accordingly; a range much
smaller cannot fit the signal and the truth stops being the minimiser.  The rule
balances the two:

    least squares, Huber:  r = b_y / (b_x √s)        hinge:  r = 1 / (b_x √s)

and takes a small ridge, ``λ = DEFAULT_RIDGE`` (the ridge of the seed, 120, dominates the
loss at n ≈ 500 and moves the objective's optimum away from least squares' best subset;
below a few units it stops mattering for utility and only has to stay positive for the
exact outer-approximation cuts).  Both were chosen by measurement
(study ``score_rule_sweep`` of ``experiments/studies.toml``, tables in docs/guide.md,
"The default score").

The rule is a **pure function of public inputs** ``(loss, s, b_x, b_y)``: it never reads
the data, so it costs no privacy and two data sets with the same bounds get the same
``λ`` and ``r`` (tested).  With bounds read off the data (``bounds=None``) the rule is
applied to those bounds and the result is already labelled not private.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["DEFAULT_RIDGE", "SEED_RIDGE", "SEED_RADIUS", "default_score"]

#: ``λ`` of the default score (chosen by study ``score_rule_sweep`` of
#: ``experiments/studies.toml``)
DEFAULT_RIDGE = 5.0
#: the seed's score (Prastakos et al.): kept for reproducing the seed, set explicitly
SEED_RIDGE, SEED_RADIUS = 120.0, 1.1


def default_score(loss, s: int, b_x: float, b_y: float | None) -> tuple[float, float]:
    """``(ridge, radius)`` of the default score for ``loss`` at support size ``s``.

    Parameters
    ----------
    loss : Loss or Loss subclass
        The loss (its class decides the radius rule; :func:`mipdp.losses.default_score`
        also takes a loss name).
    s : int
        Support size (public).
    b_x, b_y : float
        Clipping bounds ``|x_ij| <= b_x``, ``|y_i| <= b_y`` (public; ``b_y`` unused by the
        hinge loss).

    Returns
    -------
    (float, float)
        ``λ = DEFAULT_RIDGE`` and ``r = b_y / (b_x √s)`` (least squares, Huber) or
        ``r = 1 / (b_x √s)`` (hinge).

    Raises
    ------
    ValueError
        Naming ``bounds`` or ``s`` when the rule cannot apply (a bound that is not a
        positive finite number, ``b_y`` missing for a regression loss).
    """
    if isinstance(loss, str):       # a name: the registry of mipdp.losses resolves it
        raise TypeError("loss: mipdp.losses.score_rule.default_score takes a Loss or a Loss "
                        "subclass; use mipdp.losses.default_score for a loss name")
    cls: Any = loss if isinstance(loss, type) else type(loss)   # a Loss subclass
    if not (isinstance(s, int) or hasattr(s, "__index__")) or int(s) < 1:
        raise ValueError(f"s: the default score needs a support size s >= 1, got {s!r}")
    for name, b, needed in (("bounds[0] (b_x)", b_x, True),
                            ("bounds[1] (b_y)", b_y, cls.needs_y_bound)):
        if not needed:
            continue
        if b is None or not (isinstance(b, (int, float)) and math.isfinite(b) and b > 0):
            raise ValueError(f"{name}: the default score of loss={cls.name!r} needs a positive "
                             f"finite bound, got {b!r}; pass bounds=(b_x, b_y) with b_x, b_y "
                             "> 0, or set ridge= and radius= yourself")
    return DEFAULT_RIDGE, cls.default_radius(int(s), float(b_x), b_y)
