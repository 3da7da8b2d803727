"""``private_bss``: differentially private best subset selection by mixed-integer optimization."""

from __future__ import annotations

import logging
import math
import time
from typing import Any
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from mipdp.solvers import check_backend

from numbers import Integral, Real

from ._param_validation import (EPSILON, N_JOBS, POSITIVE_INT, POSITIVE_REAL,
                                 PROBABILITY_OPEN, Interval, StrOptions, check_less_than,
                                 validate_params)
from ._parallel import with_n_jobs
from ._validation import (bounds_not_private_reason, check_bounds, check_epsilon,
                          check_positive, check_random_state, check_X_y, clip_design, min_samples,
                          clipping_diagnostic, data_derived_bounds)
from ._feature_names import keeps_feature_names
from ._logging import with_verbose
from ._neighbours import neighbours_argument
from .accounting import check_release, record_release
from .enumeration import SupportEnumerator, default_R
from .enumeration.options import check_enumeration_options
from .exceptions import BudgetError
from .guarantee import Guarantee, Neighbour, compose
from .losses import Loss, get_loss
from .methods import registry as _registry
from .methods.mistakes import MISTAKES_LEVEL_C, mistakes_theta, ptr_level
from .prescreen import prescreen_fraction
from .ranks import (RANK_BOUNDS, check_ranks_options, is_ranks, rank_design,
                    rank_sensitivity, uniform_ranks)
from .private_ranges import (MAPPED_BOUNDS, PrivateBounds, as_private_bounds, ranges_guarantee,
                             run_with_private_ranges)
from .result import SelectionResult

logger = logging.getLogger(__name__)

__all__ = ["private_bss", "planned_epsilon", "planned_guarantee", "PrivateBSSResult", "METHODS",
           "NEIGHBOURS", "ADD_REMOVE_SCALE", "neighbour_scale_factor", "mistakes_theta",
           "ptr_level", "MISTAKES_LEVEL_C"]

#: Names of the selection methods (``method=``): a tuple view of
#: :data:`mipdp.methods.registry.METHODS`, where each method is one unit (its guarantee
#: and its release, one file under ``mipdp/methods/``).
METHODS = _registry.method_names()

#: Neighbour notions of :func:`private_bss` (its ``neighbours=`` argument).
NEIGHBOURS = ("replace_one", "add_remove")


class _AddRemoveScale(Mapping):
    """Live read-only view ``{method: add_remove_factor}`` of the method registry."""

    def __getitem__(self, name):
        return _registry.add_remove_scale()[name]

    def __iter__(self):
        return iter(_registry.add_remove_scale())

    def __len__(self):
        return len(_registry.add_remove_scale())

    def __repr__(self):
        return repr(_registry.add_remove_scale())


#: Per method, the factor applied to the replace-one noise scale ``Δ = B/n`` under
#: ``neighbours="add_remove"`` (each method's ``add_remove_factor``, read from the
#: registry).  ``0.5`` is the monotone factor: the method's score in sum
#: form ``F = n·L`` moves by an amount in ``[0, B]`` (all in the same direction) when a
#: row is added, so the exponent ``ε F / B = ε L / (2 · B/(2n))`` is ε-DP (docs/privacy.md,
#: "MIP methods under add/remove neighbours").  A method absent from this table refuses ``"add_remove"``
#: before the data is read; a method whose score is not proven monotone would use ``1.0``
#: (the add/remove sensitivity ``B`` of a non-monotone sum-form score is the same bound).
ADD_REMOVE_SCALE: Mapping[str, float] = _AddRemoveScale()


