"""`evalkit personas list`: the personas a run would use, and where the bundled files are."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._app import app

personas_app = typer.Typer(
    name="personas", help="The caller personas.", no_args_is_help=True, rich_markup_mode=None
)
app.add_typer(personas_app)


@personas_app.command("list")
def list_command(
    personas: Annotated[
        Path | None,
        typer.Option(
            "--personas",
            "-p",
            metavar="PATH",
            help="A personas file or folder [default: ./personas, else the bundled ones].",
        ),
    ] = None,
) -> None:
    """Label, tags and description of each persona; the bundled folders' paths."""
    from ..data import contacts_path, resolve
    from ..grid import load_personas
    from ._options import SAMPLE_CONTACTS
    from ._run import default_personas

    source = personas or default_personas()
    found = load_personas(source)
    width = max((len(p.label) for p in found), default=0)
    for persona in found:
        about = " ".join((persona.description or "").split())
        tags = ",".join(persona.tags)
        line = f"{persona.label.ljust(width)}  [{tags}]  {about}"
        typer.echo(line if len(line) <= 100 else line[:99] + "…")
    typer.echo(f"{len(found)} persona(s) from {source}")
    folder = resolve(source, "personas")
    subfolders = sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []
    for sub in subfolders:
        files = [f for f in sub.iterdir() if f.suffix.lower() in (".yaml", ".yml")]
        if files:
            typer.echo(f"more in {sub.name}/: {len(files)} persona(s), --personas {sub.name}")
    typer.echo(f"sample contacts: --variables {SAMPLE_CONTACTS} (bundled: {contacts_path()})")
    typer.echo("to edit them, copy the bundled files into this folder: evalkit init")
