"""`evalkit compare --sequential`: a sequential look at stored runs, or a sequential run."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from ..compare import Comparison
    from ..grading import Scorecard

__all__ = ["DEFAULT_MAX_REPEATS", "SequentialRequest", "sequential_comparison"]

#: Waves at most when --max-repeats is not given.
DEFAULT_MAX_REPEATS = 6


@dataclass(frozen=True)
class SequentialRequest:
    """What `evalkit compare --sequential` was asked."""

    baseline: str
    candidate: str
    scorecard: Path | Scorecard
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
    pricing: Any = None


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
        runs[0], runs[1], request.scorecard, plan, judge=request.judge
    )
    if not comparison.stop:
        typer.echo(
            "the comparison goes on: run the next repeat on both sides and look again", err=True
        )
    return comparison


def _announce(plan: Any, cells: int, request: SequentialRequest, client: Any) -> None:
    """Expected conversations (at the effect the plan is powered for) and cost, and the most
    the waves can run."""
    from ._pricing import announce, assistant_llms

    expected = plan.expected_conversations(plan.effect, cells)
    most = plan.maximum_conversations(cells)
    assert request.assistant is not None
    llm = assistant_llms(client, request.assistant)[0] if request.pricing else None
    announce(expected, request.pricing, [(llm, expected)])
    typer.echo(f"  (at most {most} if no look stops; prod and draft together)", err=True)


def _run_in_waves(request: SequentialRequest) -> Comparison:
    from ..compare import SequentialPlan
    from ..flows import DraftVsProdOptions, draft_vs_prod
    from ..grid import Grid
    from ..runner import RunOptions
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
    plan = SequentialPlan(
        max_repeats,
        confidence=request.confidence,
        min_effect=request.min_effect,
        stop_when_non_inferior=request.stop_when_non_inferior,
    )
    with cli_client() as client:
        _announce(plan, grid.n_cells, request, client)
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
                sequential=plan,
                run=RunOptions(pricing=request.pricing),
            ),
        )
    if result.sequential is not None:
        typer.echo(result.sequential.headline(), err=True)
    return result.comparison
