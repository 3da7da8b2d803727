"""Privacy audit: measured privacy loss of the package's mechanisms on neighbouring datasets.

Two kinds of audit:

* **exact** — for mechanisms whose output law the package computes exactly (top-R,
  mistakes, the PTR-guarded mistakes sampler — on the MIP path and on the exhaustive
  path —, canonical Lipschitz and Gumbel-peeling top-k, DP-SIS, DPKendall, noisy IHT's
  peeling iterations, and
  objective perturbation with one coefficient), take small instances and pairs of neighbouring datasets
  (random ones, and adversarial ones: the replaced row at the clipping corners or far
  outside the bounds, rows that flip the optimum, exact ties from duplicated columns)
  and compute the worst ``|log P(o | D) - log P(o | D')|`` over **all** outputs ``o``.
  For an approximate-DP claim ``(ε, δ)`` the exact hockey-stick divergence
  ``max(Σ_o [P(o|D) - e^ε P(o|D')]_+, same with D and D' swapped)`` is measured too.
* **empirical** — for mechanisms without a closed form (MCMC, DP Frank-Wolfe,
  Two-Stage with Laplace top-k, whole runs of noisy IHT), many draws on a neighbouring pair; an output event is
  chosen on a pilot sample and a Clopper–Pearson bound on fresh draws gives a lower
  confidence bound on the realised ε (it must not exceed the claim).

Every audit returns a list of rows (dicts) with the keys of :data:`COLUMNS`;
:func:`run_audit` collects them and :func:`to_markdown` formats them.
``python -m mipdp.audit [--quick]`` prints the table.
"""

from __future__ import annotations

import itertools
import logging
import math
import warnings
from typing import Any, Callable, Iterable, Iterator, cast

import numpy as np
from scipy.stats import beta as beta_dist

from .brute_force import all_supports, least_squares_value
from .comparators.dp_sis import sis_scores
from .comparators.kendall import dp_kendall_distribution
from .exceptions import ConditionalPrivacyWarning
from .guarantee import Neighbour
from .mechanisms.topk import (canonical_lipschitz_topk_distribution,
                              gumbel_peeling_topk_distribution)

__all__ = ["COLUMNS", "PATHS", "max_abs_log_ratio", "hockey_stick", "replace_one_neighbours",
           "add_remove_neighbours", "audit_exponential", "audit_permute_and_flip",
           "audit_top_r", "audit_mistakes", "audit_ptr_mistakes", "audit_topk", "audit_dp_sis",
           "audit_dp_kendall", "audit_noisy_iht", "audit_private_coefficients", "op_k1_log_law", "op_k1_worst",
           "clopper_pearson_epsilon", "audit_empirical", "run_audit", "to_markdown",
           "METHOD_AUDITS"]

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


# ------------------------------------------------------------------ MIP samplers
_LS = {"ridge": 1.0, "radius": 1.1}


def _check_path(path: str) -> str:
    if path not in PATHS:
        raise ValueError(f"path: expected one of {list(PATHS)}, got {path!r}")
    return path


def _bss_log_probs(X, y, s, eps, *, method="top_r", R=None, path="mip", backend="highs",
                   used: set | None = None, **kw):
    """Exact log-law of one ``private_bss`` call over all supports; records the path used.

    ``path="mip"`` forces outer approximation on ``backend`` (``exhaustive_max = 0``,
    ``explicit_max = 0``); ``path="regions"`` also ``full_class_max = 0`` (certified
    region bounds for every class of the envelope);
    ``path="exhaustive"`` lets the enumerator evaluate every support in closed form.
    The backend the call really used (``result.stats["backend"]``) is added to ``used``.
    """
    from .selection import private_bss
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConditionalPrivacyWarning)
        res = private_bss(X, y, s, eps, bounds=(B, B), method=method, R=R, random_state=0,
                          report_gap=(method == "mistakes"), backend=backend,
                          enumeration_options=PATHS[_check_path(path)], **_LS, **kw)
    if used is not None:
        used.add(str(res.stats.get("backend", "?")))
    sup = all_supports(X.shape[1], s)
    return np.array([res.log_probability(S) for S in sup]), res


def _flip_score(s: int):
    """How far the runner-up of ``(X, y)`` is from beating the optimum (larger = closer)."""
    def score(X, y):
        v = np.sort(_ls_table(X, y, s, **_LS))
        return float(v[0] - v[1])
    return score


