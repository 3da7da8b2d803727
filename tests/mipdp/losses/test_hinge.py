"""Hinge loss: exact values, valid cuts, sensitivity, enumeration = brute force, ε-DP."""

import warnings

import numpy as np
import pytest

from mipdp import private_bss
from mipdp.brute_force import all_supports, hinge_value
from mipdp.enumeration import SupportEnumerator, default_R
from mipdp.losses import Hinge, get_loss

B = 0.5


def labels(y):
    out = np.where(y >= np.median(y), 1.0, -1.0)
    return out


def clf_instance(instance, seed, n=40, p=8, kind="well"):
    X, y = instance(seed, n=n, p=p, kind=kind)
    return X, labels(y)


@pytest.mark.parametrize("ridge,radius", [(1.0, 10.0), (120.0, 1.1), (0.5, 0.05), (5.0, 0.3)])
@pytest.mark.parametrize("seed", range(2))
def test_values_match_independent_reference(instance, ridge, radius, seed):
    pytest.importorskip("cvxpy", reason="the independent reference needs cvxpy (the test extra)")
    X, y = clf_instance(instance, seed, n=40, p=6)
    obj = Hinge(ridge, radius).bind(X, y)
    sup = all_supports(6, 2 + seed)
    P, D, _, _ = obj.solve(sup)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = np.array([hinge_value(X, y, S, ridge, radius) for S in sup])
    np.testing.assert_allclose(P, ref, rtol=1e-9, atol=1e-12)
    assert np.all(P - D <= 1e-13 * np.maximum(1.0, P))  # certified duality gap
    assert obj.n_fallback == 0


