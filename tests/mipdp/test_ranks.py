"""``bounds="ranks"``: the transform, its sensitivity (exact neighbour audit), the release's
law on neighbours, the sampler's law on every backend, and the checks before the data."""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import logsumexp
from scipy.stats import chisquare, rankdata

from mipdp import PrivateBestSubsetSelector, private_bss
from mipdp._param_validation import InvalidParameterError
from mipdp.brute_force import all_supports, least_squares_value
from mipdp.exceptions import PrivacyLeakWarning
from mipdp.guarantee import Neighbour
from mipdp.losses import get_loss
from mipdp.ranks import RANK_BOUNDS, rank_design, rank_sensitivity, uniform_ranks
from mipdp.selection import planned_guarantee

MIP = {"exhaustive_max": 0, "explicit_max": 0}


def skewed(n=80, p=6, seed=0, ties=False):
    rng = np.random.default_rng(seed)
    X = np.exp(rng.normal(size=(n, p)))
    y = X[:, 0] + 2 * X[:, 2] + rng.exponential(size=n)
    if ties:
        X[:, 1] = np.round(X[:, 1])
        y = np.round(y)
    return X, y


# -- the transform ---------------------------------------------------------------------------
def test_uniform_ranks_are_centred_average_ranks():
    v = np.array([3.0, 1.0, 3.0, 10.0, -2.0])
    u = uniform_ranks(v)
    np.testing.assert_allclose(u * 5 + 3, rankdata(v))            # R = n u + (n + 1)/2
    assert u[0] == u[2]                                           # ties share the average
    assert abs(u.sum()) < 1e-15 and np.all(np.abs(u) < 0.5)
    n = 200
    w = uniform_ranks(np.random.default_rng(0).integers(0, 5, n).astype(float))
    assert w @ w <= (n * n - 1) / (12 * n) + 1e-12               # ties only shrink it


@pytest.mark.parametrize("kind", ["continuous", "ties"])
def test_a_neighbour_moves_other_ranks_by_at_most_one_in_one_direction(kind):
    """Replace-one: every other row's average rank moves by at most 1, all the same way
    (per column); add/remove: by at most 1 (the rank itself, before rescaling)."""
    rng = np.random.default_rng(1)
    for _ in range(300):
        n = int(rng.integers(3, 12))
        v = (rng.integers(0, 3, n) if kind == "ties" else rng.normal(size=n)).astype(float)
        R = rankdata(v)
        i = int(rng.integers(n))
        new = float(rng.choice(np.r_[v, rng.normal(), 1e9, -1e9]))
        w = v.copy()
        w[i] = new
        d = np.delete(rankdata(w) - R, i)
        assert np.all(np.abs(d) <= 1 + 1e-12)
        assert np.all(d <= 1e-12) or np.all(d >= -1e-12)
        d_add = rankdata(np.r_[v, new])[:n] - R
        assert np.all((d_add >= -1e-12) & (d_add <= 1 + 1e-12))


def test_rank_design_lazy_inputs(tmp_path):
    X, _ = skewed(50, 4, ties=True)
    X[:20, 3] = 0.0
    dense = rank_design(X)
    mm = np.lib.format.open_memmap(tmp_path / "x.npy", mode="w+", dtype=np.float32, shape=X.shape)
    mm[:] = X.astype(np.float32)
    np.testing.assert_array_equal(rank_design(mm), rank_design(X.astype(np.float32)))
    np.testing.assert_array_equal(rank_design(sp.csr_matrix(X)), dense)


def test_rank_design_equals_rankdata_across_blocks(monkeypatch):
    """Tied and untied columns mixed in one block, blocks of 3 columns: the fast path
    (inverse permutation) and the tied path agree with scipy's average ranks."""
    import mipdp.ranks as ranks_module
    rng = np.random.default_rng(2)
    n = 37
    X = rng.normal(size=(n, 8))
    X[:, 1] = rng.integers(0, 3, n)
    X[:, 4] = 5.0
    X[:3, 6] = X[3:6, 6]
    monkeypatch.setattr(ranks_module, "_BLOCK_BYTES", 8 * n * 3)
    np.testing.assert_array_equal(rank_design(X), (rankdata(X, axis=0) - (n + 1) / 2) / n)
    # write groups of 5 columns (across the blocks of 3) and tiles of 10 rows
    monkeypatch.setattr(ranks_module, "_WRITE_COLUMNS", 5)
    monkeypatch.setattr(ranks_module, "_WRITE_ROWS", 10)
    np.testing.assert_array_equal(rank_design(X), (rankdata(X, axis=0) - (n + 1) / 2) / n)
    np.testing.assert_array_equal(rank_design(X[:1]), np.zeros((1, 8)))
    # the exact argsort path, along the rows of the transposed design
    np.testing.assert_array_equal(
        ranks_module._average_ranks_rows(np.ascontiguousarray(X.T)).T, rankdata(X, axis=0))


