"""Exact audits of the top-k mechanisms and the comparators (DP-SIS, noisy IHT, DPKendall).

Part of :mod:`mipdp.audit` (its docstring describes the audit).
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Iterable

import numpy as np

from ..comparators.dp_sis import sis_scores
from ..comparators.kendall import dp_kendall_distribution
from ..guarantee import Neighbour
from ..mechanisms.topk import (
    canonical_lipschitz_topk_distribution,
    gumbel_peeling_topk_distribution,
)
from ._common import B, _corner_rows, _instance, _row, max_abs_log_ratio, replace_one_neighbours

logger = logging.getLogger(__name__)

# ------------------------------------------------------------------ top-k and comparators
def _score_vectors(d: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Random, tied, near-tied and widely spread score vectors (units of the sensitivity)."""
    return [rng.normal(size=d) * 2.0, np.zeros(d), np.r_[np.ones(2), np.zeros(d - 2)],
            np.arange(d, dtype=float)[::-1] * 3.0, np.r_[1.0, 1.0 + 1e-12, rng.normal(size=d - 2)]]


def audit_topk(eps_values: Iterable[float] = (0.5, 1.0, 4.0), d: int = 6, k: int = 2,
               sensitivity: float = 1.0, seed: int = 0) -> list[dict]:
    """Exact audit of canonical Lipschitz (γ = 0, 1/2, 1) and Gumbel-peeling top-k.

    Neighbouring score vectors are ``f' = f + Δ σ`` for every ``σ ∈ {-1, 0, 1}^d``
    (all vertices and edges of the L∞ ball of radius Δ, which contain the worst cases).
    """
    rng = np.random.default_rng(seed)
    vecs = [v * sensitivity for v in _score_vectors(d, rng)]
    shifts = np.array(list(itertools.product((-1.0, 0.0, 1.0), repeat=d))) * sensitivity
    rows = []
    mechs: list[tuple[str, Callable[..., np.ndarray]]] = [
        (f"canonical Lipschitz top-k (gamma={g:g})",
         lambda f, e, g=g: canonical_lipschitz_topk_distribution(f, k, e, sensitivity,
                                                                 gamma=g)[1])
        for g in (0.0, 0.5, 1.0)]
    mechs.append(("Gumbel peeling top-k",
                  lambda f, e: gumbel_peeling_topk_distribution(f, k, e, sensitivity)[1]))
    for name, dist in mechs:
        for eps in eps_values:
            worst, pairs = 0.0, 0
            for f in vecs:
                base = dist(f, eps)
                for sh in shifts:
                    worst = max(worst, max_abs_log_ratio(base, dist(f + sh, eps)))
                    pairs += 1
            rows.append(_row(name, "score vectors, L-inf distance <= Delta", "exact", len(vecs),
                             pairs, worst, eps))
    return rows


def _add_remove_neighbours(X, y, rng, n_pairs=3):
    n, p = X.shape
    for _ in range(n_pairs):
        i = int(rng.integers(n))
        yield "remove", np.delete(X, i, axis=0), np.delete(y, i)
    for row in _corner_rows(p, rng, n_pairs):
        yield "add", np.vstack([X, row[:p]]), np.r_[y, row[p]]


def audit_dp_sis(eps: float = 1.0, p: int = 6, k: int = 2, n: int = 30,
                 seeds: Iterable[int] = (0, 1, 2)) -> list[dict]:
    """Exact audit of DP-SIS (scores ``|x_jᵀy|`` on clipped data + top-k) under both notions."""
    seeds = tuple(seeds)   # read once per notion and law below: a generator would run dry
    rows = []
    laws = (("canonical_lipschitz", canonical_lipschitz_topk_distribution),
            ("peeling", gumbel_peeling_topk_distribution))
    for neighbour, sens in (("replace-one", 2 * B * B), ("add/remove-one", B * B)):
        for topk, law in laws:
            def dist(f, sens=sens, law=law):   # this notion's sensitivity, this top-k law
                return law(f, k, eps, sens)[1]

            worst, pairs = 0.0, 0
            for kind, seed in itertools.product(("random", "ties"), seeds):
                X, y = _instance(kind, seed, n, p)
                base = dist(sis_scores(X, y))
                rng = np.random.default_rng(4000 + seed)
                gen = (replace_one_neighbours(X, y, rng, 3, 6) if neighbour == "replace-one"
                       else _add_remove_neighbours(X, y, rng))
                for _, Xn, yn in gen:
                    lp = dist(sis_scores(np.clip(Xn, -B, B), np.clip(yn, -B, B)))
                    worst = max(worst, max_abs_log_ratio(base, lp))
                    pairs += 1
            rows.append(_row(f"DP-SIS ({topk})", neighbour, "exact", 2 * len(tuple(seeds)),
                             pairs, worst, eps))
    return rows


