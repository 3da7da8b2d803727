"""Hinge loss on ranks: does the missing intercept pick the wrong third feature?

For two real ±1 targets (fair: any affair; Wages: union member), s = 3: the exhaustive
hinge best subset on standardised data with an intercept (the target), and the exact
EM law (every support) of the hinge score on uniform ranks
(a) as bounds="ranks" computes it (no intercept; ρ = 2, Δ = 1 + 3ρ/2 = 4), and
(b) with a public constant column ½ forced into every support (an intercept inside the
    coefficient ball: ||(β, b)||₁ <= ρ, the same Δ: the constant column does not move
    under a neighbour, every margin stays in [−ρ/2, ρ/2]).
Prints the non-private argmin of each score and the expected overlap with the target.

    PYTHONPATH=.:experiments python -m experiments.studies.ranks_hinge_intercept [rho ...]

Extra arguments: larger l1 radii rho (margins up to rho/2; Δ = 1 + 3ρ/2).
"""
from __future__ import annotations

import numpy as np

from mipdp.losses import get_loss
from mipdp.ranks import RANK_BOUNDS, rank_design, rank_sensitivity

from .ranks_scores import em_law, hinge_target, load_classification, overlap, supports_of


def values(U, y, sup, s, rho=None):
    radius = None if rho is None else rho / np.sqrt(s)
    loss = get_loss("hinge", radius=radius).resolve(s, *RANK_BOUNDS)
    return U.shape[0] * loss.bind(U, y).values(sup), loss.radius


def run(rhos=(None,)):
    s = 3
    for name in ("fair", "Wages"):
        X, y = load_classification(name)
        n, p = X.shape
        sup = supports_of(p, s)
        tgt = hinge_target(X, y, s)
        ov = overlap(sup, tgt, s)
        U = rank_design(X)
        print(f"{name} n={n} p={p} mean(y)={y.mean():+.3f} target={tgt.tolist()} "
              f"chance={s / p:.3f}")
        Uc = np.c_[U, np.full(n, 0.5)]
        supc = np.c_[sup, np.full(len(sup), p)]
        runs = []
        for rho in rhos:
            F0, r0 = values(U, y, sup, s, rho)
            F1, r1 = values(Uc, y, supc, s + 1, rho)
            runs.append((f"rho={r0 * np.sqrt(s):g} no intercept", F0,
                         rank_sensitivity("hinge", n, s, r0)))
            runs.append((f"rho={r1 * np.sqrt(s + 1):g} constant ½", F1,
                         rank_sensitivity("hinge", n, s + 1, r1)))
        for key, F, d in runs:
            o = np.argsort(F)[:3]
            laws = "  ".join(f"eps={e:g}: {em_law(-F, d, e) @ ov:.3f}" for e in (1.0, 5.0))
            best = "; ".join(f"{sup[i].tolist()} {F[i] - F[o[0]]:+.1f}" for i in o)
            print(f"  {key:28s} Δ={d:.2f} best {best}  overlap {laws}")


def main(argv=None) -> None:
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rhos", type=float, nargs="*", help="further radii rho (radius rho/sqrt(s))")
    a = ap.parse_args(argv)
    run([None] + list(a.rhos))


if __name__ == "__main__":
    main()
