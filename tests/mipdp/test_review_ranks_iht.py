"""Independent review of issue 29's privacy claims: ``bounds="ranks"`` and noisy IHT.

* The rank sensitivity ``Δ`` against the exact score change of every pair of neighbours
  at tiny ``n`` (all weak orderings, ties included, of the ``n + 1`` values in play).
* The add/remove pair ``n = 1`` <-> ``n = 2``, which the proof's "uniform in ``n >= 2``"
  argument does not reach (``n = 1`` runs under add/remove).
* A data-dependent exception: a tiny public ``ridge`` makes the duplicated rank columns'
  Gram matrix singular on one neighbour only (xfail: not fixed here).
* Noisy IHT's peeling: the exact law of one iteration's picks on every L∞-adversarial
  neighbour ``v' = v + Δσ``, ``σ ∈ {-1, 0, 1}^p``, against ``k ε₀``.
"""

import itertools
import warnings

import numpy as np
import pytest
from scipy.stats import rankdata

from mipdp import private_bss
from mipdp.comparators.noisy_iht import iht_calibration, laplace_peeling_distribution
from mipdp.losses import get_loss
from mipdp.losses.least_squares import ridge_ball_values
from mipdp.ranks import RANK_BOUNDS, rank_design, rank_sensitivity, uniform_ranks


def _weak_orderings(m):
    """Every weak ordering (ties allowed) of ``m`` items, as average ranks."""
    seen, out = set(), []
    for t in itertools.product(range(m), repeat=m):
        r = tuple(rankdata(t))
        if r not in seen:
            seen.add(r)
            out.append(r)
    return np.array(out, dtype=float)


def _scaled(R):
    n = R.shape[-1]
    return (R - 0.5 * (n + 1)) / n


def _one_column_scores(U, v, lam, r):
    """``F({j}) = min_{|β| <= r} ½||v − βu||² + (λ/2)β²`` for every row ``u`` of ``U``."""
    uu, uv, vv = (U * U).sum(1), U @ v, v @ v
    b = np.clip(uv / (uu + lam), -r, r)
    return 0.5 * (vv - 2 * b * uv + b * b * (uu + lam))


@pytest.mark.parametrize("notion", ["replace_one", "add_remove"])
@pytest.mark.parametrize("n", [2, 3, 4])
def test_rank_sensitivity_exhaustive_at_tiny_n(n, notion):
    """Every pair of neighbours of a one-column support (s = 1: the score reads one column
    and y): the ``n + 1`` values of a column in play (row k's old and new value, or the
    added row) in every weak ordering, for x and y independently."""
    W = _weak_orderings(n + 1)
    keep = list(range(n))
    other = list(range(n - 1)) + [n] if notion == "replace_one" else list(range(n + 1))
    UD = _scaled(np.apply_along_axis(rankdata, 1, W[:, keep]))
    UD2 = _scaled(np.apply_along_axis(rankdata, 1, W[:, other]))
    # the closed form is the package's objective (spot check)
    A = (UD[:5] ** 2).sum(1)[:, None, None] + 1e-3
    b = (UD[:5] @ UD[1])[:, None]
    np.testing.assert_allclose(
        n * ridge_ball_values(A, b, float(UD[1] @ UD[1]), n, 1.0),
        _one_column_scores(UD[:5], UD[1], 1e-3, 1.0), rtol=1e-9, atol=1e-12)
    for lam, r in ((1e-9, 1.0), (1e-9, 4.0), (5.0, 1.0)):
        delta = rank_sensitivity("least_squares", n, 1, r, notion)
        worst = max(np.max(np.abs(_one_column_scores(UD, UD[a], lam, r)
                                  - _one_column_scores(UD2, UD2[a], lam, r)))
                    for a in range(len(W)))
        assert worst <= delta


@pytest.mark.parametrize("loss_name", ["least_squares", "hinge"])
def test_add_remove_between_one_and_two_rows(loss_name):
    """``n = 1`` runs under add/remove; its neighbours at ``n = 2`` must be within ``Δ``.

    The proof's uniform bound is derived for ``n >= 2``; here every rank is 0 at ``n = 1``
    (least squares: ``F = 0``; hinge: ``F = 1``) and ``F <= ½||V'||² = 1/16`` (least
    squares) at ``n = 2``.
    """
    rng = np.random.default_rng(0)
    s, p = 1, 3
    sup = np.arange(p)[:, None]
    delta = rank_sensitivity(loss_name, None, s, get_loss(loss_name).resolve(
        s, *RANK_BOUNDS).radius, "add_remove")
    for _ in range(50):
        X2 = rng.choice([-1e9, 0.0, 1.0, 1e9], size=(2, p))
        y2 = rng.choice([-1.0, 1.0], size=2) if loss_name == "hinge" else rng.normal(size=2)
        F = []
        for X, y in ((X2[:1], y2[:1]), (X2, y2)):
            loss = get_loss(loss_name).resolve(s, *RANK_BOUNDS)
            v = uniform_ranks(y) if loss_name == "least_squares" else y
            F.append(X.shape[0] * loss.bind(rank_design(X), v).values(sup))
        assert np.max(np.abs(F[0] - F[1])) <= delta
    # and the release runs at n = 1 (no exception between the two neighbours)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y1 = np.array([1.0])
        private_bss(np.ones((1, p)), y1, 1, 1.0, neighbours="add_remove", loss=loss_name,
                    random_state=0)


