"""Which bounds-free score ``bounds=None`` runs: a data-free rule over public numbers.

Without public ranges :func:`mipdp.private_bss` (``bounds=None``, the default) runs one of
two bounds-free scores, chosen from the call's arguments and the public number of rows
only, never from the data's values:

* ``"kendall"`` (:mod:`mipdp.kendall_score`) when the loss is least squares (by name, with
  the default ridge and radius), the neighbours are replace-one (``n`` public), the method
  and pre-screen are ones the Kendall score supports, and ``n · min(ε, 1) < KENDALL_BELOW``
  (``ε`` the selection's per draw), i.e. ``n < 1000`` or ``n · ε < 1000``: where ``n · ε``
  is small the redundancy-aware Kendall score concentrates sooner, and on fewer than a
  thousand rows its test R² is DPKendall's at every ε the benchmark measured;
* ``"ranks"`` (:mod:`mipdp.ranks`) otherwise: the joint least-squares fit on uniform ranks,
  which finds effects that show only jointly (a suppressor) once ``n`` and ``n · ε`` are
  large.

The level comes from the real-data benchmark judged by test R² (docs/real_data.md:
``experiments/test_r2/routes.py``).  Because the choice is a function of public numbers
only, the release is, for each ``n``, one fixed mechanism, pure ε-DP with that score's
proven sensitivity (docs/privacy.md, "Which score bounds=None runs").  Under add/remove
neighbours ``n`` is private, so the rule always takes ``"ranks"``.
"""

from __future__ import annotations

__all__ = ["KENDALL_BELOW", "BOUNDS_RULE_DOC", "default_bounds_free"]

#: ``n · min(ε, 1)`` below which ``bounds=None`` runs the Kendall score (least squares,
#: replace-one)
KENDALL_BELOW = 1000.0
#: where the rule is written down (result.info["bounds_rule"] names it)
BOUNDS_RULE_DOC = ("mipdp.bounds_free: 'kendall' for least squares under replace-one when "
                   f"n * min(eps, 1) < {KENDALL_BELOW:g}, else 'ranks'; public numbers only")
#: methods the rule hands to the Kendall score (the others stay on ranks)
_KENDALL_METHODS = ("exponential", "permute_and_flip", "top_r", "mistakes")


def default_bounds_free(n: int | None, eps_select: float, *, loss, method: str = "exponential",
                        prescreen=None, neighbours: str = "replace_one", ridge=None,
                        radius=None) -> str:
    """``"kendall"`` or ``"ranks"``: the score ``bounds=None`` runs (module docstring).

    Parameters
    ----------
    n : int or None
        The number of rows, public under replace-one (``None``: unknown or private).
    eps_select : float
        The selection's ``ε`` per draw.
    loss, method, prescreen, neighbours, ridge, radius
        The call's arguments (``loss`` as given: a name or a Loss instance).
    """
    if (n is None or neighbours != "replace_one" or not isinstance(loss, str)
            or loss != "least_squares" or ridge is not None or radius is not None
            or method not in _KENDALL_METHODS):
        return "ranks"
    if prescreen is not None:
        name = prescreen[0] if isinstance(prescreen, (tuple, list)) and prescreen else None
        if name != "kendall":
            return "ranks"
    return "kendall" if n * min(float(eps_select), 1.0) < KENDALL_BELOW else "ranks"
