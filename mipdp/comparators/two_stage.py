"""Two-stage / subsample-and-aggregate selection (Kifer, Smith & Thakurta 2012)."""

from __future__ import annotations

import logging
import math
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Lasso, lars_path

from .._feature_names import keeps_feature_names
from .._neighbours import neighbours_argument
from .._parallel import parallel_map, with_n_jobs
from .._param_validation import POSITIVE_INT, POSITIVE_REAL, check_less_than, validate_params
from .._validation import check_random_state, check_X_y, min_samples
from .._warnings import find_stack_level
from ..accounting import cancels_on_error, check_release, record_release
from ..data import is_sparse
from ..exceptions import PrivacyLeakWarning
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

__all__ = ["two_stage", "block_vote"]

logger = logging.getLogger(__name__)


def block_vote(Xb: np.ndarray, yb: np.ndarray, k: int, alpha: float | None = None,
               bounds: tuple[float | None, float | None] | None = None) -> np.ndarray:
    """One block's vote: up to ``k`` features with the largest non-zero ``|Lasso coef|``.

    ``alpha=None``: the Lasso path of the block (LARS, :func:`sklearn.linear_model.lars_path`,
    block-centred data) is followed until ``k`` coefficients are non-zero, and the
    coefficients at that knot are used (the block tunes itself; this only affects the
    block's own vote). Otherwise :class:`sklearn.linear_model.Lasso` with that
    ``alpha`` (objective ``(1/2n_b)||y - Xb||^2 + alpha ||b||_1``, with intercept).
    A block with fewer than 2 rows, or whose fit has no non-zero coefficient,
    votes for nothing.

    ``bounds = (b_x, b_y)``: the block's entries are clipped to ``|x_ij| <= b_x`` and
    ``|y_i| <= b_y`` before the fit (a ``None`` bound leaves that part unclipped;
    ``Xb`` itself is not modified).  A fit
    that fails numerically (an overflow in the solver, a non-finite coefficient: only
    possible on unclipped extreme values) votes for nothing.  Both rules are functions
    of the block alone, so a neighbouring data set still changes at most one block's
    vote (the sensitivity argument of :func:`two_stage` is unchanged).

    Notes
    -----
    Speed: the centred block is handed to LARS in Fortran order without a further
    copy (LARS works on columns; this halves its time), and the path stops at
    ``4k + 10`` steps. A block is small (``~sqrt(n)`` rows), so every LARS step is
    a thin matrix-vector product; :func:`two_stage` runs the blocks with BLAS
    limited to one thread, which avoids the (large) cost of multithreaded BLAS on
    such products when the cores are shared.
    """
    nb = Xb.shape[0]
    if nb < 2:
        return np.empty(0, dtype=np.intp)
    b_x, b_y = (None, None) if bounds is None else bounds
    if b_x is not None:
        Xb = np.clip(Xb, -b_x, b_x)
    if b_y is not None:
        yb = np.clip(yb, -b_y, b_y)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", ConvergenceWarning)
            warnings.simplefilter("ignore", RuntimeWarning)
            if alpha is None:
                Xc = np.asfortranarray(Xb - Xb.mean(axis=0))
                yc = yb - yb.mean()
                _, _, coefs = lars_path(Xc, yc, method="lasso", max_iter=4 * k + 10,
                                        copy_X=False)
                nnz = np.count_nonzero(coefs, axis=0)
                reach = np.flatnonzero(nnz >= k)
                coef = coefs[:, reach[0] if reach.size else -1]
            else:
                coef = Lasso(alpha=alpha, max_iter=10000).fit(Xb, yb).coef_
    except (ArithmeticError, ValueError, np.linalg.LinAlgError):
        # only unclipped extreme values get here (e.g. a row of 1e160 squared): the
        # block votes for nothing, a rule of the block alone
        return np.empty(0, dtype=np.intp)
    if not np.all(np.isfinite(coef)):
        return np.empty(0, dtype=np.intp)
    nz = np.flatnonzero(coef)
    top = nz[np.argsort(-np.abs(coef[nz]), kind="stable")[:k]]
    return np.sort(top.astype(np.intp))


def _block_rows(X, rows: np.ndarray) -> np.ndarray:
    """Float64 rows ``rows`` of ``X`` (C-ordered, shape ``(len(rows), p)``): the one block
    :func:`block_vote` fits.

    ``X`` is a numpy array or :class:`numpy.memmap` of any numeric dtype (only these rows
    are read and converted), a scipy sparse matrix (only these rows are densified; CSR is
    the fast format) or a dask array.  The values are those of
    ``np.asarray(X, float64)[rows]`` and the block is C-ordered whatever the input's
    layout, so a block's fit, and the release, do not depend on the input's type, dtype or
    memory order.
    """
    if is_sparse(X):
        return X[rows].toarray().astype(np.float64, copy=False)
    return np.ascontiguousarray(np.asarray(X[rows]), dtype=np.float64)


