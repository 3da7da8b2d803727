"""What the enumeration returns and counts: small records of :class:`SupportEnumerator`.

The exact top-R set (:class:`TopSupports`), the mistake classes' scores
(:class:`MistakeScores`), certified bounds on a class or a region (:class:`ClassBound`,
:class:`RegionBound`) and the statistics (:class:`EnumerationStats`, per phase).  **Not
private**: every figure depends on the data.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["TopSupports", "MistakeScores", "ClassBound", "RegionBound", "EnumerationStats"]


@dataclass
class TopSupports:
    """The exact ``R`` best supports, best first."""

    supports: np.ndarray  # (R, s) sorted indices
    values: np.ndarray  # (R,) ascending
    R: int
    n_supports: int  # C(p, s), exact integer


@dataclass
class MistakeScores:
    """Scores of the mistake classes around the optimum ``center``."""

    center: np.ndarray
    scores: np.ndarray  # M_k = min(L_k, levels[k]), k = 0..K
    levels: np.ndarray  # L_0 + θ_k (inf: exact class minimum)
    second_best: float  # min_k>=1 M_k = min(L(S_(2)), L_0 + min_k>=2 θ_k)


@dataclass
class ClassBound:
    """A certified lower bound on the objective over one mistake class around the centre."""

    k: int
    lower: float  # certified: lower <= L(S) for every S in the class
    best: float  # the best member found (inf if none was evaluated)
    best_support: np.ndarray | None
    size: int  # C(s, k) C(p - s, k)


@dataclass
class RegionBound:
    """Outcome of bounding a region: certified ``lower`` and the best member evaluated."""

    lower: float
    best: float
    best_support: np.ndarray | None
    solves: int
    proven: bool = False  # the search ended with an infeasibility proof below its cutoff


@dataclass
class _Phase:
    time: float = 0.0
    solves: int = 0
    evaluations: int = 0
    lazy_rows: int = 0
    fixed: int = 0
    screened: int = 0


@dataclass
class EnumerationStats:
    """What the enumeration did: times, solver calls, cuts, certification."""

    phases: dict = field(default_factory=dict)
    n_cuts: int = 0
    n_nogoods: int = 0
    n_evaluations: int = 0
    optimality_gap: float = float("nan")
    certified: bool = False
    backend: str = ""
    #: whether the best support found was certified as the optimum (``None``: not asked)
    optimum_certified: bool | None = None

    def as_dict(self) -> dict:
        return {"phases": {k: vars(v).copy() for k, v in self.phases.items()},
                "n_cuts": self.n_cuts, "n_nogoods": self.n_nogoods,
                "n_evaluations": self.n_evaluations,
                "optimality_gap": self.optimality_gap, "certified": self.certified,
                "optimum_certified": self.optimum_certified, "backend": self.backend}
