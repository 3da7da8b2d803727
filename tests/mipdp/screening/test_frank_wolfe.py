"""DP Frank-Wolfe: feasibility, the non-private O(1/t) rate, reproducibility, result object."""

import math
import warnings

import numpy as np
import pytest
from sklearn.linear_model import Lasso

from mipdp import screening as S
from mipdp.exceptions import PrivacyLeakWarning


def _lasso_constrained_optimum(X, y, lam):
    """scikit-learn cross-check: bisect the Lasso penalty until ||w||_1 = λ."""
    n = X.shape[0]
    lo, hi = 0.0, np.abs(X.T @ y).max() / n
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        w = Lasso(alpha=mid, fit_intercept=False, tol=1e-12, max_iter=100000).fit(X, y).coef_
        lo, hi = (mid, hi) if np.abs(w).sum() > lam else (lo, mid)
    w = Lasso(alpha=hi, fit_intercept=False, tol=1e-12, max_iter=100000).fit(X, y).coef_
    return 0.5 * np.mean((y - X @ w) ** 2)


@pytest.mark.parametrize("calibration", ["rigorous", "seed"])
@pytest.mark.parametrize("init", ["zero", "random"])
def test_iterates_stay_in_the_l1_ball(make_problem, calibration, init):
    X, y, lam = make_problem(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        for res in (S.dp_frank_wolfe(X, y, lam, 300, eps=1.0, delta=1e-5, calibration=calibration,
                                     init=init, random_state=1, return_path=True),
                    S.rnm_screen(X, y, lam, 300, 1.0, 1e-5, 1.0, 1e-5, calibration=calibration,
                                 init=init, random_state=1, return_path=True),
                    S.adp_screen(X, y, lam, 300, 1.0, 1e-5, 1.0, 1e-5, screen_every=10,
                                 calibration=calibration, init=init, random_state=1,
                                 return_path=True)):
            norms = np.abs(res.coef_path).sum(axis=1)
            assert np.all(norms <= lam * (1 + 1e-12))
            assert np.array_equal(res.coef_path[-1], res.coef_)


def test_nonprivate_frank_wolfe_has_the_one_over_t_rate(make_problem, solve_l1_ball):
    X, y, lam = make_problem(1)
    n = X.shape[0]
    w_ref, f_star = solve_l1_ball(X, y, lam)
    assert f_star == pytest.approx(_lasso_constrained_optimum(X, y, lam), abs=1e-9)
    T = 2000
    res = S.dp_frank_wolfe(X, y, lam, T, eps=np.inf, return_path=True)
    loss = S.get_loss("squared")
    f = np.array([loss.objective(X, y, w) for w in res.coef_path])
    h = f - f_star
    assert h.min() > -1e-9                           # the reference is optimal
    # h_t <= (1 − η_t) h_{t−1} + η_t² C/2 with C = L_F (2λ)², η_t = 2/(t+2), which unrolls to
    # h_t <= 2C/(t+2) + 2 h_0/((t+1)(t+2))
    L_F = np.linalg.eigvalsh(X.T @ X / n).max()
    C = L_F * (2 * lam) ** 2
    t = np.arange(T + 1)
    assert np.all(h <= 2 * C / (t + 2) + 2 * h[0] / ((t + 1) * (t + 2)) + 1e-12)
    # the Wolfe gap certifies h_t at every iterate
    for w, ht in zip(res.coef_path[::97], h[::97], strict=True):
        g = loss.gradient(X, y, w)
        assert w @ g + lam * np.abs(g).max() >= ht - 1e-12
    assert h[-1] < 1e-3 * h[0]
    assert np.abs(res.coef_ - w_ref).sum() < 0.05 * lam


def test_nonprivate_is_deterministic(make_problem):
    X, y, lam = make_problem(2)
    a = S.dp_frank_wolfe(X, y, lam, 200, eps=np.inf, random_state=1)
    b = S.dp_frank_wolfe(X, y, lam, 200, eps=np.inf, random_state=2)
    assert np.array_equal(a.coef_, b.coef_)
    assert math.isnan(a.epsilon) and not a.guarantee_proven and not a.is_private
    assert str(a.guarantee).startswith("NOT PRIVATE")


@pytest.mark.parametrize("method", ["dp_frank_wolfe", "rnm_screen", "adp_screen"])
def test_random_state_reproducible(make_problem, method):
    X, y, lam = make_problem(3)
    kw = ({"eps": 1.0, "delta": 1e-5} if method == "dp_frank_wolfe" else
          {"eps_opt": 1.0, "delta_opt": 1e-5, "eps_screen": 1.0, "delta_screen": 1e-5})
    f = getattr(S, method)
    a = f(X, y, lam, 200, init="random", random_state=11, **kw)
    b = f(X, y, lam, 200, init="random", random_state=11, **kw)
    c = f(X, y, lam, 200, init="random", random_state=12, **kw)
    d = f(X, y, lam, 200, init="random", random_state=np.random.default_rng(11), **kw)
    assert np.array_equal(a.coef_, b.coef_) and np.array_equal(a.fw_coordinates, b.fw_coordinates)
    assert np.array_equal(a.coef_, d.coef_)
    assert not np.array_equal(a.coef_, c.coef_)


def test_result_object_reports_the_accounting(make_problem):
    X, y, lam = make_problem(4)
    res = S.rnm_screen(X, y, lam, 1000, eps_opt=0.9, delta_opt=1e-6, eps_screen=0.1,
                       delta_screen=1e-6, random_state=0)
    assert res.method == "rnm_screen" and res.loss == "squared"
    assert res.epsilon == pytest.approx(1.0) and res.delta == pytest.approx(2e-6)
    assert res.guarantee_proven and "replace-one" in res.neighbour
    assert set(res.privacy) == {"optimizer", "screening"}
    assert "advanced composition" in res.composition and "basic composition" in res.composition
    assert len(res.screened) == 1000 and res.fw_coordinates.shape == (1000,)
    assert np.array_equal(res.support, np.flatnonzero(res.coef_))
    assert res.sparsity == res.n_nonzero / X.shape[1]
    assert {"total", "screening"} <= set(res.timings)
    assert res.privacy["optimizer"].epsilon_composed <= 0.9
    assert res.privacy["screening"].epsilon_composed <= 0.1
    short = S.rnm_screen(X, y, lam, 10, 0.9, 1e-6, 0.1, 1e-6)   # T < 8 log(1/δ): basic composition
    assert short.delta == 0.0 and "basic composition over T = 10" in short.composition
    for r in (S.dp_frank_wolfe(X, y, lam, 10, eps=1.0, delta=1e-5),
              S.adp_screen(X, y, lam, 10, 1.0, 1e-5, 1.0, 1e-5, screen_every=5)):
        assert isinstance(r, S.ScreeningResult)


def test_seed_calibration_warns_and_claims_nothing(make_problem):
    X, y, lam = make_problem(5)
    with pytest.warns(PrivacyLeakWarning, match="no proven"):
        res = S.dp_frank_wolfe(X, y, lam, 50, eps=1.0, delta=1e-5, calibration="seed")
    assert not res.guarantee_proven and "NO PROVEN GUARANTEE" in str(res.guarantee)
    assert not res.is_private and math.isnan(res.epsilon)
    assert res.guarantee.nominal_epsilon == pytest.approx(1.0)


def test_bounds_from_data_warn(make_problem):
    X, y, lam = make_problem(6)
    with pytest.warns(PrivacyLeakWarning, match="bounds"):
        res = S.dp_frank_wolfe(2 * X, y, lam, 20, eps=1.0, delta=1e-5, bounds=None)
    assert res.info["bounds_not_private"][0] == pytest.approx(np.abs(2 * X).max())
    # issue 10 item 1: bounds read off the data void the guarantee
    assert not res.is_private and not res.guarantee_proven and math.isnan(res.epsilon)
    assert "NOT PRIVATE" in str(res.guarantee) and "read off the data" in str(res.guarantee)


def test_logistic_runs_and_maps_pm1_labels(make_problem):
    X, y01, lam = make_problem(7, loss="logistic")
    a = S.dp_frank_wolfe(X, y01, lam, 100, eps=np.inf, loss="logistic")
    b = S.dp_frank_wolfe(X, 2 * y01 - 1, lam, 100, eps=np.inf, loss="logistic")
    assert np.allclose(a.coef_, b.coef_)
    loss = S.get_loss("logistic")
    assert loss.objective(X, y01, a.coef_) < loss.objective(X, y01, np.zeros(X.shape[1]))


def test_gradient_divided_before_the_sum_and_huge_score_bounds_refused():
    """Issue 39's overflow class in DP Frank-Wolfe: the gradient ``(1/n) Xᵀ ℓ'(Xw, y)``
    summed n terms up to L1 before dividing, so a sum could overflow on a neighbour only.
    Divided first, it is at most L1; a score bound ``λ L1`` beyond 1e290 is refused (public
    figures, both neighbours alike)."""
    import numpy as np
    import pytest

    from mipdp.screening import dp_frank_wolfe
    from mipdp.screening.losses import SquaredLoss
    b, n = 1e154, 400             # each term 1e308: their sum overflowed, their mean does not
    X = np.full((n, 3), b)
    y = np.full(n, -b)
    with np.errstate(over="raise", invalid="raise"):
        g = SquaredLoss().gradient(X, y, np.zeros(3))
    assert np.all(np.isfinite(g)) and g[0] == pytest.approx(b * b)
    for Xd in (X, -X):
        with pytest.raises(ValueError, match="l1_radius \\* L1"):
            dp_frank_wolfe(Xd, y, 1.0, n_iter=2, eps=1.0, delta=1e-6, bounds=(1e154, 1e154),
                           random_state=0)
