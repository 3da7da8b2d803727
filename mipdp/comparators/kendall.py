"""Kendall rank correlation (O(n log n), vectorised over columns); DPKendall (Dick et al., 2023)."""

from __future__ import annotations

import itertools
import logging
import math
import threading
import time

import numpy as np
from scipy.special import logsumexp

from .._feature_names import keeps_feature_names
from .._kendall_fast import _count_inversions, discordant_sorted
from .._neighbours import neighbours_argument
from .._parallel import parallel_map, with_n_jobs
from .._param_validation import check_less_than, validate_params
from .._validation import check_epsilon, check_random_state, check_sparsity, check_X_y, min_samples
from ..accounting import cancels_on_error, check_release, record_release
from ..data import is_sparse
from ..guarantee import Guarantee
from ..result import SelectionResult
from ._common import (
    ADD_REMOVE,
    COMMON_CONSTRAINTS,
    check_neighbour,
    finalize_guarantee,
    make_result,
    support_size_alias,
)

__all__ = ["kendall_tau", "scaled_kendall", "dp_kendall", "dp_kendall_distribution",
           "kendall_sensitivities"]

logger = logging.getLogger(__name__)

# Entries (columns x rows) processed per vectorised merge-sort batch.
_BATCH_ENTRIES = 1 << 18


# ------------------------------------------------------------------ Kendall's tau
def _dense_ranks_1d(v: np.ndarray) -> np.ndarray:
    """Dense integer ranks 0..(#distinct - 1); ties share a rank."""
    _, inv = np.unique(v, return_inverse=True)
    return inv.astype(np.int64).ravel()


def _tied_pairs(sorted_rows: np.ndarray, same: np.ndarray | None = None) -> np.ndarray:
    """Per row, the number of pairs of equal values (``sum_groups C(t, 2)``).

    ``sorted_rows`` has shape (m, n), each row sorted so equal values are
    adjacent; ``same`` (m, n - 1) may be given to define adjacency directly.
    """
    m, n = sorted_rows.shape
    if n < 2:
        return np.zeros(m, dtype=np.int64)
    if same is None:
        same = sorted_rows[:, 1:] == sorted_rows[:, :-1]
    idx = np.arange(n, dtype=np.int64)
    starts = np.where(np.concatenate([np.ones((m, 1), dtype=bool), ~same], axis=1), idx, 0)
    start_of = np.maximum.accumulate(starts, axis=1)
    return (idx[None, :] - start_of).sum(axis=1)


def _kendall_counts(Xt: np.ndarray, y: np.ndarray):
    """``(P, n0, tx, ty)`` with ``P = n_c - n_d`` per row of ``Xt`` (shape (m, n)) against ``y``."""
    return _kendall_counts_cols(Xt.T, y)


def _column_batch(X, rows: np.ndarray, cols) -> np.ndarray:
    """Float64 columns ``cols`` (a slice or indices) of ``X``, rows in the order ``rows``,
    as a C-contiguous ``(len(cols), n)`` array.

    ``X`` is a numpy array or :class:`numpy.memmap` of any numeric dtype (only these
    columns are read and converted), a scipy sparse matrix (only these columns are
    densified; CSC is the fast format) or a dask array.  The values are those of
    ``np.asarray(X, float64)[rows][:, cols].T``, so the Kendall counts do not depend on the
    input's type or dtype (float32 → float64 is exact).
    """
    if is_sparse(X):
        B = X[:, cols].toarray()[rows]
    elif not isinstance(X, np.ndarray):       # dask: these columns are computed, then gathered
        B = np.asarray(X[:, cols])[rows]
    elif isinstance(cols, slice):
        B = X[rows, cols]
    else:
        B = X[rows[:, None], np.asarray(cols)[None, :]]
    return np.ascontiguousarray(B.T, dtype=np.float64)


def _column(X, j: int) -> np.ndarray:
    """Column ``j`` of an array, memmap, sparse or dask matrix as a float64 vector."""
    if is_sparse(X):
        return X[:, [j]].toarray().ravel().astype(np.float64, copy=False)
    return np.asarray(X[:, j], dtype=np.float64)


