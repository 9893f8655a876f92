"""The grid: personas x variable records x contexts x repeats -> cells with stable ids."""

from __future__ import annotations

from .._util import publish
from ._grid import Cell, ConversationSlot, Grid, load_variables
from ._personas import Persona, PersonaError, PersonaProblem, load_personas

__all__ = [
    "Cell",
    "ConversationSlot",
    "Grid",
    "Persona",
    "PersonaError",
    "PersonaProblem",
    "load_personas",
    "load_variables",
]

publish(globals())