def audit_noisy_iht(eps: float = 1.0, p: int = 4, k: int = 2, n_iter: int = 2, n: int = 12,
                    seeds: Iterable[int] = (0, 1), neighbours: Iterable[str] = (
                        "replace-one", "add/remove-one")) -> list[dict]:
    """Exact per-iteration audit of noisy IHT with peeling (pure ``eps``), both notions.

    Noisy IHT is an adaptive composition: given the previous output ``beta^t`` (the same
    on both datasets), iteration ``t`` releases ``k`` report-noisy-max picks on ``|v|`` and
    (except in the last iteration) ``k`` Laplace values.  For each instance, each
    ``beta^t`` (zero, a sparse output-like vector, a large one that makes the residual
    clipping bind) and each neighbouring pair, the exact law of the ordered picks
    (:func:`~mipdp.comparators.noisy_iht.laplace_peeling_distribution`) is computed on both
    datasets; the values' worst log density ratio is ``eps_0 / Delta`` times the largest
    sum of ``k`` coordinates of ``|v - v'|`` (exact for Laplace noise).  The reported loss
    ``T * worst picks + (T - 1) * worst values`` bounds the composed privacy loss of a run;
    the claim is ``eps``.  Under add/remove the public normaliser is the base ``n``.
    """
    from ..comparators.noisy_iht import (
        gradient_step,
        iht_calibration,
        iht_sensitivity,
        laplace_peeling_distribution,
    )
    eps0, _, _ = iht_calibration(k, n_iter, eps)
    eta, c = 1.0 / B ** 2, B
    rows = []
    seeds = tuple(seeds)
    for neighbour in neighbours:
        sens = iht_sensitivity(B, c, eta, n, Neighbour.parse(neighbour))
        worst_sel = worst_val = 0.0
        pairs = 0
        for kind, seed in itertools.product(("random", "ties"), seeds):
            X, y = _instance(kind, seed, n, p)
            rng = np.random.default_rng(5000 + seed)
            gen = (replace_one_neighbours(X, y, rng, 2, 4) if neighbour == "replace-one"
                   else _add_remove_neighbours(X, y, rng, 2))
            nbrs = [(np.clip(Xn, -B, B), np.clip(yn, -B, B)) for _, Xn, yn in gen]
            sparse = np.zeros(p)
            sparse[rng.choice(p, k, replace=False)] = rng.normal(size=k) * 0.5
            big = np.zeros(p)
            big[:k] = [3.0, -3.0][:k] + [3.0] * max(0, k - 2)
            for beta in (np.zeros(p), sparse, big):
                v = gradient_step(X, y, beta, eta, n, c)
                _, lp = laplace_peeling_distribution(v, k, eps0, sens)
                for Xn, yn in nbrs:
                    vn = gradient_step(Xn, yn, beta, eta, n, c)
                    _, lq = laplace_peeling_distribution(vn, k, eps0, sens)
                    worst_sel = max(worst_sel, max_abs_log_ratio(lp, lq))
                    top = np.sort(np.abs(v - vn))[::-1][:k].sum()
                    worst_val = max(worst_val, top * eps0 / sens)
                    pairs += 1
        total = n_iter * worst_sel + (n_iter - 1) * worst_val
        rows.append(_row(f"noisy IHT, Laplace peeling (T={n_iter}, k={k}; per-iteration "
                         "laws composed)", neighbour, "exact", 2 * len(seeds), pairs, total,
                         eps))
    return rows


def _kendall_neighbours(X, y, rng, neighbour):
    n, p = X.shape
    if neighbour == "add/remove-one":
        yield from _add_remove_neighbours(X, y, rng)
        return
    yield from replace_one_neighbours(X, y, rng, 2, 0)
    lo, hi = X.min(axis=0), X.max(axis=0)
    for sx, sy in ((1, -1), (-1, 1)):                 # extreme ranks: concordant with nothing
        Xn, yn = X.copy(), y.copy()
        i = int(rng.integers(n))
        Xn[i] = hi + 1.0 if sx > 0 else lo - 1.0
        yn[i] = y.min() - 1.0 if sy < 0 else y.max() + 1.0
        yield "extreme", Xn, yn
    Xn, yn = X.copy(), y.copy()
    Xn[0], yn[0] = X[1], y[1]                          # duplicated row: new tied pairs
    yield "tie", Xn, yn


def audit_dp_kendall(eps: float = 1.0, p: int = 5, k: int = 2, n: int = 20,
                     seeds: Iterable[int] = (0, 1, 2)) -> list[dict]:
    """Exact audit of DPKendall via :func:`~mipdp.comparators.kendall.dp_kendall_distribution`."""
    rows = []
    for neighbour in ("replace-one", "add/remove-one"):
        worst, pairs, inst = 0.0, 0, 0
        for kind, seed in itertools.product(("random", "ties", "int"), seeds):
            if kind == "int":                                  # many tied ranks
                r = np.random.default_rng(seed)
                X = r.integers(0, 3, size=(n, p)).astype(float)
                y = X[:, 0] + r.integers(0, 2, size=n)
            else:
                X, y = _instance(kind, seed, n, p)
            inst += 1
            base = dp_kendall_distribution(X, y, k, eps, neighbours=Neighbour.parse(neighbour))[1]
            rng = np.random.default_rng(5000 + seed)
            for _, Xn, yn in _kendall_neighbours(X, y, rng, neighbour):
                lp = dp_kendall_distribution(Xn, yn, k, eps,
                                             neighbours=Neighbour.parse(neighbour))[1]
                worst = max(worst, max_abs_log_ratio(base, lp))
                pairs += 1
        rows.append(_row("DPKendall", neighbour, "exact", inst, pairs, worst, eps))
    return rows