def _kendall_counts_cols(X: np.ndarray, y: np.ndarray, cols: np.ndarray | None = None):
    """``(P, n0, tx, ty)`` for the columns ``cols`` (default: all) of ``X`` (n, p) against ``y``.

    The columns are gathered in batches straight from ``X`` (no transposed copy of
    the whole matrix; a memmap, sparse or float32 ``X`` is converted batch by batch,
    :func:`_column_batch`). Per batch: rows in ``y`` order, an (unstable, fast) argsort
    by ``x``; a batch row whose ``x`` has ties is re-sorted stably, so every row
    ends in the lexicographic ``(x, y)`` order Knight's algorithm needs. The
    tied-pair counts are only formed for rows that have ties.  Memory: the batch,
    ``_BATCH_ENTRIES`` values (2 MiB as float64) and a few integer arrays of its size.
    """
    n = X.shape[0]
    idx = np.arange(X.shape[1]) if cols is None else np.asarray(cols, dtype=np.intp)
    m = idx.size
    n0 = n * (n - 1) // 2
    ry = _dense_ranks_1d(y)
    ty = int(_tied_pairs(np.sort(ry)[None, :])[0])
    oy = np.argsort(ry, kind="stable")          # rows in y order, then a stable sort by x
    ry_sorted = ry[oy]                          # gives the lexicographic (x, y) order
    y_ties = ty > 0
    step = max(1, _BATCH_ENTRIES // max(n, 1))
    # each thread frees its last batch's arrays only once its next batch has gathered its
    # columns, as a loop reassigning them would: freeing them all at a batch's end let the
    # allocator give the pages back and fault them in again for the next batch (the counts
    # at n = 3000, p = 10⁴: 1.46 s against 1.03 s)
    held = threading.local()

    def batch(lo: int) -> tuple[np.ndarray, np.ndarray]:
        # (batch, n) float64, rows in y order
        xb = _column_batch(X, oy, slice(lo, lo + step) if cols is None else idx[lo:lo + step])
        held.arrays = None                    # the previous batch's, once this one has its own
        order = np.argsort(xb, axis=1)
        xs = np.take_along_axis(xb, order, axis=1)
        same_x = xs[:, 1:] == xs[:, :-1]
        tied = np.flatnonzero(same_x.any(axis=1))
        if tied.size:
            order[tied] = np.argsort(xb[tied], axis=1, kind="stable")
        ys = ry_sorted[order]
        n_d = discordant_sorted(xs, ys, same_x)          # strictly discordant pairs:
        if n_d is None:                                  # scipy's compiled kernel, or
            n_d = _count_inversions(ys)                  # the vectorised merge count
        txb = np.zeros(xs.shape[0], dtype=np.int64)
        txy = np.zeros(xs.shape[0], dtype=np.int64)
        if tied.size:
            sx = same_x[tied]
            txb[tied] = _tied_pairs(xs[tied], sx)
            if y_ties:
                yt = ys[tied]
                txy[tied] = _tied_pairs(xs[tied], sx & (yt[:, 1:] == yt[:, :-1]))
        n_c = n0 - n_d - txb - ty + txy
        held.arrays = (xb, order, xs, same_x, ys)
        return n_c - n_d, txb

    # the batches of an array held in memory on the call's workers (mipdp._parallel: the
    # compiled count releases the GIL); exact integers, the same for every n_jobs.  A
    # sparse or dask X is read batch by batch on the calling thread.
    starts = range(0, m, step)
    parts = (parallel_map(batch, starts, blas=False) if isinstance(X, np.ndarray)
             else [batch(lo) for lo in starts])
    P = np.concatenate([q for q, _ in parts]) if parts else np.empty(0, dtype=np.int64)
    tx = np.concatenate([t for _, t in parts]) if parts else np.zeros(0, dtype=np.int64)
    return P, n0, tx, ty


def _as_columns(x, y) -> tuple[np.ndarray, np.ndarray, bool]:
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64).ravel()
    vector = x.ndim == 1
    if vector:
        x = x[:, None]
    if x.ndim != 2:
        raise ValueError(f"x: expected shape (n,) or (n, p), got {x.shape}")
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"x and y: x has {x.shape[0]} rows but y has {y.shape[0]} entries")
    if x.shape[0] < 2:
        raise ValueError("x: need at least 2 observations")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("x, y: contain NaN or infinite values")
    return x, y, vector


