"""Exact audits of the MIP samplers of private_bss (top-R, exponential, permute-and-flip,
mistakes, PTR).

Part of :mod:`mipdp.audit` (its docstring describes the audit).
"""

from __future__ import annotations

import itertools
import logging
import math
import warnings
from collections.abc import Iterable

import numpy as np

from ..brute_force import all_supports
from ..exceptions import ConditionalPrivacyWarning
from ._common import (
    PATHS,
    TOL,
    B,
    _instance,
    _ls_table,
    _row,
    add_remove_neighbours,
    hockey_stick,
    max_abs_log_ratio,
    replace_one_neighbours,
)

logger = logging.getLogger(__name__)

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
    from ..selection import private_bss
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
    from ..brute_force import exponential_mechanism_log_probs
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
    """Prastakos et al.'s (2025) stability condition, non-privately: ``L(S_(2)) - L(S_(1)) > 2Δ``
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
    claim of Prastakos et al. (2025), Thm 2. Skipped pairs are logged. ``path``, ``backend``: as in
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
    from ..mechanisms.mistakes import ptr_distance
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
    instances = [("strong", sd, 200) for sd in seeds] + [("near_tie", sd, 40) for sd in seeds]
    for kind, seed, n in instances:
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