def _em_worst(X: np.ndarray, y: np.ndarray, s: int, eps: float, sens: float):
    """Adversary score: worst log-ratio of the plain exponential mechanism against ``(X, y)``."""
    from .brute_force import exponential_mechanism_log_probs
    base = exponential_mechanism_log_probs(_ls_table(X, y, s, **_LS), eps, sens)

    def score(Xn, yn):
        lp = exponential_mechanism_log_probs(_ls_table(Xn, yn, s, **_LS), eps, sens)
        return max_abs_log_ratio(base, lp)
    return score


def _audit_bss_exact(name: str, method: str, Rs, eps: float, s: int, p: int, n: int, seeds,
                     kinds, n_random: int, n_corner: int, path: str, backend: str,
                     neighbours: str = "replace_one") -> dict:
    """Worst exact log-ratio of ``private_bss(method=...)`` over neighbouring datasets.

    ``neighbours="add_remove"`` runs ``private_bss(..., neighbours="add_remove")`` and
    compares it on :func:`add_remove_neighbours` pairs (a row removed or added).
    """
    N = math.comb(p, s)
    worst, n_inst, n_pairs = 0.0, 0, 0
    used: set = set()
    kw = {} if neighbours == "replace_one" else {"neighbours": neighbours}
    for kind, seed in itertools.product(kinds, seeds):
        X, y = _instance(kind, seed, n, p)
        n_inst += 1
        rng = np.random.default_rng(1000 + seed)
        base, res = {}, None
        for R in Rs:
            base[R], res = _bss_log_probs(X, y, s, eps, method=method,
                                          R=N if R == "all" else R, path=path,
                                          backend=backend, used=used, **kw)
        assert res is not None  # Rs is not empty
        if neighbours == "replace_one":
            adversary = _em_worst(X, y, s, eps, res.sensitivity)
            pairs = replace_one_neighbours(X, y, rng, n_random, n_corner,
                                           flip=_flip_score(s), worst=adversary)
        else:
            pairs = add_remove_neighbours(X, y, rng, n_random, n_corner, flip=_flip_score(s))
        for label, Xn, yn in pairs:
            for R in Rs:
                lp = _bss_log_probs(Xn, yn, s, eps, method=method, R=N if R == "all" else R,
                                    path=path, backend=backend, used=used, **kw)[0]
                w = max_abs_log_ratio(base[R], lp)
                if w > eps + TOL:
                    logger.warning("%s audit: R=%s %s neighbour of %s/%d: log-ratio %g > %g",
                                   method, R, label, kind, seed, w, eps)
                worst = max(worst, w)
                n_pairs += 1
    nb_label = "replace-one" if neighbours == "replace_one" else "add/remove-one"
    return _row(name, nb_label, "exact", n_inst, n_pairs, worst, eps, backend=used)


def audit_top_r(eps: float = 1.0, s: int = 2, p: int = 6, n: int = 40,
                Rs: Iterable[int | str | None] = (None, 1, 4, "all"),
                seeds: Iterable[int] = (0, 1),
                kinds: Iterable[str] = ("random", "ties", "near_tie"),
                n_random: int = 3, n_corner: int = 4, path: str = "mip",
                backend: str = "highs", neighbours: str = "replace_one") -> list[dict]:
    """Exact audit of ``private_bss(method="top_r")`` (enumeration + sampler) for several ``R``.

    For every instance, neighbour and ``R`` (``None``: the default ``1 + s(p - s)``;
    ``"all"``: ``C(p, s)``, the plain exponential mechanism) the exact law of the release
    on both datasets is compared over all ``C(p, s)`` supports.  ``path="mip"`` runs the
    enumeration by outer approximation on ``backend`` (forced: these instances are small
    enough for the exhaustive path); ``path="exhaustive"`` runs the closed-form path.
    ``neighbours="add_remove"``: the add/remove release on :func:`add_remove_neighbours`
    pairs (``n_random`` removals, ``n_corner`` additions, the most optimum-flipping of each).
    """
    return [_audit_bss_exact("top_r (private_bss)", "top_r", tuple(Rs), eps, s, p, n,
                             tuple(seeds), tuple(kinds), n_random, n_corner, path, backend,
                             neighbours)]