def neighbour_scale_factor(method: str, neighbours: str = "replace_one") -> float:
    """Factor of the noise scale ``Δ = B/n`` of ``method`` under ``neighbours``.

    ``1.0`` under replace-one; :data:`ADD_REMOVE_SCALE` ``[method]`` under add/remove.
    Raises :class:`~mipdp.exceptions.InvalidParameterError` (before any data is read) for
    a notion the method does not support.
    """
    from ._param_validation import InvalidParameterError
    if neighbours == "replace_one":
        return 1.0
    if neighbours != "add_remove":
        raise InvalidParameterError(f"The 'neighbours' parameter must be a str among "
                                    f"{set(NEIGHBOURS)}. Got {neighbours!r} instead.")
    if method not in ADD_REMOVE_SCALE:
        raise InvalidParameterError(
            f"neighbours: method={method!r} is not available under add/remove neighbours "
            f"(supported: {sorted(ADD_REMOVE_SCALE)}); pass neighbours='replace_one' or "
            "another method")
    return float(ADD_REMOVE_SCALE[method])


def _neighbour_record(neighbours: str) -> Neighbour:
    return Neighbour.ADD_REMOVE if neighbours == "add_remove" else Neighbour.REPLACE_ONE


@dataclass(repr=False)
class PrivateBSSResult(SelectionResult):
    """Result of :func:`private_bss`.

    Besides the :class:`~mipdp.result.SelectionResult` fields:

    Attributes
    ----------
    mechanism : ExponentialMechanismSampler, PermuteAndFlipSampler, TopRMechanism or MistakesMechanism
        The mechanism that produced the draws (it knows the exact probability of every
        support, or certified bounds on it for the exponential mechanism).  **Not
        private**: it holds the enumerated supports and objectives.
    sensitivity : float
        ``Δ`` of the support objective (read off ``guarantee``; **not private** when the
        bounds were read off the data).
    R : int or None
        Size of the top-R set (top-R sampler only).
    candidates, candidate_values : ndarray
        The exact top-R supports (in original feature indices) and their objectives,
        or the mistakes centre, or (exponential mechanism, permute-and-flip) the
        envelope's centre: the optimum when ``stats["optimum_certified"]`` is True, else a
        one-swap local optimum (the mechanisms never need the optimum certified, so it is
        not certified only for this field).  **Not private**; for research and diagnostics
        only.
    stats : dict
        Enumeration statistics: time per phase, solver calls, cuts, optimality gap,
        whether the candidate set was certified, backend; for ``method="exponential"``
        also ``stats["sampler"]``: proposals made and accepted, the bound on the expected
        number of proposals, the envelope's mass per region.  **Not private**: every
        figure depends on the data (the counts tell neighbours apart).
    """

    mechanism: Any = None   # a sampler (sample, log_probability, log_probability_bounds)
    R: int | None = None
    candidates: np.ndarray | None = None
    candidate_values: np.ndarray | None = None
    stats: dict = field(default_factory=dict)
    _columns: np.ndarray | None = None

    def probability(self, support) -> float:
        """Exact probability that one draw of this run's mechanism outputs ``support``.

        With a pre-screen it is the probability conditional on the screened columns.
        ``method="exponential"`` knows it exactly only when every support was evaluated
        (small problems); otherwise this raises ``ValueError``: use
        :meth:`probability_bounds`.  ``method="permute_and_flip"`` likewise, when
        ``C(p, s) <= 20 000`` (its law needs every support's score).  **Not private** (it
        depends on the data).
        """
        return math.exp(self.log_probability(support))

    def log_probability(self, support) -> float:
        """Natural log of :meth:`probability` (``-inf`` for impossible supports)."""
        S = self._local(support)
        return -math.inf if S is None else self.mechanism.log_probability(S)

    def probability_bounds(self, support) -> tuple[float, float]:
        """Certified bounds ``(lo, hi)`` on the probability that one draw is ``support``.

        Equal for the samplers whose law is known exactly (top-R, mistakes, and the
        exponential mechanism when every support was evaluated).  **Not private**.
        """
        S = self._local(support)
        if S is None:
            return 0.0, 0.0
        lo, hi = self.mechanism.log_probability_bounds(S)
        return math.exp(min(lo, hi)), math.exp(hi)

    def _local(self, support):
        """``support`` in the indices the mechanism works on (``None``: impossible)."""
        S = np.asarray(support, dtype=np.intp).ravel()
        if self._columns is not None:
            pos = {int(c): i for i, c in enumerate(self._columns)}
            if not all(int(i) in pos for i in S):
                return None
            S = np.array([pos[int(i)] for i in S])
        return S


