"""Review sweep of the reduced listing (mipdp.enumeration.reduced_explicit) against brute
force: every bound a listing or a solve certifies is at most the least cut bound of the
region's members, computed member by member (a bound above it would make the samplers'
envelope invalid: a privacy bug).

Unlike test_reduced_explicit.py::test_alive_equals_the_plain_listing (the listing equals a
reference listing bit for bit) this checks the certificate itself, so it also catches a
change that keeps the two listings equal but makes both wrong, and a change to the beam
that is allowed to alter the listing (``_surely_kept``) but not its bounds.  Cuts built to
stress the pruning: duplicated, negated, near-duplicated and constant columns, integer
coefficients (exact ties, limits exactly at a member's bound), large offsets (rounding of
the sums), one-sided cuts as least squares makes them, tiny magnitudes; beams of 1 to 40
partial members forced by ``max_held`` and ``_BEAM_WIDTH`` (``_surely_kept`` fires), the
work constants (``_CHUNK``, ``_MIN_CHUNK``, ``_MIN_FULL``, ``_FULL_ROWS``) at their extremes,
``least=True`` (what ``_solve`` uses) and whole listings.  The fast test runs 10
instances (``p <= 12``); the slow one 100 (``p <= 19``).

The last two tests run the enumeration's adversarial sweep (test_reduced_sweep.py) on
rank-transformed data (what ``bounds="ranks"`` feeds the search: every column and the
target replaced by their uniform ranks, ties included).
"""

from __future__ import annotations

import numpy as np
import pytest

import mipdp.enumeration.reduced_explicit as RE
from mipdp.brute_force import all_supports
from mipdp.mechanisms.regions import Region
from mipdp.ranks import rank_design, uniform_ranks

KINDS = ("plain", "corr", "dup", "neg", "const", "int", "big", "lsq", "tiny", "near")


