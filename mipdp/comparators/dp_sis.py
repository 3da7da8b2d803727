"""DP-SIS: private sure independence screening (seed 000, Algorithm 1)."""

from __future__ import annotations

import logging
import time

import numpy as np

from .._validation import (check_bounds, check_epsilon, check_random_state, check_sparsity,
                           check_X_y, clip_data)
from ..result import SelectionResult
from ._common import ADD_REMOVE, check_n_draws, check_neighbour, get_topk, make_result

__all__ = ["dp_sis", "sis_scores"]

logger = logging.getLogger(__name__)


def sis_scores(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Screening scores ``|x_j^T y|`` (no clipping, no checks)."""
    return np.abs(X.T @ y)


def dp_sis(X, y, k: int, eps: float, bounds=None, topk: str = "canonical_lipschitz",
           neighbour: str = "replace-one", random_state=None, n_draws: int = 1,
           gamma: float = 0.5) -> SelectionResult:
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
        Private top-k mechanism (seed 000 uses the canonical Lipschitz mechanism).
    neighbour : {"replace-one", "add/remove"}
        Neighbour notion of the guarantee.
    random_state : None, int, SeedSequence or Generator
    n_draws : int, default 1
        Independent releases; the scores are computed once and the top-k
        mechanism is run ``n_draws`` times. Reported ``epsilon = n_draws * eps``.
    gamma : float, default 0.5
        Loss parameter of the canonical Lipschitz mechanism (ignored otherwise).

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
    the chosen neighbour notion, *provided the bounds are data-independent*.
    Seed 000 scales each column by its own maximum; that is not private and is not
    done here. Centring the columns (seed 000's footnote) is the caller's business
    and must itself be private.
    """
    t0 = time.perf_counter()
    X, y = check_X_y(X, y)
    p = X.shape[1]
    k = check_sparsity(k, p, "k")
    eps = check_epsilon(eps, "eps")
    neighbour = check_neighbour(neighbour)
    n_draws = check_n_draws(n_draws)
    topk_fn = get_topk(topk)
    rng = check_random_state(random_state)
    b_x, b_y = check_bounds(bounds, X, y)
    Xc, yc = clip_data(X, y, b_x, b_y)
    sens = b_x * b_y * (1.0 if neighbour == ADD_REMOVE else 2.0)
    scores = sis_scores(Xc, yc)
    t1 = time.perf_counter()
    kwargs = {"gamma": gamma} if topk_fn.__name__ == "canonical_lipschitz_topk" else {}
    supports = [topk_fn(scores, k, eps, sens, rng, **kwargs) for _ in range(n_draws)]
    t2 = time.perf_counter()
    logger.debug("dp_sis: p=%d k=%d eps=%g sensitivity=%g topk=%s", p, k, eps, sens, topk)
    guarantee = (f"{eps:g}-DP per draw (pure) under {neighbour} neighbours: scores |x_j^T y| on "
                 f"data clipped to |x| <= {b_x:g}, |y| <= {b_y:g} have component-wise "
                 f"sensitivity {sens:g}; private top-k by {topk}. Holds only if the bounds "
                 "were chosen without looking at the data.")
    return make_result(supports, method="dp_sis", eps=eps, delta=0.0, neighbour=neighbour,
                       guarantee=guarantee,
                       timings={"scores": t1 - t0, "selection": t2 - t1, "total": t2 - t0},
                       info={"sensitivity": sens, "bounds": (b_x, b_y), "topk": topk,
                             "gamma": gamma if kwargs else None})
