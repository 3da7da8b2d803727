"""One adapter per method name of the experiments.

Every adapter has the signature ``fn(X, y, s, eps, rng, draws, *, loss, bounds, ridge, radius)``
and returns a :class:`MethodOutput`: the ``draws`` released supports (shape ``(draws, s)``),
the total privacy cost, and the guarantee in words.  ``eps`` is the budget of *one* draw.

* ``top_r``, ``mistakes``: :func:`mipdp.selection.private_bss`; the supports are enumerated
  once and the ``draws`` releases are drawn from the same mechanism (``n_draws=draws``).
  ``mistakes`` runs **without** the propose-test-release guard (seed 002's setting), so
  its guarantee is *conditional* on the stability of the optimum (seed 002, Theorem 2);
  the adapter records that in ``guarantee``.
* ``samp_agg``: the comparator ``two_stage`` (Lasso subsample-and-aggregate, Kifer, Smith
  & Thakurta 2012 / seed 002's "Samp-Agg").
* ``mcmc``, ``dp_sis``, ``kendall``: the comparators of the same names with their defaults
  (``mcmc`` is approximately DP only; least squares only).
* ``abess``: **not private** baseline, the best-subset solver of the ``abess`` package
  (``pip install "mipdp[baselines]"``) with the support size fixed to ``s``; it shows what
  a fast non-private heuristic recovers on the same data (least squares only; one fit,
  repeated for every draw since it is deterministic).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = ["MethodOutput", "METHODS", "get_adapter", "supports_loss", "LS_ONLY"]


@dataclass
class MethodOutput:
    """What one method released in one trial."""

    supports: np.ndarray  # (draws, s)
    epsilon: float        # total over the draws
    delta: float
    guarantee: str
    time_s: float         # wall time of the whole call (all draws)


def _bss(method: str):
    def run(X, y, s, eps, rng, draws, *, loss="least_squares", bounds=(0.5, 0.5), ridge=120.0,
            radius=1.1):
        from ..exceptions import ConditionalPrivacyWarning
        from ..selection import private_bss
        from ..losses import get_loss
        if not get_loss(loss).needs_y_bound:      # ±1 labels (hinge): no bound on y
            bounds = (bounds[0], None)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConditionalPrivacyWarning)
            res = private_bss(X, y, s, eps, bounds=bounds, ridge=ridge, radius=radius, loss=loss,
                              method=method, n_draws=draws, random_state=rng)
        guarantee = str(res.guarantee)
        if method == "mistakes":
            guarantee = ("CONDITIONAL (propose-test-release guard off, as in seed 002): "
                         + guarantee)
        return MethodOutput(np.asarray(res.supports), res.epsilon, res.delta, guarantee,
                            time.perf_counter() - t0)
    run.__name__ = f"run_{method}"
    return run


def _comparator(name: str, needs_bounds: bool):
    def run(X, y, s, eps, rng, draws, *, loss="least_squares", bounds=(0.5, 0.5), ridge=120.0,
            radius=1.1):
        from ..comparators.registry import get_method
        fn = get_method(name)
        from ..losses import get_loss
        if not get_loss(loss).needs_y_bound:      # ±1 labels: |y| <= 1 is public
            bounds = (bounds[0], 1.0)
        kw = {"bounds": bounds} if needs_bounds else {}
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = fn(X, y, s, eps, random_state=rng, n_draws=draws, **kw)
        return MethodOutput(np.asarray(res.supports), res.epsilon, res.delta,
                            str(res.guarantee), time.perf_counter() - t0)
    run.__name__ = f"run_{name}"
    return run


def _abess(X, y, s, eps, rng, draws, *, loss="least_squares", bounds=(0.5, 0.5), ridge=120.0,
           radius=1.1):
    """Non-private baseline: abess's splicing best-subset solver at support size ``s``."""
    try:
        from abess import LinearRegression
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("method 'abess' needs the abess package: pip install "
                          "\"mipdp[baselines]\"") from exc
    from ..guarantee import Guarantee
    t0 = time.perf_counter()
    b_x, b_y = bounds
    Xc = np.clip(np.asarray(X, dtype=float), -b_x, b_x)
    yc = np.clip(np.asarray(y, dtype=float), -b_y, b_y)
    model = LinearRegression(support_size=int(s), fit_intercept=False, thread=1)
    model.fit(Xc, yc)
    support = np.sort(np.flatnonzero(model.coef_))[:s]
    if support.size < s:        # abess may return fewer non-zeros on degenerate data
        rest = np.setdiff1d(np.argsort(-np.abs(Xc.T @ yc)), support)[: s - support.size]
        support = np.sort(np.concatenate([support, rest]))
    g = Guarantee.none("non-private baseline (abess best-subset solver)",
                       mechanism="abess splicing, support size s")
    return MethodOutput(np.tile(support, (draws, 1)), float("nan"), float("nan"), str(g),
                        time.perf_counter() - t0)


#: experiment name -> adapter
METHODS: dict[str, Callable[..., MethodOutput]] = {
    "top_r": _bss("top_r"),
    "mistakes": _bss("mistakes"),
    "samp_agg": _comparator("two_stage", needs_bounds=False),
    "mcmc": _comparator("mcmc", needs_bounds=True),
    "dp_sis": _comparator("dp_sis", needs_bounds=True),
    "kendall": _comparator("kendall", needs_bounds=False),
    "abess": _abess,
}

#: methods whose objective is least squares only (skipped for other losses)
LS_ONLY = ("mcmc", "abess")


def supports_loss(method: str, loss: str) -> bool:
    """Whether ``method`` can run with ``loss`` (MCMC targets the least-squares objective)."""
    return not (loss != "least_squares" and method in LS_ONLY)


def get_adapter(name: str) -> Callable[..., MethodOutput]:
    """The adapter of method ``name`` (``ValueError`` listing the known names otherwise)."""
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"method: unknown method {name!r}; known: {sorted(METHODS)}") from None
