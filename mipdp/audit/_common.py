"""Shared pieces of the audit: the row format, divergences, instances, neighbours.

Part of :mod:`mipdp.audit` (its docstring describes the audit).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterator

import numpy as np

from ..brute_force import all_supports, least_squares_value

logger = logging.getLogger(__name__)


#: Keys of every audit row.  ``backend`` is the enumeration path the MIP rows ran
#: (``"highs"``, ``"gurobi"``, … for outer approximation on that MIP backend, ``"exhaustive"``
#: for the closed-form enumeration of every support), read from ``result.stats["backend"]``
#: of every call; ``"—"`` for the rows that do not enumerate.
COLUMNS = ("mechanism", "neighbour", "kind", "backend", "instances", "pairs", "worst_log_ratio",
           "claimed_eps", "claimed_delta", "measured_delta", "within_claim")

#: ``enumeration_options`` of the enumeration paths of ``private_bss``: the audit
#: instances are small (``C(p, s)`` below the exhaustive threshold), so the MIP path must be
#: forced, otherwise every row would audit the exhaustive enumeration only.  ``"regions"``
#: also sets ``full_class_max = 0``: the envelope of the exponential mechanism and
#: permute-and-flip then bounds every mistake class by certified MIP region bounds (on
#: ``"mip"`` a least-squares class this small is evaluated in full), the path a large ``p``
#: takes.
PATHS = {"mip": {"exhaustive_max": 0, "explicit_max": 0},
         "regions": {"exhaustive_max": 0, "explicit_max": 0, "full_class_max": 0},
         "exhaustive": {}}

#: Slack for floating-point rounding in the exact comparisons (log-probabilities are
#: computed to ~1e-12 relative; the solvers' tolerances enter as ≈1e-6·ε at most).
TOL = 1e-6

B = 0.5  # clipping bound of the audit instances (both |x_ij| and |y_i|)


# ------------------------------------------------------------------ divergences
def max_abs_log_ratio(lp1, lp2) -> float:
    """``max_o |lp1[o] - lp2[o]|`` over outputs; ``inf`` if one side is impossible only."""
    a = np.asarray(lp1, dtype=float)
    b = np.asarray(lp2, dtype=float)
    both = np.isneginf(a) & np.isneginf(b)
    one = np.isneginf(a) ^ np.isneginf(b)
    if np.any(one):
        return math.inf
    with np.errstate(invalid="ignore"):
        d = np.abs(np.where(both, 0.0, a - b))
    return float(d.max()) if d.size else 0.0


def hockey_stick(lp1, lp2, eps: float) -> float:
    """``max`` over both directions of ``Σ_o [P1(o) - e^eps P2(o)]_+`` (exact ``δ`` at ``eps``)."""
    a = np.asarray(lp1, dtype=float)
    b = np.asarray(lp2, dtype=float)

    def one_way(u, v):
        with np.errstate(over="ignore", invalid="ignore"):
            excess = np.exp(u) * -np.expm1(np.minimum(0.0, eps + v - u))
        return float(np.sum(np.where(np.isneginf(u), 0.0, excess)))

    return max(one_way(a, b), one_way(b, a))


# ------------------------------------------------------------------ instances
def _instance(kind: str, seed: int, n: int, p: int) -> tuple[np.ndarray, np.ndarray]:
    """Small regression data inside the ``B``-box (``kind``: random / ties / near_tie / strong)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * 0.4
    beta = np.zeros(p)
    if kind == "strong":
        beta[:2] = [1.0, -1.0]
        y = X @ beta + 0.02 * rng.normal(size=n)
    else:
        beta[rng.choice(p, 2, replace=False)] = rng.choice([-1.0, 1.0], 2)
        y = X @ beta * 0.6 + 0.3 * rng.normal(size=n)
    if kind == "ties":
        X[:, p - 1] = X[:, 0]                # duplicated column: exactly tied supports
    elif kind == "near_tie":
        X[:, 1] = X[:, 0] + 1e-7 * rng.normal(size=n)   # almost equal objectives
        y = X[:, 0] * 0.8 + 0.3 * rng.normal(size=n)
    return np.clip(X, -B, B), np.clip(y, -B, B)


def _corner_rows(p: int, rng: np.random.Generator, n_rows: int) -> list[np.ndarray]:
    """Rows ``(x, y)`` on the corners of the clipping box (some far outside: they clip)."""
    rows = []
    for _ in range(n_rows):
        signs = rng.choice([-1.0, 1.0], size=p + 1)
        scale = B if rng.random() < 0.5 else 10.0 * B      # 10·B clips back to the corner
        rows.append(signs * scale)
    return rows


