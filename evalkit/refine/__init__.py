"""Refine builds: preflight, submit, wait, snapshot and diff; the guarded refine loop."""

from __future__ import annotations

from .._util import PollPolicy, publish
from ..targets import ConfigEdit  # noqa: F401  (its home is evalkit.targets; kept importable here)
from ._errors import BuildInFlightError, RefineError, RefineTimeout
from ._feedback import MAX_FEEDBACK_CHARS, suggest_feedback, validate_feedback
from ._holdout import split_holdout
from ._inflight import InFlightBuild, InFlightLedger
from ._loop import ROUND_COLUMNS, SUGGEST, RefineLoopResult, arefine_loop, refine_loop
from ._loop_options import RefineLoopOptions
from ._refine import arefine_and_wait, refine_and_wait
from ._refine_options import RefineOptions
from ._result import RefineResult

__all__ = [
    "MAX_FEEDBACK_CHARS",
    "ROUND_COLUMNS",
    "SUGGEST",
    "BuildInFlightError",
    "InFlightBuild",
    "InFlightLedger",
    "PollPolicy",
    "RefineError",
    "RefineLoopOptions",
    "RefineLoopResult",
    "RefineOptions",
    "RefineResult",
    "RefineTimeout",
    "arefine_and_wait",
    "arefine_loop",
    "refine_and_wait",
    "refine_loop",
    "split_holdout",
    "suggest_feedback",
    "validate_feedback",
]

# What evalkit's other packages take from here and users need not: not public, not in the API
# snapshot (``x as x`` marks each as re-exported for the type checker).
from ._candidates import refine_candidates as refine_candidates

_SIBLING_API = ("refine_candidates",)

publish(globals())
