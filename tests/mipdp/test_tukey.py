"""The Tukey mechanism (``mipdp.tukey``): boxes, exact laws on neighbours, the sampler.

* Depth and volumes against brute force: the approximate Tukey depth is constant on the
  cells of the grid of the models' coordinates, so the volume of every depth level is a sum
  over cells (ties and zero widths included).
* Privacy, exactly: on a pair of model sets that differ in one model, the output of the
  whole mechanism (refusal, or a point) has a density that is constant on the cells of the
  grid of *both* sets' coordinates, so its law on those cells is exact and the hockey-stick
  divergence ``Σ max(0, P_D − e^ε P_D')`` over them *is* the mechanism's ``δ(ε)``.  It must
  be ``≤ δ``; the exponential mechanism alone on a set that passes the distance test
  (``A(D) ≥ 0``) must be ``(ε_em, δ)``; ``A`` must be 1-sensitive; and the refusal's law
  has log-ratio ``≤ ε_ptr``.  Data-level neighbours change exactly one part model.
* The sampler: chi-square of the drawn points' depth level and shell piece against the
  exact law.
"""

import math

import numpy as np
import pytest
from scipy import stats

import mipdp
from mipdp.accounting import BudgetAccountant
from mipdp.exceptions import InvalidParameterError, PTRRefusedError
from mipdp.tukey import (
    TukeyResult,
    _threshold,
    approximate_tukey_depth,
    centred_part_statistics,
    fit_part_models,
    level_law,
    models_for_rows,
    models_wanted,
    private_n_lower_bound,
    ptr_distance,
    ptr_pass_probability,
    ptr_refusal_probability,
    sample_tukey,
    split_parts,
    tukey_levels,
    tukey_regression,
)


# -- brute force -------------------------------------------------------------------------------
def _cells(edges):
    """Centres and volumes of the cells of the product grid of per-axis ``edges``."""
    mids = [0.5 * (e[1:] + e[:-1]) for e in edges]
    widths = [np.diff(e) for e in edges]
    C = np.stack(np.meshgrid(*mids, indexing="ij"), axis=-1).reshape(-1, len(edges))
    W = np.prod(np.stack(np.meshgrid(*widths, indexing="ij"), axis=-1), axis=-1).ravel()
    return C, W


def _brute_volumes(models):
    """``{depth: volume of the region of exactly that depth}`` by cells (depth ≥ 1)."""
    edges = [np.unique(models[:, j]) for j in range(models.shape[1])]
    C, W = _cells(edges)
    dep = approximate_tukey_depth(models, C)
    H = models.shape[0] // 2
    return np.array([W[dep == u].sum() for u in range(H + 1)])


def _models(rng, m, d, ties=False):
    M = rng.normal(size=(m, d))
    if ties:
        M = np.round(M, 1)
    return M


@pytest.mark.parametrize("m,d,ties", [(5, 1, False), (8, 2, False), (9, 3, False),
                                      (10, 2, True), (7, 3, True)])
def test_levels_match_brute_force(m, d, ties):
    rng = np.random.default_rng(m * 10 + d)
    for _ in range(5):
        M = _models(rng, m, d, ties)
        lv = tukey_levels(M)
        shell = _brute_volumes(M)
        got = np.exp(lv.log_shell)
        np.testing.assert_allclose(got[1:], shell[1:], rtol=1e-10, atol=1e-14)
        # V_u = volume of depth >= u
        np.testing.assert_allclose(np.exp(lv.log_volume[1:]),
                                   np.cumsum(shell[::-1])[::-1][1:], rtol=1e-10, atol=1e-14)
        # the pieces of each shell partition it
        for u in range(1, lv.depth_max + 1):
            assert np.exp(lv.log_piece[u]).sum() == pytest.approx(got[u], rel=1e-10, abs=1e-14)


def test_depth_brute_force_and_box():
    rng = np.random.default_rng(3)
    M = rng.normal(size=(9, 2))
    P = rng.normal(size=(200, 2)) * 1.5
    dep = approximate_tukey_depth(M, P)
    lv = tukey_levels(M)
    for u in range(1, lv.depth_max + 1):
        inside = np.all((P >= lv.lo[u]) & (P <= lv.hi[u]), axis=1)
        np.testing.assert_array_equal(inside, dep >= u)