def replace_one_neighbours(X: np.ndarray, y: np.ndarray, rng: np.random.Generator,
                           n_random: int = 3, n_corner: int = 4,
                           flip: Callable[[np.ndarray, np.ndarray], float] | None = None,
                           n_flip_candidates: int = 24,
                           worst: Callable[[np.ndarray, np.ndarray], float] | None = None
                           ) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    """Neighbouring datasets under replace-one: ``(label, X', y')``.

    ``random``: a uniform row of the box replaces a random row. ``corner``: a corner row
    (possibly far outside the bounds, so that clipping matters). ``flip``: among
    ``n_flip_candidates`` corner rows and replaced positions, the one maximising
    ``flip(X', y')`` (e.g. how much the runner-up beats the optimum), the most adversarial
    neighbour for the stability of the optimum. ``worst``: likewise for ``worst(X', y')``
    (e.g. the log-ratio of the plain exponential mechanism, computed by brute force).
    """
    n, p = X.shape
    for _ in range(n_random):
        i = int(rng.integers(n))
        Xn, yn = X.copy(), y.copy()
        Xn[i] = rng.uniform(-B, B, size=p)
        yn[i] = rng.uniform(-B, B)
        yield "random", Xn, yn
    for row in _corner_rows(p, rng, n_corner):
        i = int(rng.integers(n))
        Xn, yn = X.copy(), y.copy()
        Xn[i], yn[i] = row[:p], row[p]
        yield "corner", Xn, yn
    for label, fn in (("flip", flip), ("worst", worst)):
        if fn is None:
            continue
        best = None
        for row in _corner_rows(p, rng, n_flip_candidates):
            i = int(rng.integers(n))
            Xn, yn = X.copy(), y.copy()
            Xn[i], yn[i] = row[:p], row[p]
            score = fn(np.clip(Xn, -B, B), np.clip(yn, -B, B))
            if best is None or score > best[0]:
                best = (score, Xn, yn)
        assert best is not None  # n_flip_candidates >= 1
        yield label, best[1], best[2]


def add_remove_neighbours(X: np.ndarray, y: np.ndarray, rng: np.random.Generator,
                          n_remove: int = 3, n_add: int = 3,
                          flip: Callable[[np.ndarray, np.ndarray], float] | None = None,
                          n_flip_candidates: int = 24
                          ) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
    """Neighbouring datasets under add/remove: ``(label, X', y')`` with one row more or less.

    ``remove``: a random row deleted.  ``add``: a corner row of the clipping box appended
    (possibly far outside the bounds, so that clipping matters).  ``flip`` (if given): the
    removal (over every row) and the addition (over ``n_flip_candidates`` corner rows)
    maximising ``flip(X', y')``, the most adversarial neighbours for the optimum.
    """
    n, p = X.shape
    for _ in range(n_remove):
        i = int(rng.integers(n))
        yield "remove", np.delete(X, i, axis=0), np.delete(y, i)
    for row in _corner_rows(p, rng, n_add):
        yield "add", np.vstack([X, row[:p]]), np.r_[y, row[p]]
    if flip is None:
        return
    cands = [("remove", np.delete(X, i, axis=0), np.delete(y, i)) for i in range(n)]
    cands += [("add", np.vstack([X, row[:p]]), np.r_[y, row[p]])
              for row in _corner_rows(p, rng, n_flip_candidates)]
    for kind in ("remove", "add"):
        best = max((c for c in cands if c[0] == kind),
                   key=lambda c: flip(np.clip(c[1], -B, B), np.clip(c[2], -B, B)))
        yield f"flip ({kind})", best[1], best[2]


def _ls_table(X: np.ndarray, y: np.ndarray, s: int, ridge: float, radius: float) -> np.ndarray:
    """Brute-force objective of every support (lexicographic order), independent code path."""
    return np.array([least_squares_value(X, y, S, ridge, radius)
                     for S in all_supports(X.shape[1], s)])


def _row(mechanism, neighbour, kind, instances, pairs, worst, eps, delta=0.0,
         measured_delta=0.0, backend="—") -> dict:
    if kind == "exact":
        ok = (worst <= eps + TOL) if delta == 0.0 else (measured_delta <= delta + TOL)
    else:
        ok = worst <= eps + TOL
    if not isinstance(backend, str):
        backend = ", ".join(sorted(backend)) or "—"
    return {"mechanism": mechanism, "neighbour": neighbour, "kind": kind, "backend": backend,
            "instances": int(instances), "pairs": int(pairs), "worst_log_ratio": float(worst),
            "claimed_eps": float(eps), "claimed_delta": float(delta),
            "measured_delta": float(measured_delta), "within_claim": bool(ok)}
