"""Losses: small data-free objects that know their sensitivity and bind to data."""

from __future__ import annotations

from .base import Loss, SupportObjective
from .hinge import Hinge
from .huber import Huber
from .least_squares import LeastSquares

__all__ = ["Loss", "SupportObjective", "LeastSquares", "Hinge", "Huber", "get_loss", "LOSSES",
           "default_score", "DEFAULT_RIDGE", "SEED_RIDGE", "SEED_RADIUS"]

#: name -> Loss class
LOSSES: dict[str, type[Loss]] = {"least_squares": LeastSquares, "hinge": Hinge, "huber": Huber}
_ALIASES = {"ls": "least_squares", "squared": "least_squares", "bss": "least_squares",
            "svm": "hinge", "robust": "huber"}


from .score_rule import DEFAULT_RIDGE, SEED_RADIUS, SEED_RIDGE, default_score  # noqa: E402


def _resolve_name(loss: str) -> str:
    """Registry key of a loss name or alias (``ValueError`` if unknown)."""
    key = _ALIASES.get(loss.lower(), loss.lower())
    if key not in LOSSES:
        raise ValueError(f"loss: must be one of {sorted(LOSSES)}, got {loss!r}")
    return key


def get_loss(loss: str | Loss = "least_squares", *, ridge: float | None = None,
             radius: float | None = None) -> Loss:
    """Resolve ``loss`` (a name or a :class:`Loss` instance) to a :class:`Loss`.

    Parameters
    ----------
    loss : str or Loss
        A name (``"least_squares"``, ``"hinge"``, ``"huber"`` or an alias) or an instance.
    ridge, radius : float, optional
        For a name: the loss's ``λ`` and ``r``; ``None`` leaves them to the default rule
        (:func:`default_score`), filled in by :meth:`Loss.resolve` once ``s`` and the
        bounds are known.  For an instance they
        must be ``None`` or equal to the instance's own values: a different value raises
        :class:`~mipdp.exceptions.InvalidParameterError` rather than being dropped (set it
        on the instance instead).
    """
    from .._param_validation import InvalidParameterError
    if isinstance(loss, Loss):
        fill = {}
        for name, given, own in (("ridge", ridge, loss.ridge), ("radius", radius, loss.radius)):
            if given is not None and own is None:
                fill[name] = given
            elif given is not None and own is not None and float(given) != float(own):
                raise InvalidParameterError(
                    f"The {name!r} parameter of get_loss conflicts with the Loss instance: "
                    f"{loss!r} has {name}={own:g}, got {name}={given!r}. Set it on the "
                    f"instance (e.g. {type(loss).__name__}({name}={given!r})) or leave "
                    f"{name}=None.")
        if fill:
            import copy
            loss = copy.copy(loss)
            for name, given in fill.items():
                setattr(loss, name, type(loss)(**{name: given}).__dict__[name])
        return loss
    if not isinstance(loss, str):
        raise InvalidParameterError("The 'loss' parameter of get_loss must be a str among "
                                    f"{sorted(LOSSES)} or a Loss instance. Got {loss!r} instead.")
    key = _ALIASES.get(loss.lower(), loss.lower())
    if key not in LOSSES:
        raise InvalidParameterError("The 'loss' parameter of get_loss must be a str among "
                                    f"{sorted(LOSSES)} or a Loss instance. Got {loss!r} instead.")
    return LOSSES[key](ridge=ridge, radius=radius)
