"""The budget's split of a :func:`mipdp.private_bss` call, from the arguments alone.

``eps`` goes first to the private ranges (``fraction · eps``, once, with
``bounds="private"``), then the rest to the pre-screen (its ``fraction`` of the rest,
once) and to each draw of the selection (what is left, per draw); a method with a
propose-test-release guard spends ``eps_test`` once more.  Basic composition: the total is
the sum.  Also the per-method noise scale under each neighbour notion.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..exceptions import InvalidParameterError
from ..guarantee import Neighbour
from ..methods import registry as _registry
from ..prescreen import prescreen_fraction

__all__ = ["Budget", "NEIGHBOURS", "ADD_REMOVE_SCALE", "neighbour_scale_factor",
           "neighbour_record", "check_method_args"]

#: Neighbour notions of :func:`mipdp.private_bss` (its ``neighbours=`` argument).
NEIGHBOURS = ("replace_one", "add_remove")


class _AddRemoveScale(Mapping):
    """Live read-only view ``{method: add_remove_factor}`` of the method registry."""

    def __getitem__(self, name):
        return _registry.add_remove_scale()[name]

    def __iter__(self):
        return iter(_registry.add_remove_scale())

    def __len__(self):
        return len(_registry.add_remove_scale())

    def __repr__(self):
        return repr(_registry.add_remove_scale())


#: Per method, the factor applied to the replace-one noise scale ``Δ = B/n`` under
#: ``neighbours="add_remove"`` (each method's ``add_remove_factor``, read from the
#: registry).  ``0.5`` is the monotone factor: the method's score in sum
#: form ``F = n·L`` moves by an amount in ``[0, B]`` (all in the same direction) when a
#: row is added, so the exponent ``ε F / B = ε L / (2 · B/(2n))`` is ε-DP (docs/privacy.md,
#: "MIP methods under add/remove neighbours").  A method absent from this table refuses
#: ``"add_remove"`` before the data is read; a method whose score is not proven monotone
#: would use ``1.0`` (the add/remove sensitivity ``B`` of a non-monotone sum-form score is
#: the same bound).
ADD_REMOVE_SCALE: Mapping[str, float] = _AddRemoveScale()


def neighbour_scale_factor(method: str, neighbours: str = "replace_one") -> float:
    """Factor of the noise scale ``Δ = B/n`` of ``method`` under ``neighbours``.

    ``1.0`` under replace-one; :data:`ADD_REMOVE_SCALE` ``[method]`` under add/remove.
    Raises :class:`~mipdp.exceptions.InvalidParameterError` (before any data is read) for
    a notion the method does not support.
    """
    if neighbours == "replace_one":
        return 1.0
    if neighbours != "add_remove":
        raise InvalidParameterError(f"The 'neighbours' parameter must be a str among "
                                    f"{set(NEIGHBOURS)}. Got {neighbours!r} instead.")
    if method not in ADD_REMOVE_SCALE:
        raise InvalidParameterError(
            f"neighbours: method={method!r} is not available under add/remove neighbours "
            f"(supported: {sorted(ADD_REMOVE_SCALE)}); pass neighbours='replace_one' or "
            "another method")
    return float(ADD_REMOVE_SCALE[method])


def neighbour_record(neighbours: str) -> Neighbour:
    """``neighbours=`` as the :class:`~mipdp.guarantee.Neighbour` of a guarantee."""
    return Neighbour.ADD_REMOVE if neighbours == "add_remove" else Neighbour.REPLACE_ONE


def check_method_args(method, R, delta, eps_test, n_draws):
    """Relations between arguments (types and ranges are in the parameter table)."""
    if delta is not None:
        delta = float(delta)
        unit = _registry.METHODS.get(method)
        if unit is None or not unit.takes_delta:
            users = " or ".join(repr(name) for name, m in _registry.METHODS.items()
                                if m.takes_delta)
            raise ValueError(f"delta: only used by method={users} (its propose-test-release "
                             "guard)")
    if eps_test is not None:
        eps_test = float(eps_test)
        if delta is None:
            raise ValueError("eps_test: needs delta= (the propose-test-release guard uses both)")
    return delta, eps_test


@dataclass(frozen=True)
class Budget:
    """The split of ``eps`` over the stages (all data-free).

    Attributes
    ----------
    eps : float
        The call's ``eps``.
    eps_ranges : float
        Private clipping ranges (once; 0 without them).
    eps_rest : float
        What the ranges leave: the pre-screen's and the selection's ``eps``.
    eps_screen : float
        The pre-screen (once; 0 without one).
    eps_select : float
        One draw of the selection.
    n_draws : int
    eps_once : float
        The method's own one-off spend (the PTR test of a guarded mistakes run).
    ranged : bool
        Whether private ranges come first.
    """

    eps: float
    eps_ranges: float
    eps_rest: float
    eps_screen: float
    eps_select: float
    n_draws: int
    eps_once: float
    ranged: bool

    @classmethod
    def split(cls, eps: float, *, n_draws: int = 1, prescreen=None,
              method: str = "exponential", delta: float | None = None,
              eps_test: float | None = None, ranges=None) -> Budget:
        """The split for these arguments; ``ranges`` a PrivateBounds or ``None``."""
        eps = float(eps)
        eps_ranges = ranges.fraction * eps if ranges is not None else 0.0
        rest = eps - eps_ranges if ranges is not None else eps
        eps_select = (1.0 - prescreen_fraction(prescreen)) * rest
        once = _registry.get_method(method).once_epsilon(eps_select, delta=delta,
                                                         eps_test=eps_test)
        return cls(eps, eps_ranges, rest, rest - eps_select, eps_select, int(n_draws),
                   once, ranges is not None)

    @property
    def total(self) -> float:
        """Total ``ε`` by basic composition (ranges, pre-screen, every draw, PTR test)."""
        total = (self.eps_rest - self.eps_select) + self.n_draws * self.eps_select
        if self.eps_once:
            total += self.eps_once
        return self.eps_ranges + total if self.ranged else total
