"""The (non-private) safe screening rule: formula, safety, non-vacuity."""

import numpy as np
import pytest

from mipdp import screening as S


def _score_loop(X, y, w, lam, loss):
    """Direct transcription of s_i = λ|x_(i)ᵀ∇f(u)| + uᵀ∇f(u) + L(λ||x_(i)|| + ||u||)√(G/μ)."""
    loss = S.get_loss(loss)
    n = X.shape[0]
    u = X @ w
    grad_u = loss.derivative(u, y) / n                      # ∇f(u) ∈ R^n
    gap = max((u - lam * X[:, j] * sgn) @ grad_u for j in range(X.shape[1]) for sgn in (1, -1))
    L = loss.kappa_smooth / n
    mu = loss.kappa_strong(1.0, lam) / n
    return np.array([lam * abs(X[:, i] @ grad_u) + u @ grad_u
                     + L * (lam * np.linalg.norm(X[:, i]) + np.linalg.norm(u))
                     * np.sqrt(max(gap, 0) / mu)
                     for i in range(X.shape[1])])


@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_vectorised_scores_match_the_formula(make_problem, loss):
    X, y, lam = make_problem(0, loss=loss)
    rng = np.random.default_rng(0)
    for w in (np.zeros(X.shape[1]), lam * rng.dirichlet(np.ones(X.shape[1])) * 0.9,
              S.dp_frank_wolfe(X, y, lam, 50, eps=np.inf, loss=loss).coef_):
        assert np.allclose(S.screening_scores(X, y, w, lam, loss), _score_loop(X, y, w, lam, loss),
                           rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_safe_rule_never_removes_a_coefficient_of_the_optimum(make_problem, solve_l1_ball, loss):
    rng = np.random.default_rng(1)
    n_screened = 0
    for seed in range(8):
        X, y, lam = make_problem(100 + seed, loss=loss)
        w_star, _ = solve_l1_ball(X, y, lam, loss)
        nonzero = np.abs(w_star) > 1e-4 * lam
        assert nonzero.any()
        path = S.dp_frank_wolfe(X, y, lam, 3000, eps=np.inf, loss=loss, return_path=True).coef_path
        points = [w_star, path[-1], path[300], path[30], path[3]]
        points += [lam * rng.dirichlet(np.ones(X.shape[1])) * rng.choice([-1, 1], X.shape[1])
                   for _ in range(5)]
        for w in points:
            removed = S.safe_screen(X, y, w, lam, loss)
            assert not nonzero[removed].any(), (seed, removed, w_star)
            n_screened += removed.size
    assert n_screened > 0                      # the rule is not vacuous near the optimum


def test_nonprivate_screening_inside_frank_wolfe_is_safe(make_problem, solve_l1_ball):
    for seed in range(5):
        X, y, lam = make_problem(200 + seed)
        w_star, _ = solve_l1_ball(X, y, lam)
        nonzero = np.abs(w_star) > 1e-4 * lam
        for res in (S.adp_screen(X, y, lam, 1500, np.inf, None, np.inf, None, screen_every=1,
                                 init="random", random_state=seed),
                    S.rnm_screen(X, y, lam, 1500, np.inf, None, np.inf, None, init="random",
                                 random_state=seed)):
            removed = np.unique(np.concatenate(res.screened))
            assert not nonzero[removed].any()
            assert removed.size > 0


def test_seed_unscaled_formula_is_unsafe_for_large_radius(make_problem, solve_l1_ball):
    """Seed 004's eq. (1) has no λ on |x_(i)ᵀ∇f| and ||x_(i)||; at w = w* it reads
    |g*_i| − λ||g*||_∞ < 0 and removes coefficients that are non-zero at the optimum."""
    X, y, lam = make_problem(300, active=0.6)          # λ = 0.6·||w_LS||_1: the ball binds
    w_star, _ = solve_l1_ball(X, y, lam)
    g = S.get_loss("squared").gradient(X, y, w_star)
    assert lam > 1.0
    seed_scores = np.abs(g) + w_star @ g                # the gap term vanishes at the optimum
    nonzero = np.abs(w_star) > 1e-4 * lam
    assert (seed_scores[nonzero] < 0).any()
    assert not nonzero[S.safe_screen(X, y, w_star, lam)].any()
