"""`evalkit bisect GOOD BAD -s FILE`: which change between a good and a bad run carries the
regression; prints each configuration tried as it is decided, then the culprit."""

from __future__ import annotations

import math
from typing import Annotated, Any

import typer

from ._app import app
from ._errors import ExitCode, fail
from ._grade import judge_from_options
from ._options import ScorecardOption, StoreOption
from ._pricing import PricingOption, announce, load_pricing

__all__ = ["format_step"]


def format_step(row: dict[str, Any]) -> str:
    """One configuration tried: its changes, conversations, verdict and interval."""
    diff, low, high = (row.get(k) for k in ("difference", "difference_low", "difference_high"))
    shown = "-" if diff is None or math.isnan(diff) else f"{diff:+.1f} [{low:+.1f}, {high:+.1f}]"
    return (
        f"step {row['step']}: {row['changes'] or '(no change)'} -> {row['verdict']} {shown} "
        f"({row['conversations']} conversations, {row['looks']} look(s))"
    )


@app.command("bisect")
def bisect_command(
    good: Annotated[str, typer.Argument(metavar="GOOD", help="The good run's id.")],
    bad: Annotated[str, typer.Argument(metavar="BAD", help="The bad (regressed) run's id.")],
    scorecard: ScorecardOption,
    store: StoreOption = "runs",
    max_conversations: Annotated[
        int | None,
        typer.Option(min=1, metavar="N", help="Refuse up front when the worst case needs more."),
    ] = None,
    no_judge: Annotated[
        bool, typer.Option("--no-judge", help="Leave judged rules n/a (deterministic only).")
    ] = False,
    pricing: PricingOption = None,
) -> None:
    """Find the change (config key or prompt hunk) that carries a regression, on clones."""
    from ..flows import BisectOptions, bisect
    from ..runner import manifest_llm
    from ..store import load_run
    from ._client import cli_client

    prices = load_pricing(pricing)
    llm = manifest_llm(load_run(good, store=store).manifest)

    def start(changes: int, expected: float, worst: int) -> None:
        typer.echo(f"bisect: {changes} change(s) between {good} and {bad}", err=True)
        announce(expected, prices, [(llm, expected)])
        typer.echo(f"worst case: {worst} conversation(s)", err=True)

    options = BisectOptions(
        max_conversations=max_conversations,
        on_step=lambda row: typer.echo(format_step(row)),
        on_start=start,
    )
    try:
        with cli_client() as client:
            result = bisect(
                good,
                bad,
                scorecard,
                client=client,
                judge=judge_from_options(None, no_judge),
                store=store,
                options=options,
            )
    except KeyboardInterrupt:
        message = "interrupted (Ctrl-C): the configurations tried and their clones are deleted"
        raise fail(message, ExitCode.INTERRUPTED) from None
    typer.echo(result.headline())
    for row in result.culprit.to_dict("records"):
        typer.echo(f"[{row['kind']}] {row['path']}\n  - {row['before']}\n  + {row['after']}")