def kendall_tau(x, y, variant: str = "a"):
    """Kendall rank correlation of ``y`` with ``x`` (or with every column of ``x``).

    Parameters
    ----------
    x : array_like, shape (n,) or (n, p)
    y : array_like, shape (n,)
    variant : {"a", "b"}
        ``"a"``: ``(n_c - n_d) / C(n, 2)``, tied pairs count as neither concordant
        nor discordant and the denominator is fixed -- the version DPKendall uses
        (its sensitivity proof needs the fixed denominator; without ties it is the
        paper's statistic). ``"b"``: ``(n_c - n_d) / sqrt((n0 - t_x)(n0 - t_y))``,
        the tie-corrected version returned by ``scipy.stats.kendalltau``
        (NaN for a constant input). Both coincide when there are no ties.

    Returns
    -------
    float or ndarray of shape (p,)

    Notes
    -----
    Knight's algorithm: sort the pairs by ``(x, y)``; the discordant pairs are the
    strict inversions of the ``y`` ranks in that order, counted by a merge sort
    that is vectorised over all columns at once; concordant pairs follow from
    ``n_c = C(n,2) - n_d - t_x - t_y + t_xy`` (tied pairs). ``O(p n log^2 n)``
    vectorised work, ``O(n)`` memory per column.
    """
    if variant not in ("a", "b"):
        raise ValueError(f"variant: expected 'a' or 'b', got {variant!r}")
    x, y, vector = _as_columns(x, y)
    P, n0, tx, ty = _kendall_counts(x.T, y)
    if variant == "a":
        tau = P / n0
    else:
        denom = np.sqrt((n0 - tx).astype(np.float64) * float(n0 - ty))
        with np.errstate(invalid="ignore", divide="ignore"):
            tau = np.where(denom > 0, P / np.where(denom > 0, denom, 1.0), np.nan)
    return float(tau[0]) if vector else tau


def scaled_kendall(x, y):
    """DPKendall's statistic ``(n/2) tau_a = (n_c - n_d) / (n - 1)``, range ``[-n/2, n/2]``."""
    x, y, vector = _as_columns(x, y)
    P, _, _, _ = _kendall_counts(x.T, y)
    out = P / (x.shape[0] - 1)
    return float(out[0]) if vector else out


@neighbours_argument
def kendall_sensitivities(neighbours: str = "replace_one") -> tuple[float, float]:
    """Sensitivities of DPKendall's round-1 and later-round scores.

    ``T = (n/2) tau_a = P / (n - 1)`` with ``P = n_c - n_d``, ``|P| <= C(n, 2)``.
    *Add/remove* (Dick et al., 2023, Lemma 3.2): adding a point changes ``P`` by ``a`` with
    ``|a| <= n`` and ``T' - T = a/n - P/(n(n-1))``, so ``|T' - T| <= 1 + 1/2 = 3/2``
    (ties included: tied pairs contribute 0 to ``P``). *Replace-one*: ``n`` is fixed
    and ``P`` changes by at most ``2(n - 1)``, so ``|T' - T| <= 2``. Round ``l >= 2``
    scores ``|T(x_j, y)| - mean_{j' chosen} |T(x_j, x_j')|`` move by at most twice
    that: ``(3/2, 3)`` under add/remove, ``(2, 4)`` under replace-one.
    """
    return (1.5, 3.0) if check_neighbour(neighbours) == ADD_REMOVE else (2.0, 4.0)


# --------------------------------------------------------------------- DPKendall
def _noisy_argmax(score: np.ndarray, available: np.ndarray, scale: float,
                  rng: np.random.Generator) -> int:
    """``argmax(score + Gumbel(scale))`` over ``available``; exact ties broken uniformly.

    Equivalent to the exponential mechanism ``P(j) ∝ exp(score_j / scale)``. The
    values are formed as ``(score - max) / scale + Gumbel(1)`` so huge scores or a
    tiny scale cannot overflow; ties (probability zero in exact arithmetic, possible
    after rounding) are broken by a data-free uniform draw.
    """
    cand = np.flatnonzero(available)
    s = score[cand]
    vals = (s - s.max()) / scale + rng.gumbel(size=cand.size)
    top = np.flatnonzero(vals == vals.max())
    return int(cand[top[0] if top.size == 1 else rng.choice(top)])