def test_zero_width_coordinate_is_harmless():
    """A coordinate on which every model agrees (e.g. an all-zero column): zero volume,
    the test cannot pass, and the sampler still returns a point without raising."""
    rng = np.random.default_rng(0)
    M = rng.normal(size=(40, 3))
    M[:, 1] = 0.0
    lv = tukey_levels(M)
    assert np.all(np.isneginf(lv.log_shell[1:]))
    assert ptr_distance(lv, 10, 1.0, 1e-5) == -1
    b = sample_tukey(lv, 10, 1.0, rng)
    assert b.shape == (3,) and b[1] == 0.0


# -- exact privacy at the model level -------------------------------------------------------------
def _cell_law(M, edges, t, eps_ptr, eps_em, delta):
    """(P[refuse], P[cell]) of the whole mechanism on models ``M`` over the grid ``edges``."""
    lv = tukey_levels(M)
    A = ptr_distance(lv, t, eps_em, delta)
    p_pass = ptr_pass_probability(A, eps_ptr, delta)
    C, W = _cells(edges)
    c = eps_em / 2
    dep = approximate_tukey_depth(M, C)
    logW = lv.log_weight(c)[t]
    dens = np.where(dep >= t, np.exp(c * dep - logW), 0.0) if np.isfinite(logW) else 0 * W
    cells = dens * W
    return 1.0 - p_pass, p_pass * cells, cells


def _hockey(p, q, eps):
    return float(np.maximum(p - math.exp(eps) * q, 0.0).sum())


def _neighbour_pairs(rng, m, d, count):
    """Model sets and a neighbour (one model replaced: near, far, or a copy of another)."""
    for i in range(count):
        M = rng.normal(size=(m, d)) * rng.uniform(0.5, 2.0, size=d)
        M2 = M.copy()
        j = rng.integers(m)
        kind = i % 3
        if kind == 0:
            M2[j] = rng.normal(size=d) * 0.3
        elif kind == 1:
            M2[j] = rng.normal(size=d) * 6.0
        else:
            M2[j] = M[(j + 1) % m]
        yield M, M2


@pytest.mark.parametrize("m,d,eps_ptr,eps_em,delta", [
    (16, 1, 2.0, 6.0, 0.05), (20, 1, 1.0, 8.0, 0.02), (12, 2, 2.0, 10.0, 0.05),
    (16, 2, 1.5, 8.0, 0.1)])
