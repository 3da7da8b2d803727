"""Two-stage / subsample-and-aggregate: block votes, vote sensitivity, privacy, inputs."""

import numpy as np
import pytest

from mipdp.comparators.two_stage import _partition, block_vote, two_stage
from mipdp.exceptions import PrivacyLeakWarning
from mipdp.mechanisms.topk import gumbel_peeling_topk_distribution


def make_data(n=900, p=30, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    support = [2, 5, 11] if p > 11 else [0, 2, 5]
    y = X[:, support] @ np.array([1.0, -1.0, 0.8]) + 0.3 * rng.normal(size=n)
    return X, y


def votes_for(X, y, k, n_blocks, neighbour, seed, alpha=None):
    rng = np.random.default_rng(seed)
    votes = np.zeros(X.shape[1])
    for rows in _partition(X.shape[0], n_blocks, neighbour, rng):
        votes[block_vote(X[rows], y[rows], k, alpha)] += 1
    return votes


def test_block_vote_path_and_alpha():
    X, y = make_data(n=200)
    v = block_vote(X, y, 3)
    np.testing.assert_array_equal(v, [2, 5, 11])
    v = block_vote(X, y, 3, alpha=0.05)
    np.testing.assert_array_equal(v, [2, 5, 11])
    assert block_vote(X, y, 3, alpha=100.0).size == 0          # all-zero fit votes for nothing
    assert block_vote(X[:1], y[:1], 3).size == 0                 # too small a block
    assert block_vote(X[:5], y[:5], 3).size <= 3


def test_partitions():
    rng = np.random.default_rng(0)
    blocks = _partition(103, 10, "replace-one", rng)
    assert sorted(np.concatenate(blocks).tolist()) == list(range(103))
    assert {b.size for b in blocks} <= {10, 11}
    blocks = _partition(103, 10, "add/remove-one", rng)
    assert sorted(np.concatenate(blocks).tolist()) == list(range(103))
    # coupling used in the add/remove test: an appended record leaves the others' blocks alone
    small = _partition(103, 10, "add/remove-one", np.random.default_rng(5))
    large = _partition(104, 10, "add/remove-one", np.random.default_rng(5))
    for a, b in zip(small, large, strict=True):
        np.testing.assert_array_equal(a, b[b < 103])


@pytest.mark.parametrize("neighbour", ["replace-one", "add/remove-one"])
def test_vote_sensitivity_is_one_on_neighbours(neighbour):
    X, y = make_data(n=400, p=20, seed=1)
    rng = np.random.default_rng(2)
    base = votes_for(X, y, 3, 20, neighbour, seed=7)
    worst = 0.0
    for _ in range(6):
        r = rng.normal(size=21) * 5
        if neighbour == "replace-one":
            i = int(rng.integers(400))
            X2, y2 = X.copy(), y.copy()
            X2[i], y2[i] = r[:20], r[20]
        else:   # the new record is last; common records keep their block labels
            X2, y2 = np.vstack([X, r[:20]]), np.append(y, r[20])
        other = votes_for(X2, y2, 3, 20, neighbour, seed=7)
        worst = max(worst, np.max(np.abs(other - base)))
    assert worst <= 1.0


def test_exact_privacy_of_peeling_on_votes_of_neighbours():
    X, y = make_data(n=120, p=6, seed=3)
    eps, k = 1.0, 2
    base = votes_for(X, y, k, 11, "replace-one", seed=4)
    _, lp = gumbel_peeling_topk_distribution(base, k, eps, 1.0)
    rng = np.random.default_rng(5)
    for _ in range(5):
        X2, y2 = X.copy(), y.copy()
        i = int(rng.integers(120))
        X2[i], y2[i] = rng.normal(size=6) * 10, 10.0
        other = votes_for(X2, y2, k, 11, "replace-one", seed=4)
        _, lq = gumbel_peeling_topk_distribution(other, k, eps, 1.0)
        assert np.max(np.abs(lp - lq)) <= eps + 1e-9


@pytest.mark.parametrize("topk", ["laplace", "peeling", "canonical_lipschitz"])
def test_recovery_and_result(topk):
    X, y = make_data()
    X0, y0 = X.copy(), y.copy()
    res = two_stage(X, y, 3, 30.0, topk=topk, random_state=0, n_draws=2)
    np.testing.assert_array_equal(res.support, [2, 5, 11])
    assert res.supports.shape == (2, 3)
    assert res.epsilon == pytest.approx(60.0) and res.delta == 0.0
    assert res.neighbour == "replace-one" and res.method == "two_stage"
    assert res.info["n_blocks"] == 30
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)


