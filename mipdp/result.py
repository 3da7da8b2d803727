"""The result object every selection method returns."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["SelectionResult"]


@dataclass
class SelectionResult:
    """A private support release and what it guarantees.

    Attributes
    ----------
    support : ndarray of int
        The released support (sorted indices), i.e. ``supports[0]``.
    supports : ndarray of int, shape (n_draws, s)
        One row per independent release.
    method : str
        Registry name of the method.
    epsilon, delta : float
        Total privacy cost of *all* draws together (``delta = 0`` for pure DP).
    neighbour : str
        Neighbouring-dataset notion the guarantee is stated under
        (``"replace-one"`` or ``"add/remove-one"``).
    guarantee : str
        The guarantee in words, with any condition it depends on.
    timings : dict
        Seconds per phase.
    info : dict
        Method-specific details (never anything that leaks beyond the guarantee
        unless the key says so).
    """

    support: np.ndarray
    supports: np.ndarray
    method: str
    epsilon: float
    delta: float
    neighbour: str
    guarantee: str
    timings: dict = field(default_factory=dict)
    info: dict = field(default_factory=dict)

    @property
    def n_draws(self) -> int:
        """Number of independent releases."""
        return int(self.supports.shape[0])

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(method={self.method!r}, support={self.support.tolist()}, "
                f"n_draws={self.n_draws}, epsilon={self.epsilon:g}, delta={self.delta:g}, "
                f"neighbour={self.neighbour!r})")
