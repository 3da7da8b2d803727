"""The reduced explicit search of a region (mipdp.enumeration.reduced_explicit): its
branch and bound lists exactly the members below a limit, and the bounds it certifies for
whole regions are below the brute-force minimum, on every backend and loss."""

import itertools

import numpy as np
import pytest

import mipdp.enumeration.reduced_explicit as RE
from mipdp.brute_force import all_supports
from mipdp.enumeration import SupportEnumerator
from mipdp.losses import Hinge, Huber, LeastSquares
from mipdp.mechanisms.regions import Region

#: master solves and no explicit search, except the reduced one
REDUCED = dict(exhaustive_max=0, explicit_max=0, reduced_search=True)


@pytest.fixture
def spy(monkeypatch):
    """Counts the searches the reduced path certified (and those it gave up)."""
    calls = {"certified": 0, "gave_up": 0}
    real = RE.reduced_explicit_bound

    def wrapped(*args, **kwargs):
        out = real(*args, **kwargs)
        calls["certified" if out is not None else "gave_up"] += 1
        return out

    monkeypatch.setattr(RE, "reduced_explicit_bound", wrapped)
    return calls


def test_suffix_lows_are_the_smallest_sums_of_each_suffix():
    rng = np.random.default_rng(0)
    Go = rng.normal(size=(3, 9))
    low = RE._suffix_lows(Go, 4)
    for t, i, r in itertools.product(range(3), range(10), range(5)):
        tail = np.sort(Go[t, i:])
        want = tail[:r].sum() if tail.size >= r else np.inf
        assert low[r, t, i] == pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_alive_lists_exactly_the_members_below_the_limit(seed):
    """Every member whose largest cut bound is at most the limit, and no other (up to
    rounding: the search adds the same terms in another order)."""
    rng = np.random.default_rng(seed)
    p, s = 11, 4
    center = np.sort(rng.choice(p, s, replace=False))
    outside = np.setdiff1d(np.arange(p), center)
    fixed_in = [int(center[0])] if seed % 2 else []
    fixed_out = [int(outside[0])] if seed % 3 == 0 else []
    a = rng.normal(size=7)
    G = rng.normal(size=(7, p))
    sup = all_supports(p, s)
    ub = (a[:, None] + G[:, sup].sum(axis=2)).max(axis=0)
    for k in (1, 2, 3):
        R = Region(center, k, p, fixed_in=fixed_in, fixed_out=fixed_out)
        inside = R.contains(sup)
        if not inside.any():
            continue
        for limit in np.quantile(ub[inside], [0.0, 0.3, 1.0]):
            rows, lb, dropped = RE._alive(R, a, G, float(limit))
            got = {tuple(S) for S in rows.tolist()}
            assert dropped == np.inf and len(got) == rows.shape[0] and R.contains(rows).all()
            assert {tuple(S) for S in sup[inside & (ub <= limit - 1e-9)].tolist()} <= got
            assert got <= {tuple(S) for S in sup[inside & (ub <= limit + 1e-9)].tolist()}
            # a beam of a few partial members: what it sets aside is bounded by `dropped`
            rows, lb, dropped = RE._alive(R, a, G, float(limit), max_entries=200)
            got = {tuple(S) for S in rows.tolist()}
            assert got <= {tuple(S) for S in sup[inside & (ub <= limit + 1e-9)].tolist()}
            for S, u in zip(sup[inside].tolist(), ub[inside], strict=True):
                assert tuple(S) in got or u > limit - 1e-9 or u >= dropped - 1e-9
            np.testing.assert_allclose(lb, (a[:, None] + G[:, rows].sum(axis=2)).max(axis=0)
                                       if rows.size else lb)
    assert RE._alive(Region(center, 2, p), a, G, np.inf, max_entries=10) is None   # too wide


@pytest.mark.parametrize("loss", [LeastSquares(5.0, 1.1), Hinge(2.0, 1.5),
                                  Huber(5.0, 1.1, huber_delta=0.3)], ids=["ls", "hinge", "huber"])
