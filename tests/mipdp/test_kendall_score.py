"""bounds="kendall": the redundancy-aware Kendall score's sensitivity (exact neighbour audit),
its cuts, the release's law on neighbours, the sampler's law on every backend, and the
checks before the data."""

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import chisquare

from mipdp import private_bss
from mipdp._param_validation import InvalidParameterError
from mipdp.brute_force import all_supports
from mipdp.comparators.kendall import scaled_kendall
from mipdp.guarantee import Neighbour
from mipdp.kendall_score import (
    DEFAULT_GAMMA,
    KendallRedundancyObjective,
    kendall_score_sensitivity,
)
from mipdp.selection import planned_guarantee

MIP = {"exhaustive_max": 0, "explicit_max": 0, "full_class_max": 0}


def skewed(n=80, p=6, seed=0, ties=False):
    rng = np.random.default_rng(seed)
    X = np.exp(rng.normal(size=(n, p)))
    X[:, 3] += 0.8 * X[:, 0]
    y = X[:, 0] + 2 * X[:, 2] + rng.exponential(size=n)
    if ties:
        X[:, 1] = np.round(X[:, 1])
        y = np.round(y)
    return X, y


def brute_scores(X, y, sup, gamma):
    """``R(S)`` from its definition: every ``τ_a`` by its own double loop over pairs."""
    n, p = X.shape

    def tau(a, b):      # (n/2) τ_a = (n_c − n_d)/(n − 1), ties count 0
        sa = np.sign(a[:, None] - a[None, :])
        sb = np.sign(b[:, None] - b[None, :])
        return float(np.triu(sa * sb, 1).sum()) / (n - 1)

    t = np.array([abs(tau(X[:, j], y)) for j in range(p)])
    T = np.zeros((p, p))
    for j, k in itertools.combinations(range(p), 2):
        T[j, k] = T[k, j] = abs(tau(X[:, j], X[:, k]))
    s = sup.shape[1]
    pen = sum(T[sup[:, a], sup[:, b]] for a in range(s) for b in range(a + 1, s)) if s > 1 else 0
    return t[sup].sum(1) - gamma / max(s - 1, 1) * pen


def test_scores_match_the_definition_with_ties():
    X, y = skewed(25, 5, seed=1, ties=True)
    for s in (1, 2, 3):
        sup = all_supports(5, s)
        obj = KendallRedundancyObjective(X, y, s)
        np.testing.assert_allclose(obj.scores(sup), brute_scores(X, y, sup, DEFAULT_GAMMA),
                                   atol=1e-12)
        np.testing.assert_allclose(obj.values(sup), s / 2 - obj.scores(sup) / 25, atol=0)


def test_sensitivity_values():
    assert kendall_score_sensitivity(3, 0.75) == 6.0
    assert kendall_score_sensitivity(5, 1.0) == 10.0
    assert kendall_score_sensitivity(3, 0.75, "add_remove") == pytest.approx(3 * (1.5 + 0.1875))
    assert kendall_score_sensitivity(2, 2.0) == 8.0
    assert kendall_score_sensitivity(1, 5.0) == 2.0          # no pair term
    with pytest.raises(InvalidParameterError, match="gamma"):
        kendall_score_sensitivity(3, -1.0)


@pytest.mark.parametrize("s, gamma", [(2, 1.0), (3, 0.75), (3, 1.0), (4, 0.5)])
def test_per_pair_range_is_the_proven_bound(s, gamma):
    """The proof's finite core (docs/privacy.md): for every sign pattern of the absolute
    values, the range of one pair's contribution ``h(d, e)`` over all configurations with
    ties is ``<= 2s`` (replace-one), and ``max h − min h/2 <= s(3/2 + γ/4)`` (add/remove);
    both are attained."""
    gp = gamma / (s - 1)
    pairs = list(itertools.combinations(range(s), 2))
    cfg = np.array(list(itertools.product([-1, 0, 1], repeat=s + 1)))
    d, e = cfg[:, :s], cfg[:, s]
    A = d * e[:, None]
    B = np.stack([d[:, j] * d[:, k] for j, k in pairs], 1)
    ro = ar = 0.0
    for sg in itertools.product([-1, 1], repeat=len(pairs)):    # σ_j = 1 w.l.o.g.
        h = A.sum(1) - gp * (B @ np.array(sg))
        ro = max(ro, h.max() - h.min())
        ar = max(ar, h.max() - h.min() / 2, h.max() / 2 - h.min())
    assert ro == pytest.approx(kendall_score_sensitivity(s, gamma))
    assert ar == pytest.approx(kendall_score_sensitivity(s, gamma, "add_remove"))