def _lazy_noisy_argmax(tau_y: np.ndarray, partial: np.ndarray, done: np.ndarray, chosen: list,
                       available: np.ndarray, scale: float, rng: np.random.Generator,
                       pair_scores, t_max: float) -> tuple[int, int]:
    """Exactly :func:`_noisy_argmax` on the round-``l`` scores, computing few of them.

    The score ``tau_y_j - (1/(l-1)) sum_{c chosen} |T(x_j, x_c)|`` is at most
    ``u_j = tau_y_j - partial_j / (l-1)``, where ``partial_j`` sums the terms
    already known (``done[j]`` of them, in choice order). The Gumbel variables of
    all available features are drawn first (the same draw as :func:`_noisy_argmax`);
    features are then visited in decreasing order of ``u_j / scale + G_j`` and their
    scores completed, until the next bound falls below the best completed value.
    Every feature not visited then has value ``<= bound < best``, so the result is
    the same argmax (a pure speed-up: same output distribution, and the same
    output for the same random stream up to floating-point rounding of the
    constant shift). Before that, the leader (largest bound) is accepted at once if
    even with every unknown term at its maximum ``t_max = n/2`` (``|tau_a| <= 1``)
    its value exceeds the runner-up's bound: then it is the argmax without any
    new correlation (frequent when ``scale`` is large, i.e. many rounds or a small
    ``eps``). Updates ``partial`` and ``done`` in place.

    Returns
    -------
    j : int
        The chosen feature.
    n_completed : int
        How many scores were completed (0 when the leader was accepted at once).
    """
    l1 = len(chosen)
    cand = np.flatnonzero(available)
    g = rng.gumbel(size=cand.size)
    upper = tau_y[cand] - partial[cand] / l1
    shift = upper.max()
    bound = (upper - shift) / scale + g
    order = np.argsort(-bound, kind="stable")
    if cand.size > 1:                       # can the leader win whatever its unknown terms?
        pos = int(order[0])
        j = int(cand[pos])
        missing = l1 - int(done[j])
        lower = (tau_y[j] - (partial[j] + missing * t_max) / l1 - shift) / scale + g[pos]
        if lower - 1e-9 > bound[order[1]]:    # margin: far above floating-point rounding
            return j, 0
    best = -np.inf
    winners: list[int] = []
    visited = 0
    while visited < cand.size and bound[order[visited]] >= best:
        pos = int(order[visited])
        j = int(cand[pos])
        if done[j] < l1:
            terms = pair_scores(j, chosen[done[j]:])
            partial[j] = np.cumsum(np.concatenate(([partial[j]], terms)))[-1]
            done[j] = l1
        val = (tau_y[j] - partial[j] / l1 - shift) / scale + g[pos]
        if val > best:
            best, winners = val, [pos]
        elif val == best:
            winners.append(pos)
        visited += 1
    winners.sort()                          # candidate order, as in _noisy_argmax
    j = cand[winners[0] if len(winners) == 1 else rng.choice(np.array(winners))]
    return int(j), visited


def _guarantee(eps: float, neighbour, k: int, n_draws: int) -> Guarantee:
    s1, s2 = kendall_sensitivities(neighbour)
    per_draw = Guarantee.pure(
        eps, neighbour, f"{k} rounds of the exponential mechanism on Kendall scores, "
        f"eps/k = {eps / k:g} each", sensitivity=s1 if k == 1 else s2,
        notes=f"score sensitivities {s1:g} (round 1) and {s2:g} (later rounds); ranks only, "
              "no data bounds needed")
    return finalize_guarantee(per_draw, n_draws)