def audit_permute_and_flip(eps: float = 1.0, s: int = 2, p: int = 6, n: int = 40,
                           seeds: Iterable[int] = (0, 1),
                           kinds: Iterable[str] = ("random", "ties", "near_tie"),
                           n_random: int = 3, n_corner: int = 4, path: str = "mip",
                           backend: str = "highs", neighbours: str = "replace_one") -> list[dict]:
    """Exact audit of ``private_bss(method="permute_and_flip")``.

    The release's law on both datasets (``result.log_probability``: permute-and-flip's law
    over all ``C(p, s)`` supports, a one-dimensional integral per support bounded to a
    relative ~1e-7) through the MIP path; that the sampler draws from that law is checked
    by the chi-square tests of ``tests/mipdp/mechanisms/test_permute_flip.py``.
    ``neighbours="add_remove"``: as in :func:`audit_top_r`.
    """
    return [_audit_bss_exact("permute-and-flip (private_bss)", "permute_and_flip", (None,), eps,
                             s, p, n, tuple(seeds), tuple(kinds), n_random, n_corner, path,
                             backend, neighbours)]


def audit_exponential(eps: float = 1.0, s: int = 2, p: int = 6, n: int = 40,
                      seeds: Iterable[int] = (0, 1),
                      kinds: Iterable[str] = ("random", "ties", "near_tie"),
                      n_random: int = 3, n_corner: int = 4, path: str = "mip",
                      backend: str = "highs", neighbours: str = "replace_one") -> list[dict]:
    """Exact audit of ``private_bss(method="exponential")`` (the default).

    The release's exact law on both datasets (``result.log_probability``: the exponential
    mechanism with the run's sensitivity and the exact normaliser) over all ``C(p, s)``
    supports, through the MIP path (the envelope is built by outer approximation on
    ``backend``); that the sampler draws from that law is checked by the chi-square tests
    of ``tests/mipdp/mechanisms/test_em_rejection.py`` and by :func:`audit_empirical`.
    ``neighbours="add_remove"``: as in :func:`audit_top_r`.
    """
    return [_audit_bss_exact("exponential (private_bss)", "exponential", (None,), eps, s, p, n,
                             tuple(seeds), tuple(kinds), n_random, n_corner, path, backend,
                             neighbours)]


def _stable(X, y, s, sens, neighbours: str = "replace_one") -> bool:
    """Seed 002's stability condition, non-privately: ``L(S_(2)) - L(S_(1)) > 2Δ``
    (replace-one, ``sens = Δ``) or ``n (L(S_(2)) - L(S_(1))) > B`` (add/remove, ``sens = B``)."""
    v = np.sort(_ls_table(X, y, s, **_LS))
    if neighbours == "add_remove":
        return bool(X.shape[0] * (v[1] - v[0]) > sens)
    return bool(v[1] - v[0] > 2.0 * sens)


def audit_mistakes(eps: float = 1.0, s: int = 2, p: int = 6, n: int = 200,
                   seeds: Iterable[int] = (0, 1, 2), n_random: int = 3,
                   n_corner: int = 4, path: str = "mip", backend: str = "highs",
                   neighbours: str = "replace_one") -> list[dict]:
    """Exact audit of the (unguarded) mistakes sampler where its condition holds.

    Only pairs on which the stability condition ``L(S_(2)) - L(S_(1)) > 2Δ`` holds on
    **both** datasets (checked non-privately by brute force) are counted: that is the
    claim of seed 002, Theorem 2. Skipped pairs are logged.  ``path``, ``backend``: as in
    :func:`audit_top_r`.  ``neighbours="add_remove"``: the add/remove release on
    :func:`add_remove_neighbours` pairs, with the condition ``n (L(S_(2)) - L(S_(1))) > B``.
    """
    worst, n_inst, n_pairs, skipped = 0.0, 0, 0, 0
    used: set = set()
    kw = {} if neighbours == "replace_one" else {"neighbours": neighbours}
    for seed in seeds:
        X, y = _instance("strong", seed, n, p)
        base, res = _bss_log_probs(X, y, s, eps, method="mistakes", path=path, backend=backend,
                                   used=used, **kw)
        sens = res.sensitivity
        if not _stable(X, y, s, sens, neighbours):
            logger.info("mistakes audit: instance %d unstable, skipped", seed)
            continue
        n_inst += 1
        rng = np.random.default_rng(2000 + seed)
        pairs = (replace_one_neighbours(X, y, rng, n_random, n_corner, flip=_flip_score(s))
                 if neighbours == "replace_one" else
                 add_remove_neighbours(X, y, rng, n_random, n_corner, flip=_flip_score(s)))
        for _, Xn, yn in pairs:
            if not _stable(np.clip(Xn, -B, B), np.clip(yn, -B, B), s, sens, neighbours):
                skipped += 1
                continue
            lp = _bss_log_probs(Xn, yn, s, eps, method="mistakes", path=path, backend=backend,
                                used=used, **kw)[0]
            worst = max(worst, max_abs_log_ratio(base, lp))
            n_pairs += 1
    logger.info("mistakes audit: %d pairs skipped (condition fails on a neighbour)", skipped)
    nb_label = "replace-one" if neighbours == "replace_one" else "add/remove-one"
    return [_row("mistakes (stable pairs)", nb_label, "exact", n_inst, n_pairs, worst, eps,
                 backend=used)]


