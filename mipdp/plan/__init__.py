"""The plan of stages of :func:`mipdp.private_bss` (docs/design.md, "The plan").

Before the data: :func:`make_plan` builds a :class:`Plan` from the validated arguments
(the budget's split, the ordered stages, their composed guarantee), which the accountant
checks.  Then :meth:`Plan.run` runs the stages in order (ranges -> pre-screen -> clip ->
enumerate -> method -> sample -> record), each a small unit with its guarantee beside its
run (:mod:`mipdp.plan.stages`).
"""

from .budget import ADD_REMOVE_SCALE, NEIGHBOURS, Budget, neighbour_scale_factor
from .plan import Plan, make_plan, planned_epsilon, planned_guarantee

__all__ = ["Plan", "make_plan", "Budget", "planned_epsilon", "planned_guarantee",
           "neighbour_scale_factor", "ADD_REMOVE_SCALE", "NEIGHBOURS"]
