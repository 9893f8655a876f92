"""The ``evalkit`` command: a thin layer over the Python API.

typer's pretty tracebacks are told not to show local variables, so an API key held in a
local can never reach a terminal or a CI log.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ._version import __version__

if TYPE_CHECKING:
    from .targets import Variant

app = typer.Typer(
    name="evalkit",
    help="Simulated-conversation evaluation for real-time voice assistants.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    add_completion=False,
)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"evalkit {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_version_callback,
            is_eager=True,
            help="Show the version and exit.",
        ),
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Log progress to stderr.")
    ] = False,
) -> None:
    """evalkit: batches of simulated calls, scorecards, honest statistics, notebooks."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


def main() -> None:
    """Console-script entry point."""
    app()


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
    from .grid import Grid
    from .runner import Budget, run_grid
    from .targets import Target

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

    from .targets import Variant, merge_patch

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
    from .store import list_runs

    frame = list_runs(store)
    if frame.empty:
        typer.echo(f"no runs in {store}")
        return
    typer.echo(frame.to_string(index=False))


@app.command("snapshot")
def snapshot_command(
    assistant: Annotated[str, typer.Option("--assistant", "-a", help="Assistant id.")],
    store: Annotated[Path, typer.Option(help="Folder holding runs and snapshots.")] = Path("runs"),
) -> None:
    """Record the assistant's current (draft) config, so that version can be run as prod later."""
    from .api import Client
    from .snapshots import ConfigSnapshot, SnapshotStore

    with Client() as client:
        found = next((a for a in client.list_assistants() if a.id == assistant), None)
    if found is None:
        raise typer.BadParameter(
            f"assistant {assistant} is not in this API key's project", param_hint="--assistant"
        )
    snap = ConfigSnapshot.from_assistant(found)
    path = SnapshotStore(store).save(snap)
    typer.echo(f"snapshot of {assistant} version {snap.version} in {path}")


@app.command("demo")
def demo_command(
    output_dir: Annotated[
        Path, typer.Option("--output-dir", "-o", help="Where runs and the report go.")
    ] = Path("evalkit-demo"),
    repeats: Annotated[int, typer.Option(min=1, help="Conversations per cell.")] = 3,
    seed: Annotated[int, typer.Option(help="Emulator seed (the demo is reproducible).")] = 7,
) -> None:
    """Draft vs prod on the embedded emulator, end to end, ending in an HTML report."""
    from .demo import run_demo

    result = run_demo(output_dir, repeats=repeats, seed=seed)
    for run in (result.prod, result.draft):
        counts = run.conversations["status"].value_counts().to_dict()
        typer.echo(
            f"{run.manifest['target']:>5} v{run.manifest['assistant_version']}: {counts}  ({run.path})"
        )
    typer.echo(f"report: {result.report.resolve()}")


def _register_emulator() -> None:
    from .emulator._command import emulator

    app.command("emulator", help="Serve the local emulator of the service until stopped.")(emulator)


_register_emulator()


@app.command("clones")
def clones_command(
    delete: Annotated[
        bool, typer.Option("--delete", help="Delete them (only evalkit's own clones).")
    ] = False,
) -> None:
    """List (or delete) temporary clones left behind by runs that were killed."""
    from .api import Client
    from .targets import find_clones

    with Client() as client:
        clones = find_clones(client.list_assistants())
        for clone in clones:
            typer.echo(f"{clone.id}  {clone.name}")
            if delete:
                client.delete_assistant(clone.id)
    typer.echo(f"{len(clones)} clone(s){' deleted' if delete and clones else ''}")