def _ptr_pass_prob(gap: float, sens: float, eps_test: float, delta: float) -> float:
    """Exact ``P(d + Laplace(1/ε₀) > log(1/δ)/ε₀)``."""
    from .mechanisms.mistakes import ptr_distance
    t = math.log(1.0 / delta) / eps_test - ptr_distance(gap, sens)
    return 0.5 * math.exp(-eps_test * t) if t >= 0 else 1.0 - 0.5 * math.exp(eps_test * t)


def _ptr_log_probs(X, y, s, eps, eps_test, delta, **kw):
    lm, res = _bss_log_probs(X, y, s, eps, method="mistakes", **kw)
    lt, _ = _bss_log_probs(X, y, s, eps, method="top_r", **kw)
    # the samplers' scale: Δ = B/n (replace-one; res.sensitivity) or B/(2n) (add/remove, where
    # the record's sensitivity is B)
    scale = (res.sensitivity / (2.0 * X.shape[0]) if kw.get("neighbours") == "add_remove"
             else res.sensitivity)
    a = _ptr_pass_prob(res.info["gap_not_private"], scale, eps_test, delta)
    with np.errstate(divide="ignore"):
        return np.logaddexp(math.log(a) + lm if a > 0 else -np.inf,
                            math.log1p(-a) + lt if a < 1 else -np.inf)


def audit_ptr_mistakes(eps: float = 1.0, eps_test: float = 0.5, delta: float = 1e-3,
                       s: int = 2, p: int = 6, seeds: Iterable[int] = (0, 1),
                       n_random: int = 2, n_corner: int = 3, path: str = "mip",
                       backend: str = "highs", neighbours: str = "replace_one") -> list[dict]:
    """Exact audit of ``private_bss(method="mistakes", delta=δ, eps_test=ε₀)``.

    The release is a mixture: with the exact PTR pass probability ``a`` the mistakes
    sampler, otherwise top-R. Its law is computed exactly on every dataset — stable,
    unstable (near-tie instances, optimum-flipping neighbours) alike — and the exact
    ``δ`` at ``ε + ε₀`` is compared with the claimed ``δ``.  ``path``, ``backend``: as in
    :func:`audit_top_r`.  ``neighbours="add_remove"``: the add/remove release on
    :func:`add_remove_neighbours` pairs.
    """
    total = eps + eps_test
    worst, worst_delta, n_inst, n_pairs = 0.0, 0.0, 0, 0
    used: set = set()
    kw = {"path": path, "backend": backend, "used": used}
    if neighbours != "replace_one":
        kw["neighbours"] = neighbours
    for kind, seed, n in [("strong", sd, 200) for sd in seeds] + [("near_tie", sd, 40) for sd in seeds]:
        X, y = _instance(kind, seed, n, p)
        n_inst += 1
        base = _ptr_log_probs(X, y, s, eps, eps_test, delta, **kw)
        rng = np.random.default_rng(3000 + seed)
        pairs = (replace_one_neighbours(X, y, rng, n_random, n_corner, flip=_flip_score(s))
                 if neighbours == "replace_one" else
                 add_remove_neighbours(X, y, rng, n_random, n_corner, flip=_flip_score(s)))
        for _, Xn, yn in pairs:
            lp = _ptr_log_probs(Xn, yn, s, eps, eps_test, delta, **kw)
            worst = max(worst, max_abs_log_ratio(base, lp))
            worst_delta = max(worst_delta, hockey_stick(base, lp, total))
            n_pairs += 1
    nb_label = "replace-one" if neighbours == "replace_one" else "add/remove-one"
    return [_row("mistakes + PTR guard", nb_label, "exact", n_inst, n_pairs, worst, total,
                 delta, worst_delta, backend=used)]