def test_rank_design_every_path_of_the_packed_sort(monkeypatch, tmp_path):
    """The packed-key sort (float bits and row index in one int64) gives scipy's average
    ranks bit for bit on every path: no tie, ties checked on the values (including
    ``-0.0 == 0.0``), and the exact argsort fallback (values equal in the keys' high bits
    but not equal, infinities), mixed in one block and across blocks."""
    import mipdp.ranks as ranks_module
    rng = np.random.default_rng(5)
    n = 41
    X = rng.normal(size=(n, 9))
    X[::2, 1] = -0.0
    X[1::2, 1] = 0.0
    X[:, 2] = np.round(X[:, 2], 1)
    X[:, 3] = 1.0 + np.arange(n) * 2e-16                    # distinct, equal high bits
    X[:, 4] = np.where(rng.random(n) < 0.5, 1.0, np.nextafter(1.0, 2.0))
    X[::3, 5] = np.inf
    X[1::5, 6] = -np.inf
    X[:, 7] = rng.choice([-1e300, -5e-324, 0.0, 5e-324, 1e300], size=n)
    expected = (rankdata(X, axis=0) - (n + 1) / 2) / n
    mm = np.lib.format.open_memmap(tmp_path / "x.npy", mode="w+", dtype=np.float64,
                                   shape=X.shape)
    mm[:] = X
    X[:, 8] = 1.0 + rng.permutation(n) * 2.0 ** -44     # equal high bits once the keys
    mm[:, 8] = X[:, 8]                                   # hold 64 columns' flat positions
    expected = (rankdata(X, axis=0) - (n + 1) / 2) / n
    # the keys' low bits hold each entry's flat position in a write group of
    # _WRITE_COLUMNS columns: groups of 1, 4 and 64 columns (more or fewer value bits);
    # or, past _FLAT_BITS bits, the row alone (as for long columns)
    for width, flat_bits in ((64, 18), (4, 18), (1, 18), (64, 4), (4, 7)):
        monkeypatch.setattr(ranks_module, "_WRITE_COLUMNS", width)
        monkeypatch.setattr(ranks_module, "_FLAT_BITS", flat_bits)
        assert ranks_module._SortKeys(n, width).flat == (flat_bits == 18)
        for block, read in ((8 * n * 9, 8 * n * 9), (8 * n * 2, 8 * n * 5), (8, 8 * n * 4)):
            monkeypatch.setattr(ranks_module, "_BLOCK_BYTES", block)
            monkeypatch.setattr(ranks_module, "_READ_BYTES", read)
            for data in (X, mm):
                got = rank_design(data)
                np.testing.assert_array_equal(got.view(np.int64), expected.view(np.int64))
    for j in range(X.shape[1]):      # y's ranks: the same sort
        np.testing.assert_array_equal(uniform_ranks(X[:, j]).view(np.int64),
                                      expected[:, j].view(np.int64))


# -- the sensitivity: exact neighbour audit --------------------------------------------------
def _F(X, y, s, loss_name, ridge, sup):
    """``F(S) = n L(S)`` of every support on the ranks (the package's objective)."""
    loss = get_loss(loss_name, ridge=ridge).resolve(s, *RANK_BOUNDS)
    U = rank_design(X)
    yy = uniform_ranks(y) if loss_name == "least_squares" else y
    return X.shape[0] * loss.bind(U, yy).values(sup), loss


def _adversarial_rows(X, y, rng, m, labels):
    n, p = X.shape
    rows = []
    for k in range(m):
        if k % 4 == 0:
            row = rng.choice([-1e9, 1e9], size=p + 1)
        elif k % 4 == 1:
            row = np.r_[[X[rng.integers(n), j] for j in range(p)], y[rng.integers(n)]]
        elif k % 4 == 2:
            i = rng.integers(n)
            row = np.r_[X[i], y[i]]
        else:
            row = rng.normal(size=p + 1) * 2
        if labels:
            row[p] = 1.0 if row[p] > 0 else -1.0
        rows.append(row)
    return rows


