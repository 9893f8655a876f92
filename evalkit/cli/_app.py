"""The ``evalkit`` command: a thin layer over the Python API.

typer's pretty tracebacks are told not to show local variables, so an API key held in a
local can never reach a terminal or a CI log.
"""

from __future__ import annotations

import logging
from typing import Annotated

import typer

from .._version import __version__

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