@pytest.mark.parametrize("kind", ["well", "ties"])
def test_region_bounds_below_the_brute_force_minimum(instance, backend, loss, kind, spy):
    """Classes and split sub-regions, at several levels and accuracies: the bound is at
    most the true minimum, and the best member is a member's exact value."""
    p, s = 12, 4
    X, y = instance(3, n=60, p=p, kind=kind)
    if loss.name == "hinge":
        y = np.where(y >= np.median(y), 1.0, -1.0)
    obj = loss.bind(X, y)
    sup = all_supports(p, s)
    vals = obj.values(sup)
    enum = SupportEnumerator(obj, s, scale=0.01, backend=backend, **REDUCED)
    center, L0 = enum.optimum()
    outside = np.setdiff1d(np.arange(p), center)
    regions = [Region(center, k, p) for k in (2, 3, 4)]
    regions += list(regions[0].split(int(outside[1]))) + list(regions[1].split(int(center[0])))
    for R in regions:
        inside = R.contains(sup)
        true = vals[inside].min()
        for level, tol in ((np.inf, 0.0), (np.inf, 1e-3), (true + 1e-9, 0.0), (true - 1e-3, 0.0),
                           (0.5 * (L0 + true), 1e-4)):
            rb = enum.region_bound(R, level=level, abs_tol=tol)
            assert rb.lower <= true + 1e-9 * max(1.0, abs(true)), (R.describe(), level, tol)
            assert rb.best >= true - 1e-9 * max(1.0, abs(true))
            if level == np.inf and tol == 0.0:
                assert rb.lower >= true - 1e-6 * max(1.0, abs(true))   # the exact minimum
    assert spy["certified"] > 0


@pytest.mark.parametrize("seed", range(4))
def test_mistake_scores_exact_on_the_reduced_path(instance, seed, spy):
    """The exact class minima (mistake_scores: branch and bound over sub-regions, each
    bounded by the reduced search) equal brute force, correlated designs included."""
    p, s = 14, 3
    X, y = instance(seed, n=50 + 10 * seed, p=p, kind=["well", "ill", "ties", "well"][seed])
    loss = LeastSquares(5.0, 1.1)
    obj = loss.bind(X, y)
    sup = all_supports(p, s)
    vals = obj.values(sup)
    enum = SupportEnumerator(obj, s, scale=loss.sensitivity(X.shape[0], s, 0.5, 0.5),
                             **REDUCED)
    ms = enum.mistake_scores()
    center = set(ms.center.tolist())
    L = np.full(s + 1, np.inf)
    for S, v in zip(sup.tolist(), vals, strict=True):
        k = s - len(center.intersection(S))
        L[k] = min(L[k], v)
    np.testing.assert_allclose(ms.scores, L, rtol=1e-10, atol=1e-13)
    assert spy["certified"] > 0


@pytest.mark.parametrize("seed", [78, 105, 131, 133])
def test_bounds_hold_where_weak_dominance_failed(instance, seed):
    """Instances (found by a sweep of 150 random ones) where fixing columns with fewer
    dominators than the certificate asks for gave bounds above the true minimum: every
    bound the reduced search certifies holds, for exact and levelled searches."""
    rng = np.random.default_rng(seed)
    p, s = int(rng.integers(9, 14)), int(rng.integers(2, 5))
    X, y = instance(seed, n=int(rng.integers(30, 90)), p=p, kind=["well", "ill", "ties"][seed % 3])
    loss = LeastSquares(float(rng.choice([0.5, 5.0, 20.0])), 1.1)
    obj = loss.bind(X, y)
    sup = all_supports(p, s)
    vals = obj.values(sup)
    enum = SupportEnumerator(obj, s, scale=loss.sensitivity(X.shape[0], s, 0.5, 0.5),
                             **REDUCED)
    center, _ = enum.optimum()
    n_certified = 0
    for k in range(1, min(s, p - s) + 1):
        R = Region(center, k, p)
        true = vals[R.contains(sup)].min()
        for level, solves, beam in ((np.inf, None, None), (true + 1e-6, None, None),
                                    (np.inf, 1, None), (np.inf, None, 400)):
            kw = {} if beam is None else {"max_entries": beam}   # a beam: inexact solves
            res = RE.reduced_explicit_bound(enum, R, level=level, abs_tol=0.0,
                                            max_solves=solves, **kw)
            if res is None:
                continue
            n_certified += 1
            assert res.lower <= true + 1e-9 * max(1.0, abs(true)), (k, level, solves, beam)
            assert res.best >= true - 1e-9 * max(1.0, abs(true))
            if solves is None and beam is None:
                assert res.lower >= true - 1e-6 * max(1.0, abs(true))   # exact
    assert n_certified > 0


