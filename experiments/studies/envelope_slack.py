"""How loose is the exponential mechanism's envelope on the heaviest regions?

Builds the envelope ``private_bss`` samples (seed 002's design, s = 5, ε = 1, the default
score), stops before sampling, and for the regions of largest envelope mass draws
``--members`` uniform members and evaluates them.  Reported per region, in log-mass
relative to the best singleton (``log Σ_{T∈R} exp(-ε(L(T) - L_ref)/(2Δ))``):

* ``true≈`` — the uniform-sample estimate of the region's true mass;
* ``constant`` — ``log|R| - ε(bound - L_ref)/(2Δ)``, the constant envelope;
* ``linear`` — the linear envelope of the best cut or combination of cuts (``-`` if the
  constant one is smaller);
* ``spread`` — mean minus min of the sampled ``L`` (units of ``2Δ/ε``), and how far the
  constant bound and the linear bound sit below the sampled members (min and mean).

    python -m experiments.studies.envelope_slack --p 100000 --n 1000 --rho 0.1
    python -m experiments.studies.envelope_slack --p 1000 --n 2000 --rho 0.7
"""

from __future__ import annotations

import argparse
import math
import warnings

import numpy as np
from scipy.special import logsumexp


class _Stop(Exception):
    pass


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--p", type=int, default=100_000)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--rho", type=float, default=0.1)
    ap.add_argument("--regions", type=int, default=4)
    ap.add_argument("--members", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)

    from mipdp import private_bss
    from mipdp.datasets import make_bss_regression
    from mipdp.mechanisms import em_rejection

    captured = {}

    def stop(self, rng, size=1):
        captured["sampler"] = self
        raise _Stop

    X, y, _ = make_bss_regression(n=a.n, p=a.p, s=5, rho=a.rho, random_state=a.seed)
    original = em_rejection.ExponentialMechanismSampler.sample
    em_rejection.ExponentialMechanismSampler.sample = stop  # type: ignore[method-assign]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            private_bss(X, y, 5, 1.0, bounds=(0.5, 0.5), random_state=a.seed)
    except _Stop:
        pass
    finally:    # the sampler is restored: other studies may run in this process
        em_rejection.ExponentialMechanismSampler.sample = original  # type: ignore[method-assign]
    m = captured.get("sampler")
    if m is None:
        print("no region: the envelope is exact (every support evaluated)")
        return
    rng = np.random.default_rng(a.seed)
    logZ = m._region_logZ()
    print(f"p = {a.p}, n = {a.n}, ρ = {a.rho}: singletons' log-mass {m._single_logZ:.2f}, "
          f"{len(m.regions)} regions")
    print("| k | size | true≈ | constant | linear | spread | constant below (min, mean) "
          "| linear below (min, mean) |")
    print("|---|---|---|---|---|---|---|---|")
    for j in np.argsort(-logZ)[:a.regions]:
        R, lin = m.regions[j], m._linear[j]
        U = R.sample(rng, a.members)
        L = np.asarray(m._values(U), dtype=float)
        true = R.log_size + float(logsumexp(-m.coef * (L - m.ref))) - math.log(L.size)
        const = R.log_size - m.coef * (R.bound - m.ref)
        row = (f"| {R.k} | {R.size:.3g} | {true:.2f} | {const:.2f} | "
               f"{lin.log_mass:.2f} | " if lin is not None else
               f"| {R.k} | {R.size:.3g} | {true:.2f} | {const:.2f} | - | ")
        row += (f"{m.coef * (L.mean() - L.min()):.2f} | "
                f"{m.coef * (L.min() - R.bound):.2f}, {m.coef * (L.mean() - R.bound):.2f} | ")
        if lin is not None:
            slack = m.coef * (L - lin.bounds(U))
            row += f"{slack.min():.2f}, {slack.mean():.2f} |"
        else:
            row += "- |"
        print(row, flush=True)


if __name__ == "__main__":
    main()