def _check_method_args(method, R, delta, eps_test, n_draws):
    """Relations between arguments (types and ranges are in the parameter table)."""
    if delta is not None:
        delta = float(delta)
        unit = _registry.METHODS.get(method)
        if unit is None or not unit.takes_delta:
            users = " or ".join(repr(name) for name, m in _registry.METHODS.items()
                                if m.takes_delta)
            raise ValueError(f"delta: only used by method={users} (its propose-test-release "
                             "guard)")
    if eps_test is not None:
        eps_test = float(eps_test)
        if delta is None:
            raise ValueError("eps_test: needs delta= (the propose-test-release guard uses both)")
    return delta, eps_test


def _resolve_public_score(loss_obj: Loss, s: int, bounds) -> Loss:
    """Apply the default score rule now when the bounds it needs are public numbers.

    So that a rule that cannot apply raises before the data is read; with bounds left
    to the data the rule runs after :func:`check_bounds` (and the result is not private).
    """
    if is_ranks(bounds):
        bounds = RANK_BOUNDS
    if loss_obj.resolved or bounds is None or isinstance(bounds, str):
        return loss_obj
    if isinstance(bounds, Real):
        b_x = b_y = float(bounds)
    else:
        b_x, b_y = bounds
    if b_x is None or (b_y is None and loss_obj.needs_y_bound):
        return loss_obj
    return loss_obj.resolve(s, float(b_x), None if b_y is None else float(b_y))


def planned_epsilon(eps: float, *, n_draws: int = 1, prescreen=None, method: str = "exponential",
                    delta: float | None = None, eps_test: float | None = None,
                    bounds=None) -> float:
    """Total ε a :func:`private_bss` call with these arguments spends (basic composition).

    ``fraction * eps`` for the pre-screen (once), ``(1 - fraction) * eps`` per draw, and
    the propose-test-release test (``eps_test``, default ``eps_select / 10``) once.  The
    one place where :func:`private_bss` composes its budget.  With private clipping
    ranges (``bounds="private"`` or a :class:`~mipdp.private_ranges.PrivateBounds`) their
    ``bounds.fraction * eps`` comes first (once) and the rest is planned on the remainder.
    """
    spec = as_private_bounds(bounds)
    if spec is not None:
        eps_r = spec.fraction * check_epsilon(eps)
        return eps_r + planned_epsilon(eps - eps_r, n_draws=n_draws, prescreen=prescreen,
                                       method=method, delta=delta, eps_test=eps_test)
    eps_select = _selection_epsilon(check_epsilon(eps), prescreen)
    total = (eps - eps_select) + n_draws * eps_select
    once = _registry.get_method(method).once_epsilon(eps_select, delta=delta, eps_test=eps_test)
    if once:       # the method's own one-off spend (the PTR test of a guarded mistakes run)
        total += once
    return total


def _default_bounds(bounds):
    """``bounds=None`` means ``"ranks"``: a call without bounds is private."""
    return "ranks" if bounds is None else bounds


def _leaky(bounds):
    """``"data"`` (bounds read off the data, not private) in the form of the checks'
    ``None``; any other value unchanged."""
    return None if isinstance(bounds, str) and bounds == "data" else bounds


def _selection_epsilon(eps: float, prescreen) -> float:
    """ε of one draw: what the pre-screen's share leaves (the one place of the split)."""
    return (1.0 - prescreen_fraction(prescreen)) * float(eps)


