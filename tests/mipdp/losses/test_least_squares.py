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
        for T, vT in zip(sup, vals):
            z = np.zeros(8)
            z[T] = 1
            assert v + g @ (z - z0) <= vT + 1e-12


def test_cut_is_the_gradient_of_the_perspective_relaxation(instance):
    """Finite differences of c(z) at 1_S match g on coordinates inside S."""
    X, y = instance(3, n=40, p=6)
    lam, n = 2.0, 40
    obj = LeastSquares(lam, 100.0).bind(X, y)
    S = np.array([0, 2, 5])
    v, _, g = obj.value_and_cut(S)

    def c(z):  # perspective relaxation on the support, unconstrained ball (r large)
        XS = X[:, S]
        A = XS.T @ XS + lam * np.diag(1.0 / z[S])
        beta = np.linalg.solve(A, XS.T @ y)
        r = y - XS @ beta
        return (r @ r + lam * np.sum(beta ** 2 / z[S])) / (2 * n)

    z = np.zeros(6)
    z[S] = 1.0
    for i in S:
        h = 1e-6
        zp, zm = z.copy(), z.copy()
        zp[i] += h
        zm[i] -= h
        assert (c(zp) - c(zm)) / (2 * h) == pytest.approx(g[i], rel=1e-5, abs=1e-12)


def test_sensitivity_formula():
    loss = LeastSquares(ridge=120.0, radius=1.1)
    assert loss.sensitivity(3000, 5, 0.5, 0.5) == pytest.approx((0.5 + 0.5 * 1.1 * np.sqrt(5)) ** 2 / 6000)


def test_bad_parameters():
    with pytest.raises(ValueError, match="ridge"):
        LeastSquares(ridge=0.0)
    with pytest.raises(ValueError, match="radius"):
        LeastSquares(radius=np.inf)
    with pytest.raises(ValueError, match="loss"):
        get_loss("nope")
    with pytest.raises(TypeError, match="loss"):
        get_loss(3)
