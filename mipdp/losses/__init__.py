"""Losses: small data-free objects that know their sensitivity and bind to data."""

from __future__ import annotations

from .base import Loss, SupportObjective
from .hinge import Hinge
from .huber import Huber
from .least_squares import LeastSquares

__all__ = ["Loss", "SupportObjective", "LeastSquares", "Hinge", "Huber", "get_loss", "LOSSES"]

#: name -> Loss class
LOSSES: dict[str, type[Loss]] = {"least_squares": LeastSquares, "hinge": Hinge, "huber": Huber}
_ALIASES = {"ls": "least_squares", "squared": "least_squares", "bss": "least_squares",
            "svm": "hinge", "robust": "huber"}


def get_loss(loss: str | Loss = "least_squares", *, ridge: float = 120.0,
             radius: float = 1.1) -> Loss:
    """Resolve ``loss`` (a name or a :class:`Loss` instance) to a :class:`Loss`."""
    if isinstance(loss, Loss):
        return loss
    if not isinstance(loss, str):
        raise TypeError(f"loss: expected a name or a Loss instance, got {type(loss).__name__}")
    key = _ALIASES.get(loss.lower(), loss.lower())
    if key not in LOSSES:
        raise ValueError(f"loss: unknown loss {loss!r}; choose one of {sorted(LOSSES)}")
    return LOSSES[key](ridge=ridge, radius=radius)
