"""Adversarial brute-force checks of the shifted least-squares cuts and of the linear
envelopes of the exponential-mechanism sampler (review of the "linear envelopes" change).

Part ``cuts``: random small problems (near-collinear / duplicate / zero columns, n close to
p, tiny and huge ridge and radius); every cut (``value_and_cut`` and ``extra_cuts``) at
every support is checked against the brute-force value of every support, and the shift is
checked to be certified under ``XᵀX``.

Part ``sampler``: the same kind of problems, ε from 0.1 to 20; the sampler is built with the
enumeration's cuts; every linear envelope's mass is compared with its brute-force mass, its
bounds with every member's value (``h >= w``), ``log_probability_bounds`` with the exact
log-probability, and (``--draws``) the draws with the exact law by chi-square.

Usage::

    python -m experiments.studies.review_linear_envelope cuts --problems 300
    python -m experiments.studies.review_linear_envelope sampler --problems 120 --draws 4000
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from scipy.special import logsumexp
from scipy.stats import chisquare

from mipdp.brute_force import all_supports
from mipdp.enumeration import SupportEnumerator
from mipdp.enumeration.envelope import build_envelope
from mipdp.losses import LeastSquares
from mipdp.losses._gram_shift import gram_shift
from mipdp.mechanisms import ExponentialMechanismSampler
from mipdp.mechanisms.regions import region_members

B = 0.5
KINDS = ["gauss", "collinear", "duplicate", "zero", "ar95", "scaled"]


def design(rng: np.random.Generator, kind: str, n: int, p: int):
    X = rng.normal(size=(n, p))
    if kind == "collinear":
        X[:, 1] = X[:, 0] + 1e-4 * rng.normal(size=n)
        X[:, 3] = 0.5 * X[:, 2] + 0.5 * X[:, 4] + 1e-6 * rng.normal(size=n)
    elif kind == "duplicate":
        X[:, 2] = X[:, 0]
    elif kind == "zero":
        X[:, rng.integers(p)] = 0.0
    elif kind == "ar95":
        for j in range(1, p):
            X[:, j] = 0.95 * X[:, j - 1] + math.sqrt(1 - 0.95 ** 2) * X[:, j]
    elif kind == "scaled":   # very unequal column norms
        X *= np.exp(rng.uniform(-6, 0, size=p))[None, :]
    beta = np.zeros(p)
    beta[rng.choice(p, 3, replace=False)] = rng.choice([-1.0, 1.0], 3) * rng.uniform(0.3, 2, 3)
    y = X @ beta * 0.4 + rng.uniform(0.01, 0.6) * rng.normal(size=n)
    return np.clip(X * 0.4, -B, B), np.clip(y, -B, B)


def random_problem(rng: np.random.Generator, p_range=(7, 11)):
    p = int(rng.integers(*p_range))
    kind = KINDS[int(rng.integers(len(KINDS)))]
    n = int(rng.choice([p, p + 1, 2 * p, 50, 400, 3000, 20000]))
    ridge = float(rng.choice([1e-6, 1e-3, 0.1, 1.0, 10.0, 1e3]))
    radius = float(rng.choice([1e-3, 0.05, 0.5, 3.0, 50.0]))
    s = int(rng.integers(1, min(5, p - 1) + 1))
    X, y = design(rng, kind, n, p)
    return dict(p=p, n=n, s=s, kind=kind, ridge=ridge, radius=radius, X=X, y=y)


def check_cuts(pb) -> list[str]:
    p, s = pb["p"], pb["s"]
    obj = LeastSquares(pb["ridge"], pb["radius"]).bind(pb["X"], pb["y"])
    errs = []
    G = obj.X.gram()
    d = gram_shift(G, pb["n"])
    if d is not None:
        ev = np.linalg.eigvalsh(G - np.diag(d))[0]
        if ev < -1e-12 * np.trace(G):
            errs.append(f"shift not certified: eig {ev:.3g}")
    sup = all_supports(p, s)
    vals = obj.values(sup)
    Z = np.zeros((len(sup), p))
    np.put_along_axis(Z, sup, 1.0, axis=1)
    tol = 1e-11 * np.maximum(1.0, np.abs(vals))
    for flag in (True, False):
        obj.shifted_cuts = flag
        for S in sup:
            v, lower, g = obj.value_and_cut(S)
            z0 = np.zeros(p)
            z0[S] = 1.0
            for lo, gk in [(lower, g)] + obj.extra_cuts(S):
                b = lo + (Z - z0) @ gk
                bad = b > vals + tol
                if bad.any():
                    i = int(np.argmax(b - vals))
                    errs.append(f"shift={flag} cut at {S.tolist()} exceeds L at "
                                f"{sup[i].tolist()} by {b[i] - vals[i]:.3g} (L={vals[i]:.6g})")
                    break
    return errs


def check_sampler(pb, eps: float, draws: int, rng) -> tuple[list[str], dict]:
    p, s, n = pb["p"], pb["s"], pb["n"]
    loss = LeastSquares(pb["ridge"], pb["radius"])
    obj = loss.bind(pb["X"], pb["y"])
    scale = loss.sensitivity(n, s, B, B)
    sup = all_supports(p, s)
    vals = obj.values(sup)
    lw = -eps * (vals - vals.min()) / (2 * scale)
    logp = lw - logsumexp(lw)
    enum = SupportEnumerator(obj, s, scale=scale, exhaustive_max=0, explicit_max=0)
    env = build_envelope(enum, eps, scale, full_class_max=0)
    sm = ExponentialMechanismSampler(obj.values, env.singletons, env.values, env.regions, p,
                                     eps, scale, refine=env.refine, cuts=env.cuts)
    errs, info = [], {"linear": 0, "regions": len(sm.regions)}
    index = {tuple(r): i for i, r in enumerate(sup.tolist())}

    def check_regions():
        for R, lin in zip(sm.regions, sm._linear, strict=False):
            if lin is None:
                continue
            info["linear"] += 1
            full = R.__class__(R.center, R.k, R.p, R.fixed_in, R.fixed_out, R.bound)
            mem = np.vstack(list(region_members(full)))
            hb = lin.bounds(mem)
            L = vals[[index[tuple(r)] for r in mem.tolist()]]
            if np.any(hb > L + 1e-10 * np.maximum(1.0, np.abs(L))):
                errs.append(f"linear bound above L by {np.max(hb - L):.3g}")
            exact = float(logsumexp(-sm.coef * (hb - sm.ref)))
            if not abs(lin.log_mass - exact) <= 1e-8 * max(1.0, abs(exact)):
                errs.append(f"linear mass {lin.log_mass!r} != brute force {exact!r}")

    check_regions()
    if draws:
        dr = sm.sample(rng, draws)
        check_regions()   # regions made by refinement too
        counts = np.bincount([index[tuple(r)] for r in dr.tolist()], minlength=len(sup))
        expected = np.exp(logp) * draws
        big = expected >= 5
        obs = np.r_[counts[big], counts[~big].sum()]
        ex = np.r_[expected[big], expected[~big].sum()]
        if ex[-1] < 1e-9:
            if obs[-1] > 0:
                errs.append(f"{obs[-1]} draws on supports of total probability {ex[-1]:.2g}")
            obs, ex = obs[:-1], ex[:-1]
        if obs.size > 1:
            pv = chisquare(obs, ex * obs.sum() / ex.sum()).pvalue
            info["pvalue"] = pv
            if pv < 1e-4:
                errs.append(f"chi-square p = {pv:.2g}")
    for i in set(np.argsort(logp)[-3:].tolist()) | {int(np.argmin(logp)),
                                                    int(rng.integers(len(sup)))}:
        lo, hi = sm.log_probability_bounds(sup[i])
        t = 1e-9 * max(1.0, abs(logp[i]))
        if not (lo <= logp[i] + t and hi >= logp[i] - t):
            errs.append(f"probability bounds [{lo:.6g}, {hi:.6g}] miss {logp[i]:.6g}")
    return errs, info


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("part", choices=["cuts", "sampler"])
    ap.add_argument("--problems", type=int, default=100)
    ap.add_argument("--draws", type=int, default=0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    n_fail = n_lin = 0
    for k in range(args.problems):
        pb = random_problem(rng)
        tag = (f"#{k} p={pb['p']} n={pb['n']} s={pb['s']} {pb['kind']} "
               f"ridge={pb['ridge']:g} r={pb['radius']:g}")
        if args.part == "cuts":
            errs = check_cuts(pb)
        else:
            eps = float(rng.choice([0.1, 1.0, 5.0, 20.0]))
            tag += f" eps={eps:g}"
            errs, info = check_sampler(pb, eps, args.draws, rng)
            n_lin += info["linear"] > 0
        if errs:
            n_fail += 1
            print("FAIL", tag, *errs[:3], sep="\n  ")
    print(f"{args.part}: {args.problems} problems, {n_fail} with failures"
          + (f", {n_lin} with linear envelopes" if args.part == "sampler" else ""))


if __name__ == "__main__":
    main()