def test_whole_mechanism_is_eps_delta_on_neighbours(m, d, eps_ptr, eps_em, delta):
    """δ(ε_ptr + ε_em) of the exact law on the common grid is ≤ δ, both directions; and the
    test passes on some of the pairs (so the exponential mechanism's part is exercised)."""
    rng = np.random.default_rng(m + d)
    t = max(1, m // 4)
    passed = 0
    worst = 0.0
    for M, M2 in _neighbour_pairs(rng, m, d, 60):
        edges = [np.unique(np.concatenate([M[:, j], M2[:, j]])) for j in range(d)]
        f1, c1, _ = _cell_law(M, edges, t, eps_ptr, eps_em, delta)
        f2, c2, _ = _cell_law(M2, edges, t, eps_ptr, eps_em, delta)
        assert f1 + c1.sum() == pytest.approx(1.0, abs=1e-9)
        for (fa, ca), (fb, cb) in (((f1, c1), (f2, c2)), ((f2, c2), (f1, c1))):
            div = _hockey(np.append(ca, fa), np.append(cb, fb), eps_ptr + eps_em)
            worst = max(worst, div)
            assert div <= delta * (1 + 1e-9)
            # the refusal alone: pure eps_ptr
            if fa > 0 and fb > 0:
                assert math.log(fa / fb) <= eps_ptr + 1e-9
                assert math.log((1 - fa) / (1 - fb)) <= eps_ptr + 1e-9 or fb == 1.0
        passed += ptr_distance(tukey_levels(M), t, eps_em, delta) >= 0
    assert passed >= 5, "no pair passes the distance test: the case exercises nothing"


@pytest.mark.parametrize("m,d,eps_em,delta", [(16, 1, 6.0, 0.05), (12, 2, 10.0, 0.05),
                                             (24, 2, 4.0, 0.1)])
def test_safe_sets_make_the_restricted_mechanism_eps_delta(m, d, eps_em, delta):
    """The lemma: A(D) ≥ 0 ⇒ the exponential mechanism on Y_t is (ε_em, δ) against every
    neighbour (checked on many neighbours of each safe D)."""
    rng = np.random.default_rng(7 * m + d)
    t = max(1, m // 4)
    checked = 0
    for M, M2 in _neighbour_pairs(rng, m, d, 90):
        if ptr_distance(tukey_levels(M), t, eps_em, delta) < 0:
            continue
        edges = [np.unique(np.concatenate([M[:, j], M2[:, j]])) for j in range(d)]
        _, _, e1 = _cell_law(M, edges, t, 1.0, eps_em, delta)
        _, _, e2 = _cell_law(M2, edges, t, 1.0, eps_em, delta)
        assert _hockey(e1, e2, eps_em) <= delta * (1 + 1e-9)
        checked += 1
    assert checked >= 5


def _cauchy_pairs(rng, m, d, count):
    """Heavy-tailed model sets (a few far models) and a neighbour of each."""
    for i in range(count):
        M = rng.standard_cauchy(size=(m, d))
        M2 = M.copy()
        j = rng.integers(m)
        M2[j] = (rng.normal(size=d) * 0.3, rng.standard_cauchy(size=d) * 20, -M[j])[i % 3]
        yield M, M2


@pytest.mark.parametrize("m,d,eps_em,delta", [(16, 1, 4.0, 0.05), (20, 1, 3.0, 0.05)])
def test_lemma_on_heavy_tailed_models(m, d, eps_em, delta):
    """Heavy tails: about half the sets pass the distance test; every one that does is
    (ε_em, δ) against its neighbour."""
    rng = np.random.default_rng(1)
    t = m // 4
    safe = 0
    for M, M2 in _cauchy_pairs(rng, m, d, 120):
        if ptr_distance(tukey_levels(M), t, eps_em, delta) < 0:
            continue
        safe += 1
        edges = [np.unique(np.concatenate([M[:, j], M2[:, j]])) for j in range(d)]
        _, _, e1 = _cell_law(M, edges, t, 1.0, eps_em, delta)
        _, _, e2 = _cell_law(M2, edges, t, 1.0, eps_em, delta)
        assert _hockey(e1, e2, eps_em) <= delta
    assert 20 <= safe <= 110


def test_negative_control_the_test_is_needed():
    """Without the test the restricted exponential mechanism is not (ε_em, δ): on heavy-
    tailed sets that fail the distance test, some neighbours exceed δ (so the exact-law
    checks above can see a violation)."""
    rng = np.random.default_rng(1)
    m, d, eps_em, delta = 12, 2, 3.0, 0.05
    worst = 0.0
    for M, M2 in _cauchy_pairs(rng, m, d, 90):
        edges = [np.unique(np.concatenate([M[:, j], M2[:, j]])) for j in range(d)]
        _, _, e1 = _cell_law(M, edges, m // 4, 1.0, eps_em, delta)
        _, _, e2 = _cell_law(M2, edges, m // 4, 1.0, eps_em, delta)
        worst = max(worst, _hockey(e1, e2, eps_em))
    assert worst > 2 * delta


def test_distance_bound_is_one_sensitive():
    rng = np.random.default_rng(11)
    for m, d, eps_em, delta in [(16, 1, 6.0, 0.05), (40, 2, 3.0, 1e-3), (60, 3, 2.0, 1e-4)]:
        t = m // 4
        for M, M2 in _neighbour_pairs(rng, m, d, 60):
            a = ptr_distance(tukey_levels(M), t, eps_em, delta)
            b = ptr_distance(tukey_levels(M2), t, eps_em, delta)
            assert abs(a - b) <= 1


def test_pass_probability_law():
    """P[pass | A = -1] = δ exactly; the law is monotone with log-ratio ε_ptr per unit."""
    for eps_ptr, delta in [(0.5, 1e-5), (2.0, 0.05)]:
        assert ptr_pass_probability(-1, eps_ptr, delta) == pytest.approx(delta, rel=1e-12)
        ps = [ptr_pass_probability(a, eps_ptr, delta) for a in range(-1, 60)]
        fs = [ptr_refusal_probability(a, eps_ptr, delta) for a in range(-1, 60)]
        np.testing.assert_allclose(np.array(fs) + ps, 1.0, atol=1e-15)
        assert all(np.diff(ps) >= 0) and ps[0] < ps[1]
        for a in range(len(ps) - 1):
            assert math.log(ps[a + 1] / ps[a]) <= eps_ptr + 1e-12
            if fs[a + 1] > 0:
                assert math.log(fs[a] / fs[a + 1]) <= eps_ptr + 1e-9
        # by simulation: the threshold the function uses is the one documented
        rng = np.random.default_rng(0)
        noise = rng.laplace(0, 1 / eps_ptr, size=200_000)
        a = 3
        assert np.mean(a + noise >= _threshold(eps_ptr, delta)) == pytest.approx(
            ptr_pass_probability(a, eps_ptr, delta), abs=0.005)


# -- data-level neighbours -----------------------------------------------------------------------
def test_replace_one_row_changes_one_model():
    rng = np.random.default_rng(0)
    n, d, m = 300, 3, 25
    Z = rng.normal(size=(n, d))
    y = rng.normal(size=n)
    labels = split_parts(n, m, np.random.default_rng(5), add_remove=False)
    assert np.bincount(labels, minlength=m).min() == n // m
    Z2, y2 = Z.copy(), y.copy()
    Z2[17], y2[17] = 50.0, -40.0
    a = fit_part_models(Z, y, labels, m)
    b = fit_part_models(Z2, y2, labels, m)
    assert (np.any(a != b, axis=1)).sum() == 1


def test_add_one_row_changes_one_model():
    rng = np.random.default_rng(1)
    n, d, m = 300, 3, 25
    Z = rng.normal(size=(n + 1, d))
    y = rng.normal(size=n + 1)
    la = split_parts(n, m, np.random.default_rng(9), add_remove=True)
    lb = split_parts(n + 1, m, np.random.default_rng(9), add_remove=True)
    np.testing.assert_array_equal(la, lb[:n])       # the coupling: common rows keep labels
    a = fit_part_models(Z[:n], y[:n], la, m)
    b = fit_part_models(Z, y, lb, m)
    assert (np.any(a != b, axis=1)).sum() == 1


def test_centred_statistics_one_row_one_part():
    """(ȳ_i, x̄_i, β_i): one replaced row changes one part's vector; the intercept
    ȳ_i − x̄_i·β_i is the part's least-squares intercept."""
    rng = np.random.default_rng(3)
    n, k, m = 240, 2, 20
    X = rng.normal(size=(n, k)) + 50.0
    y = X @ np.array([1.0, -1.0]) + rng.normal(size=n)
    labels = split_parts(n, m, np.random.default_rng(1), add_remove=False)
    V = centred_part_statistics(X, y, labels, m)
    B = fit_part_models(np.hstack([np.ones((n, 1)), X]), y, labels, m)
    np.testing.assert_allclose(V[:, 3:], B[:, 1:])
    np.testing.assert_allclose(V[:, 0] - np.einsum("ij,ij->i", V[:, 1:3], V[:, 3:]), B[:, 0],
                               rtol=1e-6)
    X2, y2 = X.copy(), y.copy()
    X2[5], y2[5] = [1e9, -1e9], 1e12
    V2 = centred_part_statistics(X2, y2, labels, m)
    assert (np.any(V != V2, axis=1)).sum() == 1


def test_centred_coordinates_help_when_the_columns_are_far_from_zero():
    """Columns with mean 100 and spread 1: released as (intercept, β) the intercept carries
    100 x the slopes' error; in the centred coordinates it does not."""
    rng = np.random.default_rng(0)
    n = 20_000
    X = rng.normal(size=(n, 2)) + 100.0
    y = X @ np.array([1.0, -1.0]) + rng.normal(size=n)
    Xt = rng.normal(size=(5000, 2)) + 100.0
    yt = Xt @ np.array([1.0, -1.0]) + rng.normal(size=5000)
    err = {}
    for centred in (True, False):
        mse = []
        for seed in range(3):
            r = tukey_regression(X, y, 1.0, 1e-5, centred=centred, random_state=seed)
            mse.append(np.mean((yt - Xt @ r.coef - r.intercept) ** 2))
        err[centred] = np.mean(mse)
    assert err[True] < 1.2 and err[True] < err[False]


def test_a_model_depends_on_its_own_rows_only_to_the_bit():
    """Each part is solved on its own rows (parts of one size batched together): the model
    is bit-identical to the one from that part alone, whatever the other parts' sizes."""
    from mipdp.tukey import _lstsq_batched
    rng = np.random.default_rng(8)
    n, d, m = 500, 4, 30
    Z = rng.normal(size=(n, d)) * 10.0 ** rng.integers(-3, 4, size=d)
    y = rng.normal(size=n)
    labels = split_parts(n, m, rng, add_remove=True)          # parts of many sizes
    models = fit_part_models(Z, y, labels, m)
    for i in range(m):
        rows = np.flatnonzero(labels == i)
        alone = _lstsq_batched(Z[rows][None], y[rows][None])[0] if rows.size else 0.0
        assert np.array_equal(models[i], np.clip(alone, -1e100, 1e100))


def test_least_norm_models_on_degenerate_parts():
    """Fewer rows than columns, a constant column, an empty part: lstsq's least-norm answer,
    by the same code (no exception)."""
    rng = np.random.default_rng(2)
    Z = rng.normal(size=(13, 4))
    Z[:, 2] = 1.0
    y = rng.normal(size=13)
    labels = np.array([0] * 3 + [1] * 10 + [], dtype=np.int64)
    models = fit_part_models(Z, y, labels, 3)
    for i in range(2):
        ref = np.linalg.lstsq(Z[labels == i], y[labels == i], rcond=None)[0]
        np.testing.assert_allclose(models[i], ref, atol=1e-10)
    np.testing.assert_array_equal(models[2], 0.0)


def test_refusal_law_on_data_neighbours():
    """The refusal's exact law on two data sets one replaced row apart (same partition):
    log-ratio ≤ ε_ptr, the pass probabilities from A on each."""
    rng = np.random.default_rng(4)
    n, m = 2000, 100
    X = rng.normal(size=(n, 1))
    y = 2 * X[:, 0] + rng.normal(size=n)
    Z = np.hstack([np.ones((n, 1)), X])
    labels = split_parts(n, m, np.random.default_rng(0), add_remove=False)
    eps_ptr, eps_em, delta = 1.0, 1.0, 1e-3
    t = m // 4
    for row, value in [(3, 1e6), (10, -1e3), (50, 0.0)]:
        Z2, y2 = Z.copy(), y.copy()
        Z2[row, 1], y2[row] = value, -value
        a = ptr_distance(tukey_levels(fit_part_models(Z, y, labels, m)), t, eps_em, delta)
        b = ptr_distance(tukey_levels(fit_part_models(Z2, y2, labels, m)), t, eps_em, delta)
        pa, pb = (ptr_pass_probability(v, eps_ptr, delta) for v in (a, b))
        assert abs(math.log(pa / pb)) <= eps_ptr + 1e-12
        assert abs(math.log((1 - pa) / (1 - pb))) <= eps_ptr + 1e-9


# -- the sampler ---------------------------------------------------------------------------------
def _piece_of(points, lv, levels):
    """Index of the shell piece (first coordinate outside the inner box) and its side."""
    out = []
    for b, u in zip(points, levels, strict=True):
        inside = (b >= lv.lo[u + 1]) & (b <= lv.hi[u + 1])
        j = int(np.argmin(inside)) if not inside.all() else 0
        side = int(b[j] > lv.hi[u + 1][j])
        out.append((u, j, side))
    return out


def test_sampler_chi_square_against_exact_law():
    rng = np.random.default_rng(12)
    M = rng.normal(size=(11, 3)) * np.array([1.0, 0.2, 3.0])
    lv = tukey_levels(M)
    t, eps_em = 2, 1.5
    law = level_law(lv, t, eps_em)
    N = 12_000
    pts = np.array([sample_tukey(lv, t, eps_em, rng) for _ in range(N)])
    dep = approximate_tukey_depth(M, pts)
    assert dep.min() >= t
    # exact law of (level, piece, side): level law x piece volume share x side length share
    keys, probs = [], []
    for u in range(t, lv.depth_max + 1):
        share = np.exp(lv.log_piece[u] - lv.log_shell[u])
        for j in range(3):
            gl = lv.lo[u + 1][j] - lv.lo[u][j]
            gr = lv.hi[u][j] - lv.hi[u + 1][j]
            for side, g in ((0, gl), (1, gr)):
                keys.append((u, j, side))
                probs.append(law[u] * share[j] * g / (gl + gr) if gl + gr > 0 else 0.0)
    probs = np.array(probs)
    index = {k: i for i, k in enumerate(keys)}
    counts = np.zeros(len(keys))
    for key in _piece_of(pts, lv, dep):
        counts[index[key]] += 1
    keep = probs * N >= 5
    assert probs[~keep].sum() < 0.01
    obs = counts[keep]
    exp = probs[keep] / probs[keep].sum() * obs.sum()
    assert stats.chisquare(obs, exp).pvalue > 1e-3
    # and the depth levels alone
    lev = np.bincount(dep, minlength=law.size)[t:]
    assert stats.chisquare(lev, law[t:] * N).pvalue > 1e-3


# -- the public function -------------------------------------------------------------------------
def _data(n, k=2, seed=0, noise=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, k))
    y = X @ np.arange(1.0, k + 1) + 0.5 + noise * rng.normal(size=n)
    return X, y


def test_regression_recovers_coefficients_and_labels():
    X, y = _data(20_000)
    res = tukey_regression(X, y, 1.0, 1e-5, random_state=0)
    assert isinstance(res, TukeyResult)
    np.testing.assert_allclose(res.coef, [1.0, 2.0], atol=0.15)
    assert abs(res.intercept - 0.5) < 0.15
    g = res.guarantee
    assert g.is_private and (g.epsilon, g.delta) == (1.0, 1e-5)
    assert g.neighbour is mipdp.Neighbour.REPLACE_ONE
    assert res.m == models_for_rows(20_000, 3, 0.4, 0.6, 1e-5, dim=5)
    assert res.info["m_source"] == "n" and res.info["coordinates"].startswith("centred")
    assert res.info["eps_ptr"] == pytest.approx(0.4)
    assert not any(k.endswith("not_private") for k in res.info)
    res0 = tukey_regression(X, y - 0.5, 1.0, 1e-5, fit_intercept=False, random_state=0)
    assert res0.intercept == 0.0 and res0.coef.shape == (2,)


def test_reproducible_and_lazy_exports():
    X, y = _data(5000)
    a = tukey_regression(X, y, 2.0, 1e-5, random_state=3)
    b = tukey_regression(X, y, 2.0, 1e-5, random_state=3)
    np.testing.assert_array_equal(a.coef, b.coef)
    assert mipdp.tukey_regression is tukey_regression
    assert mipdp.TukeyResult is TukeyResult and mipdp.private_n_lower_bound is private_n_lower_bound
    assert issubclass(mipdp.PTRRefusedError, RuntimeError)


def test_add_remove_spends_m_fraction_on_n():
    X, y = _data(20_000)
    res = tukey_regression(X, y, 1.0, 1e-5, neighbours="add_remove", random_state=0)
    g = res.guarantee
    assert g.neighbour is mipdp.Neighbour.ADD_REMOVE
    assert g.epsilon == pytest.approx(1.0) and g.delta == pytest.approx(1e-5)
    assert res.info["eps_m"] == pytest.approx(0.05) and res.info["n_lower_bound"] <= 20_000
    assert res.m == models_for_rows(res.info["n_lower_bound"], 3, 0.38, 0.57, 1e-5, dim=5)
    # with m given nothing is spent on n
    res = tukey_regression(X, y, 1.0, 1e-5, m=2000, neighbours="add_remove", random_state=0)
    assert res.info["eps_m"] == 0.0 and res.m == 2000


def test_accountant_records_one_release():
    X, y = _data(5000)
    acc = BudgetAccountant(10.0, 1e-3)
    tukey_regression(X, y, 1.0, 1e-5, random_state=0, accountant=acc)
    assert len(acc) == 1
    assert acc.spent[0].epsilon == pytest.approx(1.0) and acc.spent[0].delta == 1e-5


def test_refusal_raises_records_and_releases_nothing():
    X, y = _data(400, noise=30.0)          # too few rows: 100 models cannot pass at eps=1
    # replace-one: n is public, so the refusal comes before the data is read
    acc = BudgetAccountant(10.0, 1e-3)
    with pytest.raises(PTRRefusedError, match="400 rows give m = 100.*Nothing was computed"):
        tukey_regression(X, y, 1.0, 1e-5, random_state=0, accountant=acc)
    assert len(acc) == 0
    with pytest.raises(PTRRefusedError, match="more rows, a larger eps"):
        tukey_regression(X, y, 1.0, 1e-5, m=20, random_state=0, accountant=acc)
    assert len(acc) == 0
    # add/remove: m comes from a private bound on n, so the refusal is an output: recorded
    acc = BudgetAccountant(10.0, 1e-3, neighbours="add_remove")
    with pytest.raises(PTRRefusedError, match="private lower bound.*was recorded"):
        tukey_regression(X, y, 1.0, 1e-5, neighbours="add_remove", random_state=0,
                         accountant=acc)
    assert len(acc) == 1 and acc.spent[0].epsilon == pytest.approx(1.0)


def test_noisy_test_can_refuse_on_disagreeing_models():
    """Heavy-tailed noise: the noisy test refuses (PTRRefusedError, recorded: the refusal is
    an output), never a partial result."""
    rng = np.random.default_rng(0)
    n = 3000
    X = rng.normal(size=(n, 3))
    y = rng.standard_cauchy(size=n) * 100
    outcomes = set()
    acc = BudgetAccountant(100.0, 1e-3)
    for seed in range(6):
        try:
            tukey_regression(X, y, 0.5, 1e-6, m=600, random_state=seed, accountant=acc)
            outcomes.add("released")
        except PTRRefusedError as e:
            assert "noisy test" in str(e) and "was recorded" in str(e)
            outcomes.add("refused")
    assert "refused" in outcomes and len(acc) == 6


@pytest.mark.parametrize("kwargs,name", [({"eps": 0.0}, "eps"), ({"delta": 0.0}, "delta"),
                                         ({"delta": 0.6}, "delta"), ({"m": 3}, "m"),
                                         ({"m_fraction": 1.0}, "m_fraction"),
                                         ({"neighbours": "other"}, "neighbours")])
def test_bad_parameters_name_the_argument(kwargs, name):
    X, y = _data(200)
    args = {"eps": 1.0, "delta": 1e-5} | kwargs
    eps, delta = args.pop("eps"), args.pop("delta")
    with pytest.raises(InvalidParameterError, match=name):
        tukey_regression(X, y, eps, delta, **args)


def test_default_number_of_models():
    """m = min(n // (d + 1), models_wanted): data-free, growing with n until the
    test's needs are met, then the rows go into the parts."""
    w = models_wanted(6, 0.36, 0.54, 1e-5)
    assert 300 < w < 600
    assert models_for_rows(1000, 6, 0.36, 0.54, 1e-5) == 1000 // 7
    assert models_for_rows(10 ** 6, 6, 0.36, 0.54, 1e-5) == w
    assert models_wanted(6, 1.8, 2.7, 1e-5) < w / 3       # a larger eps needs fewer
    assert models_wanted(11, 0.36, 0.54, 1e-5) > w        # more coefficients, more


def test_private_n_lower_bound():
    rng = np.random.default_rng(0)
    vals = [private_n_lower_bound(10_000, 0.05, 1e-2, random_state=rng) for _ in range(4000)]
    assert np.mean(np.array(vals) > 10_000) < 0.02
    assert private_n_lower_bound(np.zeros((50, 2)), 1.0, random_state=0) <= 50
    assert private_n_lower_bound(0, 1.0, random_state=0) == 0
    with pytest.raises(InvalidParameterError, match="eps"):
        private_n_lower_bound(10, 0.0)


# -- extreme data: no exception or warning but the refusal -----------------------------------------
_EXTREME = (0.0, 1e-300, -1e-300, 5e-324, 1e300, -1e300, np.finfo(float).max,
            -np.finfo(float).max, 1e160, -1e160, 0.5, -0.5, 1.0, 3.0, 1e5)


@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
def test_extreme_neighbours_raise_nothing_but_the_refusal(neighbours):
    """Data with ±1e300, the largest float, subnormals, ties and constant columns, and a
    neighbour (one row replaced, or one added): every call returns a release or raises
    ``PTRRefusedError`` (an output of the mechanism), and no call warns."""
    import warnings
    rng = np.random.default_rng(0)
    outcomes = set()
    for i in range(60):
        n, k = int(rng.integers(8, 40)), int(rng.integers(1, 4))
        X = rng.choice(_EXTREME, size=(n, k))
        if i % 4 == 0:
            X[:, 0] = X[0, 0]                       # a constant column
        y = rng.choice(_EXTREME, size=n)
        z = rng.choice(_EXTREME, size=k + 1)
        if neighbours == "replace_one":
            X2, y2 = X.copy(), y.copy()
            X2[0], y2[0] = z[:k], z[k]
        else:
            X2, y2 = np.vstack([X, z[:k]]), np.append(y, z[k])
        kw = dict(eps=float(rng.choice([1e3, 50.0])), delta=0.4, neighbours=neighbours,
                  m=int(rng.choice([4, 6])) if i % 2 else None,
                  fit_intercept=bool(i % 3))
        for A, b in ((X, y), (X2, y2)):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                try:
                    res = tukey_regression(A, b, kw["eps"], kw["delta"], m=kw["m"],
                                           fit_intercept=kw["fit_intercept"],
                                           neighbours=neighbours, random_state=i)
                    assert np.all(np.isfinite(res.coef)) and math.isfinite(res.intercept)
                    outcomes.add("released")
                except PTRRefusedError:
                    outcomes.add("refused")
    assert outcomes == {"released", "refused"}


# -- the package audit's rows ----------------------------------------------------------------------
@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
def test_audit_rows_on_data_neighbours(neighbours):
    """mipdp.audit.audit_tukey: data sets one row apart (replaced, or added with the labels
    coupled), the same partition, the exact law on the common grid: δ within the claim, and
    the distance test passes on some pairs of each case."""
    from mipdp.audit import audit_tukey
    rows = audit_tukey(neighbours, seeds=(0,), n_pairs=8)
    assert len(rows) == 3
    for row in rows:
        assert row["within_claim"], row
        assert row["measured_delta"] <= row["claimed_delta"]
        assert not row["mechanism"].split("; ")[1].startswith("0/")


@pytest.mark.slow
@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
def test_audit_rows_on_data_neighbours_slow(neighbours):
    from mipdp.audit import audit_tukey
    cases = ((48, 1, False, 16, 4.0, 6.0, 0.05), (60, 1, True, 12, 3.0, 9.0, 0.05),
             (80, 1, True, 20, 3.0, 6.0, 0.1), (40, 1, False, 20, 2.0, 4.0, 0.05))
    for row in audit_tukey(neighbours, cases=cases, seeds=range(40), n_pairs=30):
        assert row["within_claim"], row