@keeps_feature_names
@support_size_alias
@neighbours_argument
@validate_params(shared=COMMON_CONSTRAINTS)
@with_n_jobs
@cancels_on_error
def dp_kendall(X, y, k: int, eps: float, random_state=None, neighbours: str = "replace_one",
               n_draws: int = 1, accountant=None, n_jobs: int | None = None
               ) -> SelectionResult:
    """DPKendall (Dick et al., 2023, Algorithm 1): k exponential-mechanism rounds on Kendall scores.

    Parameters
    ----------
    X : array_like, shape (n, p)
        A numpy array (any numeric dtype), a :class:`numpy.memmap`, a scipy sparse matrix
        or a dask array: never densified whole nor copied (a CSR matrix becomes CSC, an
        ``O(nnz)`` copy); columns are read and converted to float64 in batches of
        ``2¹⁸`` values.  The release is the same as on ``np.asarray(X, float64)`` for the
        same ``random_state`` (the scores depend on ranks only).
    y : array_like, shape (n,)
    k : int
        Number of features, ``1 <= k < p``.
    eps : float
        Privacy budget per draw (``eps / k`` per round).
    random_state : None, int, SeedSequence or Generator
    neighbours : {"replace_one", "add_remove"}, default "replace_one"
        Neighbour notion of the guarantee (a :class:`~mipdp.Neighbour` member is
        accepted too).  The old ``neighbour="replace-one" | "add/remove"`` still works,
        with a :class:`FutureWarning`.
        Neighbour notion; fixes the sensitivities, see :func:`kendall_sensitivities`.
        The paper's is add/remove; the default matches the MIP methods of this
        package (replace-one), which costs sensitivities 2 and 4 instead of 3/2 and 3.
    n_draws : int, default 1
        Independent releases (feature-feature correlations are cached across
        draws). Reported ``epsilon = n_draws * eps``.
    accountant : BudgetAccountant, optional
        Checks the planned guarantee before the data is read and records the release.
    n_jobs : int, optional
        Threads for the independent work (scikit-learn's semantics: ``None`` means 1,
        ``-1`` all cores); the release does not depend on it (docs/algorithms.md,
        "Parallel work").

    Returns
    -------
    SelectionResult
        ``info`` holds the Gumbel scales (data-free) and two diagnostics that are
        **not private** (they depend on the data through the lazy evaluation below,
        beyond what the release reveals): ``exact_scores_not_private`` (later-round
        scores completed) and ``pair_correlations_not_private`` (feature-feature
        correlations computed).  ``result.sensitivity`` is the later-round
        sensitivity ``s_2`` (``s_1`` when ``k = 1``); both are in
        ``str(result.guarantee)``.

    Notes
    -----
    ``T(u, v) = (n/2) tau_a(u, v)`` (:func:`scaled_kendall`). Round 1 scores
    ``|T(x_j, y)|`` (sensitivity ``s_1``); round ``l >= 2`` scores
    ``|T(x_j, y)| - (1/(l-1)) sum_{j' chosen} |T(x_j, x_j')|`` (sensitivity ``s_2``),
    over the features not yet chosen. Each round is the exponential mechanism with
    budget ``eps/k``: ``argmax`` of score plus Gumbel noise of scale
    ``2 s_l k / eps``. Basic composition over the k rounds gives **eps-DP**
    (``delta = 0``) under the chosen neighbour notion; no data bounds are needed
    (ranks only). Feature-feature correlations are computed only against chosen
    features and only where needed: round ``l >= 2`` completes the scores of the
    features whose upper bound (known terms only) plus Gumbel noise can still win
    (:func:`_lazy_noisy_argmax`), typically a handful per round, each needing
    ``O(l)`` correlations; the output distribution is unchanged. Ties in the data are
    handled by tau-a (tied pairs count 0), which keeps the sensitivity; no data jitter is
    used.
    """
    t0 = time.perf_counter()
    eps = float(eps)
    neighbour = check_neighbour(neighbours)
    guarantee = _guarantee(eps, neighbour, k, n_draws)
    acc = check_release(accountant, guarantee)
    # arrays (any numeric dtype), memmaps, sparse: not copied; columns are read and
    # converted to float64 batch by batch (ranks only: the same output as on the float64 array)
    X, y = check_X_y(X, y, lazy=True, min_samples=min_samples(neighbour == ADD_REMOVE))
    if is_sparse(X):
        X = X.tocsc()      # column batches; an O(nnz) copy when X is CSR
    n, p = X.shape
    k = check_less_than(k, p, "k", "p", "dp_kendall")
    rng = check_random_state(random_state)
    s1, s2 = kendall_sensitivities(neighbour)
    # n = 1 (add/remove only): no pair, P = 0, and T = 0 by convention
    tau_y = np.abs(_kendall_counts_cols(X, y)[0] / max(n - 1, 1))
    t1 = time.perf_counter()
    pair_cache: dict[tuple[int, int], float] = {}
    n_pairs = 0

    def pair_scores(j: int, chosen: list) -> np.ndarray:
        """``|T(x_j, x_c)|`` for the chosen columns ``c`` (cached across draws)."""
        nonlocal n_pairs
        todo = [c for c in chosen if (j, c) not in pair_cache]
        if todo:
            P = _kendall_counts_cols(X, _column(X, j), np.asarray(todo))[0]   # P is symmetric
            n_pairs += len(todo)
            for c, v in zip(todo, np.abs(P / max(n - 1, 1)), strict=True):
                pair_cache[(j, c)] = float(v)
        return np.array([pair_cache[(j, c)] for c in chosen])

    supports = []
    n_exact = 0
    for _ in range(n_draws):
        available = np.ones(p, dtype=bool)
        chosen: list[int] = []
        partial = np.zeros(p)               # sum of |T(x_j, x_c)| over chosen[:done[j]]
        done = np.zeros(p, dtype=np.intp)
        for rnd in range(k):
            if rnd == 0:
                j = _noisy_argmax(tau_y, available, 2.0 * s1 * k / eps, rng)
            else:
                j, m = _lazy_noisy_argmax(tau_y, partial, done, chosen, available,
                                          2.0 * s2 * k / eps, rng, pair_scores, n / 2.0)
                n_exact += m
            available[j] = False
            chosen.append(j)
        supports.append(np.flatnonzero(~available))
    t2 = time.perf_counter()
    logger.debug("dp_kendall: p=%d k=%d eps=%g; not private: n=%d (private under "
                 "add/remove), %d exact later-round scores, %d feature-feature correlations",
                 p, k, eps, n, n_exact, n_pairs)
    return record_release(acc, make_result(
        supports, method="kendall", guarantee=guarantee, epsilon_per_draw=eps,
        timings={"label_correlations": t1 - t0, "selection": t2 - t1, "total": t2 - t0},
        info={"gumbel_scales": (2 * s1 * k / eps, 2 * s2 * k / eps),
              "exact_scores_not_private": n_exact, "pair_correlations_not_private": n_pairs}))