def _plain_alive(region, a, G, limit, *, max_entries=1 << 21):
    """The listing of :func:`RE._alive` computed the plain way (main's code before the
    pre-filters): every child of every partial member bounded by all cuts, in chunks,
    and a beam of the least bounds once a level holds more than ``max_entries / T``."""
    from mipdp.enumeration.explicit import combinations
    T, s = a.size, region.s
    keep = region.free_center[combinations(region.free_center.size, region.n_keep)]
    U = (a + G[:, region.fixed_in].sum(axis=1))[:, None] + G[:, keep].sum(axis=2)
    q, cols = region.n_add, region.free_outside
    n = cols.size
    if q < 0 or q > n or keep.shape[0] == 0:
        return np.zeros((0, s), dtype=np.intp), np.zeros(0), np.inf
    if q > 0 and T * n * (q + 1) > max_entries:
        return None
    cap = max(1, max_entries // max(T, 1))
    chunk = max(1, cap // 4)
    Go = G[:, cols]
    order = np.argsort(-Go.mean(axis=0), kind="stable")
    cols, Go = cols[order], Go[:, order]
    low = RE._suffix_lows(Go, q)
    node_k, node_last = np.arange(keep.shape[0]), np.full(keep.shape[0], -1)
    path = np.zeros((node_k.size, 0), dtype=np.intp)
    P, nb = U, U.max(axis=0)
    ok = nb <= limit if q == 0 else np.ones(node_k.size, dtype=bool)
    node_k, node_last, path, P, nb = node_k[ok], node_last[ok], path[ok], P[:, ok], nb[ok]
    dropped = np.inf
    for level in range(q):
        rem = q - level - 1
        counts = np.maximum(0, (n - rem) - (node_last + 1))
        pool, held, lo = [], 0, 0
        while lo < node_k.size:
            hi, tot = lo, 0
            while hi < node_k.size and (hi == lo or tot + counts[hi] <= chunk):
                tot += counts[hi]
                hi += 1
            c = counts[lo:hi]
            rep = np.repeat(np.arange(lo, hi), c)
            J = np.repeat(node_last[lo:hi] + 1, c) + (np.arange(rep.size)
                                                      - np.repeat(np.cumsum(c) - c, c))
            P2 = P[:, rep] + Go[:, J]
            b = (P2 + low[rem][:, J + 1]).max(axis=0)
            sel = b <= limit
            pool.append((node_k[rep[sel]], J[sel], np.column_stack([path[rep[sel]], J[sel]]),
                         P2[:, sel], b[sel]))
            held += int(sel.sum())
            if held > cap:
                cap = min(cap, RE._BEAM_WIDTH)
                k_ = np.concatenate([t[0] for t in pool])
                l_ = np.concatenate([t[1] for t in pool])
                p_ = np.vstack([t[2] for t in pool])
                P_, b_ = np.hstack([t[3] for t in pool]), np.concatenate([t[4] for t in pool])
                idx = np.argpartition(b_, cap - 1)
                kept, rest = np.sort(idx[:cap]), idx[cap:]
                if rest.size:
                    dropped = min(dropped, float(b_[rest].min()))
                pool, held = [(k_[kept], l_[kept], p_[kept], P_[:, kept], b_[kept])], cap
            lo = hi
        node_k = np.concatenate([t[0] for t in pool])
        node_last = np.concatenate([t[1] for t in pool])
        path = np.vstack([t[2] for t in pool])
        P, nb = np.hstack([t[3] for t in pool]), np.concatenate([t[4] for t in pool])
        if node_k.size == 0:
            break
    rows = np.concatenate([keep[node_k], cols[path],
                           np.broadcast_to(region.fixed_in, (node_k.size, region.fixed_in.size))],
                          axis=1)
    return np.sort(rows, axis=1).astype(np.intp), (nb if node_k.size else np.zeros(0)), dropped


@pytest.mark.parametrize("seed", [0, 1, 2, 3] + [pytest.param(k, marks=pytest.mark.slow)
                                                 for k in range(4, 8)])
def test_alive_equals_the_plain_listing(seed, monkeypatch):
    """The pre-filtered listing (parents skipped by their own bound, children by one cut
    before all of them, the beam's threshold) is the plain listing bit for bit: the same
    members in the same order, the same bounds and the same ``dropped``, with and without
    a beam (random cuts: no ties)."""
    rng = np.random.default_rng(100 + seed)
    p, s, T = int(rng.integers(18, 34)), int(rng.integers(3, 6)), int(rng.integers(2, 12))
    center = np.sort(rng.choice(p, s, replace=False))
    outside = np.setdiff1d(np.arange(p), center)
    a = rng.normal(size=T)
    G = rng.normal(size=(T, p)) + rng.normal(size=p) * (seed % 3)   # correlated cuts too
    if seed % 2:   # large sums of small differences: the rounding of the sums matters
        a, G = a * 1e6 + 3e7, G * 1e6 + 1e7
    fixed_out = rng.choice(outside, int(rng.integers(0, 4)), replace=False)
    monkeypatch.setattr(RE, "_BEAM_WIDTH", int(rng.choice([3, 40, 2048])))
    monkeypatch.setattr(RE, "_CHUNK", int(rng.choice([1, 7, 1 << 15])))
    n_checked = 0
    for k in range(1, s + 1):
        R = Region(center, k, p, fixed_out=fixed_out)
        sup = R.n_add <= R.free_outside.size
        if not sup:
            continue
        for max_entries in (1 << 21, 40 * T * R.free_outside.size, 2 * T * p * (k + 1)):
            for f in (0.0, 0.3, 0.7, 1.0):
                ref = _plain_alive(R, a, G, -np.inf, max_entries=max_entries)
                if ref is None:
                    continue
                hi = (a.max() + np.sort(G, axis=1)[:, -s:].sum(axis=1)).max()
                lo = (a.min() + np.sort(G, axis=1)[:, :s].sum(axis=1)).min()
                limits = [float(lo + f * (hi - lo))]
                ref = _plain_alive(R, a, G, limits[0], max_entries=max_entries)
                if ref[1].size:   # a limit exactly at a member's computed bound
                    limits.append(float(np.sort(ref[1])[ref[1].size // 2]))
                for limit in limits:
                    ref = _plain_alive(R, a, G, limit, max_entries=max_entries)
                    got = RE._alive(R, a, G, limit, max_entries=max_entries)
                    np.testing.assert_array_equal(got[0], ref[0])
                    np.testing.assert_array_equal(got[1], ref[1])
                    assert got[2] == ref[2]
                    n_checked += ref[0].shape[0] > 0
    assert n_checked > 0


def _solved(res):
    """What :func:`RE._solve` reads of a listing: the member of least ``(bound, position)``
    with ``min(bound, dropped)``, or ``dropped`` when the listing is empty."""
    rows, lb, dropped = res
    if rows.shape[0]:
        i = int(np.lexsort((np.arange(lb.size), lb))[0])
        return "found", float(min(lb[i], dropped)), tuple(int(j) for j in rows[i])
    return "empty", float(dropped), None


@pytest.mark.parametrize("seed", range(8))
def test_least_listing_solves_the_same(seed, monkeypatch):
    """``_alive(least=True)`` (the last level keeps its least member only) gives
    :func:`RE._solve` the same member, bound and ``dropped`` as the whole listing, with and
    without beams at the earlier levels (random cuts, rounded sums, ties by position)."""
    rng = np.random.default_rng(300 + seed)
    p, s, T = int(rng.integers(18, 34)), int(rng.integers(2, 6)), int(rng.integers(2, 12))
    center = np.sort(rng.choice(p, s, replace=False))
    a = rng.normal(size=T)
    G = rng.normal(size=(T, p)) + rng.normal(size=p) * (seed % 3)
    if seed % 2:
        a, G = a * 1e6 + 3e7, G * 1e6 + 1e7
    if seed % 4 == 3:   # tied bounds: duplicated columns
        G[:, 1::2] = G[:, ::2][:, :G[:, 1::2].shape[1]]
    monkeypatch.setattr(RE, "_BEAM_WIDTH", int(rng.choice([3, 40, 2048])))
    n_found = 0
    for k in range(1, s + 1):
        R = Region(center, k, p)
        hi = (a.max() + np.sort(G, axis=1)[:, -s:].sum(axis=1)).max()
        lo = (a.min() + np.sort(G, axis=1)[:, :s].sum(axis=1)).min()
        for f in (0.0, 0.2, 0.5, 1.0):
            for held in (None, 5, 60):
                kw = {"max_held": held}
                full = RE._alive(R, a, G, float(lo + f * (hi - lo)), **kw)
                least = RE._alive(R, a, G, float(lo + f * (hi - lo)), least=True, **kw)
                assert _solved(least) == _solved(full)
                assert least[0].shape[0] <= 1 or R.n_add == 0
                n_found += full[0].shape[0] > 1
    assert n_found > 0
