"""``private_bss``: differentially private best subset selection by mixed-integer optimization."""

from __future__ import annotations

import logging
import math
import numbers
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from solvers import check_backend

from ._validation import (check_bounds, check_epsilon, check_positive, check_random_state,
                          check_sparsity, check_X_y, clip_data)
from .enumeration import SupportEnumerator, default_R
from .exceptions import BudgetError, ConditionalPrivacyWarning
from .losses import Loss, get_loss
from .mechanisms import MistakesMechanism, TopRMechanism, ptr_test
from .prescreen import prescreen_fraction
from .result import SelectionResult

logger = logging.getLogger(__name__)

__all__ = ["private_bss", "planned_epsilon", "PrivateBSSResult", "METHODS"]

METHODS = ("top_r", "mistakes")


@dataclass(repr=False)
class PrivateBSSResult(SelectionResult):
    """Result of :func:`private_bss`.

    Besides the :class:`~mipdp.result.SelectionResult` fields:

    Attributes
    ----------
    mechanism : TopRMechanism or MistakesMechanism
        The mechanism that produced the draws; it knows the exact probability of every
        support.  **Not private**: it holds the enumerated supports and objectives.
    sensitivity : float
        ``Δ`` of the support objective.
    R : int or None
        Size of the top-R set (top-R sampler only).
    candidates, candidate_values : ndarray
        The exact top-R supports (in original feature indices) and their objectives,
        or the mistakes centre.  **Not private**; for research and diagnostics only.
    stats : dict
        Enumeration statistics: time per phase, solver calls, cuts, optimality gap,
        whether the candidate set was certified, backend.
    """

    mechanism: object = None
    sensitivity: float = float("nan")
    R: int | None = None
    candidates: np.ndarray | None = None
    candidate_values: np.ndarray | None = None
    stats: dict = field(default_factory=dict)
    _columns: np.ndarray | None = None

    def probability(self, support) -> float:
        """Exact probability that one draw of this run's mechanism outputs ``support``.

        With a pre-screen it is the probability conditional on the screened columns.
        """
        return math.exp(self.log_probability(support))

    def log_probability(self, support) -> float:
        """Natural log of :meth:`probability` (``-inf`` for impossible supports)."""
        S = np.asarray(support, dtype=np.intp).ravel()
        if self._columns is not None:
            pos = {int(c): i for i, c in enumerate(self._columns)}
            if not all(int(i) in pos for i in S):
                return -math.inf
            S = np.array([pos[int(i)] for i in S])
        return self.mechanism.log_probability(S)


def _check_method_args(method, R, delta, eps_test, n_draws):
    if method not in METHODS:
        raise ValueError(f"method: unknown method {method!r}; choose one of {list(METHODS)}")
    if R is not None:
        if isinstance(R, bool) or not isinstance(R, numbers.Integral):
            raise TypeError(f"R: expected an integer fixed before seeing the data, got {type(R).__name__}")
        if R < 1:
            raise ValueError(f"R: must be >= 1, got {R}")
    if isinstance(n_draws, bool) or not isinstance(n_draws, numbers.Integral) or n_draws < 1:
        raise ValueError(f"n_draws: must be a positive integer, got {n_draws!r}")
    if delta is not None:
        delta = check_positive(delta, "delta")
        if delta >= 1:
            raise ValueError(f"delta: must be in (0, 1), got {delta}")
        if method != "mistakes":
            raise ValueError("delta: only used by method='mistakes' (its propose-test-release guard)")
    if eps_test is not None:
        eps_test = check_epsilon(eps_test, "eps_test")
        if delta is None:
            raise ValueError("eps_test: needs delta= (the propose-test-release guard uses both)")
    return delta, eps_test


def planned_epsilon(eps: float, *, n_draws: int = 1, prescreen=None, method: str = "top_r",
                    delta: float | None = None, eps_test: float | None = None) -> float:
    """Total ε a :func:`private_bss` call with these arguments spends (basic composition).

    ``fraction * eps`` for the pre-screen (once), ``(1 - fraction) * eps`` per draw, and
    the propose-test-release test (``eps_test``, default ``eps_select / 10``) once.  The
    one place where :func:`private_bss` composes its budget.
    """
    eps_select = (1.0 - prescreen_fraction(prescreen)) * check_epsilon(eps)
    total = (eps - eps_select) + n_draws * eps_select
    if method == "mistakes" and delta is not None:
        total += _eps_test(eps_select, eps_test)
    return total


def _eps_test(eps_select: float, eps_test: float | None) -> float:
    """Budget of the propose-test-release test (default a tenth of the selection's)."""
    return eps_select / 10.0 if eps_test is None else float(eps_test)


