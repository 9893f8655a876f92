"""The grid: personas x variable records x contexts x repeats -> cells with stable ids."""

from __future__ import annotations

from .._util import publish
from ._grid import Cell, ContextsInput, ConversationSlot, Grid, PersonasInput, load_variables
from ._personas import Persona, PersonaError, PersonaProblem, ProvenanceValue, load_personas
from ._variables import VariablesInput, VariablesRecord

__all__ = [
    "Cell",
    "ContextsInput",
    "ConversationSlot",
    "Grid",
    "Persona",
    "PersonaError",
    "PersonaProblem",
    "PersonasInput",
    "ProvenanceValue",
    "VariablesInput",
    "VariablesRecord",
    "load_personas",
    "load_variables",
]

publish(globals())
