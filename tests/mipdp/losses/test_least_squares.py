import numpy as np
import pytest

from mipdp.brute_force import all_supports, least_squares_value
from mipdp.losses import LeastSquares, get_loss


@pytest.mark.parametrize("ridge,radius", [(1.0, 10.0), (120.0, 1.1), (0.5, 0.05), (5.0, 0.3)])
@pytest.mark.parametrize("seed", range(3))
def test_values_match_independent_oracle(instance, ridge, radius, seed):
    X, y = instance(seed, n=50, p=7)
    obj = LeastSquares(ridge, radius).bind(X, y)
    sup = all_supports(7, 3)
    ours = obj.values(sup)
    ref = np.array([least_squares_value(X, y, S, ridge, radius) for S in sup])
    np.testing.assert_allclose(ours, ref, rtol=1e-11, atol=1e-14)


@pytest.mark.parametrize("radius", [10.0, 0.1])
def test_one_swaps_equal_direct_values(instance, radius):
    X, y = instance(1, n=40, p=10)
    obj = LeastSquares(2.0, radius).bind(X, y)
    S = np.array([1, 4, 8])
    sw = obj.one_swap_values(S)
    assert np.all(np.isinf(sw[:, S]))
    for a in range(3):
        for j in np.setdiff1d(np.arange(10), S):
            T = np.sort(np.r_[np.delete(S, a), j])
            assert sw[a, j] == pytest.approx(obj.values(T[None])[0], rel=1e-12)


@pytest.mark.parametrize("radius", [10.0, 0.2])
def test_cuts_are_global_lower_bounds(instance, radius):
    """η >= L(S) + gᵀ(z - 1_S) underestimates L at every support (convexity)."""
    X, y = instance(2, n=40, p=8)
    obj = LeastSquares(3.0, radius).bind(X, y)
    sup = all_supports(8, 3)
    vals = obj.values(sup)
    for S in sup[::7]:
        _, v, g = obj.value_and_cut(S)
        z0 = np.zeros(8)
        z0[S] = 1
        for T, vT in zip(sup, vals, strict=True):
            z = np.zeros(8)
            z[T] = 1
            assert v + g @ (z - z0) <= vT + 1e-12


@pytest.mark.parametrize("ridge,radius", [(0.01, 0.1), (1.0, 0.3), (1.0, 2.0), (5.0, 0.45),
                                          (120.0, 1.1)])
@pytest.mark.parametrize("seed", range(3))
def test_chord_and_extra_cuts_are_global_lower_bounds(instance, ridge, radius, seed):
    """Every cut (main and extra tangents) underestimates L at every support, and the main
    cut is never weaker than the perspective tangent it replaced."""
    p, s = 9, 3
    X, y = instance(seed, n=60, p=p)
    obj = LeastSquares(ridge, radius).bind(X, y)
    sup = all_supports(p, s)
    vals = obj.values(sup)
    Z = np.zeros((len(sup), p))
    np.put_along_axis(Z, sup, 1.0, axis=1)
    n_extra = 0
    for S in sup[::5]:
        v, lower, g = obj.value_and_cut(S)
        assert lower <= v
        cuts = [(lower, g)] + obj.extra_cuts(S)
        n_extra += len(cuts) - 1
        z0 = np.zeros(p)
        z0[S] = 1
        for lo, gk in cuts:
            assert lo <= v + 1e-15
            assert np.all(lo + (Z - z0) @ gk <= vals + 1e-12 * np.maximum(1, np.abs(vals)))
        # the tangent of the perspective dual at 1_S (slope -w_i²/(2nλ) off S)
        off = np.setdiff1d(np.arange(p), S)
        lam_pp = -(((X.T @ (y - X[:, S] @ obj_beta(obj, S))) ** 2)[off]) / (2 * 60 * g[off])
        assert np.all(lam_pp >= ridge * (1 - 1e-9))   # |g_i| <= w_i²/(2nλ): at least as strong
    if radius <= 0.45 and ridge <= 5.0:
        assert n_extra > 0


def obj_beta(obj, S):
    """Coefficients of the ridge-and-ball problem on ``S`` (for the slope check)."""
    from mipdp.losses.least_squares import ridge_ball_values
    XS = obj.X[:, S]
    A = XS.T @ XS + obj.lam * np.eye(len(S))
    _, beta, _ = ridge_ball_values(A[None], obj.Xty[S][None], obj.yty, obj.n, obj.radius,
                                   return_coef=True)
    return beta[0]


@pytest.mark.parametrize("shifted", [False, True])
def test_cut_is_the_gradient_of_the_perspective_relaxation(instance, shifted):
    """Finite differences of c(z) at 1_S match g on coordinates inside S.  Plain cut: the
    perspective relaxation of the ridge; shifted cut: that of ``XᵀX - D`` with the ridge
    ``λ + d_i`` (docs/algorithms.md, "Shifted cuts")."""
    X, y = instance(3, n=40, p=6)
    lam, n = 2.0, 40
    obj = LeastSquares(lam, 100.0).bind(X, y)
    obj.shifted_cuts = shifted
    d = obj.cut_shift() if shifted else np.zeros(6)
    assert d is not None and (np.all(d > 0) or not shifted)
    S = np.array([0, 2, 5])
    v, _, g = obj.value_and_cut(S)

    def c(z):  # perspective relaxation on the support, unconstrained ball (r large)
        XS = X[:, S]
        A = XS.T @ XS - np.diag(d[S]) + np.diag((lam + d[S]) / z[S])
        beta = np.linalg.solve(A, XS.T @ y)
        r = y - XS @ beta
        return (r @ r - np.sum(d[S] * beta ** 2)
                + np.sum((lam + d[S]) * beta ** 2 / z[S])) / (2 * n)

    z = np.zeros(6)
    z[S] = 1.0
    assert c(z) == pytest.approx(v, rel=1e-10)
    for i in S:
        h = 1e-6
        zp, zm = z.copy(), z.copy()
        zp[i] += h
        zm[i] -= h
        assert (c(zp) - c(zm)) / (2 * h) == pytest.approx(g[i], rel=1e-5, abs=1e-12)


def test_sensitivity_formula():
    loss = LeastSquares(ridge=120.0, radius=1.1)
    assert loss.sensitivity(3000, 5, 0.5, 0.5) == pytest.approx(
        (0.5 + 0.5 * 1.1 * np.sqrt(5)) ** 2 / 6000)


def test_bad_parameters():
    with pytest.raises(ValueError, match="ridge"):
        LeastSquares(ridge=0.0)
    with pytest.raises(ValueError, match="radius"):
        LeastSquares(radius=np.inf)
    with pytest.raises(ValueError, match="loss"):
        get_loss("nope")
    with pytest.raises(TypeError, match="loss"):
        get_loss(3)