def planned_guarantee(eps: float, *, n_draws: int = 1, prescreen=None,
                      method: str = "exponential",
                      delta: float | None = None, eps_test: float | None = None, bounds=None,
                      loss: str | Loss = "least_squares", sensitivity: float | None = None,
                      R: int | None = None, ptr_passed: bool | None = None,
                      prescreen_guarantee: Guarantee | None = None,
                      neighbours: str = "replace_one") -> Guarantee:
    """The :class:`~mipdp.guarantee.Guarantee` of a :func:`private_bss` call.

    Computed from the arguments alone (so an accountant can check it before the data is
    read); :func:`private_bss` calls it again after the release with the details it then
    knows (``sensitivity``, ``R``, whether the PTR test passed, the pre-screen's record).
    Its ``epsilon`` is :func:`planned_epsilon`.  The method's own part is its unit's
    :meth:`~mipdp.methods.base.SelectionMethod.guarantee` (``mipdp/methods/<method>.py``);
    the private ranges, the pre-screen and the data-derived-bounds label are composed here.
    ``bounds=None`` means ``"ranks"`` (as in :func:`private_bss`).

    Under ``neighbours="add_remove"`` the record's ``neighbour`` is
    :attr:`~mipdp.guarantee.Neighbour.ADD_REMOVE` and its ``sensitivity`` is ``B``, the
    add/remove sensitivity of the monotone sum-form score ``F = n·L`` (``n`` is not public
    then, so ``B/n`` is not reported); pass ``sensitivity=B``.
    """
    bounds = _default_bounds(bounds)
    spec = as_private_bounds(bounds)
    if spec is not None:   # private clipping ranges first, the selection on the rest of eps
        eps_r = spec.fraction * float(eps)
        rest = planned_guarantee(
            float(eps) - eps_r, n_draws=n_draws, prescreen=prescreen, method=method,
            delta=delta, eps_test=eps_test, bounds=MAPPED_BOUNDS, loss=loss,
            sensitivity=sensitivity, R=R, ptr_passed=ptr_passed,
            prescreen_guarantee=prescreen_guarantee, neighbours=neighbours)
        return ranges_guarantee(spec, eps_r, neighbours, get_loss(loss).needs_y_bound) + rest
    nb = _neighbour_record(neighbours)
    eps_select = _selection_epsilon(eps, prescreen)
    stage = _registry.get_method(method).guarantee(
        eps_select, n_draws, nb, sensitivity=sensitivity, R=R, delta=delta,
        eps_test=eps_test, ptr_passed=ptr_passed)
    if is_ranks(bounds):   # the score on ranks: its own Δ, and not monotone under add/remove
        from dataclasses import replace as _replace
        from .methods.base import _add_remove_note
        note = ("score on uniform ranks (bounds='ranks', no public ranges): sensitivity of "
                "F = n L proven for ranks (docs/privacy.md, 'Rank-based scores')")
        if nb is Neighbour.ADD_REMOVE:
            note += ", not monotone: weights exp(-eps F(S) / (2 Delta)), Delta uniform in n"
            old = stage.notes.replace(_add_remove_note(sensitivity), "").strip("; ")
        else:
            old = stage.notes
        stage = _replace(stage, notes=f"{old}; {note}" if old else note)
    if prescreen is not None:
        if prescreen_guarantee is None:
            name = prescreen[0] if isinstance(prescreen, (tuple, list)) and prescreen else "?"
            prescreen_guarantee = Guarantee.pure(float(eps) - eps_select, nb,
                                                 f"private pre-screen ({name})")
        stage = prescreen_guarantee + stage
    need_y = get_loss(loss).needs_y_bound
    derived = data_derived_bounds(_leaky(bounds), need_y=need_y)
    if derived:
        stage = stage.not_private(bounds_not_private_reason(derived))
    return stage


