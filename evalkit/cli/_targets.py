"""`evalkit snapshot` and `evalkit clones`: config snapshots and leftover clones."""

from __future__ import annotations

from typing import Annotated

import typer

from ._app import app


@app.command("snapshot")
def snapshot_command(
    assistant: Annotated[str, typer.Option("--assistant", "-a", help="Assistant id.")],
    store: Annotated[
        str,
        typer.Option(
            metavar="DIR|URL",
            help="Folder or URL of runs; snapshots go to the folder (a URL's: a local cache).",
        ),
    ] = "runs",
) -> None:
    """Record the assistant's current (draft) config, so that version can be run as prod later."""
    from ..api import Client
    from ..targets import ConfigSnapshot, SnapshotStore

    with Client() as client:
        found = next((a for a in client.list_assistants() if a.id == assistant), None)
    if found is None:
        raise typer.BadParameter(
            f"assistant {assistant} is not in this API key's project", param_hint="--assistant"
        )
    snap = ConfigSnapshot.from_assistant(found)
    path = SnapshotStore(store).save(snap)
    typer.echo(f"snapshot of {assistant} version {snap.version} in {path}")


@app.command("clones")
def clones_command(
    delete: Annotated[
        bool, typer.Option("--delete", help="Delete them (only evalkit's own clones).")
    ] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Include clones of runs that still look alive (their lease holds)."
        ),
    ] = False,
) -> None:
    """List (or delete) temporary clones whose run is gone (killed, or its lease expired).

    A clone's description names its run, host, process and a lease the run renews; clones of
    live runs (in this or another process or machine) are left alone unless --force.
    """
    from ..targets import clone_owner, find_clones
    from ._client import cli_client

    with cli_client() as client:
        clones = find_clones(client.list_assistants(), include_live=force)
        for clone in clones:
            owner = clone_owner(clone)
            whose = f"run {owner.run_id} on {owner.host} (pid {owner.pid})" if owner else "no owner"
            typer.echo(f"{clone.id}  {clone.name}  [{whose}]")
            if delete:
                client.delete_assistant(clone.id)
    typer.echo(f"{len(clones)} clone(s){' deleted' if delete and clones else ''}")
