"""Empirical audits: Clopper-Pearson lower bounds on the realised epsilon from many draws.

Part of :mod:`mipdp.audit` (its docstring describes the audit).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable

import numpy as np
from scipy.stats import beta as beta_dist

from ._common import PATHS, B, _instance, _row
from .mip import _LS

logger = logging.getLogger(__name__)

# ------------------------------------------------------------------ empirical audits
def clopper_pearson_epsilon(k1: int, n1: int, k2: int, n2: int, alpha: float = 0.05,
                            delta: float = 0.0) -> float:
    """Lower confidence bound on ε from ``k1/n1`` (on D) and ``k2/n2`` (on D') hits of one event.

    With ``p1 >= lo`` and ``p2 <= hi`` (one-sided Clopper–Pearson bounds, ``alpha/2`` each),
    ``(ε, δ)``-DP requires ``p1 <= e^ε p2 + δ``, so ``ε >= log((lo - δ) / hi)`` with
    confidence ``1 - alpha``. Returns 0 when the bound is not positive.
    """
    lo = 0.0 if k1 == 0 else float(beta_dist.ppf(alpha / 2, k1, n1 - k1 + 1))
    hi = 1.0 if k2 == n2 else float(beta_dist.ppf(1 - alpha / 2, k2 + 1, n2 - k2))
    if lo - delta <= 0 or hi <= 0:
        return 0.0
    return max(0.0, math.log((lo - delta) / hi))


def audit_empirical(name: str, draw: Callable[[np.ndarray, np.ndarray, int, int], list],
                    X: np.ndarray, y: np.ndarray, Xn: np.ndarray, yn: np.ndarray,
                    eps: float, delta: float = 0.0, n_draws: int = 2000,
                    n_pilot: int = 400) -> dict:
    """Empirical lower bound on the realised ε of ``draw`` on one neighbouring pair.

    ``draw(X, y, m, seed)`` returns ``m`` hashable outputs. A pilot of ``n_pilot`` draws
    per dataset picks the output (and direction) with the largest empirical log-ratio;
    ``n_draws`` fresh draws per dataset then give the Clopper–Pearson lower bound
    (:func:`clopper_pearson_epsilon`), which must not exceed the claimed ε.
    """
    from collections import Counter
    c1, c2 = Counter(draw(X, y, n_pilot, 1)), Counter(draw(Xn, yn, n_pilot, 2))
    cands = []
    for o in set(c1) | set(c2):
        a, b = (c1[o] + 1) / (n_pilot + 2), (c2[o] + 1) / (n_pilot + 2)
        cands.append((abs(math.log(a / b)), o, a >= b))
    _, event, forward = max(cands, key=lambda t: t[0])
    h1 = sum(o == event for o in draw(X, y, n_draws, 3))
    h2 = sum(o == event for o in draw(Xn, yn, n_draws, 4))
    if not forward:
        h1, h2 = h2, h1
    lb = clopper_pearson_epsilon(h1, n_draws, h2, n_draws, delta=delta)
    return _row(name, "replace-one", "empirical", 1, 1, lb, eps, delta, float("nan"))


def _empirical_rows(n_draws: int) -> list[dict]:
    from ..comparators import mcmc, two_stage
    from ..screening import dp_frank_wolfe
    n_pilot = max(200, n_draws // 5)
    X, y = _instance("random", 0, 36, 5)
    eps = 4.0           # large enough that the lower bounds are not trivially 0
    Xn, yn = X.copy(), y.copy()
    Xn[0], yn[0] = np.r_[B, -B, B, -B, B], -B
    key = lambda S: tuple(int(i) for i in S)      # noqa: E731

    def draw_mcmc(A, b, m, seed):
        r = mcmc(A, b, 2, eps, bounds=(B, B), n_iter=20, random_state=seed, n_draws=m)
        return [key(S) for S in r.supports]

    def draw_two_stage(A, b, m, seed):
        r = two_stage(A, b, 2, eps, n_blocks=4, topk="laplace", random_state=seed, n_draws=m)
        return [key(S) for S in r.supports]

    def draw_fw(A, b, m, seed):
        rng = np.random.default_rng(seed)
        out = []
        for _ in range(m):
            r = dp_frank_wolfe(A, b, l1_radius=1.0, n_iter=1, eps=eps, delta=1e-5,
                               bounds=(B, B), random_state=rng)
            out.append((int(r.fw_coordinates[0]), int(r.fw_signs[0])))
        return out

    def draw_em(A, b, m, seed):
        from ..selection import private_bss
        r = private_bss(A, b, 2, eps, bounds=(B, B), n_draws=m, random_state=seed,
                        enumeration_options=PATHS["mip"], **_LS)
        return [key(S) for S in r.supports]  # m independent draws, each eps-DP

    def draw_iht(A, b, m, seed):
        from ..comparators.noisy_iht import noisy_iht
        r = noisy_iht(A, b, 2, eps, bounds=(B, B), random_state=seed, n_draws=m)
        return [key(S) for S in r.supports]  # m independent whole runs (T = 2), each eps-DP

    return [audit_empirical("exponential mechanism (sampled, MIP path)", draw_em, X, y, Xn, yn,
                            eps, 0.0, n_draws, n_pilot),
            audit_empirical("MCMC (20 steps)", draw_mcmc, X, y, Xn, yn, eps, 0.0, n_draws, n_pilot),
            audit_empirical("Two-Stage (Laplace top-k)", draw_two_stage, X, y, Xn, yn, eps, 0.0,
                            n_draws, n_pilot),
            audit_empirical("DP Frank-Wolfe (first vertex)", draw_fw, X, y, Xn, yn, eps, 1e-5,
                            n_draws, n_pilot),
            audit_empirical("noisy IHT (whole run, T=2, k=2)", draw_iht, X, y, Xn, yn, eps, 0.0,
                            n_draws, n_pilot)]
