"""`evalkit compare --sequential`: a sequential look at stored runs, or a sequential run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from ..compare import Comparison

__all__ = ["DEFAULT_MAX_REPEATS", "SequentialRequest", "sequential_comparison"]

#: Waves at most when --max-repeats is not given.
DEFAULT_MAX_REPEATS = 6


@dataclass(frozen=True)
class SequentialRequest:
    """What `evalkit compare --sequential` was asked."""

    baseline: str
    candidate: str
    scorecard: Path
    store: str
    judge: Any
    confidence: float
    min_effect: float
    max_repeats: int | None
    assistant: str | None
    personas: Path | None
    variables: Path | None
    contexts: tuple[str, ...]
    stop_when_non_inferior: bool = False


def sequential_comparison(request: SequentialRequest) -> Comparison:
    """Run the grid in waves on an assistant, or look at stored runs; the deciding look."""
    from ..compare import SequentialPlan
    from ..flows import compare_runs_sequential, sequential_record
    from ..store import load_run

    if request.assistant is not None:
        return _run_in_waves(request)
    runs = [
        load_run(run_id, store=request.store) for run_id in (request.baseline, request.candidate)
    ]
    record = sequential_record(runs[1])
    plan = None
    if record is None or request.max_repeats is not None:
        plan = SequentialPlan(
            request.max_repeats or DEFAULT_MAX_REPEATS,
            confidence=request.confidence,
            min_effect=request.min_effect,
            stop_when_non_inferior=request.stop_when_non_inferior,
        )
    comparison = compare_runs_sequential(
        runs[0], runs[1], request.scorecard, request.judge, plan=plan
    )
    if not comparison.stop:
        typer.echo(
            "the comparison goes on: run the next repeat on both sides and look again", err=True
        )
    return comparison


def _run_in_waves(request: SequentialRequest) -> Comparison:
    from ..compare import SequentialPlan
    from ..flows import DraftVsProdOptions, draft_vs_prod
    from ..grid import Grid
    from ._client import cli_client
    from ._run import default_personas

    max_repeats = request.max_repeats or DEFAULT_MAX_REPEATS
    grid = Grid(
        request.personas or default_personas(),
        variables=request.variables,
        contexts=list(request.contexts) or None,
        repeats=max_repeats,
    )
    assert request.assistant is not None
    with cli_client() as client:
        result = draft_vs_prod(
            grid,
            request.assistant,
            request.scorecard,
            client=client,
            judge=request.judge,
            store=request.store,
            options=DraftVsProdOptions(
                baseline_run_id=request.baseline,
                candidate_run_id=request.candidate,
                sequential=SequentialPlan(
                    max_repeats,
                    confidence=request.confidence,
                    min_effect=request.min_effect,
                    stop_when_non_inferior=request.stop_when_non_inferior,
                ),
            ),
        )
    if result.sequential is not None:
        typer.echo(result.sequential.sentence(), err=True)
    return result.comparison
