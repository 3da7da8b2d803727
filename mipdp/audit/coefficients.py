"""Exact audit of objective perturbation with one coefficient (private_coefficients).

Part of :mod:`mipdp.audit` (its docstring describes the audit).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable

import numpy as np

from ._common import B, _row

logger = logging.getLogger(__name__)

# ------------------------------------------------------------------ private coefficients
#: (radius, ε) of the exact objective-perturbation rows (k = 1, b_x = b_y = B, ridge 0).
OP_CASES = ((0.02, 0.5), (0.02, 1.0), (0.005, 0.1))
#: The event ``|β̂| <= OP_EVENT`` is one of the audited outputs.
OP_EVENT = 1e-5


def _laplace_logcdf(t, scale):
    t = np.asarray(t, dtype=float)
    with np.errstate(over="ignore"):
        return np.where(t < 0, math.log(0.5) + t / scale,
                        np.log1p(-0.5 * np.exp(-np.abs(t) / scale)))


def op_k1_log_law(X: np.ndarray, y: np.ndarray, total_ridge: float, noise_scale: float,
                  radius: float, betas: np.ndarray, event: float = OP_EVENT) -> np.ndarray:
    """Exact log-law of one-coefficient objective perturbation on column 0 of ``X``.

    With ``k = 1`` and data clipped to ``±B``, :func:`~mipdp.coefficients.private_coefficients`
    releases ``β̂ = clip((S − b)/A, −r, r)``, ``S = Σ x_i y_i``, ``A = Σ x_i² + total_ridge``,
    ``b ~ Laplace(noise_scale)``.  Returns the log-density at each of ``betas`` (inside
    ``(−r, r)``), then ``log P(β̂ = r)``, ``log P(β̂ = −r)`` and ``log P(|β̂| <= event)``.
    """
    x = np.clip(np.asarray(X, dtype=float)[:, 0], -B, B)
    yc = np.clip(np.asarray(y, dtype=float), -B, B)
    A = float(x @ x) + total_ridge
    S = float(x @ yc)
    inner = (math.log(A) - math.log(2 * noise_scale)
             - np.abs(S - A * np.asarray(betas)) / noise_scale)
    top = _laplace_logcdf(S - A * radius, noise_scale)               # b <= S − A r
    bottom = _laplace_logcdf(-(S + A * radius), noise_scale)         # b >= S + A r
    hi, lo = np.exp(_laplace_logcdf([S + A * event, S - A * event], noise_scale))
    return np.r_[inner, top, bottom, math.log(hi - lo)]


def _op_bases() -> list[tuple[np.ndarray, np.ndarray]]:
    """Datasets whose last row is replaced: ``Σx² ≈ 0`` with ``Σxy ∈ [−1, 1]``, and one heavy.

    ``Σx² ≈ 0`` makes the extra ridge the whole curvature, which maximises the Jacobian
    term; the spread of ``Σxy`` places the density's kink anywhere in ``[−r, r]``.
    """
    out = []
    for s in (-1.0, -0.95, -0.9, -0.5, -0.25, 0.0, 0.25, 0.5, 0.9, 1.0):
        t = abs(s) / (0.5 * 400)            # 400 rows (t, ±0.5): Σxy = s, Σx² = s²/100
        out.append((np.full((401, 1), t), np.full(401, 0.5 if s >= 0 else -0.5)))
    out.append((np.r_[np.full((4, 1), 0.5), np.zeros((1, 1))],
                np.array([0.5, -0.5, 0.5, 0.5, 0.0])))              # Σx² = 1
    return out


def _op_rows() -> list[tuple[float, float]]:
    rows = [(float(x), yv) for x in np.linspace(-B, B, 21) for yv in (-B, 0.0, B)]
    rows.append((3.0, -7.0))                                          # outside: clipped
    return rows


def op_k1_worst(radius: float, total_ridge: float, noise_scale: float,
                n_beta: int = 201, neighbours: str = "replace_one") -> tuple[float, int, int]:
    """Worst exact log-ratio of :func:`op_k1_log_law` over the audit's neighbour pairs.

    ``neighbours="replace_one"``: every base of :func:`_op_bases` with its last row replaced
    by every row of a grid of the box (and one far outside); every two such datasets are
    replace-one neighbours.  ``neighbours="add_remove"``: every base ``D`` against ``D``
    plus each row of that grid, and ``D`` minus its last row against the same (so the
    removal of the base's own last row is one of the pairs; the grid's corners are the
    extreme rows at both ends of the box).  Returns ``(worst, instances, pairs)``.
    """
    betas = np.linspace(-radius, radius, n_beta)[1:-1]
    worst, n_pairs = 0.0, 0
    bases = _op_bases()
    for X, y in bases:
        if neighbours == "replace_one":
            laws = []
            for xr, yr in _op_rows():
                Xn, yn = X.copy(), y.copy()
                Xn[-1, 0], yn[-1] = xr, yr
                laws.append(op_k1_log_law(Xn, yn, total_ridge, noise_scale, radius, betas))
            law_arr = np.array(laws)
            for i in range(len(law_arr)):
                worst = max(worst, float(np.max(np.abs(law_arr[i] - law_arr))))
            n_pairs += len(law_arr) * (len(law_arr) - 1) // 2
        elif neighbours == "add_remove":
            for Xb, yb in ((X, y), (X[:-1], y[:-1])):
                base = op_k1_log_law(Xb, yb, total_ridge, noise_scale, radius, betas)
                for xr, yr in _op_rows():
                    Xn, yn = np.r_[Xb, [[xr]]], np.r_[yb, yr]
                    law = op_k1_log_law(Xn, yn, total_ridge, noise_scale, radius, betas)
                    worst = max(worst, float(np.max(np.abs(law - base))))
                    n_pairs += 1
        else:
            raise ValueError(f"neighbours: expected 'replace_one' or 'add_remove', got "
                             f"{neighbours!r}")
    return worst, len(bases), n_pairs


def audit_private_coefficients(cases: Iterable[tuple[float, float]] = OP_CASES,
                               ridge: float = 0.0, neighbours: str = "replace_one") -> list[dict]:
    """Exact audit of :func:`~mipdp.coefficients.private_coefficients` with one coefficient.

    For each ``(radius, ε)`` the exact law (:func:`op_k1_log_law`: density on a grid of
    ``(−r, r)``, the atoms ``±r``, the event ``|β̂| <= 1e−5``) is compared on every
    neighbour pair of :func:`op_k1_worst` under ``neighbours``, with the package's
    calibration for that notion.
    """
    from ..coefficients import objective_perturbation_calibration
    from ..guarantee import Neighbour
    label = (Neighbour.ADD_REMOVE if neighbours == "add_remove" else Neighbour.REPLACE_ONE).value
    rows = []
    for radius, eps in cases:
        c = objective_perturbation_calibration(1, eps, bounds=(B, B), ridge=ridge, radius=radius,
                                               neighbours=neighbours)
        worst, inst, pairs = op_k1_worst(radius, c.ridge + c.extra_ridge, c.noise_scale,
                                         neighbours=neighbours)
        rows.append(_row(f"private_coefficients (k=1, r={radius:g}, ridge {ridge:g})",
                         label, "exact", inst, pairs, worst, eps))
    return rows
