"""The ``evalkit`` command: a thin layer over the Python API.

Help is plain text (no ``<bool>`` type column); every command's expected errors become one
short message (:class:`~evalkit.cli._errors.EvalkitGroup`); typer's pretty tracebacks are told
not to show local variables, so an API key held in a local never reaches a terminal or a log.
"""

from __future__ import annotations

import logging
from typing import Annotated

import typer

from .._version import __version__
from ._errors import EXIT_CODES_HELP, EvalkitGroup, debug_enabled, quiet_store_outage

app = typer.Typer(
    name="evalkit",
    cls=EvalkitGroup,
    help="Simulated-conversation evaluation for real-time voice assistants.",
    epilog=EXIT_CODES_HELP,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
    rich_markup_mode=None,
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
    debug: Annotated[
        bool,
        typer.Option(
            "--debug", help="Show the full traceback of an error (or set EVALKIT_DEBUG=1)."
        ),
    ] = False,
) -> None:
    """evalkit: batches of simulated calls, scorecards, honest statistics, notebooks."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if not debug_enabled(debug):
        for handler in logging.getLogger().handlers:
            handler.addFilter(quiet_store_outage)
