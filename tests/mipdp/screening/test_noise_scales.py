"""Noise scales and sensitivities against hand-computed values; validity of the bounds."""

import math

import numpy as np
import pytest

from mipdp import screening as S

# Seed 004's synthetic setting
N, D, LAM, T = 3000, 600, 50.0, 1000
EPS1, DELTA1, EPS2, DELTA2 = 4.9, 1 / 4000, 0.1, 1 / 12000


def test_fw_noise_seed_formula():
    # ε_iter = 4.9 / √(8·1000·ln 4000) = 4.9 / 257.589 = 0.0190225
    # b = λ·1·√(8T ln(1/δ))/(nε) = 50 / (3000 · 0.0190225) = 0.876155
    cal = S.fw_noise(N, LAM, T, EPS1, DELTA1, calibration="seed")
    assert cal.epsilon_iter == pytest.approx(0.0190225078, rel=1e-8)
    assert cal.scale == pytest.approx(0.8761550696, rel=1e-8)
    assert cal.sensitivity == pytest.approx(50 / 3000)
    assert cal.epsilon_composed <= EPS1


def test_fw_noise_rigorous_formula():
    # L1 = b_x(b_x λ + b_y) = 51, Δ = 2λL1/n = 2·50·51/3000 = 1.7, b = 2Δ/ε_iter = 178.7356
    cal = S.fw_noise(N, LAM, T, EPS1, DELTA1, "squared", (1.0, 1.0), "rigorous")
    assert cal.sensitivity == pytest.approx(1.7)
    assert cal.epsilon_iter == pytest.approx(0.0190225078, rel=1e-8)
    assert cal.scale == pytest.approx(178.7356342, rel=1e-8)
    assert cal.epsilon_composed <= EPS1 and cal.delta == DELTA1
    # logistic: L1 = σ(50) (= 1 to double precision), Δ = 2·50·σ(50)/3000
    cal = S.fw_noise(N, LAM, T, EPS1, DELTA1, "logistic", (1.0, 1.0), "rigorous")
    assert cal.sensitivity == pytest.approx(2 * 50 / 3000, rel=1e-12)


def test_gradient_sensitivity():
    assert S.gradient_sensitivity(100, 2.0, "squared", (0.5, 1.0)) == pytest.approx(
        2 * 0.5 * 2.0 / 100)


def test_fw_noise_basic_composition_when_better():
    # T = 5 < 8 ln(1/δ): ε/T = 0.2 beats 1/√(8·5·ln 1e5) = 0.0466 → basic composition, δ unused
    cal = S.fw_noise(100, 1.0, 5, 1.0, 1e-5, calibration="rigorous")
    assert cal.epsilon_iter == pytest.approx(0.2)
    assert cal.delta == 0.0
    assert cal.scale == pytest.approx(2 * (2 * 1.0 * 2.0 / 100) / 0.2)


def test_rnm_noise_seed_formula():
    # Δ = 2λ/n + 2λ²/n + 2λ(1+λ)/n = (100 + 5000 + 5100)/3000 = 3.4
    # ε_iter = 0.1 / √(8·1000·ln 12000) = 3.648049e-4, b = Δ/ε_iter = 9320.0503
    sens = S.score_sensitivity(N, LAM, calibration="seed")
    assert sens["per_coordinate"] == pytest.approx(3.4)
    assert sens["components"]["gap_term"] == pytest.approx(2 * 50 * 51 / 3000)
    cal = S.rnm_noise(N, LAM, T, EPS2, DELTA2, calibration="seed")
    assert cal.epsilon_iter == pytest.approx(3.648048983e-4, rel=1e-8)
    assert cal.scale == pytest.approx(9320.050296, rel=1e-8)
    assert cal.threshold_scale is None


def test_rnm_noise_rigorous_formula():
    # λ = 1, b_x = b_y = 1, n = 100: Γ = 2, Δ = 4·2/100 + (2+√2)·2·√(2/100) = 1.0456854
    sens = S.score_sensitivity(100, 1.0, "squared", (1.0, 1.0), "rigorous")
    assert sens["per_coordinate"] == pytest.approx(1.045685425, rel=1e-9)
    # T = 10, ε = 1, δ = 1e-5: ε/T = 0.1 > 1/√(80 ln 1e5) → basic; b_sel = 4Δ/0.1, b_thr = 2Δ/0.1
    cal = S.rnm_noise(100, 1.0, 10, 1.0, 1e-5, "squared", (1.0, 1.0), "rigorous")
    assert cal.epsilon_iter == pytest.approx(0.1)
    assert cal.scale == pytest.approx(41.8274170, rel=1e-8)
    assert cal.threshold_scale == pytest.approx(20.9137085, rel=1e-8)
    # T = 1000: advanced composition with ε_iter = ε/√(8T ln(1/δ))
    cal = S.rnm_noise(100, 1.0, 1000, 1.0, 1e-5, "squared", (1.0, 1.0), "rigorous")
    e_it = 1.0 / math.sqrt(8 * 1000 * math.log(1e5))
    assert cal.epsilon_iter == pytest.approx(e_it)
    assert cal.scale == pytest.approx(4 * 1.045685425 / e_it, rel=1e-8)
    assert cal.epsilon_composed <= 1.0


def test_adp_noise_seed_formula():
    # l = 20 screens: δ_iter = δ2/21 = 3.968254e-6,
    # ε_iter = 0.1/(2√(40 ln(1/δ_iter))) = 2.241708e-3,
    # Δ2 = √600 · 3.4 = 83.282651, σ = Δ2 √(2 ln(1.25/δ_iter))/ε_iter = 186944.65
    cal = S.adp_noise(N, D, LAM, 20, EPS2, DELTA2, calibration="seed")
    assert cal.delta_iter == pytest.approx(3.968253968e-6, rel=1e-9)
    assert cal.epsilon_iter == pytest.approx(2.241707643e-3, rel=1e-8)
    assert cal.sensitivity == pytest.approx(83.28265125, rel=1e-9)
    assert cal.scale == pytest.approx(186944.6517, rel=1e-8)
    assert cal.epsilon_composed <= EPS2


