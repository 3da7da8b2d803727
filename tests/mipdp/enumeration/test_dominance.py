import numpy as np
import pytest

from mipdp.enumeration.dominance import dominated_columns


def brute_count(G, group):
    counts = {}
    for jp in group:
        c = 0
        for j in group:
            if j == jp:
                continue
            le = np.all(G[:, j] <= G[:, jp])
            strict = np.any(G[:, j] < G[:, jp]) or j < jp
            c += bool(le and strict)
        counts[jp] = c
    return counts


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("need", [1, 3, 6])
def test_matches_pairwise_definition_with_ties(seed, need):
    rng = np.random.default_rng(seed)
    G = -np.round(rng.random((3, 30)), 1)  # coarse values: many ties and duplicates
    G[:, 5] = G[:, 4]
    groups = [np.arange(0, 7), np.arange(7, 30)]
    mask = dominated_columns(G, groups, need, n_candidates=100)
    for group in groups:
        counts = brute_count(G, group)
        for j in group:
            assert mask[j] == (counts[j] >= need)


def test_fewer_candidates_only_fix_fewer():
    rng = np.random.default_rng(1)
    G = -rng.random((4, 200))
    full = dominated_columns(G, [np.arange(200)], 5, n_candidates=200)
    few = dominated_columns(G, [np.arange(200)], 5, n_candidates=10)
    assert np.all(few <= full)


def test_duplicates_never_fix_each_other_both():
    G = np.zeros((2, 4))  # four identical columns: only the higher indices are dominated
    mask = dominated_columns(G, [np.arange(4)], 2)
    assert mask.tolist() == [False, False, True, True]


@pytest.mark.parametrize("seed", range(4))
def test_cache_matches_full_recount_as_cuts_arrive(seed):
    from mipdp.enumeration.dominance import DominanceCache
    rng = np.random.default_rng(seed)
    G = -np.round(rng.random((8, 60)), 1)
    groups = [np.arange(0, 12), np.arange(12, 60)]
    live = np.ones(60, dtype=bool)
    live[rng.choice(60, 6, replace=False)] = False
    cache = DominanceCache()
    for T in (2, 3, 5, 8):  # cuts arrive
        need = 3 + T // 3
        got = cache.mask(G[:T], groups, need, live)
        for group in groups:
            for jp in group:
                c = 0
                # a subset of the candidates: never more fixings than the definition
                for j in group:
                    if j == jp or not live[j]:
                        continue
                    le = np.all(G[:T, j] <= G[:T, jp])
                    strict = np.any(G[:T, j] < G[:T, jp]) or j < jp
                    c += bool(le and strict)
                if got[jp]:
                    assert c >= need


def _pairwise_cache_reference(G, groups, need, live, need_first, T_first):
    """The pair matrices of the cache (candidates fixed at the first call), recounted."""
    total = G[:T_first].sum(axis=0)
    out = np.zeros(G.shape[1], dtype=bool)
    for idx in groups:
        m = min(idx.size, 4 * need_first + 64)
        cand = idx[np.lexsort((idx, total[idx]))][:m]
        if idx.size <= need or not cand.size:
            continue
        Gc, Gj = G[:, cand].T[None, :, :], G[:, idx].T[:, None, :]
        le = np.all(Gc <= Gj, axis=2)
        strict = np.any(Gc < Gj, axis=2) | (cand[None, :] < idx[:, None])
        ok = live[cand][None, :] & (cand[None, :] != idx[:, None])
        out[idx] = (le & strict & ok).sum(axis=1) >= need
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n_cand", ["few", "many"])
def test_cache_equals_pairwise_count_of_its_candidates(seed, n_cand):
    """The bit-set cache fixes exactly the columns the pairwise count of its candidates
    fixes (ties, duplicates, own column, live mask, more than 64 and 128 candidates)."""
    from mipdp.enumeration.dominance import DominanceCache
    rng = np.random.default_rng(seed)
    p = 40 if n_cand == "few" else 400
    G = -np.round(rng.random((9, p)), 1)
    G[:, 7] = G[:, 3]
    G[:, p - 1] = G[:, 0]
    groups = [np.arange(0, p // 4), np.arange(p // 4, p)]
    live = np.ones(p, dtype=bool)
    live[rng.choice(p, p // 10, replace=False)] = False
    cache = DominanceCache()
    need_first = 3 if n_cand == "few" else 20    # 4·20 + 64 = 144 candidates: three words
    for T, need in ((1, need_first), (2, need_first), (4, need_first + 1), (9, need_first + 2)):
        got = cache.mask(G[:T], groups, need, live)
        ref = _pairwise_cache_reference(G[:T], groups, need, live, need_first, 1)
        np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("seed", range(3))
def test_shared_state_equals_a_cache_built_on_the_same_first_cuts(seed):
    """A copy from SharedDominance, brought up to the full store, fixes what a cache first
    built on the same first cuts fixes; copies are independent of each other and of the
    order they are asked in (threads)."""
    from concurrent.futures import ThreadPoolExecutor

    from mipdp.enumeration.dominance import DominanceCache, SharedDominance
    rng = np.random.default_rng(seed)
    p = 300
    G = -np.round(rng.random((10, p)), 1)
    groups = [np.arange(0, 5), np.arange(5, p)]
    live = np.ones(p, dtype=bool)
    shared = SharedDominance()

    def fork_mask(T):
        cache = shared.cache(G[:4], groups, 5)
        return cache.mask(G[:T], groups, 5, live)

    with ThreadPoolExecutor(3) as pool:
        got = list(pool.map(fork_mask, [10, 6, 4, 10]))
    for T, mask in zip([10, 6, 4, 10], got, strict=True):
        ref = DominanceCache()
        ref.mask(G[:4], groups, 5, live)
        np.testing.assert_array_equal(mask, ref.mask(G[:T], groups, 5, live))


def test_shared_copies_fix_only_columns_dominated_on_their_own_cuts():
    """Forks share the state built on the first cuts and then add *different* cuts (ties,
    duplicated and negated columns): every column a copy fixes has at least ``need`` live
    dominators by the definition, on that copy's own cuts (brute force)."""
    from mipdp.enumeration.dominance import SharedDominance
    rng = np.random.default_rng(7)
    n_checked = 0
    for it in range(150):
        p, T, need = int(rng.integers(3, 30)), int(rng.integers(2, 7)), int(rng.integers(1, 5))
        G = (rng.choice([-1.0, 0.0, 0.5, 1.0, -0.0], size=(T, p)) if it % 2
             else rng.normal(size=(T, p)))
        for _ in range(int(rng.integers(0, 5))):   # duplicated / negated columns
            a, b = rng.choice(p, 2, replace=False)
            G[:, b] = G[:, a] if rng.random() < 0.7 else -G[:, a]
        perm, cut = rng.permutation(p), int(rng.integers(0, p + 1))
        groups = [np.sort(perm[:cut]), np.sort(perm[cut:])]
        live = rng.random(p) < 0.8
        T0 = int(rng.integers(1, T + 1))
        shared = SharedDominance()
        for own in (G[T0:], rng.normal(size=(2, p)), G[T0:][:, ::-1]):   # three forks
            GG = np.vstack([G[:T0], own])
            mask = shared.cache(G[:T0], groups, need).mask(GG, groups, need, live)
            for g in groups:
                for jp in g[mask[g]]:
                    n_dom = sum(1 for j in g if j != jp and live[j]
                                and np.all(GG[:, j] <= GG[:, jp])
                                and (np.any(GG[:, j] < GG[:, jp]) or j < jp))
                    assert n_dom >= need, (it, jp)
                    n_checked += 1
    assert n_checked > 100
