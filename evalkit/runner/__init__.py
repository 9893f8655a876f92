"""Run a grid's conversations against a target: bounded concurrency, retries, budget, resume."""

from __future__ import annotations

from .._util import publish
from ._runner import Budget, RunAborted, arun_grid, run_grid

__all__ = ["Budget", "RunAborted", "arun_grid", "run_grid"]

publish(globals())
