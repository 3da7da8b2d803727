"""``private_bss``: differentially private best subset selection by mixed-integer optimization."""

from __future__ import annotations

import logging
import time
from numbers import Integral, Real

from ._feature_names import keeps_feature_names
from ._logging import with_verbose
from ._neighbours import neighbours_argument
from ._parallel import with_n_jobs
from ._param_validation import (
    EPSILON,
    N_JOBS,
    POSITIVE_INT,
    POSITIVE_REAL,
    PROBABILITY_OPEN,
    Interval,
    StrOptions,
    validate_params,
)
from ._validation import named_interface
from .accounting import cancels_on_error, check_release, record_release
from .losses import Loss
from .methods import registry as _registry
from .methods.mistakes import MISTAKES_LEVEL_C, mistakes_theta, ptr_level
from .plan import make_plan
from .plan.budget import ADD_REMOVE_SCALE, NEIGHBOURS, check_method_args, neighbour_scale_factor
from .plan.plan import planned_epsilon, planned_guarantee
from .private_ranges import PrivateBounds
from .result import PrivateBSSResult

#: the old private names, kept for code that imported them
_check_method_args = check_method_args

logger = logging.getLogger(__name__)

__all__ = ["private_bss", "planned_epsilon", "planned_guarantee", "PrivateBSSResult", "METHODS",
           "NEIGHBOURS", "ADD_REMOVE_SCALE", "neighbour_scale_factor", "mistakes_theta",
           "ptr_level", "MISTAKES_LEVEL_C"]

#: Names of the selection methods (``method=``): a tuple view of
#: :data:`mipdp.methods.registry.METHODS`, where each method is one unit (its guarantee
#: and its release, one file under ``mipdp/methods/``).
METHODS = _registry.method_names()

#: Parameter table of :func:`private_bss` (the selector derives its own from it).
PRIVATE_BSS_CONSTRAINTS = {
    "X": "no_validation", "y": "no_validation",
    "s": POSITIVE_INT, "eps": EPSILON,
    "bounds": ["bounds", StrOptions({"private", "ranks", "kendall", "data"}), PrivateBounds],
    "ridge": [None] + POSITIVE_REAL,
    "radius": [None, Interval(Real, 0, None, closed="neither", allow_inf=True)],
    "loss": [str, Loss], "method": [_registry.MethodOptions()],
    "R": [None] + POSITIVE_INT, "delta": [None] + PROBABILITY_OPEN, "eps_test": [None] + EPSILON,
    "backend": "no_validation", "backend_options": [None, dict], "n_draws": POSITIVE_INT,
    "prescreen": [None, tuple, list],
    "time_limit": [None, Interval(Real, 0, None, closed="neither", allow_inf=True)],
    "random_state": ["random_state"], "report_gap": ["boolean"],
    "max_epsilon": [None] + EPSILON, "enumeration_options": [None, dict],
    "accountant": ["accountant"], "neighbours": [StrOptions(set(NEIGHBOURS))],
    "verbose": ["boolean", Interval(Integral, 0, None, closed="left")],
    "n_jobs": N_JOBS,
}


