"""The rank-transform study: its lemmas, its sensitivity bounds and its two routes to the law."""

import itertools
import math
import warnings

import numpy as np
import pytest
from scipy.special import logsumexp

from experiments.studies.rank_transforms import (
    check_lemmas,
    em_law_transform,
    grid,
    known_sensitivity,
    score_columns,
    score_values,
    transform_sensitivity,
    transform_sensitivity_ar,
)
from mipdp import private_bss
from mipdp.ranks import rank_sensitivity, uniform_ranks

SUP = np.array(list(itertools.combinations(range(4), 2)))


def test_lemmas_hold_on_tied_columns():
    worst = check_lemmas(reps=400, seed=1)
    assert all(v <= 0 for v in worst.values()), worst


@pytest.mark.parametrize("spec", ["lin:1", "lin:1.5", "nrm:0.35"])
def test_grid_is_odd_monotone_and_within_half(spec):
    for n in (1, 2, 7, 50):
        g = grid(n, spec)
        assert np.array_equal(g, -g[::-1])
        assert np.all(np.diff(g) >= 0) and np.all(np.abs(g) <= 0.5)


def test_lin1_is_the_package_ranks():
    v = np.array([3.0, 1.0, 1.0, 2.0, 5.0, 5.0, 5.0, 0.0])
    assert np.allclose(score_columns(v, "lin:1"), uniform_ranks(v), atol=1e-15)
    for n in (2, 10, 1000):
        assert transform_sensitivity(n, "lin:1", "lin:1", 1.0) == pytest.approx(
            rank_sensitivity("least_squares", n, 3, 1 / math.sqrt(3)), rel=1e-12)


def _data(rng, n, kind):
    X = rng.integers(0, 3, (n, 4)).astype(float) if kind else rng.standard_normal((n, 4))
    return X, X @ rng.standard_normal(4) + rng.standard_normal(n)


@pytest.mark.parametrize("tx,ty,rmul", [("lin:1.5", "lin:1.25", 0.85), ("lin:2", "lin:2", 1.0)])
def test_neighbours_move_F_by_at_most_delta(tx, ty, rmul):
    rng = np.random.default_rng(3)
    for rep in range(12):
        n = int(rng.integers(5, 20))
        X, y = _data(rng, n, rep % 2)
        new = (rng.choice([-1e9, 1e9], 4), float(rng.choice([-1e9, 1e9])))
        F0 = score_values(score_columns(X, tx), score_columns(y, ty), SUP, rmul, 1e-3)
        X1, y1 = X.copy(), y.copy()
        X1[0], y1[0] = new
        F1 = score_values(score_columns(X1, tx), score_columns(y1, ty), SUP, rmul, 1e-3)
        F2 = score_values(score_columns(np.vstack([X, new[0]]), tx),
                          score_columns(np.append(y, new[1]), ty), SUP, rmul, 1e-3)
        assert np.max(np.abs(F1 - F0)) <= transform_sensitivity(n, tx, ty, rmul)
        assert np.max(np.abs(F2 - F0)) <= transform_sensitivity_ar(n, tx, ty, rmul)


def test_the_two_routes_give_the_exact_law():
    rng = np.random.default_rng(0)
    X, y = _data(rng, 60, 0)
    X[:, 1] = np.round(X[:, 1])
    tx, ty, rm = "lin:1.5", "lin:1.25", 0.85
    law, d = em_law_transform(X, y, SUP, 1.0, tx, ty, rm)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = private_bss(score_columns(X, tx), score_columns(y, ty), 2, known_sensitivity(rm) / d,
                        bounds=(0.5, 0.5), radius=rm / math.sqrt(2), random_state=0)
        ranks = private_bss(X, y, 2, 1.0, bounds="ranks", random_state=0)
    lp = np.array([r.log_probability(S) for S in SUP])
    assert np.allclose(law, np.exp(lp - logsumexp(lp)), atol=1e-12)
    lr = np.array([ranks.log_probability(S) for S in SUP])
    law1, _ = em_law_transform(X, y, SUP, 1.0, "lin:1", "lin:1", 1.0)
    assert np.allclose(law1, np.exp(lr - logsumexp(lr)), atol=1e-12)


def test_fixed_beta_change_is_psi_a_minus_psi_b():
    """The docstring's identity Φ_D'(β) − Φ_D(β) = Ψ(a) − Ψ(b) (ranks, ties included)."""
    rng = np.random.default_rng(0)

    def centred(X):   # (1/2n) Σ_l sgn(x_i − x_l): the uniform ranks
        return np.sign(X[:, None, :] - X[None, :, :]).sum(1) / (2 * X.shape[0])

    for _ in range(50):
        n, p = int(rng.integers(4, 12)), 3
        X = rng.integers(0, 4, (n, p)).astype(float)
        y = rng.integers(0, 5, n).astype(float)
        beta, k = rng.uniform(-1, 1, p), int(rng.integers(n))
        X1, y1 = X.copy(), y.copy()
        X1[k], y1[k] = rng.integers(-1, 5, p), rng.integers(-1, 6)
        assert np.allclose(centred(X), score_columns(X, "lin:1"), atol=1e-15)

        def phi(X, y, beta=beta):
            e = centred(y[:, None])[:, 0] - centred(X) @ beta
            return 0.5 * e @ e

        def kernel(X, y, beta=beta):
            return (np.sign(y[:, None] - y[None, :])
                    - np.einsum("ilj,j->il", np.sign(X[:, None, :] - X[None, :, :]), beta))

        H0, H1 = kernel(X, y), kernel(X1, y1)
        others = np.r_[0:k, k + 1:n]
        et = H0[np.ix_(others, others)].sum(1) / (2 * n)

        def psi(a, n=n, et=et):
            return 0.5 * (a.sum() / (2 * n)) ** 2 - et @ a / (2 * n) + a @ a / (8 * n * n)

        assert phi(X1, y1) - phi(X, y) == pytest.approx(
            psi(H1[k, others]) - psi(H0[k, others]), abs=1e-13)
