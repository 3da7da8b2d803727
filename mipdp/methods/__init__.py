"""Selection methods of :func:`mipdp.private_bss`, one file per method.

Each is a :class:`SelectionMethod`: its name, its add/remove factor, its guarantee from
the arguments alone and its release on the data.  :mod:`mipdp.methods.registry` holds
the one list every consumer reads (docs/design.md, "A method is one unit").
"""

from .base import Release, SelectionMethod
from .registry import METHODS, add_remove_scale, get_method, method_names, register, unregister

__all__ = ["SelectionMethod", "Release", "METHODS", "method_names", "get_method", "register",
           "unregister", "add_remove_scale"]