def _cuts(rng: np.random.Generator, kind: str, T: int, p: int) -> tuple[np.ndarray, np.ndarray]:
    a = rng.normal(size=T)
    G = rng.normal(size=(T, p))
    pairs = [rng.choice(p, 2, replace=False) for _ in range(p // 3)]
    if kind == "corr":
        G += rng.normal(size=p) * 2
    elif kind == "dup":
        for i, j in pairs:
            G[:, j] = G[:, i]
    elif kind == "neg":
        for i, j in pairs:
            G[:, j] = -G[:, i]
    elif kind == "near":
        for i, j in pairs:
            G[:, j] = G[:, i] + 1e-13 * rng.normal(size=T)
    elif kind == "const":
        G[:, rng.choice(p, p // 3, replace=False)] = 0.0
        G[:, rng.choice(p, 2, replace=False)] = -0.25
    elif kind == "int":      # exact ties everywhere
        G = rng.integers(-3, 2, size=(T, p)).astype(float)
        a = rng.integers(-2, 3, size=T).astype(float)
    elif kind == "big":      # large sums of small differences
        a, G = a * 1e6 + 3e7, G * 1e6 + 1e7
    elif kind == "lsq":      # g <= 0 as least squares makes them, nearly repeated cuts
        G = -G ** 2
        G[T // 2:] = G[0] * (1 + 1e-15 * rng.normal(size=p))
    elif kind == "tiny":
        a, G = a * 1e-300, G * 1e-300
    return a, G


def _member_bounds(R: Region, a: np.ndarray, G: np.ndarray, sup: np.ndarray):
    """The region's members (holes ignored, as the listing does) and their cut bounds."""
    S = sup[R.contains(sup)]
    b = np.full(S.shape[0], -np.inf)
    for t in range(a.size):
        b = np.maximum(b, a[t] + G[t][S].sum(axis=1))
    return S, b


def _check_listing(res, limit, S, b, tol, least, fails, tag) -> None:
    rows, lb, dropped = res
    where = {tuple(r): i for i, r in enumerate(S.tolist())}
    for r, v in zip(rows.tolist(), lb, strict=True):
        i = where.get(tuple(r))
        if i is None or abs(b[i] - v) > tol or not v <= limit:
            fails.append((tag, "a listed row is not a member at its bound", r, v))
    under = b <= limit - tol
    if not under.any():
        return
    if least:
        # what _solve reads: min(least listed bound, dropped) bounds every member
        got = min(float(lb.min()) if lb.size else np.inf, dropped)
        if got > b[under].min() + tol:
            fails.append((tag, "least listing above the least member", got, b[under].min()))
        return
    listed = {tuple(r) for r in rows.tolist()}
    for i in np.flatnonzero(under):
        if tuple(S[i].tolist()) not in listed and b[i] < dropped - tol:
            fails.append((tag, "a member below the limit neither listed nor at least dropped",
                          S[i].tolist(), b[i], dropped))
            return


def _check_solve(out, limit, b, tol, fails, tag) -> None:
    status, v, _ = out
    if status == "none" and b.min() <= limit - tol:
        fails.append((tag, "'none' with a member below the limit", b.min(), limit))
    if status in ("found", "partial") and v > b.min() + tol:
        fails.append((tag, f"'{status}' bound above the least member", v, b.min()))


def check_listings(seed: int, monkeypatch, p_max: int = 20) -> dict:
    """Every listing and solve of one random instance against brute force (``p < p_max``)."""
    rng = np.random.default_rng(seed)
    kind = KINDS[seed % len(KINDS)]
    p = int(rng.integers(8, p_max))
    s = int(rng.integers(2, min(6, p - 2)))
    T = int(rng.integers(1, 12))
    a, G = _cuts(rng, kind, T, p)
    center = np.sort(rng.choice(p, s, replace=False))
    outside = np.setdiff1d(np.arange(p), center)
    sup = all_supports(p, s)
    monkeypatch.setattr(RE, "_BEAM_WIDTH", int(rng.choice([1, 2, 3, 5, 40])))
    monkeypatch.setattr(RE, "_CHUNK", int(rng.choice([1, 7, 64, 1 << 15])))
    monkeypatch.setattr(RE, "_MIN_CHUNK", int(rng.choice([1, 4, 1 << 10])))
    monkeypatch.setattr(RE, "_MIN_FULL", int(rng.choice([1, 2, 256])))
    monkeypatch.setattr(RE, "_FULL_ROWS", int(rng.choice([1, 5, 1024])))
    fired = {"surely": 0, "cap": 0}
    real_surely, real_children = RE._surely_kept, RE._children

    def children(*args):
        fired["cap"] = args[7]   # (P, last, GoT, lowT, rem, n, limit, cap, ...)
        return real_children(*args)

    def surely(*args):   # counts the levels whose beam it sets from the start
        out = real_surely(*args)
        fired["surely"] += out > fired["cap"]
        return out

    monkeypatch.setattr(RE, "_children", children)
    monkeypatch.setattr(RE, "_surely_kept", surely)
    # 4 x the cut store's rounding bound (CutStore.slack): the listing adds the same terms
    # in another order than _member_bounds
    absmax = float(np.abs(a).max() + s * np.abs(G).max() + np.abs(a + G.sum(axis=1)).max())
    tol = 4 * 16.0 * (s + 2) * np.finfo(float).eps * absmax
    stats = {"listings": 0, "solves": 0, "members": 0, "beams": 0, "fails": []}
    for k in range(1, s + 1):
        regions = [Region(center, k, p)]
        fo = rng.choice(outside, int(rng.integers(0, 3)), replace=False)
        fi = rng.choice(center, int(rng.integers(0, 2)), replace=False)
        try:
            regions.append(Region(center, k, p, fixed_in=fi, fixed_out=fo))
        except ValueError:
            pass
        for R in regions:
            if R.size == 0:
                continue
            S, b = _member_bounds(R, a, G, sup)
            stats["members"] += S.shape[0]
            limits = [-np.inf, np.inf, float(b.min()), float(np.median(b)), float(b.max()),
                      float(np.nextafter(b.min(), -np.inf))]
            limits += [float(x) for x in rng.choice(b, 3)]   # exactly at members' bounds
            limits += [float(x) for x in rng.uniform(b.min() - 1, b.max(), 2)]
            for limit in limits:
                for held in (None, 1, 2, 5, 60, 400):
                    for least in (False, True):
                        res = RE._alive(R, a, G, limit, max_held=held, least=least)
                        stats["listings"] += 1
                        stats["beams"] += bool(np.isfinite(res[2]))
                        _check_listing(res, limit, S, b, tol, least, stats["fails"],
                                       (seed, kind, k, limit, held, least))
                for entries in (1 << 21, T * R.free_outside.size * (R.n_add + 1) + 1):
                    out = RE._solve(R, a, G, limit, entries)
                    stats["solves"] += 1
                    _check_solve(out, limit, b, tol, stats["fails"], (seed, kind, k, limit))
    stats["surely"] = fired["surely"]
    return stats


def _run_listings(seeds, monkeypatch, p_max: int = 20) -> dict:
    total = {"listings": 0, "solves": 0, "members": 0, "beams": 0, "surely": 0}
    fails = []
    for seed in seeds:
        with monkeypatch.context() as mp:
            st = check_listings(seed, mp, p_max)
        fails += st.pop("fails")
        for key in total:
            total[key] += st[key]
    assert not fails, fails[:5]
    assert total["beams"] > 0 and total["surely"] > 0
    return total


def test_listing_bounds_below_brute_force_fast(monkeypatch):
    """4 instances, ``p <= 10``, every kind of cut met (the 100 of the slow test below
    run in the slow set)."""
    _run_listings(range(4), monkeypatch, p_max=11)


@pytest.mark.slow
def test_listing_bounds_below_brute_force(monkeypatch):
    """100 instances (``p <= 19``): about 2.5 min on 2 loaded cores."""
    _run_listings(range(1000, 1100), monkeypatch)


def _ranked(data):
    """The sweep's data as the rank release sees it: every column and the target replaced
    by their uniform ranks (half of the instances rounded first: many ties)."""
    def data_on_ranks(rng, kind, n, p):
        X, y = data(rng, kind, n, p)
        if rng.random() < 0.5:
            X = np.round(X / max(float(np.abs(X).max()), 1e-300) * 3)
        return rank_design(X), uniform_ranks(y)
    return data_on_ranks


def _run_ranked(seeds, monkeypatch, beam, quick=False):
    from . import test_reduced_sweep as sweep
    with monkeypatch.context() as mp:
        mp.setattr(sweep, "_data", _ranked(sweep._data))
        return sweep._run(seeds, mp, beam, quick=quick)


@pytest.mark.parametrize("beam", [False, True], ids=["listing", "beam"])
def test_rank_data_bounds_sweep_fast(monkeypatch, beam):
    """One instance on ranks (negated columns: the ranks of ``-x`` are ``-`` those of
    ``x``), the optimum's classes only."""
    _run_ranked([2] if not beam else [20], monkeypatch, beam, quick=True)


@pytest.mark.slow
@pytest.mark.parametrize("beam", [False, True], ids=["listing", "beam"])
def test_rank_data_bounds_sweep(monkeypatch, beam):
    """30 instances per mode on ranks, every kind and loss: about 1 min a mode."""
    _run_ranked(range(3000 + 1000 * beam, 3030 + 1000 * beam), monkeypatch, beam)