def _clip_bounds(bounds) -> tuple[float | None, float | None]:
    """``(b_x, b_y)`` of the ``bounds`` argument (validated, data-free); ``None`` parts are
    not clipped (two-stage's guarantee needs no bounds, so none is read off the data)."""
    if bounds is None:
        return (None, None)
    if not isinstance(bounds, (tuple, list)):
        bounds = (bounds, bounds)
    b_x, b_y = bounds
    return (None if b_x is None else float(b_x), None if b_y is None else float(b_y))


def _partition(n: int, n_blocks: int, neighbour: str, rng: np.random.Generator) -> list:
    if neighbour == ADD_REMOVE:
        labels = rng.integers(n_blocks, size=n)
        return [np.flatnonzero(labels == b) for b in range(n_blocks)]
    return np.array_split(rng.permutation(n), n_blocks)


def _guarantee(eps, neighbour, k, topk, n_draws, n_blocks) -> Guarantee:
    blocks = "round(sqrt(n))" if n_blocks is None else f"{n_blocks}"
    per_draw = Guarantee.pure(eps, neighbour, f"{blocks} data-independent blocks, one Lasso "
                              f"vote vector per block, private top-{k} ({topk}) of the vote "
                              "counts", sensitivity=1.0)
    g = finalize_guarantee(per_draw, n_draws)
    if n_blocks is None and neighbour == ADD_REMOVE:
        g = g.conditional("n is public (n_blocks = round(sqrt(n)) was derived from it, and n "
                          "is not public under add/remove neighbours)")
    return g


@keeps_feature_names
@support_size_alias
@neighbours_argument
@validate_params({"n_blocks": [None] + POSITIVE_INT, "alpha": [None] + POSITIVE_REAL},
                 shared=COMMON_CONSTRAINTS)
