"""`evalkit optimize`: propose prompts from the draft's failures, race them, keep only a
winner the held-out cells confirm."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from ._app import app
from ._errors import EXIT_CODES_HELP
from ._grade import judge_from_options
from ._options import (
    ConcurrencyOption,
    ConfirmRepeatsOption,
    ContextOption,
    HoldoutSeedOption,
    JudgeModelOption,
    NoJudgeOption,
    PersonasOption,
    ScorecardOption,
    StoreOption,
    VariablesOption,
)
from ._pricing import PricingOption, announce, assistant_llms, load_pricing
from ._run import default_personas


def _round_line(row: Mapping[str, Any]) -> str:
    best = row["best"]
    if best == "draft":
        lead = "the draft stays the best"
    else:
        lead = (
            f"best {best} {row['best_difference']:+.1f} points on the selection cells "
            f"[{row['best_low']:+.1f}, {row['best_high']:+.1f}]"
        )
    return (
        f"round {row['round']}: {row['proposed']} proposed ({row['proposer_calls']} proposer "
        f"call(s), {row['malformed']} malformed), {row['refused']} refused, {row['raced']} raced, "
        f"{row['conversations']} conversations; {lead}"
    )


@app.command("optimize", epilog=EXIT_CODES_HELP)
def optimize_command(
    assistant: Annotated[
        str,
        typer.Option("--assistant", "-a", metavar="ID", help="Assistant whose draft to improve."),
    ],
    scorecard: ScorecardOption,
    proposer_model: Annotated[
        str | None,
        typer.Option(
            "--proposer-model",
            metavar="MODEL",
            help="Proposer model (else EVALKIT_PROPOSER_MODEL; key from EVALKIT_PROPOSER_API_KEY).",
        ),
    ] = None,
    proposer_base_url: Annotated[
        str | None,
        typer.Option(
            "--proposer-base-url",
            metavar="URL",
            help="OpenAI-compatible endpoint of the proposer (else EVALKIT_PROPOSER_BASE_URL).",
        ),
    ] = None,
    refine: Annotated[
        bool,
        typer.Option(
            "--refine", help="Each candidate is a refine build (E10), one per failure cluster."
        ),
    ] = False,
    rounds: Annotated[int, typer.Option(min=1, metavar="N", help="Proposal rounds at most.")] = 3,
    candidates: Annotated[
        int, typer.Option(min=1, metavar="N", help="Candidates asked for per round.")
    ] = 4,
    max_conversations: Annotated[
        int | None,
        typer.Option("--max-conversations", min=1, metavar="N", help="The whole search's budget."),
    ] = None,
    personas: PersonasOption = None,
    variables: VariablesOption = None,
    context: ContextOption = None,
    max_repeats: Annotated[
        int, typer.Option("--max-repeats", min=1, metavar="N", help="Waves of each race.")
    ] = 2,
    holdout: Annotated[
        float,
        typer.Option(
            "--holdout", min=0.05, max=0.95, metavar="SHARE", help="Share of cells held out."
        ),
    ] = 0.3,
    seed: HoldoutSeedOption = 0,
    confirm_repeats: ConfirmRepeatsOption = 2,
    max_prompt_chars: Annotated[
        int | None,
        typer.Option("--max-prompt-chars", min=1, metavar="N", help="Your service's prompt limit."),
    ] = None,
    store: StoreOption = "runs",
    pricing: PricingOption = None,
    run_prefix: Annotated[
        str | None,
        typer.Option("--run-prefix", metavar="ID", help="Name (or resume) the search's runs."),
    ] = None,
    concurrency: ConcurrencyOption = 8,
    output: Annotated[
        Path, typer.Option("--output", "-o", metavar="FILE", help="Where optimize.json goes.")
    ] = Path("optimize.json"),
    promote: Annotated[
        bool,
        typer.Option(
            "--promote",
            help="Write the confirmed winner's prompt to the draft (E3; never publishes).",
        ),
    ] = False,
    judge_model: JudgeModelOption = None,
    no_judge: NoJudgeOption = False,
) -> None:
    """Propose prompts from the draft's failures, race them, confirm the winner on held-out cells.

    Each round shows the current best's failures on the selection cells to the proposer, races
    its candidates on temporary clones (the clearly worse stop after a wave) and carries the
    best forward. A winner is kept only when a closed test over every candidate tried confirms
    it on the held-out cells; it and the draft then run --confirm-repeats fresh repeats of
    every cell, and its gain is measured on them. Writes optimize.json; --promote then writes
    the winner's prompt to the draft.
    """
    from .._util import atomic_write_bytes, json_default
    from ..grid import Grid
    from ..runner import RunOptions
    from ..tuning import OptimizeOptions, Proposer, ProposerArg, optimize, optimize_run_prefix
    from ._client import cli_client

    if refine and (proposer_model or proposer_base_url):
        raise typer.BadParameter(
            "give --refine or a proposer model and endpoint, not both", param_hint="--refine"
        )
    source: ProposerArg = "refine" if refine else Proposer(proposer_model, proposer_base_url)
    prices = load_pricing(pricing)
    grid = Grid(personas or default_personas(), variables=variables, contexts=context or None)
    options = OptimizeOptions(
        rounds=rounds,
        candidates=candidates,
        max_conversations=max_conversations,
        holdout=holdout,
        seed=seed,
        max_repeats=max_repeats,
        run_options=RunOptions(concurrency=concurrency, pricing=prices),
        run_prefix=run_prefix or optimize_run_prefix(),
        max_prompt_chars=max_prompt_chars,
        confirm_repeats=confirm_repeats,
        on_round=lambda row: typer.echo(_round_line(row), err=True),
    )
    cells = grid.n_cells
    most = options.expected(cells)
    if max_conversations is not None:
        most = min(most, max_conversations)
    fresh = (
        f", {options.fresh_cost(cells)} to measure a winner's gain on fresh repeats"
        if confirm_repeats
        else ""
    )
    typer.echo(
        f"optimize: up to {rounds} round(s) of {candidates} candidate(s) on {cells} cells x "
        f"{max_repeats} repeats ({options.draft_cost(cells)} conversations for the draft, up to "
        f"{options.round_cost(cells)} a round{fresh})",
        err=True,
    )
    typer.echo(
        f"search runs: {options.run_prefix}-* in {store} (after an interruption, the same "
        f"command with --run-prefix {options.run_prefix} resumes it)",
        err=True,
    )
    with cli_client() as client:
        llm = assistant_llms(client, assistant)[0] if prices else None
        announce(most, prices, [(llm, most)], bound="at most ")
        result = optimize(
            grid,
            assistant,
            scorecard,
            proposer=source,
            client=client,
            judge=judge_from_options(judge_model, no_judge),
            store=store,
            options=options,
        )
        text = json.dumps(result.to_dict(), indent=2, ensure_ascii=False, default=json_default)
        atomic_write_bytes(output, (text + "\n").encode("utf-8"), durable=False)
        typer.echo(result.headline())
        for warning in result.warnings:
            typer.echo(f"warning: {warning}", err=True)
        if result.diff:
            typer.echo("\nthe winner's change:\n" + result.diff)
        typer.echo(f"search written to {output}")
        if promote:
            if result.winner is None:
                typer.echo("--promote: no confirmed winner, the draft is left as it is", err=True)
                raise typer.Exit(1)
            typer.echo(str(result.promote(client)))
