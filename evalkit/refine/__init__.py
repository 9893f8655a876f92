"""Refine builds: preflight, submit, wait, snapshot and diff; the guarded refine loop."""

from __future__ import annotations

from .._util import publish
from ._diff import ConfigEdit
from ._errors import BuildInFlightError, RefineError, RefineTimeout
from ._feedback import MAX_FEEDBACK_CHARS, suggest_feedback, validate_feedback
from ._inflight import InFlightBuild, InFlightLedger
from ._refine import arefine_and_wait, refine_and_wait
from ._result import RefineResult

__all__ = [
    "MAX_FEEDBACK_CHARS",
    "BuildInFlightError",
    "ConfigEdit",
    "InFlightBuild",
    "InFlightLedger",
    "RefineError",
    "RefineResult",
    "RefineTimeout",
    "arefine_and_wait",
    "refine_and_wait",
    "suggest_feedback",
    "validate_feedback",
]

publish(globals())
