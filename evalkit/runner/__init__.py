"""Run a grid's conversations against a target: bounded concurrency, retries, budget, resume,
and what it costs (:class:`Pricing`)."""

from __future__ import annotations

from .._util import publish
from ._definition import RunDefinition
from ._errors import MissingVariablesError, RunAborted, ServiceUnreachable
from ._options import Budget, RunOptions
from ._pricing import Cost, Pricing, PricingError
from ._runner import arun_grid, default_run_id, run_grid

__all__ = [
    "Budget",
    "Cost",
    "MissingVariablesError",
    "Pricing",
    "PricingError",
    "RunAborted",
    "RunDefinition",
    "RunOptions",
    "ServiceUnreachable",
    "arun_grid",
    "default_run_id",
    "run_grid",
]

# What evalkit's other packages take from here and users need not: not public, not in the API
# snapshot (``x as x`` marks each as re-exported for the type checker).
from ._pricing import DEFAULT_MINUTES as DEFAULT_MINUTES
from ._pricing import DEFAULT_TURNS as DEFAULT_TURNS
from ._pricing import llm_of as llm_of
from ._pricing import manifest_llm as manifest_llm

_SIBLING_API = (
    "DEFAULT_MINUTES",
    "DEFAULT_TURNS",
    "llm_of",
    "manifest_llm",
)

publish(globals())
