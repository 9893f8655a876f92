"""`evalkit tune`: sweep prompt variants against the draft and keep the honest winner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

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


@app.command("tune", epilog=EXIT_CODES_HELP)
def tune_command(
    assistant: Annotated[
        str, typer.Option("--assistant", "-a", metavar="ID", help="Assistant id to tune.")
    ],
    variants: Annotated[
        Path,
        typer.Option(
            "--variants",
            metavar="FILE",
            help="YAML file of variants (name, patch or instructions, note); see "
            "examples/variants/urdu_reminder.yaml.",
        ),
    ],
    scorecard: ScorecardOption,
    personas: PersonasOption = None,
    variables: VariablesOption = None,
    context: ContextOption = None,
    max_repeats: Annotated[
        int, typer.Option("--max-repeats", min=1, metavar="N", help="Waves (repeats per cell).")
    ] = 4,
    holdout: Annotated[
        float,
        typer.Option(
            "--holdout", min=0.0, max=0.95, metavar="SHARE", help="Share of cells held out."
        ),
    ] = 0.3,
    seed: HoldoutSeedOption = 0,
    confirm_repeats: ConfirmRepeatsOption = 2,
    control: Annotated[
        str, typer.Option(metavar="draft|prod", help="What the variants are compared with.")
    ] = "draft",
    no_adaptive: Annotated[
        bool, typer.Option("--no-adaptive", help="Run every variant to the end.")
    ] = False,
    store: StoreOption = "runs",
    run_prefix: Annotated[
        str | None,
        typer.Option("--run-prefix", metavar="ID", help="Name (or resume) the sweep's runs."),
    ] = None,
    concurrency: ConcurrencyOption = 8,
    output: Annotated[
        Path, typer.Option("--output", "-o", metavar="FILE", help="Where tune.json goes.")
    ] = Path("tune.json"),
    promote: Annotated[
        bool,
        typer.Option(
            "--promote",
            help="Write the confirmed winner's config to the draft (E3; shows the diff first; "
            "never publishes; refused when the draft moved during the sweep).",
        ),
    ] = False,
    judge_model: JudgeModelOption = None,
    no_judge: NoJudgeOption = False,
    pricing: PricingOption = None,
) -> None:
    """Sweep variants against the draft on one grid; confirm the winner on held-out cells.

    Each variant runs on a temporary clone (deleted, also on Ctrl-C); variants clearly worse
    than the best stop after a wave. A confirmed winner and the control then run
    --confirm-repeats fresh repeats of every cell, and its gain is measured on them. Writes
    tune.json; --promote then writes the winner to the draft.
    """
    from .._util import atomic_write_bytes, json_default
    from ..grid import Grid
    from ..runner import RunOptions
    from ..tuning import TuneOptions, load_variants, tune, tune_run_prefix
    from ._client import cli_client

    if control not in ("draft", "prod"):
        raise typer.BadParameter("--control must be draft or prod", param_hint="--control")
    specs = load_variants(variants)  # a bad entry is refused before anything is announced
    prices = load_pricing(pricing)
    grid = Grid(personas or default_personas(), variables=variables, contexts=context or None)
    options = TuneOptions(
        control="draft" if control == "draft" else "prod",
        max_repeats=max_repeats,
        holdout=holdout,
        adaptive=not no_adaptive,
        seed=seed,
        run_options=RunOptions(concurrency=concurrency, pricing=prices),
        run_prefix=run_prefix or tune_run_prefix(),
        confirm_repeats=confirm_repeats,
    )
    typer.echo(
        f"sweep runs: {options.run_prefix}-<variant> in {store} (after an interruption, the same "
        f"command with --run-prefix {options.run_prefix} resumes it)",
        err=True,
    )
    with cli_client() as client:
        cells = grid.n_cells
        per_arm = cells * max_repeats
        patches = [None, *(dict(spec.variant.patch) for spec in specs)]
        llms = assistant_llms(client, assistant, patches) if prices else [None] * len(patches)
        # a winner's fresh repeats: the control's half, and the winner's at the dearest arm
        half = cells * confirm_repeats
        dearest = max(llms[1:], key=lambda llm: prices.expected_cost(llm, 1) if prices else 0)
        fresh = [(llms[0], half), (dearest, half)] if confirm_repeats else []
        announce(
            options.most_conversations(cells, len(specs)),
            prices,
            [(llm, per_arm) for llm in llms] + fresh,
            bound="at most ",
        )
        result = tune(
            grid,
            assistant,
            scorecard,
            specs,
            client=client,
            judge=judge_from_options(judge_model, no_judge),
            store=store,
            options=options,
        )
        text = json.dumps(result.to_dict(), indent=2, ensure_ascii=False, default=json_default)
        atomic_write_bytes(output, (text + "\n").encode("utf-8"), durable=False)
        typer.echo(str(result))
        typer.echo(f"sweep written to {output}")
        if promote:
            if result.winner is None:
                typer.echo("--promote: no confirmed winner, the draft is left as it is", err=True)
                raise typer.Exit(1)
            typer.echo(f"\nchange to write to the draft of {assistant}:")
            preview = result.promote(client, dry_run=True)
            typer.echo(preview.diff or "(no change)")
            typer.echo(str(result.promote(client)))