@pytest.mark.parametrize("loss_name", ["least_squares", "hinge"])
@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
def test_neighbour_audit_of_the_rank_sensitivity(loss_name, neighbours):
    """max_S |F_D(S) − F_D'(S)| <= Δ over adversarial data (ties, duplicated rows, a constant
    column, an exact monotone fit) and neighbours (extreme, tied, duplicated, random rows);
    the bound holds for any ridge (it is data-free), so a tiny one is audited too."""
    rng = np.random.default_rng(7)
    p, s = 4, 2
    sup = all_supports(p, s)
    labels = loss_name == "hinge"
    worst = 0.0
    for trial in range(10 if labels else 24):
        n = int(rng.choice([6, 9, 15, 40]))
        X = rng.normal(size=(n, p))
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
        if labels:
            y = np.where(y > np.median(y), 1.0, -1.0)
        ridge = 1e-3 if trial % 2 else None
        F, loss = _F(X, y, s, loss_name, ridge, sup)
        for row in _adversarial_rows(X, y, rng, 8, labels):
            if neighbours == "replace_one":
                i = rng.integers(n)
                X2, y2 = X.copy(), y.copy()
                X2[i], y2[i] = row[:p], row[p]
                d = rank_sensitivity(loss_name, n, s, loss.radius, neighbours)
            else:
                if rng.random() < 0.5:
                    X2, y2 = np.vstack([X, row[:p]]), np.r_[y, row[p]]
                else:
                    i = rng.integers(n)
                    X2, y2 = np.delete(X, i, 0), np.delete(y, i)
                d = rank_sensitivity(loss_name, None, s, loss.radius, neighbours)
            F2, _ = _F(X2, y2, s, loss_name, ridge, sup)
            worst = max(worst, float(np.max(np.abs(F2 - F))) / d)
    assert worst <= 1.0 + 1e-9
    assert worst > 0.1        # the audit does exercise the bound


def test_sensitivity_values():
    """The bounds of docs/privacy.md at the default score (ρ = r√s = 1 for least squares,
    2 for the hinge loss)."""
    r = 1 / math.sqrt(3)
    big = rank_sensitivity("least_squares", 10 ** 9, 3, r)
    assert big == pytest.approx(0.5 + 2 / (4 * math.sqrt(3)), rel=1e-6)
    assert big < rank_sensitivity("least_squares", 10, 3, r) <= big + 4 * 2 / (8 * 10)
    assert rank_sensitivity("least_squares", None, 3, r, "add_remove") == pytest.approx(
        4 / 6 + 2 / (4 * math.sqrt(3)))
    assert rank_sensitivity("hinge", 50, 3, 2 / math.sqrt(3)) == pytest.approx(4.0)


# -- the release -----------------------------------------------------------------------------
def _law(res, p, s):
    return np.array([res.log_probability(S) for S in all_supports(p, s)])


@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
def test_release_law_on_neighbours(neighbours):
    """Exact law of private_bss(bounds="ranks") on neighbouring data (brute force at
    p = 5): log-ratio <= ε, on extreme, tied and duplicated neighbours."""
    eps, s = 1.0, 2
    X, y = skewed(12, 5, seed=3, ties=True)
    rng = np.random.default_rng(0)
    base = _law(private_bss(X, y, s, eps, bounds="ranks", neighbours=neighbours,
                            random_state=0), 5, s)
    worst = 0.0
    for row in _adversarial_rows(X, y, rng, 8, False):
        if neighbours == "replace_one":
            X2, y2 = X.copy(), y.copy()
            X2[3], y2[3] = row[:5], row[5]
        else:
            X2, y2 = np.vstack([X, row[:5]]), np.r_[y, row[5]]
        lp = _law(private_bss(X2, y2, s, eps, bounds="ranks", neighbours=neighbours,
                              random_state=0), 5, s)
        worst = max(worst, float(np.max(np.abs(lp - base))))
    assert worst <= eps + 1e-9