@neighbours_argument
def dp_kendall_distribution(X, y, k: int, eps: float,
                            neighbours: str = "replace_one") -> tuple[np.ndarray, np.ndarray]:
    """Exact output distribution of :func:`dp_kendall` for small ``p`` (testing aid).

    Sums, over all ordered selections ``(j_1, ..., j_k)``, the product of the k
    softmax steps ``exp(score_j / scale_l) / sum_{available} exp(score / scale_l)``.

    Returns
    -------
    subsets : ndarray of int, shape (C(p, k), k)
    log_prob : ndarray, shape (C(p, k),)
    """
    X, y = check_X_y(X, y)
    n, p = X.shape
    k = check_sparsity(k, p, "k")
    eps = check_epsilon(eps, "eps")
    s1, s2 = kendall_sensitivities(neighbours)
    if math.perm(p, k) > 50000:
        raise ValueError(f"dp_kendall_distribution: {math.perm(p, k)} ordered selections "
                         "is too many; use a smaller p")
    tau_y = np.abs(scaled_kendall(X, y))
    tau_xx = np.abs(np.column_stack([scaled_kendall(X, X[:, j]) for j in range(p)]))
    subsets = np.array(list(itertools.combinations(range(p), k)), dtype=np.intp)
    index = {tuple(s): r for r, s in enumerate(subsets)}
    acc: list[list] = [[] for _ in range(len(subsets))]
    for order in itertools.permutations(range(p), k):
        available = np.ones(p, dtype=bool)
        lp = 0.0
        for rnd, j in enumerate(order):
            if rnd == 0:
                score, sens = tau_y, s1
            else:
                score, sens = tau_y - tau_xx[:, list(order[:rnd])].sum(axis=1) / rnd, s2
            w = score * eps / (2.0 * sens * k)
            lp += w[j] - logsumexp(w[available])
            available[j] = False
        acc[index[tuple(sorted(order))]].append(lp)
    return subsets, np.array([logsumexp(a) for a in acc])
