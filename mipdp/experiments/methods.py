"""One adapter per method name of the experiments.

Every adapter has the signature
``fn(X, y, s, eps, rng, draws, *, loss, bounds, ridge, radius, time_limit)`` and returns a
:class:`MethodOutput`: the ``draws`` released supports (shape ``(draws, s)``), the total
privacy cost, and the guarantee in words.  ``eps`` is the budget of *one* draw.

* ``exponential``, ``top_r``, ``mistakes``: :func:`mipdp.selection.private_bss` with that
  ``method``; the envelope (EM) or the enumeration (top-R, mistakes) is built once and
  the ``draws`` releases are drawn from the same mechanism (``n_draws=draws``).  Their
  output also carries the mechanism's ``probability_bounds`` (exact for top-R and
  mistakes, certified bounds for the EM) and a ``sampler`` for further cheap draws, from
  which the runner records the exact probability that one draw is the truth.
  ``mistakes`` runs **without** the propose-test-release guard (Prastakos et al.'s setting), so
  its guarantee is *conditional* on the stability of the optimum (Prastakos et al., 2025, Thm 2);
  the adapter records that in ``guarantee``.  ``time_limit`` (seconds) bounds these
  three: a cell that hits it releases nothing and is recorded as not finished.
* ``permute_and_flip``: :func:`mipdp.selection.private_bss` with
  ``method="permute_and_flip"`` (permute-and-flip over all supports, sampled exactly).
* ``exponential_default``: ``exponential`` with the default score derived from the bounds
  (:func:`mipdp.losses.default_score`) whatever the study's ``ridge``/``radius``, so that
  a study that reproduces the paper's score (λ = 120, r = 1.1) reports the default beside it.
* ``samp_agg``: the comparator ``two_stage`` (Lasso subsample-and-aggregate, Kifer, Smith
  & Thakurta 2012 / Prastakos et al.'s (2025) "Samp-Agg").
* ``mcmc``, ``dp_sis``, ``kendall``, ``noisy_iht``: the comparators of the same names with
  their defaults (``mcmc`` is approximately DP only; least squares only; ``noisy_iht`` is
  pure eps-DP).  ``noisy_iht_approx``: noisy IHT's (eps, delta) version with
  ``delta =`` :data:`NOISY_IHT_DELTA` (advanced composition).
* ``abess``: **not private** baseline, the best-subset solver of the ``abess`` package
  (``pip install "mipdp[baselines]"``) with the support size fixed to ``s``; it shows what
  a fast non-private heuristic recovers on the same data (least squares only; one fit,
  repeated for every draw since it is deterministic).
* ``marginal``: **not private** baseline, marginal screening: the ``s`` largest
  ``|x_jᵀ y|`` on the clipped data, without noise (what DP-SIS and DPKendall privatise).
  It shows whether a design can be solved by screening at all.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["MethodOutput", "METHODS", "BSS_METHODS", "BASELINES", "get_adapter",
           "supports_loss", "LS_ONLY", "NOISY_IHT_DELTA"]

#: ``delta`` of ``noisy_iht_approx`` (the (eps, delta) version of noisy IHT): fixed and
#: public, ``1e-6 <= 1 / n**2`` for every ``n <= 1000``
NOISY_IHT_DELTA = 1e-6


@dataclass
class MethodOutput:
    """What one method released in one trial."""

    supports: np.ndarray  # (draws, s)
    epsilon: float        # total over the draws
    delta: float
    guarantee: str
    time_s: float         # wall time of the whole call (all draws)
    #: ``probability_bounds(S) -> (lo, hi)`` of one draw of the mechanism (MIP methods);
    #: **not private**
    probability_bounds: Callable | None = None
    #: ``sample(rng, k) -> (k, s) supports``: further draws of the same mechanism
    sampler: Callable | None = None
    #: False when ``time_limit`` stopped the method (then ``supports`` is empty)
    finished: bool = True
    #: why the method did not finish
    error: str | None = None
    #: ``"time_limit"`` (rerun when the study's limit grows) or ``"certification"`` (a
    #: failed certificate: rerun on every resume, and worth a bug report)
    error_kind: str | None = None


def _bss(method: str, *, default_score: bool = False):
    def run(X, y, s, eps, rng, draws, *, loss="least_squares", bounds=(0.5, 0.5), ridge=None,
            radius=None, time_limit=None):
        if default_score:     # the study's ridge/radius ignored: the rule of the bounds
            ridge = radius = None
        from ..exceptions import (
            CertificationError,
            ClippingWarning,
            ConditionalPrivacyWarning,
            TimeLimitError,
        )
        from ..losses import get_loss
        from ..selection import private_bss
        if not get_loss(loss).needs_y_bound:      # ±1 labels (hinge): no bound on y
            bounds = (bounds[0], None)
        t0 = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConditionalPrivacyWarning)
                warnings.simplefilter("ignore", ClippingWarning)   # the designs clip by design
                res = private_bss(X, y, s, eps, bounds=bounds, ridge=ridge, radius=radius,
                                  loss=loss, method=method, n_draws=draws, random_state=rng,
                                  time_limit=time_limit)
        except CertificationError as exc:       # nothing was released
            kind = "time_limit" if isinstance(exc, TimeLimitError) else "certification"
            why = "time limit" if kind == "time_limit" else "certification failed"
            return MethodOutput(np.zeros((0, int(s)), dtype=np.intp), float("nan"),
                                float("nan"), f"nothing released ({why})",
                                time.perf_counter() - t0, finished=False, error=str(exc),
                                error_kind=kind)
        elapsed = time.perf_counter() - t0
        guarantee = str(res.guarantee)
        if method == "mistakes":
            guarantee = ("CONDITIONAL (propose-test-release guard off, as in Prastakos et al.): "
                         + guarantee)
        return MethodOutput(np.asarray(res.supports), res.epsilon, res.delta, guarantee,
                            elapsed, probability_bounds=res.probability_bounds,
                            sampler=res.mechanism.sample)
    run.__name__ = f"run_{method}" + ("_default_score" if default_score else "")
    return run


def _comparator(name: str, needs_bounds: bool, **extra):
    def run(X, y, s, eps, rng, draws, *, loss="least_squares", bounds=(0.5, 0.5), ridge=None,
            radius=None, time_limit=None):
        from ..comparators.registry import get_method
        fn = get_method(name)
        from ..losses import get_loss
        if not get_loss(loss).needs_y_bound:      # ±1 labels: |y| <= 1 is public
            bounds = (bounds[0], 1.0)
        kw = {"bounds": bounds} if needs_bounds else {}
        t0 = time.perf_counter()
        # scikit-learn's own argument checks of the inner solvers (lars_path_gram in MCMC's
        # objective, Lasso in Samp-Agg) run once per support evaluated and cost MCMC about
        # a third of its time; skipping them changes no output (same supports, tested)
        from sklearn import config_context
        with warnings.catch_warnings(), config_context(skip_parameter_validation=True):
            warnings.simplefilter("ignore")
            res = fn(X, y, s, eps, random_state=rng, n_draws=draws, **kw, **extra)
        return MethodOutput(np.asarray(res.supports), res.epsilon, res.delta,
                            str(res.guarantee), time.perf_counter() - t0)
    run.__name__ = f"run_{name}" + ("_approx" if extra else "")
    return run


def _abess(X, y, s, eps, rng, draws, *, loss="least_squares", bounds=(0.5, 0.5), ridge=None,
           radius=None, time_limit=None):
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


def _marginal(X, y, s, eps, rng, draws, *, loss="least_squares", bounds=(0.5, 0.5),
              ridge=None, radius=None, time_limit=None):
    """Non-private baseline: the ``s`` largest ``|x_jᵀ y|`` on the clipped data."""
    from .._validation import clip_data
    from ..guarantee import Guarantee
    from ..losses import get_loss
    t0 = time.perf_counter()
    b_x, b_y = bounds
    Xc, yc = clip_data(np.asarray(X, dtype=float), np.asarray(y, dtype=float), b_x,
                       b_y if get_loss(loss).needs_y_bound else None)
    score = np.abs(Xc.T @ yc)
    support = np.sort(np.argsort(-score, kind="stable")[: int(s)])
    g = Guarantee.none("non-private baseline (marginal screening without noise)",
                       mechanism="top-s |x_j^T y|")
    return MethodOutput(np.tile(support, (draws, 1)), float("nan"), float("nan"), str(g),
                        time.perf_counter() - t0)


def _bss_adapters() -> dict[str, Callable[..., MethodOutput]]:
    """One adapter per method of :mod:`mipdp.methods.registry`, and ``exponential_default``."""
    from ..methods.registry import method_names
    out = {}
    for name in method_names():
        out[name] = _bss(name)
        if name == "exponential":
            out["exponential_default"] = _bss("exponential", default_score=True)
    return out


_BSS_ADAPTERS = _bss_adapters()

#: experiment name -> adapter (the private_bss methods come from the method registry)
METHODS: dict[str, Callable[..., MethodOutput]] = {
    **_BSS_ADAPTERS,
    "samp_agg": _comparator("two_stage", needs_bounds=False),
    "mcmc": _comparator("mcmc", needs_bounds=True),
    "dp_sis": _comparator("dp_sis", needs_bounds=True),
    "kendall": _comparator("kendall", needs_bounds=False),
    "noisy_iht": _comparator("noisy_iht", needs_bounds=True),
    "noisy_iht_approx": _comparator("noisy_iht", needs_bounds=True, delta=NOISY_IHT_DELTA),
    "abess": _abess,
    "marginal": _marginal,
}

#: the MIP methods of :func:`mipdp.selection.private_bss` (exact probabilities of the truth)
BSS_METHODS = tuple(_BSS_ADAPTERS)
#: non-private baselines
BASELINES = ("abess", "marginal")

#: methods whose objective is least squares only (skipped for other losses)
LS_ONLY = ("mcmc", "abess", "noisy_iht", "noisy_iht_approx")


def supports_loss(method: str, loss: str) -> bool:
    """Whether ``method`` can run with ``loss`` (MCMC targets the least-squares objective)."""
    return not (loss != "least_squares" and method in LS_ONLY)


def get_adapter(name: str) -> Callable[..., MethodOutput]:
    """The adapter of method ``name`` (``ValueError`` listing the known names otherwise)."""
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"method: unknown method {name!r}; known: {sorted(METHODS)}") from None