#: The exact audits of each ``private_bss`` method (:mod:`mipdp.methods.registry`): every
#: registered method has one, and each takes ``neighbours=`` (both notions are audited
#: for a method with an ``add_remove_factor``); tests/mipdp/methods/test_registry.py
#: checks this against the registry.
METHOD_AUDITS = {"exponential": (audit_exponential,), "top_r": (audit_top_r,),
                 "mistakes": (audit_mistakes, audit_ptr_mistakes),
                 "permute_and_flip": (audit_permute_and_flip,)}


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
             ("canonical Lipschitz top-k (gamma=%g)" % g,
              lambda f, e, g=g: canonical_lipschitz_topk_distribution(f, k, e, sensitivity, gamma=g)[1])
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
            rows.append(_row(name, "score vectors, L-inf distance <= Delta", "exact", len(vecs), pairs, worst, eps))
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
    rows = []
    for neighbour, sens in (("replace-one", 2 * B * B), ("add/remove-one", B * B)):
        for topk, dist in (("canonical_lipschitz", lambda f: canonical_lipschitz_topk_distribution(
                f, k, eps, sens)[1]), ("peeling", lambda f: gumbel_peeling_topk_distribution(
                f, k, eps, sens)[1])):
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
    from .comparators.noisy_iht import (gradient_step, iht_calibration, iht_sensitivity,
                                        laplace_peeling_distribution)
    eps0, _, _ = iht_calibration(k, n_iter, eps)
    eta, c = 1.0 / B ** 2, B
    rows = []
    seeds = tuple(seeds)
    for neighbour in neighbours:
        sens = iht_sensitivity(B, c, eta, n, neighbour)
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
    inner = math.log(A) - math.log(2 * noise_scale) - np.abs(S - A * np.asarray(betas)) / noise_scale
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
    from .coefficients import objective_perturbation_calibration
    from .guarantee import Neighbour
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


# ------------------------------------------------------------------ empirical audits
def clopper_pearson_epsilon(k1: int, n1: int, k2: int, n2: int, alpha: float = 0.05,
                            delta: float = 0.0) -> float:
    """Lower confidence bound on ε from ``k1/n1`` (on D) and ``k2/n2`` (on D') hits of one event.

    With ``p1 >= lo`` and ``p2 <= hi`` (one-sided Clopper–Pearson bounds, ``alpha/2`` each),
    ``(ε, δ)``-DP requires ``p1 <= e^ε p2 + δ``, so ``ε >= log((lo - δ) / hi)`` with
    confidence ``1 - alpha``. Returns 0 when the bound is not positive.
    """
    lo = 0.0 if k1 == 0 else float(beta_dist.ppf(alpha / 2, k1, n1 - k1 + 1))
    hi = 1.0 if k2 == n2 else float(beta_dist.ppf(1 - alpha / 2, k2 + 1, n2 - k2))
    if lo - delta <= 0 or hi <= 0:
        return 0.0
    return max(0.0, math.log((lo - delta) / hi))


def audit_empirical(name: str, draw: Callable[[np.ndarray, np.ndarray, int, int], list],
                    X: np.ndarray, y: np.ndarray, Xn: np.ndarray, yn: np.ndarray,
                    eps: float, delta: float = 0.0, n_draws: int = 2000,
                    n_pilot: int = 400) -> dict:
    """Empirical lower bound on the realised ε of ``draw`` on one neighbouring pair.

    ``draw(X, y, m, seed)`` returns ``m`` hashable outputs. A pilot of ``n_pilot`` draws
    per dataset picks the output (and direction) with the largest empirical log-ratio;
    ``n_draws`` fresh draws per dataset then give the Clopper–Pearson lower bound
    (:func:`clopper_pearson_epsilon`), which must not exceed the claimed ε.
    """
    from collections import Counter
    c1, c2 = Counter(draw(X, y, n_pilot, 1)), Counter(draw(Xn, yn, n_pilot, 2))
    cands = []
    for o in set(c1) | set(c2):
        a, b = (c1[o] + 1) / (n_pilot + 2), (c2[o] + 1) / (n_pilot + 2)
        cands.append((abs(math.log(a / b)), o, a >= b))
    _, event, forward = max(cands, key=lambda t: t[0])
    h1 = sum(o == event for o in draw(X, y, n_draws, 3))
    h2 = sum(o == event for o in draw(Xn, yn, n_draws, 4))
    if not forward:
        h1, h2 = h2, h1
    lb = clopper_pearson_epsilon(h1, n_draws, h2, n_draws, delta=delta)
    return _row(name, "replace-one", "empirical", 1, 1, lb, eps, delta, float("nan"))


