"""Exact audit of the Tukey mechanism (:func:`mipdp.tukey.tukey_regression`).

For a data set and a neighbour (one row replaced, or one row added), the part models are
computed for the same partition (the coupling of docs/privacy.md, "The Tukey mechanism"),
and the output of the whole mechanism — the refusal, or a point — has a density that is
constant on every cell of the grid of both model sets' coordinates.  Its law on those cells
is therefore exact, and the hockey-stick divergence over them is the mechanism's ``δ`` at
``ε = ε_ptr + ε_em`` for that partition (the guarantee averages over partitions).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from ._common import _row, hockey_stick

__all__ = ["tukey_cell_log_law", "audit_tukey"]


def _cells(edges):
    mids = [0.5 * (e[1:] + e[:-1]) for e in edges]
    widths = [np.diff(e) for e in edges]
    C = np.stack(np.meshgrid(*mids, indexing="ij"), axis=-1).reshape(-1, len(edges))
    W = np.prod(np.stack(np.meshgrid(*widths, indexing="ij"), axis=-1), axis=-1).ravel()
    return C, W


def tukey_cell_log_law(models: np.ndarray, edges, t: int, eps_ptr: float, eps_em: float,
                       delta: float) -> np.ndarray:
    """Log-probabilities of the refusal (entry 0) and of every cell of the grid ``edges``
    (per-axis sorted coordinates covering the models) under the mechanism on ``models``."""
    from mipdp.tukey import (
        approximate_tukey_depth,
        ptr_distance,
        ptr_pass_probability,
        ptr_refusal_probability,
        tukey_levels,
    )
    lv = tukey_levels(models)
    A = ptr_distance(lv, t, eps_em, delta)
    C, W = _cells(edges)
    c = eps_em / 2.0
    dep = approximate_tukey_depth(models, C)
    logW = lv.log_weight(c)[t]
    with np.errstate(divide="ignore"):
        if np.isfinite(logW):
            cells = np.where(dep >= t, c * dep - logW + np.log(W), -np.inf)
        else:                                   # zero volume: not reached by the audits
            cells = np.full(W.shape, -np.inf)
        return np.concatenate(([math.log(ptr_refusal_probability(A, eps_ptr, delta))],
                               math.log(ptr_pass_probability(A, eps_ptr, delta)) + cells))


def _pairs(rng: np.random.Generator, n: int, k: int, neighbours: str, count: int):
    """Data sets ``(X, y)`` and a neighbour: random rows, and far or corner rows."""
    for i in range(count):
        X = rng.normal(size=(n, k))
        y = X @ np.ones(k) + (rng.standard_cauchy(size=n) if i % 2 else rng.normal(size=n))
        z = (rng.normal(size=k + 1) * (1.0, 30.0, 1e3)[i % 3])
        if neighbours == "replace_one":
            X2, y2 = X.copy(), y.copy()
            j = int(rng.integers(n))
            X2[j], y2[j] = z[:k], z[k]
        else:
            X2, y2 = np.vstack([X, z[:k]]), np.append(y, z[k])
        yield (X, y), (X2, y2)


def audit_tukey(neighbours: str = "replace_one", cases: Iterable[tuple] = (
        (48, 1, False, 16, 4.0, 6.0, 0.05), (60, 1, True, 12, 3.0, 9.0, 0.05),
        (60, 1, "centred", 12, 3.0, 12.0, 0.05)),
        seeds: Iterable[int] = (0, 1, 2), n_pairs: int = 12) -> list[dict]:
    """One row per case ``(n, k, intercept, m, ε_ptr, ε_em, δ)``: the worst exact ``δ`` at
    ``ε_ptr + ε_em`` over neighbour pairs and partitions.  ``intercept``: ``False`` (models
    on ``X``), ``True`` (models on ``[1, X]``) or ``"centred"`` (the part statistics
    ``(ȳ, x̄, β)`` that :func:`~mipdp.tukey.tukey_regression` releases by default)."""
    from mipdp.tukey import (
        centred_part_statistics,
        fit_part_models,
        ptr_distance,
        split_parts,
        target_depth,
        tukey_levels,
    )

    def statistics(X, y, labels, m, intercept):
        if intercept == "centred":
            return centred_part_statistics(X, y, labels, m)
        Z = np.hstack([np.ones((len(y), 1)), X]) if intercept else X
        return fit_part_models(Z, y, labels, m)

    rows = []
    add_remove = neighbours == "add_remove"
    label = "add/remove-one" if add_remove else "replace-one"
    for n, k, intercept, m, eps_ptr, eps_em, delta in cases:
        eps = eps_ptr + eps_em
        t = target_depth(m, eps_ptr, delta)
        worst_delta, worst_ratio, pairs, passed = 0.0, 0.0, 0, 0
        for seed in seeds:
            rng = np.random.default_rng(seed)
            for (X, y), (X2, y2) in _pairs(rng, n, k, neighbours, n_pairs):
                lab = split_parts(n, m, np.random.default_rng(seed + 100),
                                  add_remove=add_remove)
                lab2 = split_parts(len(y2), m, np.random.default_rng(seed + 100),
                                   add_remove=add_remove)
                M1 = statistics(X, y, lab, m, intercept)
                M2 = statistics(X2, y2, lab2, m, intercept)
                edges = [np.unique(np.concatenate([M1[:, j], M2[:, j]]))
                         for j in range(M1.shape[1])]
                a = tukey_cell_log_law(M1, edges, t, eps_ptr, eps_em, delta)
                b = tukey_cell_log_law(M2, edges, t, eps_ptr, eps_em, delta)
                worst_delta = max(worst_delta, hockey_stick(a, b, eps))
                both = np.isfinite(a) & np.isfinite(b)
                worst_ratio = max(worst_ratio, float(np.max(np.abs(a[both] - b[both]))))
                passed += ptr_distance(tukey_levels(M1), t, eps_em, delta) >= 0
                pairs += 1
        dim = 2 * k + 1 if intercept == "centred" else k + int(bool(intercept))
        rows.append(_row(f"Tukey mechanism (m={m}, d={dim}"
                         f"{', centred' if intercept == 'centred' else ''}; "
                         f"{passed}/{pairs} pairs pass the distance test)", label, "exact",
                         len(tuple(seeds)) * n_pairs, pairs, worst_ratio, eps, delta,
                         worst_delta))
    return rows
