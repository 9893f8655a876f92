"""`evalkit run` and `evalkit runs`: run a grid, list the runs of a store."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ._app import app

if TYPE_CHECKING:
    from ..targets import Variant


# --------------------------------------------------------------------------- run, runs, snapshot


def _parse_shard(value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    try:
        index, count = (int(x) for x in value.split("/"))
    except ValueError:
        raise typer.BadParameter(
            f"--shard takes INDEX/COUNT (for example 0/4), got {value!r}"
        ) from None
    return index, count


@app.command("run")
def run_command(
    assistant: Annotated[
        str, typer.Option("--assistant", "-a", help="Assistant id to simulate against.")
    ],
    personas: Annotated[
        Path, typer.Option("--personas", "-p", help="A personas YAML file or folder.")
    ] = Path("personas"),
    variables: Annotated[
        Path | None,
        typer.Option(
            "--variables", help="CSV of variable records (one simulated contact per row)."
        ),
    ] = None,
    context: Annotated[
        list[str] | None, typer.Option("--context", help="A context the caller knows (repeatable).")
    ] = None,
    repeats: Annotated[int, typer.Option(min=1, help="Conversations per cell.")] = 1,
    target: Annotated[
        str, typer.Option(help="draft or prod (the base, with --variant).")
    ] = "draft",
    variant: Annotated[
        str | None, typer.Option(help="Run a named variant on a temporary clone (A/B tuning).")
    ] = None,
    instructions: Annotated[
        Path | None,
        typer.Option(help="With --variant: a file holding the variant's system prompt."),
    ] = None,
    patch: Annotated[
        Path | None, typer.Option(help="With --variant: a JSON merge patch over the base config.")
    ] = None,
    store: Annotated[Path, typer.Option(help="Folder holding runs.")] = Path("runs"),
    run_id: Annotated[str | None, typer.Option("--run-id", help="Resume or name a run.")] = None,
    concurrency: Annotated[int, typer.Option(min=1, help="Conversations at once.")] = 8,
    shard: Annotated[
        str | None, typer.Option(help="Run one shard of the grid: INDEX/COUNT.")
    ] = None,
    max_conversations: Annotated[
        int | None, typer.Option(help="Stop after starting this many.")
    ] = None,
    max_seconds: Annotated[float | None, typer.Option(help="Stop after this many seconds.")] = None,
) -> None:
    """Run a grid of simulated conversations and record it (resumable with --run-id)."""
    from ..grid import Grid
    from ..runner import Budget, run_grid
    from ..targets import Target

    if target not in ("draft", "prod"):
        raise typer.BadParameter("--target must be draft or prod", param_hint="--target")
    chosen: Target = target
    if variant is not None:
        chosen = _variant(variant, target, instructions, patch)
    elif instructions is not None or patch is not None:
        raise typer.BadParameter(
            "--instructions and --patch need --variant NAME", param_hint="--variant"
        )
    grid = Grid(
        personas,
        variables=variables,
        contexts=context or None,
        repeats=repeats,
        shard=_parse_shard(shard),
    )
    run = run_grid(
        grid,
        assistant,
        target=chosen,
        store=store,
        run_id=run_id,
        concurrency=concurrency,
        budget=Budget(max_conversations, max_seconds),
    )
    counts = run.conversations["status"].value_counts().to_dict()
    typer.echo(
        f"run {run.run_id}: {len(run.conversations)} conversation(s) recorded {counts} in {run.path}"
    )


def _variant(name: str, base: str, instructions: Path | None, patch: Path | None) -> Variant:
    import json

    from ..targets import Variant, merge_patch

    body: dict[str, object] = {}
    if patch is not None:
        try:
            loaded = json.loads(patch.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise typer.BadParameter(f"{patch}: {exc}", param_hint="--patch") from None
        if not isinstance(loaded, dict):
            raise typer.BadParameter(f"{patch} must hold a JSON object", param_hint="--patch")
        body = loaded
    if instructions is not None:
        text = instructions.read_text(encoding="utf-8")
        body = merge_patch(body, {"agent": {"instructions": text}})
    if not body:
        raise typer.BadParameter(
            "a variant needs --instructions or --patch", param_hint="--variant"
        )
    return Variant(name, body, "prod" if base == "prod" else "draft")


@app.command("runs")
def runs_command(
    store: Annotated[Path, typer.Option(help="Folder holding runs.")] = Path("runs"),
) -> None:
    """List the runs in a store."""
    from ..store import list_runs

    frame = list_runs(store)
    if frame.empty:
        typer.echo(f"no runs in {store}")
        return
    typer.echo(frame.to_string(index=False))
