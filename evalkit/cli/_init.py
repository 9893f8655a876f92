"""`evalkit init`: copy the bundled personas, scorecards, examples and notebooks into a project
to edit them there."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._app import app


@app.command("init")
def init_command(
    folder: Annotated[
        Path, typer.Argument(metavar="FOLDER", help="Where the copies go [default: here].")
    ] = Path("."),
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite files already there with the bundled ones.")
    ] = False,
) -> None:
    """Copy the bundled personas, scorecards, examples and notebooks into FOLDER to edit.

    Files already there are kept (unless --force). A file in the working folder is taken before
    the bundled one of the same name, so commands run there use the copies.
    """
    from ..data import BundledKind, bundled_names, copy_bundled

    kinds: tuple[BundledKind, ...] = ("personas", "scorecards", "examples", "notebooks")
    written = [p for p in copy_bundled(folder, kinds, overwrite=force) if p.name != "README.md"]
    counts = []
    kept = 0
    for kind in kinds:
        mine = sum(1 for p in written if p.relative_to(folder).parts[0] == kind)
        kept += len(bundled_names(kind)) - mine
        counts.append(f"{mine} {kind}")
    typer.echo(f"copied into {folder.resolve()}: {', '.join(counts)}")
    if kept:
        typer.echo(f"kept {kept} file(s) already there (--force overwrites them)")
    typer.echo(
        "edit them there; from that folder, evalkit takes them before the bundled ones, e.g.\n"
        "  evalkit run --assistant ID --personas personas --variables examples/contacts.csv\n"
        "  evalkit grade RUN --scorecard scorecards/appointment-reminder-ur.yaml"
    )
