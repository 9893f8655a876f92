"""Callers that find failures: generated personas along trait axes, and a search for the ones
that break a draft, confirmed on fresh repeats.

    generated = generate_personas(assistant_id, scorecard, grid,
                                  options=GenerateOptions(n=12))
    generated.personas          # checked (and piloted) personas, ready for a Grid
    generated.write("personas/generated")

    search = find_failures(grid, assistant_id, scorecard, options=FindOptions(rounds=3))
    search.summary              # persona, traits, rule, fresh failure rate with its interval
    search.coverage             # per trait value: asked, dropped, screened, failing, reported
    search.write("personas/found")   # the callers that break the draft, for the regression grid

Personas are drawn along the axes of :data:`TRAIT_AXES` (cooperation, knowledge of the call's
reason, language and script, patience, hostility, goal, background noise, age) and written by
any OpenAI-compatible chat endpoint (:class:`PersonaGenerator`, settings from
``EVALKIT_GENERATOR_*``; ``evalkit emulator`` serves an emulated one). Every persona is checked
before it joins a grid, and a failure is reported only when fresh conversations, not the ones
that found it, show it happens more often than a threshold (see :mod:`._decide`).
"""

from __future__ import annotations

from .._util import publish
from ._axes import TRAIT_AXES, TraitAxis, TraitSpace, TraitValue, trait_axes
from ._checks import PILOT_FLAGS, Refused
from ._files import write_personas
from ._generate import agenerate_personas, generate_personas
from ._generator import (
    GeneratedBatch,
    GeneratorError,
    GeneratorOptions,
    PersonaGenerator,
    PersonaSource,
)
from ._options import FindOptions, GenerateOptions
from ._prompt import GENERATOR_PROMPT_VERSION, GenerationRequest, PersonaAsk
from ._result import FailureSearch, GeneratedPersonas
from ._search import afind_failures, find_failures

__all__ = [
    "GENERATOR_PROMPT_VERSION",
    "PILOT_FLAGS",
    "TRAIT_AXES",
    "FailureSearch",
    "FindOptions",
    "GenerateOptions",
    "GeneratedBatch",
    "GeneratedPersonas",
    "GenerationRequest",
    "GeneratorError",
    "GeneratorOptions",
    "PersonaAsk",
    "PersonaGenerator",
    "PersonaSource",
    "Refused",
    "TraitAxis",
    "TraitSpace",
    "TraitValue",
    "afind_failures",
    "agenerate_personas",
    "find_failures",
    "generate_personas",
    "trait_axes",
    "write_personas",
]

# What evalkit's other packages take from here and users need not: not public, not in the API
# snapshot (``x as x`` marks each as re-exported for the type checker).
from ._generate import RECORDS_FOLDER as RECORDS_FOLDER
from ._generate import grid_records as grid_records
from ._generate import personas_run_prefix as personas_run_prefix

_SIBLING_API = ("RECORDS_FOLDER", "grid_records", "personas_run_prefix")

publish(globals())
