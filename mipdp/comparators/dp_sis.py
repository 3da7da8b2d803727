"""DP-SIS: private sure independence screening (Swope et al., 2024, Algorithm 1)."""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np

from .._feature_names import keeps_feature_names
from .._neighbours import neighbours_argument
from .._parallel import with_n_jobs
from .._param_validation import check_less_than, validate_params
from .._validation import check_bounds, check_random_state, check_X_y, clip_design, min_samples
from ..accounting import cancels_on_error, check_release, record_release
from ..guarantee import Guarantee
from ..result import SelectionResult
from ._common import (
    ADD_REMOVE,
    COMMON_CONSTRAINTS,
    check_neighbour,
    finalize_guarantee,
    get_topk,
    make_result,
    support_size_alias,
)

__all__ = ["dp_sis", "sis_scores"]

logger = logging.getLogger(__name__)


def sis_scores(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Screening scores ``|x_j^T y|`` (no clipping, no checks; ``X`` an array or a
    :class:`mipdp.data.ClippedDesign`)."""
    return np.abs(X.T @ y)


def scaled_sis_scores(Xc, yc: np.ndarray, b_x: float, b_y: float) -> np.ndarray:
    """``|x_j^T y| / (b_x b_y)`` on clipped data, with no intermediate that overflows.

    ``yc / b_y`` is in ``[-1, 1]``; for ``b_x >= 1`` it is divided by ``b_x`` before the
    product (every term ``x_ij y_i / (b_x b_y)`` is then at most 1), for ``b_x < 1`` the
    product ``X^T (yc / b_y)`` (at most ``n b_x < n``) is divided after.  Every score is
    at most ``n``, its sensitivity 2 (replace-one) or 1 (add/remove): the top-k
    mechanisms' laws are those of the scores ``|x_j^T y|`` with sensitivity ``2 b_x b_y``
    (``b_x b_y``), which overflow a double beyond ``b_x b_y n > 1.8e308``.  A term that
    underflows moves a score by less than ``n 2**-1074`` of these units.
    """
    scores = sis_scores(Xc, _scaled_target(yc, b_x, b_y))
    return scores if b_x >= 1.0 else scores / b_x


def _scaled_target(yc: np.ndarray, b_x: float, b_y: float) -> np.ndarray:
    """``yc / (b_x b_y)`` for ``b_x >= 1``, ``yc / b_y`` otherwise (:func:`scaled_sis_scores`)."""
    with np.errstate(under="ignore"):
        w = yc / b_y
        return w / b_x if b_x >= 1.0 else w


def _guarantee(eps, neighbour, k, topk, n_draws, bounds, sens=None, b_x=None, b_y=None):
    clip = "" if b_x is None else f" on data clipped to |x| <= {b_x:g}, |y| <= {b_y:g}"
    per_draw = Guarantee.pure(eps, neighbour, f"private top-{k} ({topk}) of the scores "
                              f"|x_j^T y|{clip}", sensitivity=sens)
    return finalize_guarantee(per_draw, n_draws, bounds, need_bounds=True)


@keeps_feature_names
@support_size_alias
@neighbours_argument
@validate_params(shared=COMMON_CONSTRAINTS)
@with_n_jobs
@cancels_on_error
def dp_sis(X, y, k: int, eps: float, bounds=None, topk: str = "canonical_lipschitz",
           neighbours: str = "replace_one", random_state=None, n_draws: int = 1,
           gamma: float = 0.5, accountant=None,
           n_jobs: int | None = None) -> SelectionResult:
    """Select ``k`` features privately by their absolute correlation with ``y``.

    Parameters
    ----------
    X : array_like, shape (n, p)
    y : array_like, shape (n,)
    k : int
        Number of features, ``1 <= k < p``.
    eps : float
        Privacy budget per draw.
    bounds : (b_x, b_y) or float or None
        Clipping bounds, ``x_ij <- clip(x_ij, -b_x, b_x)``, ``y_i <- clip(y_i, -b_y, b_y)``.
        Must come from domain knowledge; when missing they are read off the data
        with a :class:`~mipdp.exceptions.PrivacyLeakWarning` (not private).
    topk : {"canonical_lipschitz", "peeling", "laplace"}
        Private top-k mechanism (Swope et al. (2024) uses the canonical Lipschitz mechanism).
    neighbours : {"replace_one", "add_remove"}, default "replace_one"
        Neighbour notion of the guarantee (a :class:`~mipdp.Neighbour` member is
        accepted too).  The old ``neighbour="replace-one" | "add/remove"`` still works,
        with a :class:`FutureWarning`.
        Neighbour notion of the guarantee.
    random_state : None, int, SeedSequence or Generator
    n_draws : int, default 1
        Independent releases; the scores are computed once and the top-k
        mechanism is run ``n_draws`` times. Reported ``epsilon = n_draws * eps``.
    gamma : float, default 0.5
        Loss parameter of the canonical Lipschitz mechanism (ignored otherwise); the
        privacy parameter does not depend on it.  ``gamma=0`` (the loss of a subset is
        the best score it leaves out) keeps a clearly separated head of ``s`` features
        inside a top-``k`` with ``k >> s`` (the pre-screen of :func:`mipdp.private_bss`
        uses it: docs/screening.md, "Screening that keeps the truth").
    accountant : BudgetAccountant, optional
        Checks the planned guarantee before the data is read and records the release
        (default: the accountant of an enclosing ``with`` block, if any).
    n_jobs : int, optional
        Threads for the independent work (scikit-learn's semantics: ``None`` means 1,
        ``-1`` all cores); the release does not depend on it (docs/algorithms.md,
        "Parallel work").

    Returns
    -------
    SelectionResult

    Notes
    -----
    Scores ``f_j(D) = |x_j^T y|`` on the clipped data. One row contributes
    ``x_ij y_i`` with ``|x_ij y_i| <= b_x b_y`` to ``x_j^T y``, so every score moves
    by at most ``b_x b_y`` when a row is added or removed and by at most
    ``2 b_x b_y`` when a row is replaced (all ``p`` scores may move at once, which
    the top-k mechanisms allow). With that component-wise sensitivity each top-k
    mechanism is ``eps``-DP, so the release is **eps-DP** (``delta = 0``) under
    the chosen neighbour notion, *provided the bounds are data-independent*: with
    ``bounds=None`` (or a ``None`` bound) the result is marked **not private**
    (``result.is_private`` is False, ``result.epsilon`` is NaN).
    Swope et al. (2024) scales each column by its own maximum; that is not private and is not
    done here. Centring the columns (Swope et al.'s (2024) footnote) is the caller's business
    and must itself be private.
    """
    t0 = time.perf_counter()
    eps = float(eps)
    neighbour = check_neighbour(neighbours)
    topk_fn = get_topk(topk)
    acc = check_release(accountant, _guarantee(eps, neighbour, k, topk, n_draws, bounds))
    # arrays, memmaps, sparse: not copied (mipdp.data); n >= 1 under add/remove (n private)
    X, y = check_X_y(X, y, lazy=True, min_samples=min_samples(neighbour == ADD_REMOVE))
    p = X.shape[1]
    k = check_less_than(k, p, "k", "p", "dp_sis")
    rng = check_random_state(random_state)
    b_x, b_y = check_bounds(bounds, X, y)
    assert b_y is not None  # need_y
    w = _scaled_target(np.clip(np.asarray(y, dtype=np.float64), -b_y, b_y), b_x, b_y)
    Xc, yc = clip_design(X, y, b_x, b_y, vectors=(w,))   # X^T w in the design's first pass
    with np.errstate(over="ignore"):                      # public: reported only
        sens = b_x * b_y * (1.0 if neighbour == ADD_REMOVE else 2.0)
    scores = scaled_sis_scores(Xc, yc, b_x, b_y)          # in units of b_x b_y
    unit_sens = 1.0 if neighbour == ADD_REMOVE else 2.0
    t1 = time.perf_counter()
    kwargs = {"gamma": gamma} if topk_fn.__name__ == "canonical_lipschitz_topk" else {}
    supports = [topk_fn(scores, k, eps, unit_sens, rng, **kwargs) for _ in range(n_draws)]
    t2 = time.perf_counter()
    logger.debug("dp_sis: p=%d k=%d eps=%g sensitivity=%g topk=%s", p, k, eps, sens, topk)
    guarantee = _guarantee(eps, neighbour, k, topk, n_draws, bounds, sens, b_x, b_y)
    info: dict[str, Any] = {"topk": topk, "gamma": gamma if kwargs else None}
    info["bounds" if guarantee.is_private else "bounds_not_private"] = (b_x, b_y)
    return record_release(acc, make_result(
        supports, method="dp_sis", guarantee=guarantee, epsilon_per_draw=eps,
        timings={"scores": t1 - t0, "selection": t2 - t1, "total": t2 - t0}, info=info))
