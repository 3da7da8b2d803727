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
#: the paper's score (Prastakos et al.): kept for reproducing the paper, set explicitly
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
        ``λ = DEFAULT_RIDGE`` (for the hinge and Huber losses at least
        ``MIN_RELATIVE_RIDGE · b_x²``, :func:`default_ridge`) and ``r = b_y / (b_x √s)``
        (least squares, Huber) or ``r = 1 / (b_x √s)`` (hinge).

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
    return default_ridge(cls, float(b_x)), cls.default_radius(int(s), float(b_x), b_y)


def default_ridge(loss, b_x: float) -> float:
    """``λ`` of the default score: :data:`DEFAULT_RIDGE`, raised for the hinge and Huber
    losses to the certifiable floor ``MIN_RELATIVE_RIDGE · b_x²`` when ``b_x`` is large
    (above about 2236), so that the default is never refused by :func:`check_certifiable`.
    A function of the public ``b_x`` only."""
    if getattr(loss, "name", None) in ("hinge", "huber"):
        # the floor exactly as check_certifiable computes it ((1e-6·b)·b differs from
        # 1e-6·b² in the last bit for about one b_x in seven: the default was refused)
        return max(DEFAULT_RIDGE, MIN_RELATIVE_RIDGE * float(b_x) ** 2)
    return DEFAULT_RIDGE


#: smallest ridge, relative to ``b_x²``, that the certified iterative solvers (hinge, Huber)
#: accept: below it, some data sets (nearly parallel rows pinning the optimum) cannot be
#: certified to the required duality gap while their neighbours can (docs/privacy.md,
#: "Neighbour fuzz")
MIN_RELATIVE_RIDGE = 1e-6


def check_certifiable(loss, bounds) -> None:
    """Refuse, before any data is read, a score the hinge or Huber solver cannot certify.

    ``λ / b_x²`` is the scale-free ridge (``β̃ = b_x β`` turns the clipped rows into rows of
    norm at most ``√s``): below :data:`MIN_RELATIVE_RIDGE` the support objective is
    nearly unregularised and, on data sets whose optimum is pinned by nearly parallel rows,
    its certified duality gap is out of reach of double precision, so whether a call runs
    would depend on the data.  Least squares has a closed form and needs no such floor.
    ``bounds``: the public ``(b_x, b_y)`` (or ``b``) the score is resolved on (the mapped
    ``±½`` of private ranges and ranks); bounds read off the data are not checked (their
    release is labelled not private anyway).

    Raises
    ------
    InvalidParameterError
        Naming ``ridge`` and ``bounds``; the message carries public figures only.
    """
    from ..exceptions import InvalidParameterError
    if getattr(loss, "name", None) not in ("hinge", "huber"):
        return
    b_x = bounds[0] if isinstance(bounds, (tuple, list)) else bounds
    if isinstance(b_x, bool) or not isinstance(b_x, (int, float)) or not math.isfinite(b_x) \
            or b_x <= 0:
        return
    ridge = default_ridge(loss, float(b_x)) if loss.ridge is None else float(loss.ridge)
    floor = MIN_RELATIVE_RIDGE * float(b_x) ** 2
    if ridge < floor:
        given = "the default ridge" if loss.ridge is None else "ridge"
        raise InvalidParameterError(
            f"ridge: loss={loss.name!r} needs ridge >= {MIN_RELATIVE_RIDGE:g}·b_x² = "
            f"{floor:.3g} with b_x = {float(b_x):g} (the bound on |X| the score is computed "
            f"on); {given} is {ridge:g}. Below that the support objective is nearly "
            "unregularised and its certified solver cannot reach its accuracy on some data "
            "sets, so whether a call runs would depend on the data. Rescale X by a public "
            "constant so that its bound is near 1 (bounds=(b_x, b_y) then shrink with it), "
            "or pass a larger ridge=.")