def _rows(X, y, rng, m):
    n, p = X.shape
    out = []
    for k in range(m):
        if k % 4 == 0:
            row = rng.choice([-1e9, 1e9], size=p + 1)
        elif k % 4 == 1:      # ties with existing values in every coordinate
            row = np.r_[[X[rng.integers(n), j] for j in range(p)], y[rng.integers(n)]]
        elif k % 4 == 2:      # a duplicated row
            i = rng.integers(n)
            row = np.r_[X[i], y[i]]
        else:
            row = rng.normal(size=p + 1) * 2
        out.append(row)
    return out


@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
def test_neighbour_audit_of_the_sensitivity(neighbours):
    """Exact audit: max_S |R_D(S) − R_D'(S)| <= Δ on adversarial data (ties, duplicated
    rows, a constant column, y a monotone function of a column) and neighbours (extreme,
    tied, duplicated, random rows); and the exact laws' log-ratio is <= ε."""
    rng = np.random.default_rng(11)
    p, s, gamma, eps = 4, 3, DEFAULT_GAMMA, 1.0
    sup = all_supports(p, s)
    d = kendall_score_sensitivity(s, gamma, neighbours)
    worst = worst_lr = 0.0
    for trial in range(16):
        n = int(rng.choice([5, 8, 13, 30]))
        X = rng.normal(size=(n, p))
        X[:, 1] = X[:, 0] + 0.1 * rng.normal(size=n)
        y = X[:, 0] + 0.3 * rng.normal(size=n)
        kind = trial % 4
        if kind == 1:
            X = rng.integers(0, 3, size=(n, p)).astype(float)
            y = X[:, 0] + rng.integers(0, 2, size=n)
        elif kind == 2:
            X[n // 2:] = X[: n - n // 2]
            y[n // 2:] = y[: n - n // 2]
            X[:, -1] = 1.0
        elif kind == 3:
            y = X[:, 0].copy()
        R = brute_scores(X, y, sup, gamma)
        for row in _rows(X, y, rng, 8):
            if neighbours == "replace_one":
                i = rng.integers(n)
                X2, y2 = X.copy(), y.copy()
                X2[i], y2[i] = row[:p], row[p]
            elif rng.random() < 0.5:
                X2, y2 = np.vstack([X, row[:p]]), np.r_[y, row[p]]
            else:
                i = rng.integers(n)
                X2, y2 = np.delete(X, i, 0), np.delete(y, i)
            R2 = brute_scores(X2, y2, sup, gamma)
            worst = max(worst, float(np.max(np.abs(R2 - R))) / d)
            a, b = eps * R / (2 * d), eps * R2 / (2 * d)
            worst_lr = max(worst_lr, float(np.max(np.abs((a - logsumexp(a))
                                                         - (b - logsumexp(b))))))
    assert worst <= 1.0 + 1e-12
    assert worst > 0.3         # the audit does exercise the bound
    assert worst_lr <= eps + 1e-9


def test_a_neighbour_can_reach_the_replace_one_bound_for_one_term():
    """``|T_jy|`` alone moves by 2 (all n − 1 pairs of the changed row flip)."""
    n = 9
    x = np.arange(n, dtype=float)
    y = x.copy()
    y2 = y.copy()
    y2[-1] = -1.0
    assert abs(scaled_kendall(x, y) - scaled_kendall(x, y2)) == pytest.approx(2.0)


def test_cuts_are_global_lower_bounds_and_swaps_exact():
    X, y = skewed(60, 9, seed=2, ties=True)
    s = 3
    obj = KendallRedundancyObjective(X, y, s)
    sup = all_supports(9, s)
    vals = obj.values(sup)
    Z = np.zeros((len(sup), 9))
    np.put_along_axis(Z, sup, 1.0, axis=1)
    for S in sup[::5]:
        v, lower, g = obj.value_and_cut(S)
        assert lower <= v and v == pytest.approx(obj.values(S[None])[0])
        z = np.zeros(9)
        z[S] = 1.0
        assert np.all(lower + (Z - z) @ g <= vals + 1e-13)
        for lo2, g2 in obj.extra_cuts(S):
            assert np.all(lo2 + (Z - z) @ g2 <= vals + 1e-13)
        sw = obj.one_swap_values(S)
        for a, j in itertools.product(range(s), range(9)):
            if j not in S:
                S2 = np.sort(np.r_[np.delete(S, a), j])
                assert sw[a, j] == pytest.approx(obj.values(S2[None])[0], abs=1e-13)


def _law(X, y, s, eps, neighbours="replace_one"):
    sup = all_supports(X.shape[1], s)
    R = brute_scores(X, y, sup, DEFAULT_GAMMA)
    w = eps * R / (2 * kendall_score_sensitivity(s, DEFAULT_GAMMA, neighbours))
    return sup, w - logsumexp(w)


@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
def test_release_is_the_exponential_mechanism_on_R(neighbours):
    X, y = skewed(30, 6, seed=3, ties=True)
    s, eps = 2, 2.0
    res = private_bss(X, y, s, eps, bounds="kendall", neighbours=neighbours, random_state=0)
    sup, logp = _law(X, y, s, eps, neighbours)
    got = np.array([res.log_probability(S) for S in sup])
    np.testing.assert_allclose(got - logsumexp(got), logp, atol=1e-9)
    assert res.is_private and res.epsilon == eps
    assert res.info["bounds"] == "kendall"
    assert "Kendall" in res.guarantee.notes
    if neighbours == "add_remove":
        assert res.guarantee.neighbour is Neighbour.ADD_REMOVE


def test_sampler_chi_square_every_backend(backend):
    """Draws of the exponential mechanism on R, envelope by outer approximation on
    ``backend`` (no exhaustive evaluation): chi-square against the brute-force law."""
    X, y = skewed(60, 8, seed=5, ties=True)
    s, eps = 2, 3.0
    res = private_bss(X, y, s, eps, bounds="kendall", backend=backend, n_draws=4000,
                      random_state=1, enumeration_options=MIP)
    sup, logp = _law(X, y, s, eps)
    index = {tuple(r): i for i, r in enumerate(sup.tolist())}
    counts = np.bincount([index[tuple(r)] for r in res.supports.tolist()], minlength=len(sup))
    ex = np.exp(logp) * counts.sum()
    big = ex >= 5
    obs = np.r_[counts[big], counts[~big].sum()]
    exp = np.r_[ex[big], ex[~big].sum()]
    assert chisquare(obs, exp).pvalue > 1e-3


def test_same_release_for_every_n_jobs():
    """The class searches run on forks of the objective (own pair caches): the envelope
    and the draws are the same for n_jobs 1, 2 and 4."""
    X, y = skewed(80, 12, seed=4, ties=True)
    runs = [private_bss(X, y, 3, 2.0, bounds="kendall", n_draws=20, random_state=3,
                        n_jobs=j, enumeration_options=MIP) for j in (1, 2, 4)]
    for r in runs[1:]:
        np.testing.assert_array_equal(r.supports, runs[0].supports)


def test_rank_invariance():
    X, y = skewed(40, 6, seed=8)
    a = private_bss(X, y, 2, 2.0, bounds="kendall", random_state=2, n_draws=5)
    b = private_bss(np.log(X) * 3 + 7, y ** 3, 2, 2.0, bounds="kendall", random_state=2,
                    n_draws=5)
    np.testing.assert_array_equal(a.supports, b.supports)


def test_planned_guarantee():
    g = planned_guarantee(1.0, bounds="kendall")
    assert g.epsilon == 1.0 and g.delta == 0.0 and "Kendall" in g.notes


@pytest.mark.parametrize("kw, name", [
    ({"loss": "hinge"}, "bounds"),
    ({"prescreen": ("dp_sis", 4, 0.2)}, "prescreen"),
    ({"method": "mistakes", "neighbours": "add_remove"}, "mistakes"),
])
def test_bad_input_raises_before_the_data(kw, name):
    with pytest.raises(InvalidParameterError, match=name):
        private_bss(object(), object(), 2, 1.0, bounds="kendall", **kw)
