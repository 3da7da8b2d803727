"""Huber loss: exact values, valid cuts, sensitivity, enumeration = brute force."""

import warnings

import numpy as np
import pytest

from mipdp import private_bss
from mipdp.brute_force import all_supports, huber_loss, huber_value
from mipdp.enumeration import SupportEnumerator, default_R
from mipdp.losses import Huber, get_loss

B = 0.5


@pytest.mark.parametrize("ridge,radius,hd", [(1.0, 10.0, 0.1), (120.0, 1.1, 1.0), (0.5, 0.05, 0.05),
                                             (5.0, 0.3, 0.2)])
@pytest.mark.parametrize("seed", range(2))
def test_values_match_independent_reference(instance, ridge, radius, hd, seed):
    pytest.importorskip("cvxpy", reason="the independent reference needs cvxpy (the test extra)")
    X, y = instance(seed, n=40, p=6)
    obj = Huber(ridge, radius, hd).bind(X, y)
    sup = all_supports(6, 2 + seed)
    vals, lowers, _, _ = obj.solve(sup)
    gaps = vals - lowers
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = np.array([huber_value(X, y, S, ridge, radius, hd) for S in sup])
    np.testing.assert_allclose(vals, ref, rtol=1e-9, atol=1e-12)
    assert np.all(gaps <= 1e-13)


@pytest.mark.parametrize("ridge,radius,hd", [(1.0, 10.0, 0.1), (3.0, 0.2, 0.05), (120.0, 1.1, 1.0)])
@pytest.mark.parametrize("seed", range(3))
def test_cuts_are_global_lower_bounds(instance, ridge, radius, hd, seed):
    X, y = instance(seed, n=40, p=8)
    obj = Huber(ridge, radius, hd).bind(X, y)
    sup = all_supports(8, 3)
    vals = obj.values(sup)
    Z = np.zeros((len(sup), 8))
    Z[np.arange(len(sup))[:, None], sup] = 1.0
    for S in sup[::5]:
        _, v, g = obj.value_and_cut(S)
        z0 = np.zeros(8)
        z0[S] = 1.0
        assert np.all(v + (Z - z0) @ g <= vals + 1e-12)


def test_reduces_to_least_squares_when_delta_is_large(instance):
    from mipdp.losses import LeastSquares
    X, y = instance(0, n=40, p=7)
    sup = all_supports(7, 3)
    np.testing.assert_allclose(Huber(2.0, 0.4, 100.0).bind(X, y).values(sup),
                               LeastSquares(2.0, 0.4).bind(X, y).values(sup), rtol=1e-12)


def test_sensitivity_formula():
    s, bx, by, r = 5, 0.5, 0.5, 1.1
    m = by + bx * r * np.sqrt(s)
    assert Huber(120.0, r, 10.0).sensitivity(3000, s, bx, by) == pytest.approx(m * m / 2 / 3000)
    assert Huber(120.0, r, 0.5).sensitivity(3000, s, bx, by) == pytest.approx(
        0.5 * (m - 0.25) / 3000)
    assert Huber(1.0, r, 0.7).sample_bound(s, bx, by) == pytest.approx(huber_loss(np.array(m), 0.7))


def brute(obj, p, s):
    sup = all_supports(p, s)
    return {tuple(S): v for S, v in zip(sup.tolist(), obj.values(sup), strict=True)}


CASES = [(seed, p, s, ridge, radius, hd) for seed, (p, s, ridge, radius, hd) in enumerate(
    [(8, 2, 1.0, 10.0, 0.1), (9, 3, 5.0, 0.3, 0.2), (10, 2, 2.0, 1.1, 0.05),
     (12, 3, 10.0, 1.1, 0.3), (7, 1, 1.0, 0.2, 0.1), (9, 2, 0.5, 0.5, 1.0),
     (10, 3, 3.0, 0.4, 0.1), (11, 2, 20.0, 2.0, 0.2), (8, 3, 1.0, 0.1, 0.05),
     (12, 2, 4.0, 0.8, 0.15)])]


@pytest.mark.parametrize("case", CASES, ids=[f"p{c[1]}-s{c[2]}-{c[0]}" for c in CASES])
def test_enumeration_matches_brute_force(instance, case, backend):
    seed, p, s, ridge, radius, hd = case
    X, y = instance(seed, n=30 + 3 * seed, p=p, kind="ties" if seed % 3 == 2 else "well")
    loss = Huber(ridge, radius, hd)
    obj = loss.bind(X, y)
    table = brute(obj, p, s)
    allv = np.sort(np.fromiter(table.values(), float))
    scale = loss.sensitivity(X.shape[0], s, B, B)
    for R in sorted({default_R(p, s), 3}):
        R = min(R, allv.size)
        top = SupportEnumerator(obj, s, scale=scale, backend=backend).top_supports(R)
        np.testing.assert_allclose(top.values, allv[:R], rtol=1e-10, atol=1e-13)
        assert all(table[tuple(S)] == pytest.approx(v, rel=1e-10, abs=1e-13)
                   for S, v in zip(top.supports.tolist(), top.values, strict=True))
    ms = SupportEnumerator(obj, s, scale=scale, backend=backend).mistake_scores()
    center = set(ms.center.tolist())
    K = min(s, p - s)
    L = np.full(K + 1, np.inf)
    for S, v in table.items():
        k = s - len(center.intersection(S))
        L[k] = min(L[k], v)
    np.testing.assert_allclose(ms.scores, L, rtol=1e-10, atol=1e-13)  # exact class minima


def test_private_bss_huber_and_errors(instance):
    X, y = instance(5, n=60, p=9)
    res = private_bss(X, y, 2, 1.0, loss="huber", bounds=(B, B), ridge=2.0, random_state=0)
    assert res.supports.shape == (1, 2)
    assert res.sensitivity == pytest.approx(Huber(2.0).resolve(2, B, B).sensitivity(60, 2, B, B))
    res = private_bss(X, y, 2, 1.0, loss=Huber(2.0, 1.1, huber_delta=0.1), bounds=(B, B),
                      random_state=0)
    assert res.info["loss"] == "huber"
    assert get_loss("robust").name == "huber"
    with pytest.raises(ValueError, match="huber_delta"):
        Huber(huber_delta=0.0)
    with pytest.raises(ValueError, match="radius"):
        Huber(radius=np.inf)