def test_release_is_the_exponential_mechanism_on_ranks():
    """The release's exact law is exp(−ε F/(2Δ)) with F computed independently on the ranks."""
    X, y = skewed(30, 6, seed=4)
    s, eps = 2, 2.0
    res = private_bss(X, y, s, eps, bounds="ranks", random_state=0)
    loss = get_loss("least_squares").resolve(s, *RANK_BOUNDS)
    U, V = rank_design(X), uniform_ranks(y)
    L = np.array([least_squares_value(U, V, S, loss.ridge, loss.radius)
                  for S in all_supports(6, s)])
    d = rank_sensitivity("least_squares", 30, s, loss.radius) / 30
    lw = -eps * (L - L.min()) / (2 * d)
    np.testing.assert_allclose(_law(res, 6, s), lw - logsumexp(lw), atol=1e-7)
    assert res.sensitivity == pytest.approx(d)
    assert res.is_private and res.epsilon == eps
    assert res.info["bounds"] == "ranks"


@pytest.mark.parametrize("loss_name", ["least_squares", "hinge"])
def test_sampler_chi_square_on_rank_data_every_backend(backend, loss_name):
    """Draws of the exponential mechanism on rank data, envelope by outer approximation on
    ``backend`` (no exhaustive evaluation): chi-square against the brute-force law."""
    X, y = skewed(60, 8, seed=5, ties=True)
    if loss_name == "hinge":
        y = np.where(y > np.median(y), 1.0, -1.0)
    s, eps, p = 2, 3.0, 8
    res = private_bss(X, y, s, eps, bounds="ranks", loss=loss_name, backend=backend,
                      n_draws=4000, random_state=1, enumeration_options=MIP)
    loss = get_loss(loss_name).resolve(s, *RANK_BOUNDS)
    sup = all_supports(p, s)
    yy = uniform_ranks(y) if loss_name == "least_squares" else y
    L = loss.bind(rank_design(X), yy).values(sup)
    d = rank_sensitivity(loss_name, 60, s, loss.radius) / 60
    lw = -eps * (L - L.min()) / (2 * d)
    logp = lw - logsumexp(lw)
    index = {tuple(r): i for i, r in enumerate(sup.tolist())}
    counts = np.bincount([index[tuple(r)] for r in res.supports.tolist()], minlength=len(sup))
    ex = np.exp(logp) * counts.sum()
    big = ex >= 5                                   # pool the small cells, if any
    obs = np.r_[counts[big], counts[~big].sum()] if (~big).any() else counts
    exp = np.r_[ex[big], ex[~big].sum()] if (~big).any() else ex
    assert chisquare(obs, exp).pvalue > 1e-3


def test_lazy_inputs_give_the_dense_release(tmp_path):
    X, y = skewed(40, 6, seed=6, ties=True)
    X[:15, 2] = 0.0
    ref = private_bss(X, y, 2, 2.0, bounds="ranks", random_state=3, n_draws=5)
    mm = np.lib.format.open_memmap(tmp_path / "x.npy", mode="w+", dtype=np.float64, shape=X.shape)
    mm[:] = X
    for Xl in (mm, sp.csc_matrix(X)):
        res = private_bss(Xl, y, 2, 2.0, bounds="ranks", random_state=3, n_draws=5)
        np.testing.assert_array_equal(res.supports, ref.supports)


def test_rank_invariance_and_hinge_labels():
    """The release depends on the data through ranks only; hinge labels stay ±1."""
    X, y = skewed(40, 6, seed=8)
    a = private_bss(X, y, 2, 2.0, bounds="ranks", random_state=2, n_draws=5)
    b = private_bss(np.log(X) * 3 + 7, y ** 3, 2, 2.0, bounds="ranks", random_state=2, n_draws=5)
    np.testing.assert_array_equal(a.supports, b.supports)
    lab = np.where(y > np.median(y), 1.0, -1.0)
    h = private_bss(X, lab, 2, 2.0, bounds="ranks", loss="hinge", random_state=0)
    assert h.is_private and h.info["loss"] == "hinge"


