"""Adversarial sweep of the reduced master (mipdp.enumeration.reduced_explicit): every
region bound the enumeration certifies is at most the brute-force minimum of ``L`` over
the region (a bound above a true minimum would break the samplers' privacy).

Instances built to stress the dominance certificate and the listing: exactly duplicated,
near-duplicated (1e-13) and negated columns, constant and zero columns, tiny ``n``,
extreme scales of the data and of ``Δ``; least squares, Huber, hinge and the Kendall
score.  Regions: the mistake classes ``k = 1 .. s`` around the optimum and around a
random centre, their splits (``fixed_in`` / ``fixed_out``, as the envelope and
``region_minimum`` build them), at levels above, at, below the minimum and below the
floor, with and without ``abs_tol`` and ``max_solves``; the search both as released
(complete listings) and with the beam forced at every level (the smallest table the
listing accepts, a beam of 1–3 partial members); the envelope (forked class searches
sharing the dominance state) and ``mistake_scores``.  The fast test runs a few
instances; the slow one a few hundred.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import mipdp.enumeration.reduced_explicit as RE
from mipdp.brute_force import all_supports
from mipdp.enumeration import SupportEnumerator
from mipdp.losses import Hinge, Huber, LeastSquares
from mipdp.mechanisms.regions import Region

#: master solves and no explicit search, except the reduced one
REDUCED = dict(exhaustive_max=0, explicit_max=0, reduced_search=True)
KINDS = ("dup", "near", "neg", "const", "scale_small", "scale_large", "plain", "tiny_n",
         "blocks")
LOSSES = ("ls", "huber", "hinge", "kendall")


def _data(rng: np.random.Generator, kind: str, n: int, p: int) -> tuple[np.ndarray, np.ndarray]:
    X = rng.normal(size=(n, p))
    beta = np.zeros(p)
    beta[rng.choice(p, 3, replace=False)] = rng.choice([-1.0, 1.0], 3)
    y = X @ beta * 0.4 + 0.5 * rng.normal(size=n)
    cols = rng.permutation(p)
    if kind == "dup":         # exact copies: tied dominance, tied supports
        X[:, cols[1]] = X[:, cols[0]]
        X[:, cols[2]] = X[:, cols[0]]
        X[:, cols[4]] = X[:, cols[3]]
    elif kind == "near":      # copies up to 1e-13: ties broken by rounding
        X[:, cols[1]] = X[:, cols[0]] + 1e-13 * rng.normal(size=n)
        X[:, cols[2]] = X[:, cols[0]] * (1 + 1e-14)
    elif kind == "neg":       # negated copies
        X[:, cols[1]] = -X[:, cols[0]]
        X[:, cols[3]] = -X[:, cols[2]]
        X[:, cols[4]] = X[:, cols[2]]
    elif kind == "const":     # constant and zero columns
        X[:, cols[0]] = 0.3
        X[:, cols[1]] = 0.0
        X[:, cols[2]] = 0.0
    elif kind == "blocks":    # every column a signed copy of one of three: ties everywhere
        base = X[:, :3].copy()
        X = base[:, rng.integers(0, 3, size=p)] * rng.choice([-1.0, 1.0], size=p)
    elif kind == "scale_small":
        X *= 1e-5
        y *= 1e-5
    elif kind == "scale_large":
        X *= 1e4
        y *= 1e4
    b = {"scale_small": 1e-5, "scale_large": 1e4}.get(kind, 1.0) * 0.5
    X = np.clip(X * 0.4, -b, b)
    y = np.clip(y, -b, b)
    return X, y


def _objective(rng, loss: str, X, y, s):
    n = X.shape[0]
    if loss == "kendall":
        from mipdp.kendall_score import KendallRedundancyObjective
        return KendallRedundancyObjective(X, y, s), 1.0 / n
    bx = float(max(np.abs(X).max(), 1e-300))
    by = float(max(np.abs(y).max(), 1e-300))
    ridge = float(rng.choice([0.5, 5.0, 20.0]))
    if loss == "ls":
        lo = LeastSquares(ridge, 1.1)
    elif loss == "huber":
        lo = Huber(ridge, 1.1, huber_delta=float(rng.choice([0.05, 0.3, 2.0])) * by)
    else:
        lo = Hinge(ridge, 1.5)
        y = np.where(y >= np.median(y), 1.0, -1.0)
        if np.all(y == y[0]):
            y[0] = -y[0]
        by = 1.0
    return lo.bind(X, y), lo.sensitivity(n, s, bx, by)


class _ForcedBeam:
    """Context: every listing of the reduced search holds at most ``width`` partial members
    at once (a beam from the first level), and the beam keeps ``width``."""

    def __init__(self, monkeypatch, width: int) -> None:
        real = RE._alive
        #: listings that set members aside
        self.beams = 0

        def alive(region, a, G, limit, *, max_entries=1 << 21, least=False):
            # the whole listing (``least`` changes nothing _solve reads: its own test,
            # test_reduced_explicit.py::test_least_listing_solves_the_same), so that the
            # beam sets members aside at the last level too
            out = real(region, a, G, limit, max_entries=max_entries, max_held=width)
            if out is not None and np.isfinite(out[2]):
                self.beams += 1
            return out

        monkeypatch.setattr(RE, "_alive", alive)
        monkeypatch.setattr(RE, "_BEAM_WIDTH", width)


def _regions(rng, center, p, s, sup):
    K = min(s, p - s)
    out = []
    for k in range(1, K + 1):
        R = Region(center, k, p)
        out.append(R)
        outside = np.setdiff1d(np.arange(p), center)
        free = np.concatenate([center, outside])
        for _ in range(2):
            j = int(rng.choice(free))
            try:
                a, b = R.split(j)
            except ValueError:
                continue
            out += [a, b]
            j2 = int(rng.choice(free))
            for child in (a, b):
                try:
                    out += list(child.split(j2))
                except ValueError:
                    pass
    out = [R for R in out if R.size > 0 and R.contains(sup).any()]
    holed = []
    for R in out[::3]:   # regions with holes (the envelope's): the bound is over the rest
        inside = sup[R.contains(sup)]
        if inside.shape[0] > 2:
            holed.append(R.without(inside[rng.choice(inside.shape[0], 2, replace=False)]))
    return out + holed


def check_instance(seed: int, *, quick: bool = False, time_limit: float = 60.0) -> dict:
    """Every bound of one random instance against brute force; returns counts and the
    largest excess ``(lower - true) / max(1, |true|)`` seen (must be <= 1e-9).  ``quick``:
    the optimum's classes and their splits at three levels, no envelope.  An instance
    that passes ``time_limit`` (a master solve of HiGHS on a badly scaled design with a
    mismatched ``Δ`` can run for minutes) stops there: ``stats["timed_out"]``."""
    from mipdp.exceptions import TimeLimitError
    stats: dict = {"bounds": 0, "worst": -math.inf, "worst_cut": -math.inf, "reduced": 0,
                   "fail": [], "timed_out": False}
    try:
        _check_instance(seed, quick, time_limit, stats)
    except TimeLimitError:
        stats["timed_out"] = True
    return stats


def _check_instance(seed: int, quick: bool, time_limit: float, stats: dict) -> None:
    rng = np.random.default_rng(seed)
    p = int(rng.integers(6, 15))
    s = int(rng.integers(2, 5))
    kind = KINDS[seed % len(KINDS)]
    loss = LOSSES[(seed // len(KINDS)) % len(LOSSES)]
    n = int(rng.integers(2, 6)) if kind == "tiny_n" else int(rng.integers(8, 70))
    X, y = _data(rng, kind, n, p)
    obj, delta = _objective(rng, loss, X, y, s)
    scale = delta * float(rng.choice([1e-6, 1.0, 1.0, 1e3]))
    opts = dict(REDUCED)
    opts["screening"] = bool(rng.random() < 0.8)
    opts["n_warm_cuts"] = int(rng.choice([0, 2, 8]))
    opts["cutoff_margin"] = float(rng.choice([1e-5, 1e-5, 1e-2, 1.0]))
    sup = all_supports(p, s)
    vals = np.asarray(obj.values(sup), dtype=float)
    enum = SupportEnumerator(obj, s, scale=scale, time_limit=time_limit, **opts)

    def check(what, lower, best, true, true_best=None, slack=0.0):
        """``lower <= true`` (the minimum over the region without its holes) and ``best >=
        true_best`` (the searches ignore holes: their best member may be a hole)."""
        tol = 1e-9 * max(1.0, abs(true))
        true_best = true if true_best is None else true_best
        stats["bounds"] += 1
        ex = (lower - true) / max(1.0, abs(true))
        if ex > stats["worst"]:
            stats["worst"], stats["worst_at"] = ex, what
        if lower < best and ex > stats["worst_cut"]:   # a bound from the cuts, not a value
            stats["worst_cut"], stats["worst_cut_at"] = ex, what
        if lower > true + tol + slack or best < true_best - 1e-9 * max(1.0, abs(true_best)):
            stats["fail"].append((seed, kind, loss, p, s, n, what, lower, best, true))

    center, L0 = enum.optimum()
    check("optimum", L0, L0, float(vals.min()))
    centers = [center] if quick else [center, np.sort(rng.choice(p, s, replace=False))]
    floor = enum.master.floor if enum.master is not None else -np.inf
    for ci, C in enumerate(centers):
        for R in _regions(rng, C, p, s, sup):
            true = float(vals[R.contains(sup)].min())
            whole = Region(R.center, R.k, p, fixed_in=R.fixed_in, fixed_out=R.fixed_out)
            true_best = float(vals[whole.contains(sup)].min())   # holes included
            spread = max(abs(true), 1e-300) * 1e-3 + 1e-12
            levels = [(np.inf, 0.0), (true, 0.0), (true + spread, 0.0), (true - spread, 0.0),
                      (0.5 * (L0 + true), spread), (np.inf, spread), (floor - 1.0, 0.0)]
            if quick:
                levels = levels[::3]
            for level, tol in levels:
                solves = [None, 0, 1, 3][int(rng.integers(0, 4))]
                rb = enum.region_bound(R, level=level, abs_tol=tol, max_solves=solves)
                check(("region", ci, R.describe(), level, tol, solves), rb.lower, rb.best, true,
                      true_best)
                res = RE.reduced_explicit_bound(enum, R, level=level, abs_tol=tol,
                                                max_solves=solves)
                if res is not None:
                    stats["reduced"] += 1
                    check(("reduced", ci, R.describe(), level, tol, solves), res.lower,
                          res.best, true, true_best)
                    if res.best_support is not None:
                        assert abs(vals[np.all(sup == np.sort(res.best_support), axis=1)][0]
                                   - res.best) <= 1e-9 * max(1.0, abs(res.best))
        if ci == 0:
            ms = enum.mistake_scores()
            cset = set(ms.center.tolist())
            k_of = s - np.array([len(cset.intersection(S)) for S in sup.tolist()])
            for k in range(s + 1):
                if np.any(k_of == k) and np.isfinite(ms.scores[k]):
                    # exact to the enumeration's accuracy, 1e-6 Δ (the sweep's Δ can be
                    # 1e3 times the design's, far above L): not a certified bound
                    check(("mistake_scores", k), ms.scores[k], ms.scores[k],
                          float(vals[k_of == k].min()), slack=enum.exact_abs_tol())
    if not quick and enum.master is not None:
        from mipdp.enumeration.envelope import build_envelope
        env = build_envelope(enum, float(rng.choice([0.5, 2.0, 8.0])), scale,
                             full_class_max=0, max_solves=int(rng.choice([1, 3])))
        todo = [(R, 0) for R in env.regions]
        while todo:   # the envelope's regions, and their refinements (as the samplers do)
            R, depth = todo.pop()
            inside = R.contains(sup)
            if inside.any():
                check(("envelope", depth, R.describe()), R.bound, np.inf,
                      float(vals[inside].min()))
            if depth < 2 and R.size > 1 and (R.fixed_in.size + R.fixed_out.size) < p - s:
                todo += [(Q, depth + 1) for Q in env.refine(R, None)]


def _run(seeds, monkeypatch, beam, quick=False):
    total, worst, reduced, beams, timed_out = 0, -math.inf, 0, 0, 0
    fails = []
    for seed in seeds:
        with monkeypatch.context() as mp:
            forced = _ForcedBeam(mp, width=1 if seed % 3 else 2) if beam else None
            st = check_instance(seed, quick=quick)
            beams += forced.beams if forced is not None else 0
        timed_out += st["timed_out"]
        total += st["bounds"]
        reduced += st["reduced"]
        worst = max(worst, st["worst"])
        fails += st["fail"]
    assert not fails, fails[:5]
    assert reduced > 0 and (beams > 0 or not beam) and timed_out <= len(seeds) // 10
    return total, worst


@pytest.mark.parametrize("beam", [False, True], ids=["listing", "beam"])
def test_reduced_bounds_sweep_fast(monkeypatch, beam):
    """Two adversarial instances (seed 2: negated columns; seed 8: blocks of copies of
    three columns; least squares both), the optimum's classes and splits only."""
    _run([2] if not beam else [8], monkeypatch, beam, quick=True)


@pytest.mark.slow
@pytest.mark.parametrize("beam", [False, True], ids=["listing", "beam"])
def test_reduced_bounds_sweep(monkeypatch, beam):
    """The sweep: 60 instances per mode, every kind and loss (``p <= 14``); about 4 min a
    mode on 2 loaded cores (108 instances took 7 min)."""
    _run(range(1000 * beam, 1000 * beam + 60), monkeypatch, beam)
