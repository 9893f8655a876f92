"""`evalkit labels export|import|agreement`: hand labels as CSV, and the judge's measured
agreement with them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._app import app

labels_app = typer.Typer(
    name="labels",
    help="Hand labels of rule verdicts: queue, export, import (CSV), agreement.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(labels_app)

_STORE_HELP = "Folder or URL (s3://bucket/prefix) of runs."


@labels_app.command("export")
def export_command(
    store: Annotated[str, typer.Option(metavar="DIR|URL", help=_STORE_HELP)] = "runs",
    run: Annotated[
        list[str] | None, typer.Option("--run", metavar="RUN", help="Only this run (repeatable).")
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="CSV file [default: stdout].")
    ] = None,
    latest: Annotated[
        bool, typer.Option("--latest", help="Only the last label per conversation and rule.")
    ] = False,
) -> None:
    """Write the store's labels as CSV (run_id, conversation_id, rule_id, label, note, ...)."""
    from ..store import export_labels

    text = export_labels(store, output, run_ids=run or None, latest=latest)
    if output is None:
        typer.echo(text, nl=False)
    else:
        typer.echo(f"{max(text.count(chr(10)) - 1, 0)} label(s) written to {output}", err=True)


@labels_app.command("import")
def import_command(
    csv: Annotated[Path, typer.Argument(help="CSV with run_id, conversation_id, rule_id, label.")],
    store: Annotated[str, typer.Option(metavar="DIR|URL", help=_STORE_HELP)] = "runs",
    run: Annotated[str | None, typer.Option("--run", help="Every row belongs to this run.")] = None,
) -> None:
    """Append a CSV's labels to their runs (every row checked first; repeats skipped)."""
    from ..store import import_labels

    stored = import_labels(csv, store, run_id=run)
    for run_id, n in stored.items():
        typer.echo(f"{run_id}: {n} label(s) stored")


@labels_app.command("agreement")
def agreement_command(
    run: Annotated[str, typer.Argument(help="Run id (or folder/URL).")],
    store: Annotated[str, typer.Option(metavar="DIR|URL", help=_STORE_HELP)] = "runs",
    rubric: Annotated[str | None, typer.Option(help="Rubric version id.")] = None,
) -> None:
    """The judge's agreement with the run's labels per rule: accuracy, F1(fail), kappa."""
    from ..grading import judge_agreement
    from ..store import load_run

    frame = judge_agreement(load_run(run, store), rubric_version_id=rubric)
    if frame.empty or int(frame["n_labelled"].fillna(0).sum()) == 0:
        typer.echo(
            f"no labels yet for run {run}: label verdicts in `evalkit view`, or "
            f"`evalkit labels queue {run} --csv FILE` then `evalkit labels import FILE`"
        )
        return
    columns = ["rule_id", "n_labelled", "n", "accuracy", "accuracy_low", "accuracy_high"]
    columns += ["f1_fail", "f1_fail_low", "f1_fail_high", "kappa", "kappa_low", "kappa_high"]
    shown = frame[columns]
    typer.echo(shown.to_string(index=False, float_format=lambda v: f"{v:.2f}"))


@labels_app.command("queue")
def queue_command(
    run: Annotated[str, typer.Argument(help="Run id (or folder/URL).")],
    store: Annotated[str, typer.Option(metavar="DIR|URL", help=_STORE_HELP)] = "runs",
    n: Annotated[
        int | None,
        typer.Option(
            "-n",
            "--n",
            help="Labels to draw [default: what plan_labels says a corrected interval of "
            "--halfwidth points still needs on every judged rule].",
            show_default=False,
        ),
    ] = None,
    halfwidth: Annotated[
        float,
        typer.Option(help="Half-width (points) the default -n plans for.", min=0.1),
    ] = 10.0,
    allocation: Annotated[
        str,
        typer.Option(
            metavar="proportional|neyman",
            help="How a rule's labels spread over the judge's verdicts: proportional (every "
            "verdict equally likely) or neyman (more where the labels so far, or --pilot's, "
            "show the judge errs more).",
        ),
    ] = "proportional",
    pilot: Annotated[
        str | None,
        typer.Option(
            metavar="RUN",
            help="An earlier run judged the same way, whose labels set the Neyman spreads.",
        ),
    ] = None,
    rule: Annotated[
        list[str] | None,
        typer.Option("--rule", metavar="RULE", help="Only this rule (repeatable)."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the draw.")] = 0,
    rubric: Annotated[str | None, typer.Option(help="Rubric version id.")] = None,
    csv: Annotated[
        Path | None,
        typer.Option("--csv", help="Write the queue as a labels CSV to fill in and import."),
    ] = None,
) -> None:
    """A seeded, stratified draw of judged verdicts to label, each with its inclusion
    probability (keep the column: judge-corrected comparisons weight labels by it). Pairs
    the run already has labels for are not drawn again."""
    from dataclasses import replace

    from .._util import atomic_write_bytes
    from ..grading import LabelOptions, label_queue, planned_n
    from ..store import load_run

    loaded = load_run(run, store)
    try:
        options = LabelOptions(
            rules=rule or None,
            seed=seed,
            allocation=allocation,  # type: ignore[arg-type]
            pilot=load_run(pilot, store) if pilot else None,
            halfwidth=halfwidth,
            rubric_version_id=rubric,
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc).replace("LabelOptions.", "--")) from None
    if n is None:
        n, plan = planned_n(loaded, options=options)
        needs = ", ".join(f"{r.rule_id} {r.still_needed}" for r in plan.itertuples())
        typer.echo(
            f"{n} label(s): what a judge-corrected interval of ±{halfwidth:g} points still "
            f"needs ({needs or 'no judged rule'}; plan_labels, counting the run's labels, "
            f"{allocation} allocation); -n sets another number",
            err=True,
        )
        if n == 0:
            typer.echo("no more labels needed")
            return
    queue = label_queue(loaded, options=replace(options, n=n))
    if csv is None:
        columns = ["conversation_id", "rule_id", "verdict", "inclusion_probability"]
        typer.echo(
            queue[columns].to_string(index=False, float_format=lambda v: f"{v:.3f}")
            if len(queue)
            else "no judged pass/fail verdicts to label"
        )
        return
    grades = loaded.grades(rubric)
    version = str(grades["rubric_version_id"].iloc[0]) if len(grades) else ""
    sheet = queue.rename(columns={"verdict": "judge_verdict"}).assign(
        run_id=loaded.run_id, label="", note="", rubric_version_id=version
    )
    columns = ["run_id", "conversation_id", "rule_id", "judge_verdict", "label", "note"]
    columns += ["rubric_version_id", "inclusion_probability"]
    csv.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(csv, sheet[columns].to_csv(index=False).encode("utf-8"))
    typer.echo(
        f"{len(sheet)} pair(s) to label written to {csv}; fill in `label` (pass, fail or na), "
        f"then: evalkit labels import {csv} --store {store}",
        err=True,
    )