def test_reproducible_and_no_global_rng():
    X, y = make_data(n=200, p=10)
    state = np.random.get_state()[1].copy()
    a = two_stage(X, y, 2, 1.0, random_state=3, alpha=0.1)
    b = two_stage(X, y, 2, 1.0, random_state=3, alpha=0.1)
    np.testing.assert_array_equal(a.supports, b.supports)
    np.testing.assert_array_equal(np.random.get_state()[1], state)


def test_add_remove_default_blocks_warns():
    X, y = make_data(n=100, p=8)
    with pytest.warns(PrivacyLeakWarning):
        two_stage(X, y, 2, 1.0, neighbours="add_remove", random_state=0)
    res = two_stage(X, y, 2, 1.0, neighbours="add_remove", n_blocks=10, random_state=0)
    assert res.neighbour == "add/remove-one"


def test_bad_inputs():
    X, y = make_data(n=100, p=8)
    with pytest.raises(ValueError, match="k"):
        two_stage(X, y, 8, 1.0)
    with pytest.raises(ValueError, match="eps"):
        two_stage(X, y, 2, 0.0)
    with pytest.raises(ValueError, match="n_blocks"):
        two_stage(X, y, 2, 1.0, n_blocks=0)
    with pytest.raises(ValueError, match="n_blocks"):
        two_stage(X, y, 2, 1.0, n_blocks=101)
    with pytest.raises(TypeError, match="n_blocks"):
        two_stage(X, y, 2, 1.0, n_blocks=2.5)
    with pytest.raises(ValueError, match="alpha"):
        two_stage(X, y, 2, 1.0, alpha=-1.0)
    with pytest.raises(ValueError, match="topk"):
        two_stage(X, y, 2, 1.0, topk="gauss")
    Xn = X.copy()
    Xn[1, 1] = np.nan
    with pytest.raises(ValueError, match="X"):
        two_stage(Xn, y, 2, 1.0)


# -- issue 28: the review's defects 1 and 3 ----------------------------------------------------
def _with_huge_row(n=50, p=8, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, p))
    y = X[:, 0] + 0.1 * rng.normal(size=n)
    X2 = X.copy()
    X2[3] = 1e160          # finite, clipped away by the bounds
    return X, X2, y


@pytest.mark.parametrize("bounds", [None, (1.0, 2.0)])
def test_a_huge_finite_row_does_not_make_the_fit_raise(bounds):
    """Issue 28 (1): one row of 1e160 made lars_path overflow where the neighbour runs.
    The blocks are fitted on clipped rows (bounds given) and a block whose fit fails
    numerically votes for nothing (no bounds): both data sets run."""
    X, X2, y = _with_huge_row()
    for data in (X, X2):
        res = two_stage(data, y, 2, 1.0, random_state=0, bounds=bounds)
        assert res.support.size == 2
    if bounds is not None:
        assert two_stage(X2, y, 2, 1.0, random_state=0, bounds=bounds).info["bounds"] == bounds


def test_block_vote_clips_to_the_bounds():
    X, X2, y = _with_huge_row()
    clipped = np.clip(X2, -1.0, 1.0)
    np.testing.assert_array_equal(block_vote(X2, y, 2, bounds=(1.0, None)),
                                  block_vote(clipped, y, 2))
    assert X2[3, 0] == 1e160                        # the caller's block is not modified
    assert block_vote(X2, y, 2).size == 0            # unclipped overflow: no vote


@pytest.mark.parametrize("n", [1, 3, 9])
def test_add_remove_explicit_blocks_run_whatever_n(n):
    """Issue 28 (3): under add/remove an explicit n_blocks > n raised after reading the
    data (n is private there).  Now no check reads n: empty blocks vote for nothing."""
    X, y = make_data(n=n, p=6, seed=2)
    res = two_stage(X, y, 2, 1.0, n_blocks=10, neighbours="add_remove", random_state=0)
    assert res.support.size == 2 and res.info["n_blocks"] == 10
    with pytest.raises(ValueError, match="n_blocks|at least 2"):   # replace-one: n public
        two_stage(X, y, 2, 1.0, n_blocks=10, random_state=0)
