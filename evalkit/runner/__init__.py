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

publish(globals())