@with_n_jobs
@cancels_on_error
def two_stage(X, y, k: int, eps: float, n_blocks: int | None = None, alpha: float | None = None,
              topk: str = "laplace", neighbours: str = "replace_one", random_state=None,
              n_draws: int = 1, accountant=None, bounds=None,
              n_jobs: int | None = None) -> SelectionResult:
    """Subsample-and-aggregate feature selection: Lasso votes per block, private top-k.

    Parameters
    ----------
    X : array_like, shape (n, p)
        A numpy array (any numeric dtype), a :class:`numpy.memmap`, a scipy sparse matrix
        or a dask array: never densified whole nor copied; each block's ``~n/m`` rows are
        read and converted to float64 when the block is fitted (peak about three float64
        copies of one block, ``24 ⌈n/m⌉ p`` bytes).  The release is the same as on
        ``np.asarray(X, float64)`` for the same ``random_state``.
    y : array_like, shape (n,)
    k : int
        Number of features, ``1 <= k < p``.
    eps : float
        Privacy budget per draw.
    n_blocks : int, optional
        Number of disjoint blocks ``m``; default ``round(sqrt(n))``.  Under replace-one
        (``n`` public) ``m <= n`` is required; under add/remove any ``m`` runs whatever
        ``n`` is (no check reads ``n``): a block that receives fewer than 2 rows votes for
        nothing.
    alpha : float, optional
        Lasso penalty for every block (data-independent). Default: each block follows
        its Lasso path until ``k`` features are active (see :func:`block_vote`).
    topk : {"laplace", "peeling", "canonical_lipschitz"}
        Private top-k mechanism on the vote counts.
    neighbours : {"replace_one", "add_remove"}, default "replace_one"
        Neighbour notion of the guarantee (a :class:`~mipdp.Neighbour` member is
        accepted too).  The old ``neighbour="replace-one" | "add/remove"`` still works,
        with a :class:`FutureWarning`.
    random_state : None, int, SeedSequence or Generator
    n_draws : int, default 1
        Independent releases (a fresh partition each). ``epsilon = n_draws * eps``.
    accountant : BudgetAccountant, optional
        Checks the planned guarantee before the data is read and records the release.
    bounds : (b_x, b_y) or float or None, optional
        Clipping bounds from domain knowledge: each block's Lasso is fitted on its rows
        clipped to ``|x_ij| <= b_x``, ``|y_i| <= b_y``, like every other method (a ``None``
        bound leaves that part unclipped; nothing is read off the data).  The guarantee
        does not depend on them (see Notes); they keep the fits finite and robust to
        extreme rows.  :func:`mipdp.private_bss` passes its own bounds to the pre-screen.
    n_jobs : int, optional
        Threads for the independent work (scikit-learn's semantics: ``None`` means 1,
        ``-1`` all cores); the release does not depend on it (docs/algorithms.md,
        "Parallel work").

    Returns
    -------
    SelectionResult

    Notes
    -----
    The rows are split at random, independently of the data, into ``m`` blocks: a
    uniform balanced partition (random permutation cut into ``m`` parts) under
    replace-one, independent uniform block labels per row under add/remove (so an
    added or removed row changes one block and leaves the others' membership
    alone). Each block casts at most ``k`` votes (:func:`block_vote`); ``votes_j`` is
    the number of blocks voting for ``j``. A neighbouring dataset changes one block,
    hence one vote vector: every ``votes_j`` moves by at most 1 (L-infinity
    sensitivity 1, L1 sensitivity ``2k``), whatever the per-block fit does (the
    clipping to ``bounds`` and the rule that a failed or too small block votes for
    nothing are functions of one block's rows, so they keep this). Under add/remove
    with an explicit ``n_blocks`` no decision depends on ``n``: the labels are drawn per
    row whatever ``n`` is, a block may be empty (it votes for nothing), and adding or
    removing a row changes the rows of exactly one block. The
    private top-k mechanism with sensitivity 1 is ``eps``-DP, so the release is
    **eps-DP** (``delta = 0``) under the chosen neighbour notion. The default
    ``m = round(sqrt(n))`` uses ``n``, which is public under replace-one but not
    under add/remove (a :class:`PrivacyLeakWarning` is issued then and the guarantee is
    marked conditional on ``n`` being public).
    """
    t0 = time.perf_counter()
    eps = float(eps)
    neighbour = check_neighbour(neighbours)
    topk_fn = get_topk(topk)
    guarantee = _guarantee(eps, neighbour, k, topk, n_draws, n_blocks)
    acc = check_release(accountant, guarantee)
    # arrays (any numeric dtype), memmaps, sparse: not copied; each block's rows are read
    # and converted to float64 when it is fitted (the same blocks as on the float64 array)
    X, y = check_X_y(X, y, lazy=True, min_samples=min_samples(neighbour == ADD_REMOVE))
    if is_sparse(X):
        X = X.tocsr()      # row blocks; an O(nnz) copy when X is CSC
    n, p = X.shape
    k = check_less_than(k, p, "k", "p", "two_stage")
    rng = check_random_state(random_state)
    if alpha is not None:
        alpha = float(alpha)
    if n_blocks is None:
        n_blocks = max(1, int(round(math.sqrt(n))))
        if neighbour == ADD_REMOVE:
            warnings.warn("two_stage: n_blocks was derived from n, which is not public under "
                          "add/remove neighbours; pass n_blocks explicitly for a guarantee "
                          "that covers it.", PrivacyLeakWarning,
                          stacklevel=find_stack_level())
    elif neighbour != ADD_REMOVE:    # n is public under replace-one only
        check_less_than(n_blocks, n + 1, "n_blocks", "n + 1", "two_stage")
    n_blocks = int(n_blocks)
    clip = _clip_bounds(bounds)

    supports = []
    t_fit = t_sel = 0.0
    for _ in range(n_draws):
        ta = time.perf_counter()
        votes = np.zeros(p)
        blocks = _partition(n, n_blocks, neighbour, rng)

        def vote(rows):
            Xb, yb = _block_rows(X, rows), y[rows]
            if clip[0] is not None:    # a fresh copy: clipped in place, no extra copy
                np.clip(Xb, -clip[0], clip[0], out=Xb)
            return block_vote(Xb, yb, k, alpha, (None, clip[1]))

        # the blocks' Lasso fits are independent: on the call's workers (one BLAS thread
        # each), their votes added in the blocks' order
        for voted in parallel_map(vote, blocks):
            votes[voted] += 1.0   # distinct
        tb = time.perf_counter()
        supports.append(topk_fn(votes, k, eps, 1.0, rng))
        tc = time.perf_counter()
        t_fit += tb - ta
        t_sel += tc - tb
    logger.debug("two_stage: n=%d (not private under add/remove) p=%d k=%d m=%d eps=%g "
                 "topk=%s", n, p, k, n_blocks, eps, topk)
    return record_release(acc, make_result(
        supports, method="two_stage", guarantee=guarantee, epsilon_per_draw=eps,
        timings={"block_fits": t_fit, "selection": t_sel, "total": time.perf_counter() - t0},
        info={"n_blocks": n_blocks, "alpha": alpha, "topk": topk, "bounds": clip}))