def private_bss(X, y, s: int, eps: float, *, bounds=None, ridge: float = 120.0,
                radius: float = 1.1, loss: str | Loss = "least_squares", method: str = "top_r",
                R: int | None = None, delta: float | None = None, eps_test: float | None = None,
                backend="highs", backend_options: dict | None = None, n_draws: int = 1,
                prescreen=None, time_limit: float | None = None, random_state=None,
                report_gap: bool = False, max_epsilon: float | None = None,
                enumeration_options: dict | None = None) -> PrivateBSSResult:
    """Release a size-``s`` support of a sparse linear model with differential privacy.

    The exact best supports of the ridge- and ball-constrained objective
    ``L(S)`` are enumerated by outer approximation on a MIP backend, then one of two
    samplers built on the exponential mechanism releases a support.

    Parameters
    ----------
    X : array-like, shape (n, p)
    y : array-like, shape (n,)
        Targets (``±1`` labels for ``loss="hinge"``).
    s : int
        Support size, ``1 <= s < p``.
    eps : float
        Privacy parameter of *one* draw of the sampler.
    bounds : (float, float) or float, optional
        ``(b_x, b_y)``: rows are clipped to ``|x_ij| <= b_x``, ``|y_i| <= b_y``.  Without
        bounds they are read off the data with a
        :class:`~mipdp.exceptions.PrivacyLeakWarning` (not private).
    ridge, radius : float
        ``λ > 0`` and ``r > 0`` of the objective (SPEC §1).
    loss : str or Loss, default "least_squares"
    method : {"top_r", "mistakes"}
        ``"top_r"``: pure ε-DP for any fixed ``R``.  ``"mistakes"``: ε-DP only when the
        optimum is stable (``L(S_(2)) - L(S_(1)) > 2Δ``); pass ``delta`` (and
        ``eps_test``) to add a propose-test-release guard that falls back to top-R and
        makes the release ``(ε + ε_test, δ)``-DP unconditionally.  Without ``delta`` a
        :class:`~mipdp.exceptions.ConditionalPrivacyWarning` is issued.
    R : int, optional
        Size of the top-R set; default ``1 + s(p - s)``.  Must be chosen without
        looking at the data.
    delta, eps_test : float, optional
        Propose-test-release parameters for ``method="mistakes"`` (``eps_test``
        defaults to ``eps / 10``).
    backend : {"highs", "gurobi", "pyomo"}, default "highs"
    backend_options : dict, optional
        Passed to the backend (e.g. ``{"solver": "appsi_highs"}`` for Pyomo).
    n_draws : int, default 1
        Independent releases; the total privacy cost is ``n_draws * eps``.
    prescreen : (name, k, fraction), optional
        Private pre-screen: method ``name`` (``"kendall"``, ``"dp_sis"``,
        ``"two_stage"``) chooses ``k`` columns with ``fraction * eps``; the MIP runs on
        them with the rest.  The guarantee is composed accordingly.
    time_limit : float, optional
        Seconds for the enumeration; on timeout a
        :class:`~mipdp.exceptions.CertificationError` is raised (nothing is released).
    random_state : None, int or numpy.random.Generator
    max_epsilon : float, optional
        The most the whole call may spend.  The planned total (pre-screen, every draw,
        the PTR test) is computed from the arguments alone and a larger one raises
        :class:`~mipdp.exceptions.BudgetError` before the data is read.
    enumeration_options : dict, optional
        Advanced settings of :class:`~mipdp.enumeration.SupportEnumerator` (e.g.
        ``{"exhaustive_max": 0}`` to always use the MIP backend).
    report_gap : bool, default False
        For ``method="mistakes"``: put ``L(S_(2)) - L(S_(1))`` and whether the
        stability condition held in ``result.info``.  **That figure is not private.**

    Returns
    -------
    PrivateBSSResult

    Notes
    -----
    Neighbouring datasets differ in one row (replace-one, ``n`` fixed).  The support
    objective has sensitivity ``Δ = B / n`` with ``B`` the loss's per-sample bound
    (least squares: ``(b_y + b_x r √s)² / 2``).
    """
    t_start = time.perf_counter()
    # -- parameters and budget, before the data is read -------------------------------------
    eps = check_epsilon(eps)
    delta, eps_test = _check_method_args(method, R, delta, eps_test, n_draws)
    check_backend(backend)
    eps_select = (1.0 - prescreen_fraction(prescreen)) * eps
    eps_total = planned_epsilon(eps, n_draws=n_draws, prescreen=prescreen, method=method,
                                delta=delta, eps_test=eps_test)
    if (max_epsilon is not None
            and eps_total > check_epsilon(max_epsilon, "max_epsilon") * (1 + 1e-12)):
        raise BudgetError(f"max_epsilon: this call would spend epsilon = {eps_total:g} "
                          f"(pre-screen + {n_draws} draw(s) + PTR test) > max_epsilon = "
                          f"{max_epsilon:g}; nothing was computed")
    X, y = check_X_y(X, y)
    n, p = X.shape
    s = check_sparsity(s, p)
    loss_obj = get_loss(loss, ridge=ridge, radius=radius)
    y = loss_obj.check_targets(y)
    b_x, b_y = check_bounds(bounds, X, y, need_y=loss_obj.needs_y_bound)
    rng = check_random_state(random_state)
    rng_screen, rng_test, rng_draw = rng.spawn(3)
    if time_limit is not None:
        time_limit = check_positive(time_limit, "time_limit")

    # -- optional private pre-screen ------------------------------------------------------
    columns = None
    screen_info = None
    timings = {}
    if prescreen is not None:
        from .prescreen import run_prescreen
        columns, screen_info = run_prescreen(prescreen, X, y, s, eps, (b_x, b_y), rng_screen)
        X = X[:, columns]
        p = X.shape[1]
        timings["prescreen"] = screen_info["time"]

    Xc, yc = clip_data(X, y, b_x, b_y if loss_obj.needs_y_bound else None)
    delta_L = loss_obj.sensitivity(n, s, b_x, b_y)
    objective = loss_obj.bind(Xc, yc)
    enum = SupportEnumerator(objective, s, scale=delta_L, backend=backend,
                             backend_options=backend_options, time_limit=time_limit,
                             **(enumeration_options or {}))
    R_used = default_R(p, s) if R is None else int(R)

    info: dict = {"loss": loss_obj.name, "bounds": (b_x, b_y), "ridge": loss_obj.ridge,
                  "radius": loss_obj.radius}
    ran = method
    eps_stage = n_draws * eps_select  # the selection stage (all draws), for the guarantee text
    delta_total = 0.0
    if method == "top_r":
        top = enum.top_supports(R_used)
        mech = TopRMechanism(top.supports, top.values, p, eps_select, delta_L)
        candidates, cand_values = top.supports, top.values
        guarantee = (f"{eps_stage:g}-DP (pure) under replace-one neighbours: exponential "
                     f"mechanism on the truncated objective with sensitivity Δ = {delta_L:.6g}, "
                     f"R = {top.R} fixed in advance")
    else:
        ms = enum.mistake_scores()
        gap = ms.second_best - ms.scores[0]
        candidates, cand_values = ms.center[None, :], ms.scores[:1]
        if report_gap:
            info["gap_not_private"] = gap
            info["stability_condition_held_not_private"] = bool(gap > 2 * delta_L)
        if delta is None:
            warnings.warn(
                "method='mistakes' is eps-DP only when the best support is stable "
                "(L(S_(2)) - L(S_(1)) > 2Δ), a data-dependent condition that was not checked "
                "privately. Pass delta= (and eps_test=) for an unconditional (eps + eps_test, "
                "delta)-DP release through propose-test-release.",
                ConditionalPrivacyWarning, stacklevel=2)
            mech = MistakesMechanism(ms.center, ms.scores, p, eps_select, delta_L)
            guarantee = (f"{eps_stage:g}-DP under replace-one neighbours ONLY IF "
                         f"L(S_(2)) - L(S_(1)) > 2Δ = {2 * delta_L:.6g} on this data (seed 002, "
                         "Theorem 2); the condition was not tested privately")
        else:
            eps_test = _eps_test(eps_select, eps_test)
            passed = ptr_test(gap, delta_L, eps_test, delta, rng_test)
            info["ptr_passed"] = passed
            if passed:
                mech = MistakesMechanism(ms.center, ms.scores, p, eps_select, delta_L)
            else:
                ran = "top_r"
                top = enum.top_supports(R_used)
                mech = TopRMechanism(top.supports, top.values, p, eps_select, delta_L)
                candidates, cand_values = top.supports, top.values
            eps_stage += eps_test
            delta_total = delta
            guarantee = (f"({eps_stage:g}, {delta:g})-DP under replace-one neighbours, "
                         f"unconditionally: propose-test-release (eps_test = {eps_test:g}) "
                         f"then {'mistakes' if passed else 'top-R (fallback)'} "
                         f"sampler with Δ = {delta_L:.6g}")
    timings.update({k: v.time for k, v in enum.stats.phases.items()})
    t_draw = time.perf_counter()
    draws = mech.sample(rng_draw, size=n_draws)
    timings["sampling"] = time.perf_counter() - t_draw
    if columns is not None:
        draws = np.sort(columns[draws], axis=1)
        candidates = columns[candidates]
        guarantee = (f"{screen_info['guarantee']}; then, on the {p} screened columns: "
                     f"{guarantee}; composed by basic composition: total ε = {eps_total:g}")
        info["prescreen"] = screen_info
    timings["total"] = time.perf_counter() - t_start
    info["method_run"] = ran
    return PrivateBSSResult(
        support=draws[0].copy(), supports=draws, method=method, epsilon=eps_total,
        delta=delta_total, neighbour="replace-one", guarantee=guarantee, timings=timings,
        info=info, mechanism=mech, sensitivity=delta_L,
        R=mech.R if isinstance(mech, TopRMechanism) else None, candidates=candidates,
        candidate_values=cand_values, stats=enum.stats.as_dict(), _columns=columns)