@named_interface("private_bss")
@with_verbose
@keeps_feature_names
@neighbours_argument
@validate_params(PRIVATE_BSS_CONSTRAINTS)
@with_n_jobs
@cancels_on_error
def private_bss(X, y, s: int, eps: float, *, bounds=None, ridge: float | None = None,
                radius: float | None = None, loss: str | Loss = "least_squares",
                method: str = "exponential",
                R: int | None = None, delta: float | None = None, eps_test: float | None = None,
                backend="highs", backend_options: dict | None = None, n_draws: int = 1,
                prescreen=None, time_limit: float | None = None, random_state=None,
                report_gap: bool = False, max_epsilon: float | None = None,
                enumeration_options: dict | None = None, accountant=None,
                neighbours: str = "replace_one", verbose: int = 0,
                n_jobs: int | None = None) -> PrivateBSSResult:
    """Release a size-``s`` support of a sparse linear model with differential privacy.

    By default the release is a draw of the exponential mechanism over all ``C(p, s)``
    supports of the ridge- and ball-constrained objective ``L(S)``, sampled exactly by
    rejection from lower bounds certified by outer approximation on a MIP backend.  The
    seed's truncations (top-R, mistakes) are available through ``method``.

    Parameters
    ----------
    X : array-like, shape (n, p)
        A float64 or float32 numpy array, a :class:`numpy.memmap`, a scipy sparse matrix
        or a ``dask.array.Array``: read and clipped chunk by chunk, never densified,
        copied whole (beyond ``mipdp.data.DENSE_CACHE_BYTES``) or modified
        (docs/design.md, "Memory").
    y : array-like, shape (n,)
        Targets.  For ``loss="hinge"`` any two-class labels (``±1``, ``0/1``, bools,
        strings): sorted class order, the first class ``-1`` and the second ``+1``
        (:func:`mipdp.losses.hinge.encode_labels`, as the selector).
    s : int
        Support size, ``1 <= s < p``.
    eps : float
        Privacy parameter of *one* draw of the sampler.
    bounds : (float, float), float, "ranks", "private", PrivateBounds or "data", optional
        ``(b_x, b_y)``: rows are clipped to ``|x_ij| <= b_x``, ``|y_i| <= b_y``.
        ``None`` (default): a bounds-free score chosen by a data-free rule
        (:func:`mipdp.bounds_free.default_bounds_free`; docs/real_data.md): ``"kendall"``
        for least squares under replace-one neighbours when ``n · min(eps, 1) < 1000``
        (fewer than 1000 rows, or ``n · eps < 1000``; ``eps`` per draw; default ridge
        and radius, a method and pre-screen the Kendall score supports), else
        ``"ranks"``; ``result.info["bounds_rule"]`` says which ran, and
        a :class:`~mipdp.exceptions.LowUtilityWarning` is issued before the data is read
        when ``n · eps`` is too small for either to say much.
        ``"ranks"``: every column of ``X`` (and ``y`` for least
        squares; hinge labels stay ±1) is replaced by its centred average ranks divided
        by ``n``, and the selection runs with bounds ``(0.5, 0.5)`` and the sensitivity
        proven for ranks (:func:`mipdp.ranks.rank_sensitivity`; docs/privacy.md,
        "Rank-based scores"): pure ε-DP under both neighbour notions, no ranges needed,
        least squares and hinge only, pre-screen ``"kendall"`` only (anything else raises
        before the data is read).  ``"kendall"``: no transform and no ranges; supports
        are scored by the redundancy-aware Kendall score ``R(S) = Σ_{j∈S}|T_jy| −
        γ/(s−1) Σ_{j<l∈S}|T_jl|`` (``T = (n/2) τ_a``, ``γ = 0.75``) with its proven
        sensitivity ``2s`` (replace-one) or ``s(3/2 + γ/4)`` (add/remove)
        (:mod:`mipdp.kendall_score`; docs/privacy.md, "Redundancy-aware Kendall score"):
        pure ε-DP, least squares only, pre-screen ``"kendall"`` only.
        ``"data"``: the bounds are read off the data with a
        :class:`~mipdp.exceptions.PrivacyLeakWarning` and the result is marked **not
        private** (``result.is_private`` is False, ``result.epsilon`` is NaN).  For
        ``loss="hinge"`` ``b_y`` is ignored (the labels are ±1; pass ``(b_x, None)``).
        ``result.info["clipped_fraction_not_private"]`` reports how much of ``X`` and
        ``y`` was clipped, and a :class:`~mipdp.exceptions.ClippingWarning` is issued
        when more than half of a column or of ``y`` is (both depend on the data: **not
        private**, a message to the analyst; the release is unchanged).
        ``"private"`` (or :class:`~mipdp.private_ranges.PrivateBounds` ``(fraction=0.1,
        ...)``): clipping ranges of the columns (and of ``y`` for least squares and Huber)
        are released with ``fraction * eps`` by the exponential mechanism for quantiles
        over a public grid, every column (and ``y``) is mapped onto ``[-1/2, 1/2]`` by its
        range, and the selection runs with bounds ``(0.5, 0.5)`` on ``(1 - fraction) *
        eps`` per draw; the guarantee composes both and ``result.info["private_ranges"]``
        holds the ranges (a private output).  Domain ranges, when known, are better
        (docs/guide.md, "Private clipping ranges").
    ridge, radius : float, optional
        ``λ > 0`` and ``r > 0`` of the objective (docs/algorithms.md).  Default: derived
        from the public bounds only, never from the data (:func:`mipdp.losses.default_score`):
        ``r = b_y / (b_x √s)`` for least squares and Huber, ``r = 1 / (b_x √s)`` for the
        hinge loss, and a small ridge ``λ = mipdp.losses.DEFAULT_RIDGE``; docs/guide.md,
        "The default score", shows how it was chosen.  The paper's score is
        ``ridge=120, radius=1.1`` (``mipdp.losses.SEED_RIDGE``, ``SEED_RADIUS``).  When
        ``loss`` is a :class:`~mipdp.losses.Loss` instance its own values are used (a
        different value then raises :class:`~mipdp.exceptions.InvalidParameterError`
        instead of being ignored).  ``result.info`` reports the ``ridge`` and ``radius``
        used and ``score_rule`` (``"default"`` or ``"given"``).
    loss : str or Loss, default "least_squares"
    method : {"exponential", "top_r", "mistakes", "permute_and_flip"}, default "exponential"
        ``"exponential"``: the exponential mechanism ``P(S) ∝ exp(-ε L(S) / (2Δ))`` over
        all supports, sampled exactly: pure ε-DP per draw for every dataset (the envelope
        built from the data only changes the running time).  ``"top_r"``: the paper's
        truncation to the ``R`` best supports, pure ε-DP for any fixed ``R``.
        ``"mistakes"``: ε-DP only when the optimum is stable
        (``L(S_(2)) - L(S_(1)) > 2Δ``); pass ``delta`` (and ``eps_test``) to add a
        propose-test-release guard that falls back to top-R and makes the release
        ``(ε + ε_test, δ)``-DP unconditionally.  Without ``delta`` a
        :class:`~mipdp.exceptions.ConditionalPrivacyWarning` is issued.
        ``"permute_and_flip"``: ``argmax_S -ε L(S) / (2Δ) + E_S`` with ``E_S`` i.i.d.
        Exp(1) over all supports (permute-and-flip, McKenna & Sheldon 2020), sampled
        exactly by best-first search over the same certified envelope: pure ε-DP per
        draw for every dataset, never worse than the exponential mechanism in expected
        score; ``result.probability_bounds(S)`` gives certified bounds on its law
        (docs/algorithms.md, "Permute-and-flip over all supports").
    R : int, optional
        Size of the top-R set; default ``1 + s(p - s)``.  Must be chosen without
        looking at the data.
    delta, eps_test : float, optional
        Propose-test-release parameters for ``method="mistakes"``; ``eps_test`` defaults
        to ``(1 - f)·eps / 10``, a tenth of the selection's per-draw budget (``f`` the
        pre-screen's fraction, 0 without one).
    backend : {"highs", "gurobi", "pyomo"}, default "highs"
    backend_options : dict, optional
        Passed to the backend (e.g. ``{"solver": "appsi_highs"}`` for Pyomo).
    n_draws : int, default 1
        Independent draws from one enumeration.  By basic composition they cost
        ``f·eps + n_draws·(1 - f)·eps`` in total (``f`` the pre-screen's budget fraction,
        0 without one), plus ``eps_test`` once for ``method="mistakes"`` with ``delta=``;
        ``result.epsilon`` reports it and :func:`planned_epsilon` computes it beforehand.
    prescreen : (name, k, fraction), optional
        Private pre-screen: method ``name`` (``"kendall"``, ``"dp_sis"``,
        ``"two_stage"``) chooses ``k`` columns with ``fraction * eps``; the MIP runs on
        them with the rest.  The guarantee is composed accordingly.
    time_limit : float, optional
        Seconds for the whole call (``None`` or ``float("inf")``: no limit), counted from
        its start (enumeration and sampling); on
        timeout a :class:`~mipdp.exceptions.TimeLimitError` (a
        :class:`~mipdp.exceptions.CertificationError`) is raised: nothing is released.
        Every phase checks it (solver calls, evaluations, every chunk of the sampler's
        proposals), so the call raises within about a second of it; the message names
        the limit, the phase and what to change (solver details at DEBUG log level).
    random_state : None, int or numpy.random.Generator
    max_epsilon : float, optional
        The most the whole call may spend.  The planned total (pre-screen, every draw,
        the PTR test) is computed from the arguments alone and a larger one raises
        :class:`~mipdp.exceptions.BudgetError` before the data is read.
    enumeration_options : dict, optional
        Advanced settings of :class:`~mipdp.enumeration.SupportEnumerator`:
        ``{"exhaustive_max": 0, "explicit_max": 0}`` always uses the MIP backend (no
        exhaustive evaluation of small problems, no explicit search of small regions); with
        ``"full_class_max": 0`` as well, the envelope of the exponential mechanism and
        permute-and-flip bounds every mistake class by certified MIP region bounds (by
        default a least-squares class of at most 100 000 supports is evaluated in full);
        ``{"progress": callback}`` receives progress events of the enumeration (a dict per
        step: phase, solves, evaluations, best value, bound; not private), as the command
        line's progress bar does.  Keys and values are checked before the data is read
        against :data:`mipdp.enumeration.options.ENUMERATION_OPTIONS`; an unknown key, or
        a value that would leave a certificate unproven (a smaller ``cutoff_margin``, a
        looser ``tol``), raises :class:`~mipdp.exceptions.InvalidParameterError`.
    accountant : BudgetAccountant, optional
        Privacy accountant (:mod:`mipdp.accounting`): the planned guarantee
        (:func:`planned_guarantee`) is checked against its budget before the data is read
        (:class:`~mipdp.exceptions.BudgetError` if it does not fit) and the release's
        guarantee is recorded.  Default: the accountant of an enclosing ``with`` block.
    report_gap : bool, default False
        For ``method="mistakes"``: put ``L(S_(2)) - L(S_(1))`` and whether the
        stability condition held in ``result.info``.  **That figure is not private.**
    neighbours : {"replace_one", "add_remove"}, default "replace_one"
        Neighbour notion of the guarantee.  ``"replace_one"``: the datasets have the same
        (public) ``n`` and differ in one row; the score's sensitivity is ``Δ = B/n``.
        ``"add_remove"``: one dataset is the other with one row added (``n`` is not
        public).  The sum-form score ``F(S) = n·L(S)`` is then *monotone* (adding a row
        moves every ``F(S)`` up by an amount in ``[0, B]``), and the exponential
        mechanism, top-R and mistakes samplers use weights ``exp(-ε F / B)``, i.e. the
        scale ``B/(2n)`` in place of ``B/n``: the same utility at half the ε
        (docs/privacy.md, "MIP methods under add/remove neighbours", proves it per
        method).  Not available with ``prescreen`` (the pre-screeners run under
        replace-one) nor for a method outside :data:`ADD_REMOVE_SCALE`: both raise
        :class:`~mipdp.exceptions.InvalidParameterError` before the data is read.  The
        guarantee's ``sensitivity`` is then ``B`` (data-free); an add/remove guarantee
        converts to replace-one with ``guarantee.as_replace_one()`` (twice the ε).
        Rows: ``n >= 2`` under replace-one (``n`` public), every ``n >= 1`` under
        add/remove (``n`` private, so no check depends on it; docs/privacy.md, "The number
        of rows").
    verbose : int or bool, default 0
        ``1``: log the call's phases on stderr (start, a line every few seconds while a
        phase runs long, the end), ``2``: every step; ``0``: only what the ``logging``
        configuration shows.  :func:`mipdp.set_verbosity` does the same for every call.
        The lines' figures (timings, counts, objective values) are **not private**.
    n_jobs : int, optional
        Threads for the call's independent work (scikit-learn's semantics: ``None`` means
        1, ``-1`` all cores): the clipping pass over ``X`` and the column products by
        column blocks, the warm start's Gram products and one-swap values by blocks, and
        the mistake classes evaluated in full by chunks (docs/algorithms.md, "Parallel
        work").  The release does not depend on it: the same ``random_state`` gives the
        same support for every ``n_jobs``.

    Returns
    -------
    PrivateBSSResult
        ``result.guarantee`` is the :class:`~mipdp.guarantee.Guarantee` of the whole call.

    Notes
    -----
    By default neighbouring datasets differ in one row (replace-one, ``n`` fixed).  The
    support objective has sensitivity ``Δ = B / n`` with ``B`` the loss's per-sample bound
    (least squares: ``(b_y + b_x r √s)² / 2``).  Under ``neighbours="add_remove"`` the
    samplers use the scale ``B/(2n)`` (see ``neighbours``).
    """
    t_start = time.perf_counter()
    args = dict(locals())          # every argument, so that parameters added later reach it
    plan = make_plan(args)         # parameters and budget, before the data is read
    acc = check_release(accountant, plan.guarantee())
    return record_release(acc, plan.run(X, y, random_state, started=t_start))
