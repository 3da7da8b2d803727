"""Private pre-screening in front of the MIP methods (docs/math.md §4)."""

from __future__ import annotations

import numbers
import time

import numpy as np

from ._validation import check_positive

__all__ = ["run_prescreen", "parse_prescreen", "prescreen_fraction", "LABEL_BOUND"]


def _unpack(prescreen) -> tuple:
    try:
        name, k, fraction = prescreen
    except (TypeError, ValueError):
        raise TypeError("prescreen: expected (name, k, fraction), "
                        "e.g. ('kendall', 200, 0.2)") from None
    return name, k, fraction


def prescreen_fraction(prescreen) -> float:
    """The share of ε a ``prescreen=(name, k, fraction)`` spends (0 without a pre-screen).

    Needs no data, so budgets can be planned before the data is read.
    """
    if prescreen is None:
        return 0.0
    fraction = check_positive(_unpack(prescreen)[2], "prescreen fraction")
    if fraction >= 1:
        raise ValueError(f"prescreen: the budget fraction must be in (0, 1), got {fraction}")
    return fraction


def parse_prescreen(prescreen, p: int, s: int) -> tuple[str, int, float]:
    """Validate ``prescreen=(name, k, fraction)``."""
    from .comparators import PRESCREENERS
    name, k, _ = _unpack(prescreen)
    fraction = prescreen_fraction(prescreen)
    if name not in PRESCREENERS:
        raise ValueError(f"prescreen: unknown pre-screener {name!r}; "
                         f"choose one of {list(PRESCREENERS)}")
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not s < int(k) < p:
        raise ValueError(f"prescreen: the number of candidates k must be an integer with "
                         f"s = {s} < k < p = {p}, got {k!r}")
    return name, int(k), fraction


#: Bound on ``|y_i|`` for a loss whose labels are public ``±1`` (``Loss.needs_y_bound`` False).
LABEL_BOUND = 1.0

#: ``gamma`` of DP-SIS's canonical Lipschitz top-k when it screens for the MIP: ``0``, the
#: loss of a k-subset is the best score it leaves out, so every subset that keeps a clearly
#: separated head of ``s << k`` features scores alike however it fills the other ``k - s``
#: places (docs/screening.md, "Screening that keeps the truth").  The privacy parameter
#: does not depend on ``gamma``.
DP_SIS_SCREEN_GAMMA = 0.0


def run_prescreen(prescreen, X: np.ndarray, y: np.ndarray, s: int, eps: float, bounds,
                  rng: np.random.Generator, *, label_bound: float = LABEL_BOUND
                  ) -> tuple[np.ndarray, dict]:
    """Run the pre-screen with ``fraction * eps``; return the chosen columns and info.

    The pre-screen and the selection are both stated under replace-one neighbours,
    so by basic composition the pipeline is ``eps``-DP in total.

    ``bounds = (b_x, b_y)`` as resolved by the caller.  ``b_y = None`` means the loss
    needs no bound on ``y`` because its labels are public (``±1`` for the hinge loss,
    already validated by the loss): the pre-screeners that clip ``y`` (DP-SIS) then use
    ``label_bound`` (default 1), a bound known without looking at the data, and no
    :class:`~mipdp.exceptions.PrivacyLeakWarning` is raised.  ``info["guarantee"]`` is the
    pre-screen's :class:`~mipdp.guarantee.Guarantee`; ``info["time_not_private"]`` its wall
    time (not private: it depends on the data through the work done).

    DP-SIS screens with the canonical Lipschitz top-k at ``gamma =``
    :data:`DP_SIS_SCREEN_GAMMA` (0): the same ε-DP guarantee as the default ``gamma``,
    and it keeps the true support among ``k >> s`` candidates far more often.
    """
    from .accounting import NOT_RECORDED
    from .comparators import prescreen as _prescreen
    name, k, fraction = parse_prescreen(prescreen, X.shape[1], s)
    if bounds is not None and bounds[1] is None:
        bounds = (bounds[0], check_positive(label_bound, "label_bound"))
    eps_screen = fraction * eps
    t0 = time.perf_counter()
    # the caller accounts for the whole pipeline: the nested release is not recorded twice
    extra = {"gamma": DP_SIS_SCREEN_GAMMA} if name == "dp_sis" else {}
    res = _prescreen(name, X, y, k, eps_screen, bounds=bounds, random_state=rng,
                     accountant=NOT_RECORDED, **extra)
    info = {"method": name, "k": k, "guarantee": res.guarantee, **extra,
            "columns": np.asarray(res.support),
            "time_not_private": time.perf_counter() - t0}   # wall time: depends on the data
    return np.sort(np.asarray(res.support, dtype=np.intp)), info