def test_guarantee_and_planned_guarantee():
    g = planned_guarantee(1.0, bounds="ranks")
    assert g.epsilon == 1.0 and g.delta == 0.0 and "ranks" in g.notes
    X, y = skewed(30, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        res = private_bss(X, y, 2, 1.0, bounds="ranks", neighbours="add_remove", random_state=0)
    assert res.guarantee.neighbour is Neighbour.ADD_REMOVE
    assert res.sensitivity == pytest.approx(rank_sensitivity("least_squares", None, 2,
                                                              1 / math.sqrt(2), "add_remove"))
    assert "monotone sum-form" not in res.guarantee.notes     # the score on ranks is not


@pytest.mark.parametrize("kw, name", [
    ({"loss": "huber"}, "bounds"),
    ({"prescreen": ("dp_sis", 4, 0.2)}, "prescreen"),
    ({"prescreen": ("kendall", 4, 0.2), "neighbours": "add_remove"}, "neighbours"),
    ({"method": "mistakes", "neighbours": "add_remove"}, "mistakes"),
])
def test_bad_input_raises_before_the_data(kw, name):
    for bounds in ("ranks", None):            # None means "ranks"
        with pytest.raises(InvalidParameterError, match=name):
            private_bss(object(), object(), 2, 1.0, bounds=bounds, **kw)
    with pytest.raises(InvalidParameterError, match="bounds"):
        private_bss(object(), object(), 2, 1.0, bounds="rank")


def test_kendall_prescreen_and_selector():
    X, y = skewed(60, 8, seed=9)
    res = private_bss(X, y, 2, 4.0, bounds="ranks", prescreen=("kendall", 4, 0.25),
                      random_state=0)
    assert res.is_private and res.epsilon == pytest.approx(4.0)
    sel = PrivateBestSubsetSelector(s=2, eps=2.0, bounds="ranks", random_state=0).fit(X, y)
    assert sel.get_support().sum() == 2


def test_kendall_prescreen_ranks_only_the_kept_columns(monkeypatch):
    """With a Kendall pre-screen only the k kept columns are ranked (the screen is
    rank-invariant), and the release is that of the ranked data."""
    import mipdp.plan.stages as selection  # where the stages rank
    X, y = skewed(60, 8, seed=9)
    seen = []
    real = selection.rank_design
    monkeypatch.setattr(selection, "rank_design", lambda M: seen.append(M.shape) or real(M))
    a = private_bss(X, y, 2, 4.0, bounds="ranks", prescreen=("kendall", 4, 0.25),
                    random_state=0, n_draws=3)
    assert seen == [(60, 4)]
    monkeypatch.setattr(selection, "rank_design", real)
    b = private_bss(rank_design(X), y, 2, 4.0, bounds="ranks",
                    prescreen=("kendall", 4, 0.25), random_state=0, n_draws=3)
    np.testing.assert_array_equal(a.supports, b.supports)


@pytest.mark.parametrize("tiles", [(64, 256), (5, 7), (1, 1), (3, 100)])
def test_rank_design_tiled_reads_every_path(monkeypatch, tiles):
    """The transposed reads and writes (``_WRITE_COLUMNS`` × ``_WRITE_ROWS`` tiles, edges
    not multiples of the tiles) with every path of the packed sort in one block — no tie,
    ties with ``±0.0``, the exact fallback (near ties, ``±inf``, subnormals, the largest
    floats) — give scipy's average ranks bit for bit, and ``uniform_ranks`` the same."""
    import mipdp.ranks as ranks_module
    rng = np.random.default_rng(11)
    n, p = 43, 23
    X = rng.normal(size=(n, p))
    X[:, 1] = rng.choice([-0.0, 0.0, 1.0], size=n)
    X[:, 2] = np.round(X[:, 2], 1)
    X[:, 3] = 1.0 + np.arange(n) * 2e-16
    X[::4, 4] = -np.inf
    X[1::3, 4] = np.inf
    X[:, 5] = rng.choice([-np.finfo(float).max, -5e-324, -0.0, 5e-324, np.finfo(float).max],
                         size=n)
    X[:, 6] = 7.0
    X[:, 7] = -X[:, 0]
    X[:, 8::5] = rng.integers(-2, 3, size=(n, X[:, 8::5].shape[1]))
    expected = (rankdata(X, axis=0) - (n + 1) / 2) / n
    monkeypatch.setattr(ranks_module, "_WRITE_COLUMNS", tiles[0])
    monkeypatch.setattr(ranks_module, "_WRITE_ROWS", tiles[1])
    for block in (8 * n * p, 8 * n * 4, 8):
        monkeypatch.setattr(ranks_module, "_BLOCK_BYTES", block)
        with np.errstate(over="ignore"):    # the largest doubles become ±inf in float32
            X32 = X.astype(np.float32)
        for data in (X, np.asfortranarray(X), X32):
            want = expected if data.dtype == np.float64 else (
                rankdata(data, axis=0) - (n + 1) / 2) / n
            np.testing.assert_array_equal(rank_design(data).view(np.int64),
                                          want.view(np.int64))
    for j in range(p):
        np.testing.assert_array_equal(uniform_ranks(X[:, j]).view(np.int64),
                                      expected[:, j].view(np.int64))