def test_degenerate_duplicated_rows_are_certified(instance):
    pytest.importorskip("cvxpy", reason="the independent reference needs cvxpy (the test extra)")
    X, y = clf_instance(instance, 3, n=30, p=5)
    X = np.sign(np.vstack([X, X, X])) * B  # only corner rows: many exact ties
    y = np.r_[y, y, -y]
    obj = Hinge(2.0, 0.7).bind(X, y)
    P, D, _, _ = obj.solve(all_supports(5, 2))
    assert np.all(P - D <= 1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = np.array([hinge_value(X, y, S, 2.0, 0.7) for S in all_supports(5, 2)])
    np.testing.assert_allclose(P, ref, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("ridge,radius", [(1.0, 10.0), (5.0, 0.3), (0.2, 0.05)])
@pytest.mark.parametrize("seed", range(3))
def test_cuts_are_global_lower_bounds(instance, ridge, radius, seed):
    X, y = clf_instance(instance, seed, n=40, p=8)
    obj = Hinge(ridge, radius).bind(X, y)
    sup = all_supports(8, 3)
    vals = obj.values(sup)
    Z = np.zeros((len(sup), 8))
    Z[np.arange(len(sup))[:, None], sup] = 1.0
    for S in sup[::5]:
        _, v, g = obj.value_and_cut(S)
        z0 = np.zeros(8)
        z0[S] = 1.0
        assert np.all(v + (Z - z0) @ g <= vals + 1e-12)


def test_cut_inside_support_is_ridge_times_beta_squared(instance):
    X, y = clf_instance(instance, 1, n=40, p=6)
    for ridge, radius in [(2.0, 100.0), (2.0, 0.1)]:
        obj = Hinge(ridge, radius).bind(X, y)
        S = np.array([0, 2, 5])
        _, _, g = obj.value_and_cut(S)
        _, _, beta, A = obj.solve(S[None], want_dual=True)
        w = X[:, S].T @ (A[0] * y)
        lam_p = max(ridge, np.linalg.norm(w) / (2 * radius))
        np.testing.assert_allclose(g[S], -lam_p / 40 * beta[0] ** 2, rtol=1e-9, atol=1e-15)


def test_sensitivity_formula_and_sample_bound(instance):
    loss = Hinge(ridge=120.0, radius=1.1)
    assert loss.sensitivity(3000, 5, 0.5, None) == pytest.approx(
        (1 + 0.5 * 1.1 * np.sqrt(5)) / 3000)
    # the per-sample loss at any feasible β never exceeds B (worst case: β along a corner)
    s, b = 3, 0.5
    x = np.full(s, b)
    beta = -1.1 * x / np.linalg.norm(x)
    assert max(0.0, 1 - 1.0 * x @ beta) == pytest.approx(loss.sample_bound(s, b, None))


def brute(obj, p, s):
    sup = all_supports(p, s)
    return {tuple(S): v for S, v in zip(sup.tolist(), obj.values(sup), strict=True)}


CASES = [(seed, p, s, ridge, radius) for seed, (p, s, ridge, radius) in enumerate(
    [(8, 2, 1.0, 10.0), (9, 3, 5.0, 0.3), (10, 2, 2.0, 1.1), (12, 3, 10.0, 1.1), (7, 1, 1.0, 0.2),
     (9, 2, 0.5, 0.5), (10, 3, 3.0, 0.4), (11, 2, 20.0, 2.0), (8, 3, 1.0, 0.1), (12, 2, 4.0, 0.8)])]


def check_enumeration(obj, p, s, scale, backend):
    """Top-R (default and small R) and the mistake scores equal exhaustive search."""
    table = brute(obj, p, s)
    allv = np.sort(np.fromiter(table.values(), float))
    N = allv.size
    for R in sorted({default_R(p, s), 3}):
        R = min(R, N)
        top = SupportEnumerator(obj, s, scale=scale, backend=backend).top_supports(R)
        np.testing.assert_allclose(top.values, allv[:R], rtol=1e-10, atol=1e-13)
        for S, v in zip(top.supports.tolist(), top.values, strict=True):
            assert table[tuple(S)] == pytest.approx(v, rel=1e-10, abs=1e-13)
        assert len({tuple(S) for S in top.supports.tolist()}) == R
    ms = SupportEnumerator(obj, s, scale=scale, backend=backend).mistake_scores()
    center = set(ms.center.tolist())
    assert table[tuple(ms.center.tolist())] == pytest.approx(allv[0], rel=1e-10, abs=1e-13)
    K = min(s, p - s)
    L = np.full(K + 1, np.inf)
    for S, v in table.items():
        k = s - len(center.intersection(S))
        L[k] = min(L[k], v)
    np.testing.assert_allclose(ms.scores, L, rtol=1e-10, atol=1e-13)  # exact class minima
    assert ms.second_best == pytest.approx(allv[1], rel=1e-10, abs=1e-13)


@pytest.mark.parametrize("case", CASES, ids=[f"p{c[1]}-s{c[2]}-{c[0]}" for c in CASES])
def test_enumeration_matches_brute_force(instance, case, backend):
    seed, p, s, ridge, radius = case
    X, y = clf_instance(instance, seed, n=30 + 3 * seed, p=p,
                        kind="ties" if seed % 3 == 2 else "well")
    loss = Hinge(ridge, radius)
    check_enumeration(loss.bind(X, y), p, s, loss.sensitivity(X.shape[0], s, B, None), backend)


def neighbours(X, y, rng, n_random=3):
    """Replace one row by a corner of the clipping box with the label flipped, or a random row."""
    n, p = X.shape
    out = []
    for sign in (1.0, -1.0):
        for i in (0, n - 1):
            Xn, yn = X.copy(), y.copy()
            Xn[i] = sign * B
            yn[i] = -yn[i]
            out.append((Xn, yn))
    for _ in range(n_random):
        Xn, yn = X.copy(), y.copy()
        i = rng.integers(n)
        Xn[i] = rng.choice([-B, B], p)
        yn[i] = -yn[i]
        out.append((Xn, yn))
    return out


def log_probs(X, y, s, eps, R, ridge, radius):
    res = private_bss(X, y, s, eps, bounds=(B, None), R=R, loss="hinge", ridge=ridge,
                      radius=radius, random_state=0)
    return np.array([res.log_probability(S) for S in all_supports(X.shape[1], s)])


@pytest.mark.parametrize("seed,R,ridge,radius", [(0, None, 1.0, 2.0), (1, 3, 1.0, 2.0),
                                                 (2, None, 0.5, 0.5), (3, 1, 3.0, 1.1)])
def test_pure_dp_on_neighbouring_datasets(instance, seed, R, ridge, radius):
    X, y = clf_instance(instance, seed, n=25, p=6)
    s, eps = 2, 1.0
    lp = log_probs(X, y, s, eps, R, ridge, radius)
    worst = 0.0
    for Xn, yn in neighbours(X, y, np.random.default_rng(seed)):
        worst = max(worst, np.max(np.abs(lp - log_probs(Xn, yn, s, eps, R, ridge, radius))))
    assert worst <= eps + 1e-9


def test_private_bss_hinge_end_to_end_both_samplers(instance):
    X, y = clf_instance(instance, 4, n=60, p=10)
    for method, kw in [("top_r", {}), ("mistakes", {"delta": 1e-6})]:
        res = private_bss(X, y, 2, 1.0, loss="hinge", bounds=(B, None), method=method,
                          ridge=2.0, random_state=0, **kw)
        assert res.supports.shape == (1, 2)
        assert res.sensitivity == pytest.approx(
            Hinge(2.0).resolve(2, B, None).sensitivity(60, 2, B, None))
    assert get_loss("svm").name == "hinge"


def test_bad_labels_and_names(instance):
    X, y = clf_instance(instance, 0, n=20, p=5)
    with pytest.raises(ValueError, match="y: .*two classes"):     # 0/1 labels are fine now
        private_bss(X, np.where(y > 0, 1.0, 0.0) + 2 * (np.arange(y.size) == 0), 2, 1.0,
                    loss="hinge", bounds=(B, None))
    with pytest.raises(ValueError, match="y"):
        Hinge().bind(X, 2.0 * y)
    with pytest.raises(ValueError, match="loss"):
        private_bss(X, y, 2, 1.0, loss="hingee", bounds=(B, None))
    with pytest.raises(ValueError, match="radius"):
        Hinge(radius=np.inf)


def test_one_class_labels_run_and_enumerate_exactly(instance, backend):
    """All labels +1 is a valid dataset (a neighbour of a two-class one): it runs, exactly."""
    X, _ = clf_instance(instance, 7, n=30, p=8)
    y = np.ones(30)
    loss = Hinge(1.0, 2.0)
    obj = loss.bind(X, y)
    check_enumeration(obj, 8, 2, loss.sensitivity(30, 2, B, None), backend)
    res = private_bss(X, y, 2, 1.0, loss="hinge", bounds=(B, None), ridge=1.0, radius=2.0,
                      random_state=0, backend=backend)
    assert res.supports.shape == (1, 2)
    res = private_bss(X, -y, 2, 1.0, loss="hinge", bounds=(B, None), ridge=1.0, radius=2.0,
                      random_state=0, method="top_r", R=3, backend=backend,
                      enumeration_options={"exhaustive_max": 0})
    assert res.supports.shape == (1, 2)


def test_one_class_neighbour_of_two_class_dataset_is_private(instance):
    """A two-class dataset whose only -1 label flips: both run, log-ratios <= ε."""
    X, _ = clf_instance(instance, 8, n=20, p=5)
    y = np.ones(20)
    y[3] = -1.0
    yn = y.copy()
    yn[3] = 1.0
    lp = log_probs(X, y, 2, 1.0, None, 1.0, 2.0)
    lpn = log_probs(X, yn, 2, 1.0, None, 1.0, 2.0)
    assert np.max(np.abs(lp - lpn)) <= 1.0 + 1e-9