def _empirical_rows(n_draws: int) -> list[dict]:
    from .comparators import mcmc, two_stage
    from .screening import dp_frank_wolfe
    n_pilot = max(200, n_draws // 5)
    X, y = _instance("random", 0, 36, 5)
    eps = 4.0           # large enough that the lower bounds are not trivially 0
    Xn, yn = X.copy(), y.copy()
    Xn[0], yn[0] = np.r_[B, -B, B, -B, B], -B
    key = lambda S: tuple(int(i) for i in S)      # noqa: E731

    def draw_mcmc(A, b, m, seed):
        r = mcmc(A, b, 2, eps, bounds=(B, B), n_iter=20, random_state=seed, n_draws=m)
        return [key(S) for S in r.supports]

    def draw_two_stage(A, b, m, seed):
        r = two_stage(A, b, 2, eps, n_blocks=4, topk="laplace", random_state=seed, n_draws=m)
        return [key(S) for S in r.supports]

    def draw_fw(A, b, m, seed):
        rng = np.random.default_rng(seed)
        out = []
        for _ in range(m):
            r = dp_frank_wolfe(A, b, l1_radius=1.0, n_iter=1, eps=eps, delta=1e-5,
                               bounds=(B, B), random_state=rng)
            out.append((int(r.fw_coordinates[0]), int(r.fw_signs[0])))
        return out

    def draw_em(A, b, m, seed):
        from .selection import private_bss
        r = private_bss(A, b, 2, eps, bounds=(B, B), n_draws=m, random_state=seed,
                        enumeration_options=PATHS["mip"], **_LS)
        return [key(S) for S in r.supports]  # m independent draws, each eps-DP

    def draw_iht(A, b, m, seed):
        from .comparators.noisy_iht import noisy_iht
        r = noisy_iht(A, b, 2, eps, bounds=(B, B), random_state=seed, n_draws=m)
        return [key(S) for S in r.supports]  # m independent whole runs (T = 2), each eps-DP

    return [audit_empirical("exponential mechanism (sampled, MIP path)", draw_em, X, y, Xn, yn,
                            eps, 0.0, n_draws, n_pilot),
            audit_empirical("MCMC (20 steps)", draw_mcmc, X, y, Xn, yn, eps, 0.0, n_draws, n_pilot),
            audit_empirical("Two-Stage (Laplace top-k)", draw_two_stage, X, y, Xn, yn, eps, 0.0,
                            n_draws, n_pilot),
            audit_empirical("DP Frank-Wolfe (first vertex)", draw_fw, X, y, Xn, yn, eps, 1e-5,
                            n_draws, n_pilot),
            audit_empirical("noisy IHT (whole run, T=2, k=2)", draw_iht, X, y, Xn, yn, eps, 0.0,
                            n_draws, n_pilot)]


# ------------------------------------------------------------------ driver
def run_audit(quick: bool = False, as_frame: bool = False, backend: str = "highs"):
    """Run every audit; return the rows (a list of dicts, or a pandas DataFrame).

    The ``private_bss`` rows run the MIP path (outer approximation on ``backend``, forced
    with ``exhaustive_max = explicit_max = 0``); one top-R row runs the exhaustive path.  Each row's
    ``backend`` says which path its calls really took.  ``quick=True`` uses fewer
    instances, neighbours and draws.
    """
    seeds = (0,) if quick else (0, 1, 2)
    rows = []
    rows += audit_top_r(seeds=seeds[:2], Rs=(None, 1, "all") if quick else (None, 1, 4, "all"),
                        kinds=("ties", "near_tie") if quick else ("random", "ties", "near_tie"),
                        n_random=1 if quick else 3, n_corner=2 if quick else 4, path="mip",
                        backend=backend)
    rows += audit_top_r(seeds=seeds[:2], Rs=(None, 1, "all") if quick else (None, 1, 4, "all"),
                        n_random=2 if quick else 3, n_corner=2 if quick else 4,
                        path="exhaustive")
    rows += audit_exponential(seeds=seeds[:2],
                              kinds=("ties", "near_tie") if quick else ("random", "ties", "near_tie"),
                              n_random=1 if quick else 3, n_corner=2 if quick else 4, path="mip",
                              backend=backend)
    rows += audit_permute_and_flip(seeds=seeds[:2],
                                   kinds=("ties", "near_tie") if quick
                                   else ("random", "ties", "near_tie"),
                                   n_random=1 if quick else 3, n_corner=2 if quick else 4,
                                   path="mip", backend=backend)
    for method_audit in (audit_exponential, audit_top_r,
                         audit_permute_and_flip):   # add/remove, MIP path
        rows += method_audit(seeds=seeds[:2], kinds=("ties", "near_tie") if quick
                             else ("random", "ties", "near_tie"),
                             n_random=1 if quick else 3, n_corner=1 if quick else 3,
                             path="mip", backend=backend, neighbours="add_remove",
                             **cast("dict[str, Any]", {"Rs": (None, 1, "all")}
                                    if method_audit is audit_top_r else {}))
    rows += audit_mistakes(seeds=(0,) if quick else (0, 1, 2), n_random=1 if quick else 3,
                           n_corner=2 if quick else 4, path="mip", backend=backend)
    rows += audit_mistakes(seeds=(0,) if quick else (0, 1, 2), n_random=1 if quick else 3,
                           n_corner=2 if quick else 3, path="mip", backend=backend,
                           neighbours="add_remove")
    rows += audit_ptr_mistakes(seeds=seeds[:2], n_random=1 if quick else 2,
                               n_corner=1 if quick else 3, path="mip", backend=backend)
    rows += audit_ptr_mistakes(seeds=seeds[:2], n_random=1 if quick else 2,
                               n_corner=1 if quick else 2, path="mip", backend=backend,
                               neighbours="add_remove")
    rows += audit_private_coefficients()
    rows += audit_private_coefficients(neighbours="add_remove")
    rows += audit_topk(eps_values=(1.0,) if quick else (0.5, 1.0, 4.0))
    rows += audit_dp_sis(seeds=seeds)
    rows += audit_dp_kendall(seeds=seeds)
    rows += audit_noisy_iht(seeds=seeds[:2])
    rows += _empirical_rows(1000 if quick else 5000)
    if as_frame:
        import pandas as pd
        return pd.DataFrame(rows, columns=list(COLUMNS))
    return rows


def _path_label(backend: str) -> str:
    if backend in ("—", ""):
        return "—"
    return ", ".join("exhaustive" if b == "exhaustive" else f"MIP ({b})"
                     for b in backend.split(", "))


def to_markdown(rows: list[dict]) -> str:
    """The audit rows as a markdown table."""
    head = ["mechanism", "neighbours", "audit", "enumeration", "instances", "neighbour pairs",
            "worst log-ratio", "claimed ε", "claimed δ", "measured δ", "within claim"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        md = "—" if not np.isfinite(r["measured_delta"]) or r["claimed_delta"] == 0 \
            else f"{r['measured_delta']:.2e}"
        kind = "exact" if r["kind"] == "exact" else "empirical (95% CP lower bound)"
        lines.append("| " + " | ".join([
            r["mechanism"], r["neighbour"], kind, _path_label(r.get("backend", "—")),
            str(r["instances"]), str(r["pairs"]),
            f"{r['worst_log_ratio']:.4f}", f"{r['claimed_eps']:g}",
            f"{r['claimed_delta']:g}", md, "yes" if r["within_claim"] else "**NO**"]) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m mipdp.audit [--quick]``: print the audit table as markdown."""
    import argparse
    import sys
    import time
    parser = argparse.ArgumentParser(prog="python -m mipdp.audit", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer instances and draws")
    parser.add_argument("--backend", default="highs",
                        help="MIP backend of the private_bss rows (default highs)")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    rows = run_audit(quick=args.quick, backend=args.backend)
    sys.stdout.write(to_markdown(rows) + "\n")
    sys.stdout.write(f"\n{'quick' if args.quick else 'full'} audit, "
                     f"{time.perf_counter() - t0:.1f} s; all within claim: "
                     f"{all(r['within_claim'] for r in rows)}\n")
    return 0 if all(r["within_claim"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
