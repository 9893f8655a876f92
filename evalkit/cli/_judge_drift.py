"""`evalkit judge-drift`: the CI gate for a judge model or prompt change."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ._app import app
from ._errors import ExitCode
from ._options import ScorecardOption, StoreOption


@app.command("judge-drift")
def judge_drift_command(
    run: Annotated[
        str, typer.Argument(help="A run id in --store, or a run folder.", metavar="RUN")
    ],
    scorecard: ScorecardOption,
    judge_model: Annotated[
        str,
        typer.Option("--judge-model", metavar="MODEL", help="The new judge model to check."),
    ],
    judge_base_url: Annotated[
        str | None,
        typer.Option(
            "--judge-base-url",
            metavar="URL",
            help="The new judge's endpoint (default: EVALKIT_JUDGE_BASE_URL).",
        ),
    ] = None,
    store: StoreOption = "runs",
    sample: Annotated[int, typer.Option(min=1, help="Conversations both judges grade.")] = 200,
    seed: Annotated[int, typer.Option(help="Seed of the sample.")] = 0,
    min_effect: Annotated[
        float, typer.Option(min=0, help="A shift beyond this many points counts.")
    ] = 5.0,
    fail_on_shift: Annotated[
        bool,
        typer.Option(
            "--fail-on-shift",
            help=f"Exit {int(ExitCode.JUDGE_SHIFTED)} when a judged rule's pass rate shifted.",
        ),
    ] = False,
    json_path: Annotated[
        Path | None, typer.Option("--json", metavar="FILE", help="Also write the result as JSON.")
    ] = None,
) -> None:
    """Grade a sample of the run with the current judge (EVALKIT_JUDGE_*) and the new one;
    per judged rule: agreement, kappa, pass rate under each, the shift with its interval."""
    from ..flows import JudgeDriftOptions, compare_judges
    from ..grading import Judge
    from ..store import load_run

    loaded = load_run(run, store=store)
    drift = compare_judges(
        loaded,
        scorecard,
        Judge(),
        Judge(model=judge_model, base_url=judge_base_url),
        options=JudgeDriftOptions(sample=sample, seed=seed, min_effect=min_effect),
    )
    typer.echo(drift.headline())
    columns = ["rule_id", "n", "agreement", "kappa", "pass_rate_a", "pass_rate_b"]
    columns += ["difference", "difference_low", "difference_high", "shifted"]
    typer.echo(drift.by_rule[columns].to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    notes = drift.by_rule.loc[drift.by_rule["kappa_note"] != "", ["rule_id", "kappa_note"]]
    for row in notes.itertuples():
        typer.echo(f"  kappa of {row.rule_id}: {row.kappa_note}")
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(json.dumps(drift.to_dict(), indent=2), encoding="utf-8")
    if fail_on_shift and drift.shifted:
        raise typer.Exit(int(ExitCode.JUDGE_SHIFTED))