def test_adp_noise_rigorous_uses_the_smaller_sigma():
    cal = S.adp_noise(N, D, LAM, 20, EPS2, DELTA2, "squared", (1.0, 1.0), "rigorous")
    sens2 = math.sqrt(D) * S.score_sensitivity(N, LAM, "squared", (1.0, 1.0))["per_coordinate"]
    assert cal.sensitivity == pytest.approx(sens2)
    assert cal.scale == pytest.approx(sens2 * math.sqrt(2 * math.log(1.25 / cal.delta_iter))
                                      / cal.epsilon_iter)
    assert cal.epsilon_composed <= EPS2 * (1 + 1e-12)


def test_nonprivate_calibrations_have_no_noise():
    assert S.fw_noise(N, LAM, T, np.inf, None).scale == 0.0
    assert S.rnm_noise(N, LAM, T, np.inf, None).scale == 0.0
    assert S.adp_noise(N, D, LAM, 20, np.inf, None).scale == 0.0


def _neighbour_pairs(rng, X, y, k=60, corners=False):
    """Replace-one neighbours with a new row near (or at) the corners of the domain [-1, 1]."""
    p = X.shape[1]
    for _ in range(k):
        X2, y2 = X.copy(), y.copy()
        i = rng.integers(X.shape[0])
        X2[i] = rng.choice([-1.0, 1.0], p) * (1.0 if corners else rng.uniform(0.5, 1.0, p))
        y2[i] = rng.choice([-1.0, 1.0]) if y.min() < 0 else float(rng.integers(2))
        yield X2, y2


@pytest.mark.parametrize("loss", ["squared", "logistic"])
def test_rigorous_score_sensitivity_bounds_replace_one_changes(loss, make_problem):
    rng = np.random.default_rng(7)
    worst_ratio = 0.0
    for seed in range(4):
        X, y, lam = make_problem(seed, n=40, p=6, loss=loss)
        lam = 2.0
        bound = S.score_sensitivity(X.shape[0], lam, loss, (1.0, 1.0))["per_coordinate"]
        gbound = S.gradient_sensitivity(X.shape[0], lam, loss, (1.0, 1.0))
        fit = S.dp_frank_wolfe(X, y, lam, 300, eps=np.inf, loss=loss).coef_
        for w in (fit, np.zeros(6), lam * np.eye(6)[0],
                  lam * (rng.dirichlet(np.ones(6)) * rng.choice([-1, 1], 6))):
            s = S.screening_scores(X, y, w, lam, loss)
            g = S.get_loss(loss).gradient(X, y, w)
            for X2, y2 in _neighbour_pairs(rng, X, y, 15):
                diff = np.abs(S.screening_scores(X2, y2, w, lam, loss) - s).max()
                assert diff <= bound
                assert np.abs(S.get_loss(loss).gradient(X2, y2, w) - g).max() <= gbound + 1e-15
                worst_ratio = max(worst_ratio, diff / bound)
    assert worst_ratio > 0.0


def test_seed_score_sensitivity_is_violated_by_neighbours():
    """Seed 004's Δ = 2λ/n + 2λ²/n + 2λ(1+λ)/n does not bound the score's change.

    With λ = 1 the seed's eq. (1) and our λ-scaled rule coincide, so this is the seed's own
    score. At the optimum the Wolfe gap is ~0 and one row moves √G by Θ(1/√n) ≫ Θ(1/n).
    """
    rng = np.random.default_rng(3)
    n, p, lam = 50, 3, 1.0
    X = rng.uniform(-1, 1, (n, p))
    y = np.clip(X @ np.array([0.8, -0.5, 0.0]) + 0.1 * rng.standard_normal(n), -1, 1)
    w = S.dp_frank_wolfe(X, y, lam, 5000, eps=np.inf).coef_
    s = S.screening_scores(X, y, w, lam)
    seed_delta = S.score_sensitivity(n, lam, calibration="seed")["per_coordinate"]
    assert seed_delta == pytest.approx(8 / n)
    worst_replace = worst_add = 0.0
    for X2, y2 in _neighbour_pairs(rng, X, y, 100, corners=True):
        worst_replace = max(worst_replace, np.abs(S.screening_scores(X2, y2, w, lam) - s).max())
        xa, ya = rng.choice([-1.0, 1.0], p), rng.choice([-1.0, 1.0])
        s_add = S.screening_scores(np.vstack([X, xa]), np.append(y, ya), w, lam)
        worst_add = max(worst_add, np.abs(s_add - s).max())
    assert worst_replace > 1.5 * seed_delta          # replace-one (seed 003's derivation)
    assert worst_add > 1.5 * seed_delta              # add/remove-one (seed 004's notion)
    assert worst_replace <= S.score_sensitivity(n, lam)["per_coordinate"]


def test_seed_lipschitz_constant_is_too_small_for_large_radius():
    # one row x = 1, y = −1 and w = λe_1: per-sample gradient x(xᵀw − y) has ℓ∞ norm λ + 1
    lam = 50.0
    g = S.get_loss("squared").gradient(np.ones((1, 3)), np.array([-1.0]), np.array([lam, 0, 0]))
    assert np.abs(g).max() == pytest.approx(51.0)
    assert S.get_loss("squared").lipschitz_l1(1.0, 1.0, lam) == pytest.approx(51.0)