#: Parameter table of :func:`private_bss` (the selector derives its own from it).
PRIVATE_BSS_CONSTRAINTS = {
    "X": "no_validation", "y": "no_validation",
    "s": POSITIVE_INT, "eps": EPSILON,
    "bounds": ["bounds", StrOptions({"private", "ranks", "data"}), PrivateBounds],
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


@with_verbose
@keeps_feature_names
@neighbours_argument
@validate_params(PRIVATE_BSS_CONSTRAINTS)
@with_n_jobs
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
        ``None`` (default) means ``"ranks"``: every column of ``X`` (and ``y`` for least
        squares; hinge labels stay ±1) is replaced by its centred average ranks divided
        by ``n``, and the selection runs with bounds ``(0.5, 0.5)`` and the sensitivity
        proven for ranks (:func:`mipdp.ranks.rank_sensitivity`; docs/privacy.md,
        "Rank-based scores"): pure ε-DP under both neighbour notions, no ranges needed,
        least squares and hinge only, pre-screen ``"kendall"`` only (anything else raises
        before the data is read).  ``"data"``: the bounds are read off the data with a
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
        "The default score", shows how it was chosen.  The seed's score is
        ``ridge=120, radius=1.1`` (``mipdp.losses.SEED_RIDGE``, ``SEED_RADIUS``).  When
        ``loss`` is a :class:`~mipdp.losses.Loss` instance its own values are used (a
        different value then raises :class:`~mipdp.exceptions.InvalidParameterError`
        instead of being ignored).  ``result.info`` reports the ``ridge`` and ``radius``
        used and ``score_rule`` (``"default"`` or ``"given"``).
    loss : str or Loss, default "least_squares"
    method : {"exponential", "top_r", "mistakes", "permute_and_flip"}, default "exponential"
        ``"exponential"``: the exponential mechanism ``P(S) ∝ exp(-ε L(S) / (2Δ))`` over
        all supports, sampled exactly: pure ε-DP per draw for every dataset (the envelope
        built from the data only changes the running time).  ``"top_r"``: the seed's
        truncation to the ``R`` best supports, pure ε-DP for any fixed ``R``.  ``"mistakes"``: ε-DP only when the
        optimum is stable (``L(S_(2)) - L(S_(1)) > 2Δ``); pass ``delta`` (and
        ``eps_test``) to add a propose-test-release guard that falls back to top-R and
        makes the release ``(ε + ε_test, δ)``-DP unconditionally.  Without ``delta`` a
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
        (docs/privacy.md, "MIP methods under add/remove neighbours", proves it per method).  Not available
        with ``prescreen`` (the pre-screeners run under replace-one) nor for a method
        outside :data:`ADD_REMOVE_SCALE`: both raise
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
    if as_private_bounds(bounds) is not None:   # ranges released first (private_ranges.py)
        # every argument, so that parameters added later are passed on too
        return run_with_private_ranges(private_bss, dict(locals()))
    t_start = time.perf_counter()
    # -- parameters and budget, before the data is read -------------------------------------
    bounds = _default_bounds(bounds)
    eps = float(eps)
    delta, eps_test = _check_method_args(method, R, delta, eps_test, n_draws)
    scale_factor = neighbour_scale_factor(method, neighbours)
    ranks = is_ranks(bounds)
    if ranks:   # the score on ranks is not monotone under add/remove: the full Δ
        scale_factor = 1.0
    if neighbours == "add_remove" and prescreen is not None:
        from ._param_validation import InvalidParameterError
        raise InvalidParameterError(
            "neighbours: prescreen= is not available under add/remove neighbours (the "
            "pre-screeners run under replace-one, and guarantees under different notions do "
            "not compose); drop prescreen= or pass neighbours='replace_one'")
    check_backend(backend, backend_options)
    enum_options = check_enumeration_options(enumeration_options, "private_bss")
    loss_obj = get_loss(loss, ridge=ridge, radius=radius)
    score_rule = "given" if loss_obj.resolved else "default"
    if ranks:
        check_ranks_options(loss_obj.name, prescreen, method, neighbours)
    loss_obj = _resolve_public_score(loss_obj, s, bounds)
    eps_select = _selection_epsilon(eps, prescreen)
    eps_total = planned_epsilon(eps, n_draws=n_draws, prescreen=prescreen, method=method,
                                delta=delta, eps_test=eps_test)
    if max_epsilon is not None and eps_total > max_epsilon * (1 + 1e-12):
        raise BudgetError(f"max_epsilon: this call would spend epsilon = {eps_total:g} "
                          f"(pre-screen + {n_draws} draw(s) + PTR test) > max_epsilon = "
                          f"{max_epsilon:g}; nothing was computed")
    plan = dict(n_draws=n_draws, prescreen=prescreen, method=method, delta=delta,
                eps_test=eps_test, bounds=bounds, loss=loss_obj, neighbours=neighbours)
    acc = check_release(accountant, planned_guarantee(eps, **plan, R=R))
    y = loss_obj.encode_targets(y)      # hinge: any two-class labels as ±1
    # arrays, memmaps, sparse: not copied (mipdp.data); n >= 1 under add/remove (n private)
    X, y = check_X_y(X, y, lazy=True, min_samples=min_samples(neighbours == "add_remove"))
    n, p = X.shape
    s = check_less_than(s, p, "s", "p", "private_bss")
    y = loss_obj.check_targets(y)
    if ranks:     # uniform ranks, column by column (mipdp/ranks.py); labels stay ±1
        t_ranks = time.perf_counter()
        if prescreen is None:     # else only the kept columns, after the (rank-invariant)
            X = rank_design(X)    # Kendall pre-screen below
        if loss_obj.needs_y_bound:
            y = uniform_ranks(y)
        b_x, b_y = RANK_BOUNDS[0], (RANK_BOUNDS[1] if loss_obj.needs_y_bound else None)
    else:
        b_x, b_y = check_bounds(_leaky(bounds), X, y, need_y=loss_obj.needs_y_bound)
    loss_obj = loss_obj.resolve(s, b_x, b_y)    # data-derived bounds: result not private
    rng = check_random_state(random_state)
    rng_screen, rng_test, rng_draw = rng.spawn(3)

    # -- optional private pre-screen ------------------------------------------------------
    columns = None
    screen_info = None
    timings = {"ranks": time.perf_counter() - t_ranks} if ranks else {}
    if prescreen is not None:
        from .prescreen import run_prescreen
        screen_bounds = (b_x, b_y if loss_obj.needs_y_bound else 1.0)   # ±1 labels: public
        columns, screen_info = run_prescreen(prescreen, X, y, s, eps, screen_bounds, rng_screen)
        X = _take_columns(X, columns)
        p = X.shape[1]
        timings["prescreen"] = screen_info["time_not_private"]
        if ranks:
            t_ranks = time.perf_counter()
            X = rank_design(X)
            timings["ranks"] += time.perf_counter() - t_ranks

    Xc, yc = clip_design(X, y, b_x, b_y if loss_obj.needs_y_bound else None,
                         statistics=loss_obj.sufficient_statistics)   # tall dask data
    clipped = clipping_diagnostic(Xc, y, b_x, b_y if loss_obj.needs_y_bound else None)
    # not private (a diagnostic, see info)
    # the samplers' scale: B/n (replace-one) or B/(2n) (add/remove, monotone score).  Under
    # add/remove n enters only here, through F = n·L: every quantity below that carries the
    # scale (levels, PTR threshold, exponents) is a data-free multiple of it, so the release
    # depends on the data only through F/B (docs/privacy.md, "MIP methods under add/remove
    # neighbours").
    if ranks:   # Δ of F = n·L on ranks (uniform in n under add/remove): docs/privacy.md
        assert loss_obj.radius is not None  # resolved above
        rank_delta = rank_sensitivity(loss_obj.name, n, s, loss_obj.radius, neighbours)
        delta_L = rank_delta / n
        record_sens = rank_delta if neighbours == "add_remove" else delta_L
    else:
        delta_L = scale_factor * loss_obj.sensitivity(n, s, b_x, b_y)
        record_sens = (loss_obj.sample_bound(s, b_x, b_y) if neighbours == "add_remove"
                       else delta_L)
    objective = loss_obj.bind(Xc, yc)
    enum = SupportEnumerator(objective, s, scale=delta_L, backend=backend,
                             backend_options=backend_options, time_limit=time_limit,
                             started=t_start, **enum_options)
    R_used = default_R(p, s) if R is None else int(R)
    logger.info("private_bss: method=%s, loss=%s, n=%d, p=%d, s=%d, eps per draw %g, "
                "%d draw(s), backend %s", method, loss_obj.name, n, p, s, eps_select, n_draws,
                backend)

    bounds_key = "bounds_not_private" if data_derived_bounds(
        _leaky(bounds), need_y=loss_obj.needs_y_bound) else "bounds"
    if ranks:
        bounds_key = "bounds"
    info: dict = {"loss": loss_obj.name, bounds_key: "ranks" if ranks else (b_x, b_y),
                  "ridge": loss_obj.ridge,
                  "radius": loss_obj.radius, "score_rule": score_rule,
                  "clipped_fraction_not_private": clipped}
    # -- the method's release (mipdp/methods/<method>.py) ----------------------------------
    rel = _registry.get_method(method).release(
        enum, objective, p=p, s=s, eps_select=eps_select, scale=delta_L, R=R_used,
        delta=delta, eps_test=eps_test, rng_test=rng_test, report_gap=report_gap)
    mech, candidates, cand_values = rel.mechanism, rel.candidates, rel.candidate_values
    info.update(rel.info)
    ran = rel.method_run
    timings.update({k: v.time for k, v in enum.stats.phases.items()})
    t_draw = time.perf_counter()
    enum.progress.start("sampling", draws=n_draws)     # the progress bar shows this phase
    draws = mech.sample(rng_draw, size=n_draws)
    timings["sampling"] = time.perf_counter() - t_draw
    enum.progress.done("sampling", draws=n_draws)
    logger.info("private_bss: %s (%s) enumeration %.2f s, sampling %.2f s (timings are not "
                "private)", method, ran, sum(v.time for v in enum.stats.phases.values()),
                timings["sampling"])
    stats = enum.stats.as_dict()
    sampler_stats = rel.sampler_stats()
    if sampler_stats is not None:
        stats["sampler"] = sampler_stats
    if columns is not None:
        draws = np.sort(columns[draws], axis=1)
        candidates = columns[candidates]
        info["prescreen"] = screen_info
    guarantee = planned_guarantee(
        eps, **plan, sensitivity=record_sens, R=R if rel.R is None else rel.R,
        ptr_passed=rel.ptr_passed, prescreen_guarantee=None if screen_info is None
        else screen_info["guarantee"])
    timings["total"] = time.perf_counter() - t_start
    info["method_run"] = ran
    return record_release(acc, PrivateBSSResult(
        support=draws[0].copy(), supports=draws, method=method, guarantee=guarantee,
        timings=timings, info=info, mechanism=mech,
        R=rel.R, candidates=candidates,
        candidate_values=cand_values, stats=stats, _columns=columns))


def _take_columns(X, columns: np.ndarray):
    """The columns ``columns`` of an array, memmap, sparse or mapped matrix (a small copy)."""
    from .data import is_sparse
    from .mapped import MappedMatrix
    if isinstance(X, MappedMatrix):      # private ranges: the k columns, still lazy
        return X.take_columns(columns)
    if is_sparse(X):
        return X.tocsc()[:, columns]
    return np.asarray(X[:, columns])     # a dask array computes only these columns
