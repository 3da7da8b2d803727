"""Exact audit of ``private_bss`` on adversarial neighbouring pairs (power against a wrong Δ).

Part of :mod:`mipdp.audit` (its docstring describes the audit).  The other exact audits of
``private_bss`` draw their datasets at random: there the score ``L(S)`` of a replaced row
moves far less than its proven sensitivity ``Δ``, so even a mechanism calibrated with half
the true ``Δ`` (running at about ``2ε`` while claiming ``ε``) stays within its claim on them.
This audit searches for the pairs on which the exponential mechanism loses the most:

* the whole dataset ``D`` (``n ≤ 8`` rows, ``p ≤ 5``, ``s ≤ 2``) **and** the replaced
  (or added) row are chosen by a deterministic, seeded hill climb inside the clipping box,
  started from random data and from an analytic construction (strong rows that pin every
  support's coefficients on the ball's boundary, the odd row at the box's corners with the
  label against the optimum, so that one support's score rises by about ``Δ`` and
  another's falls);
* the climb's objective is the exact log-ratio of the exponential mechanism computed
  **here**, from brute-force score tables and the proven per-sample bound ``B`` written
  out independently of :mod:`mipdp.losses` (least squares ``(b_y + b_x r √s)² / 2``,
  hinge ``1 + b_x r √s``; replace-one weights ``exp(-ε L(S) n / (2B))``, add/remove
  ``exp(-ε n L(S) / B)``);
* the found pairs are then run through ``private_bss`` and the release's exact law
  (``result.log_probability`` over all ``C(p, s)`` supports) is compared on both datasets.

The measured ``max |log-ratio| / ε`` is the audit's power: with the correct calibration
it must stay ``≤ 1``; the closer it comes to 1, the smaller a miscalibration it catches (a
``B`` halved roughly doubles the log-ratio on these pairs).
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Iterable

import numpy as np
from scipy.special import logsumexp

from ..brute_force import all_supports, least_squares_value
from ._common import TOL, _row, max_abs_log_ratio

logger = logging.getLogger(__name__)

__all__ = ["proven_sample_bound", "adversarial_pair", "audit_adversarial", "ADVERSARIAL_CASES"]

#: clipping bound of the instances (``|x_ij| <= BX``; ``|y_i| <= BY`` for least squares)
BX = BY = 0.5

#: ``(loss, neighbours, p, s, n, eps, ridge, radius_factor)`` of the default run; the radius
#: is ``radius_factor`` times the default rule's (``b_y / (b_x √s)`` for least squares,
#: ``1 / (b_x √s)`` for the hinge).
ADVERSARIAL_CASES: tuple[tuple[str, str, int, int, int, float, float, float], ...] = (
    ("least_squares", "replace_one", 3, 1, 8, 8.0, 1e-3, 0.5),
    ("least_squares", "replace_one", 4, 2, 8, 8.0, 1e-3, 0.5),
    ("least_squares", "add_remove", 3, 1, 8, 8.0, 1e-3, 1.0),
    ("least_squares", "add_remove", 4, 2, 8, 8.0, 1e-3, 1.0),
    ("hinge", "replace_one", 3, 1, 8, 8.0, 1e-3, 1.0),
    ("hinge", "replace_one", 4, 2, 8, 8.0, 1e-3, 1.0),
    ("hinge", "add_remove", 3, 1, 8, 8.0, 1e-3, 1.0),
    ("hinge", "add_remove", 4, 2, 8, 8.0, 1e-3, 1.0),
)


def proven_sample_bound(loss: str, s: int, b_x: float, b_y: float, radius: float) -> float:
    """The proven bound ``B`` on one sample's loss, written out here (not read from the package).

    Least squares: ``|y| <= b_y`` and ``|x_Sᵀβ| <= b_x √s r`` give ``(y - x_Sᵀβ)² / 2 <=
    (b_y + b_x r √s)² / 2``; hinge: ``max(0, 1 - y x_Sᵀβ) <= 1 + b_x r √s``.
    """
    a = b_x * radius * math.sqrt(s)
    if loss == "least_squares":
        return 0.5 * (b_y + a) ** 2
    if loss == "hinge":
        return 1.0 + a
    raise ValueError(f"loss: expected 'least_squares' or 'hinge', got {loss!r}")


def _default_radius(loss: str, s: int) -> float:
    return (BY if loss == "least_squares" else 1.0) / (BX * math.sqrt(s))


def _table(loss: str, X: np.ndarray, y: np.ndarray, s: int, ridge: float,
           radius: float) -> np.ndarray:
    """``L(S)`` of every support (lexicographic order) on the clipped data."""
    X = np.clip(X, -BX, BX)
    sup = all_supports(X.shape[1], s)
    if loss == "least_squares":
        y = np.clip(y, -BY, BY)
        return np.array([least_squares_value(X, y, S, ridge, radius) for S in sup])
    from ..losses.hinge import Hinge  # the search only: the audit's check is the release's law
    return np.asarray(Hinge(ridge, radius).bind(X, y).values(sup), dtype=float)


def _em_log_law(table: np.ndarray, n: int, eps: float, B: float, neighbours: str) -> np.ndarray:
    """The exponential mechanism's exact log-law with the proven ``B`` (this module's own)."""
    scale = n / (2.0 * B) if neighbours == "replace_one" else n / B
    lw = -eps * scale * (table - table.min())
    return lw - logsumexp(lw)


def _neighbour(X, y, row, neighbours):
    if neighbours == "replace_one":
        Xn, yn = X.copy(), y.copy()
        Xn[0], yn[0] = row[:-1], row[-1]
        return Xn, yn
    return np.vstack([X, row[:-1]]), np.r_[y, row[-1]]


def _objective(loss, neighbours, X, y, row, s, eps, ridge, radius, B):
    Xn, yn = _neighbour(X, y, row, neighbours)
    a = _em_log_law(_table(loss, X, y, s, ridge, radius), X.shape[0], eps, B, neighbours)
    b = _em_log_law(_table(loss, Xn, yn, s, ridge, radius), Xn.shape[0], eps, B, neighbours)
    return max_abs_log_ratio(a, b)


def _analytic_start(loss: str, p: int, s: int, n: int, rng: np.random.Generator):
    """Strong rows pinning the coefficients on the ball, the odd row against the optimum.

    Every strong row is ``x = b_x·σ`` on a random sign pattern ``σ`` shared by all of them
    (so every support's unconstrained optimum lies far outside the small ball, in the
    direction of ``σ_S``, where ``|x_Sᵀβ| = b_x r √s``) with the label that ``x`` predicts;
    the first row (the one replaced) is zero on the first support's features; the new row
    sits at the corner with the opposite label: on a support inside ``σ``'s pattern its
    loss is close to ``B``.
    """
    sig = rng.choice([-1.0, 1.0], size=p)
    X = np.tile(BX * sig, (n, 1))
    X += rng.normal(scale=0.05, size=X.shape)          # break exact ties between supports
    y = np.ones(n) * (BY if loss == "least_squares" else 1.0)
    X[0, :s] = 0.0
    row = np.r_[BX * sig, -(BY if loss == "least_squares" else 1.0)]
    row[s:p] *= -1.0
    return np.clip(X, -BX, BX), y, row


def adversarial_pair(loss: str, neighbours: str, p: int, s: int, n: int, eps: float,
                     ridge: float, radius: float, seed: int = 0, iters: int = 300,
                     start: str = "random"):
    """Hill-climb a neighbouring pair maximising the exponential mechanism's log-ratio.

    Returns ``(objective, X, y, X', y')``: ``objective`` is the log-ratio computed by this
    module with the proven ``B`` (the value the release must not exceed by more than
    rounding).  ``start``: ``"random"`` (uniform data in the box) or ``"analytic"``
    (:func:`_analytic_start`).  Deterministic given ``seed``.
    """
    rng = np.random.default_rng(seed)
    B = proven_sample_bound(loss, s, BX, BY, radius)
    ylim = BY if loss == "least_squares" else 1.0
    if start == "analytic":
        X, y, row = _analytic_start(loss, p, s, n, rng)
    else:
        X = rng.uniform(-BX, BX, size=(n, p))
        y = rng.uniform(-BY, BY, size=n) if loss == "least_squares" else \
            rng.choice([-1.0, 1.0], size=n)
        row = np.r_[rng.choice([-BX, BX], size=p), rng.choice([-ylim, ylim])]
    best = _objective(loss, neighbours, X, y, row, s, eps, ridge, radius, B)
    for _ in range(iters):
        Xc, yc, rc = X.copy(), y.copy(), row.copy()
        k = int(rng.integers(n * (p + 1) + p + 1))
        if k >= n * (p + 1):                       # a coordinate of the new row
            j = k - n * (p + 1)
            lim = BX if j < p else ylim
            if loss == "hinge" and j == p:
                rc[j] = -rc[j]
            else:
                rc[j] = rng.choice([-lim, lim]) if rng.random() < 0.5 else \
                    np.clip(rc[j] + rng.normal(scale=0.3 * lim), -lim, lim)
        else:
            i, j = divmod(k, p + 1)
            if j == p:
                if loss == "hinge":
                    yc[i] = -yc[i]
                else:
                    yc[i] = rng.choice([-BY, BY]) if rng.random() < 0.5 else \
                        np.clip(yc[i] + rng.normal(scale=0.3 * BY), -BY, BY)
            else:
                Xc[i, j] = rng.choice([-BX, 0.0, BX]) if rng.random() < 0.4 else \
                    np.clip(Xc[i, j] + rng.normal(scale=0.3 * BX), -BX, BX)
        val = _objective(loss, neighbours, Xc, yc, rc, s, eps, ridge, radius, B)
        if val > best:
            best, X, y, row = val, Xc, yc, rc
    Xn, yn = _neighbour(X, y, row, neighbours)
    return best, X, y, Xn, yn


def _release_log_law(loss, X, y, s, eps, ridge, radius, neighbours, path_options):
    from ..selection import private_bss
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # clipping / conditional-privacy notes
        res = private_bss(X, y, s, eps, bounds=(BX, BY), loss=loss, ridge=ridge,
                          radius=radius, random_state=0, neighbours=neighbours,
                          enumeration_options=path_options)
    return np.array([res.log_probability(S) for S in all_supports(X.shape[1], s)]), res


def audit_adversarial(cases: Iterable[tuple] = ADVERSARIAL_CASES, seeds: Iterable[int] = (0,),
                      iters: int = 300, starts: Iterable[str] = ("analytic", "random"),
                      path: str = "exhaustive", backend: str = "highs") -> list[dict]:
    """Exact audit of ``private_bss`` (the exponential mechanism) on hill-climbed pairs.

    One row per ``(loss, neighbours)``; its ``worst_log_ratio / claimed_eps`` is the
    audit's power (how close the adversarial pairs bring the loss to ``ε``).  ``cases``:
    tuples as :data:`ADVERSARIAL_CASES`; ``seeds`` × ``starts``: the climbs per case;
    ``iters``: moves per climb; ``path``: the enumeration path (``mipdp.audit.PATHS``).
    The climb's own log-ratio (with the proven ``B``) is logged next to the release's.
    """
    from ._common import PATHS
    from .mip import _check_path
    opts = dict(PATHS[_check_path(path)])
    groups: dict[tuple[str, str], dict] = {}
    for loss, neighbours, p, s, n, eps, ridge, rfac in cases:
        radius = rfac * _default_radius(loss, s)
        g = groups.setdefault((loss, neighbours), {"worst": 0.0, "eps": eps, "inst": 0,
                                                   "pairs": 0, "used": set()})
        if eps != g["eps"]:
            raise ValueError("cases: one eps per (loss, neighbours)")
        for seed in seeds:
            for start in starts:
                climbed, X, y, Xn, yn = adversarial_pair(loss, neighbours, p, s, n, eps, ridge,
                                                         radius, seed=seed, iters=iters,
                                                         start=start)
                kw = dict(s=s, eps=eps, ridge=ridge, radius=radius, neighbours=neighbours,
                          path_options=opts)
                lp, res = _release_log_law(loss, X, y, **kw)
                lq, _ = _release_log_law(loss, Xn, yn, **kw)
                g["used"].add(str(res.stats.get("backend", "?")))
                w = max_abs_log_ratio(lp, lq)
                logger.info("adversarial %s/%s p=%d s=%d %s seed %d: release %.6f, climb %.6f "
                            "(ratio %.4f)", loss, neighbours, p, s, start, seed, w, climbed,
                            w / eps)
                if w > eps + TOL:
                    logger.warning("adversarial audit: %s/%s p=%d s=%d: log-ratio %g > %g",
                                   loss, neighbours, p, s, w, eps)
                g["worst"] = max(g["worst"], w)
                g["inst"] += 1
                g["pairs"] += 1
    rows = []
    for (loss, neighbours), g in groups.items():
        nb = "replace-one" if neighbours == "replace_one" else "add/remove-one"
        rows.append(_row(f"exponential (private_bss, {loss}), adversarial pairs", nb, "exact",
                         g["inst"], g["pairs"], g["worst"], g["eps"], backend=g["used"]))
    return rows
