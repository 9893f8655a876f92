"""`evalkit view`: every run of a store in a local web page; `evalkit view bundle`: the same
pages as static files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._app import app

view_app = typer.Typer(
    name="view",
    help="Browse a store's runs in a local web page (or write them as a static site).",
    invoke_without_command=True,
    rich_markup_mode=None,
)
app.add_typer(view_app)

_STORE_HELP = "Folder or URL (s3://bucket/prefix) of runs."


@view_app.callback()
def view_command(
    ctx: typer.Context,
    store: Annotated[str, typer.Option(metavar="DIR|URL", help=_STORE_HELP)] = "runs",
    host: Annotated[
        str, typer.Option(help="Address to listen on (anything but loopback adds a token).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port (0: any free one).")] = 8788,
) -> None:
    """Serve the viewer until Ctrl-C: runs, conversations, transcripts, labels, audio."""
    if ctx.invoked_subcommand is not None:
        return
    if "://" not in store and not Path(store).is_dir():
        raise typer.BadParameter(
            f"no folder {store!r} (from {Path.cwd()}): the viewer would show no runs; "
            "pass the folder your runs were written to",
            param_hint="--store",
        )
    from ..view import ViewerOptions, serve_forever

    def announce(url: str) -> None:
        typer.echo(f"evalkit viewer: {url}  (Ctrl-C to stop)")

    serve_forever(ViewerOptions(store=store, host=host, port=port), announce)


@view_app.command("bundle")
def bundle_command(
    output: Annotated[Path, typer.Option("--output", "-o", help="Folder for the static site.")],
    store: Annotated[str, typer.Option(metavar="DIR|URL", help=_STORE_HELP)] = "runs",
    run: Annotated[
        list[str] | None, typer.Option("--run", metavar="RUN", help="Only this run (repeatable).")
    ] = None,
) -> None:
    """Write the viewer's pages as static files (open OUTPUT/index.html from disk)."""
    from ..view import write_bundle

    result = write_bundle(store, output, runs=run or None)
    typer.echo(
        f"{result.runs} run(s), {result.conversations} transcript(s), "
        f"{result.comparisons} comparison(s): {result.index.resolve().as_uri()}"
    )