@pytest.mark.parametrize("n, ridge", [(10, 1e-17), (1000, 1e-15)])
def test_tiny_ridge_runs_on_both_neighbours(n, ridge):
    """Was a data-dependent exception: with a tiny ridge the Gram matrix of two identical
    rank columns (+ ridge I) is singular in floating point and the batched solve raised
    ``LinAlgError`` on D while its neighbour D' (the columns no longer identical) released.
    ``ridge_ball_values`` now falls back to a scale-free eigendecomposition; both run."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 4))
    X[:, 1] = X[:, 0]                     # duplicated column: identical ranks
    y = X[:, 0] + rng.normal(size=n)
    X2 = X.copy()
    X2[0, 1] = 100.0                      # replace-one neighbour (row 0 replaced)
    outcomes = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for XX in (X, X2):
            try:
                res = private_bss(XX, y, 2, 1.0, ridge=ridge, random_state=0)
                outcomes.append("release")
            except np.linalg.LinAlgError:
                outcomes.append("LinAlgError")
            assert res.support.size == 2
    assert outcomes == ["release", "release"], outcomes
    # the values themselves: finite, and a duplicated pair is worth what one copy is worth
    from mipdp.losses.least_squares import ridge_ball_values
    from mipdp.ranks import rank_design
    R = rank_design(X)
    ry = rank_design(y[:, None])[:, 0]
    pair, one = R[:, [0, 1]], R[:, [0]]
    vals = [float(ridge_ball_values((M.T @ M + ridge * np.eye(M.shape[1]))[None],
                                    (M.T @ ry)[None], float(ry @ ry), n, np.inf)[0])
            for M in (pair, one)]
    assert np.all(np.isfinite(vals))
    assert vals[0] == pytest.approx(vals[1], rel=1e-6, abs=1e-9)


def test_noisy_iht_peeling_law_on_linf_adversarial_neighbours():
    """One iteration's ordered picks (Laplace scale 2Δ/ε₀ per round) are ``k ε₀``-DP for
    every neighbour of ``v`` in the L∞ ball of radius Δ (all vertices and edges)."""
    k, n_iter, eps, sens = 2, 2, 1.0, 1.0
    eps0, _, _ = iht_calibration(k, n_iter, eps)
    worst = 0.0
    for v in (np.zeros(3), np.array([1.0, -1.0, 0.5]), np.array([6.0, 5.5, -0.2])):
        _, lp = laplace_peeling_distribution(v, k, eps0, sens)
        for sig in itertools.product((-1.0, 0.0, 1.0), repeat=3):
            _, lq = laplace_peeling_distribution(v + sens * np.array(sig), k, eps0, sens)
            worst = max(worst, float(np.max(np.abs(lp - lq))))
    assert worst <= k * eps0 + 1e-9


def _all_scores(X, y, s, lam, r):
    """``F(S) = n L(S)`` of every support on the ranks, by the package's exact solver."""
    U, V, n = rank_design(X), uniform_ranks(y), X.shape[0]
    sup = np.array(list(itertools.combinations(range(X.shape[1]), s)))
    A = (U.T @ U)[sup[:, :, None], sup[:, None, :]] + lam * np.eye(s)
    return n * ridge_ball_values(A, (U.T @ V)[sup], float(V @ V), n, r)


@pytest.mark.parametrize("notion", ["replace_one", "add_remove"])
def test_rank_sensitivity_hill_climb_two_column_supports(notion):
    """Adversarial search (s = 2, p = 3): hill-climb the data (near-collinear columns,
    ties, an extreme or tied neighbour row) to maximise ``max_S |F_D(S) − F_D'(S)| / Δ``.
    Worst found here: 0.56 replace-one, 0.48 add/remove (about 2 s each, under load);
    a longer run of the same search (3 restarts x 600 steps) found 0.60 / 0.50."""
    rng = np.random.default_rng(1)
    p, s = 3, 2
    worst = 0.0
    for n in (6, 15, 40):
        for lam, r in ((1e-6, 1 / np.sqrt(2)), (1e-6, 5.0), (5.0, 1 / np.sqrt(2))):
            delta = rank_sensitivity("least_squares", n, s, r, notion)

            def change(X, y, row, k, lam=lam, r=r):
                if notion == "replace_one":
                    X2, y2 = X.copy(), y.copy()
                    X2[k], y2[k] = row[:-1], row[-1]
                else:
                    X2, y2 = np.vstack([X, row[:-1]]), np.r_[y, row[-1]]
                return np.max(np.abs(_all_scores(X, y, s, lam, r)
                                     - _all_scores(X2, y2, s, lam, r)))

            base = rng.permutation(n).astype(float)
            X = np.c_[base, base + rng.integers(-1, 2, n) * 0.6, rng.integers(0, n + 2, n)]
            y = base.copy()
            row, k = rng.choice([-1e6, 1e6], p + 1), int(rng.integers(n))
            cur = change(X, y, row, k)
            for _ in range(300):
                X2, y2, row2, k2 = X.copy(), y.copy(), row.copy(), k
                move = rng.integers(4)
                if move == 0:
                    X2[rng.integers(n), rng.integers(p)] = rng.integers(-1, n + 2) + rng.choice(
                        [0.0, 0.3, 0.6])
                elif move == 1:
                    y2[rng.integers(n)] = rng.integers(-1, n + 2) + rng.choice([0.0, 0.3])
                elif move == 2:
                    row2[rng.integers(p + 1)] = rng.choice(
                        [-1e6, 1e6, rng.integers(-1, n + 2) + 0.0, rng.integers(-1, n + 2) + 0.5])
                else:
                    k2 = int(rng.integers(n))
                val = change(X2, y2, row2, k2)
                if val >= cur:
                    X, y, row, k, cur = X2, y2, row2, k2, val
            worst = max(worst, cur / delta)
            assert cur <= delta, (n, lam, r, cur, delta)
    assert worst > 0.3      # the search does find large changes (not a vacuous pass)
