"""`evalkit sql QUERY`: DuckDB SQL over every run of a store (the Python :func:`evalkit.store.sql`)."""

from __future__ import annotations

from typing import Annotated

import typer

from ._app import app

_STORE_HELP = "Folder or URL (s3://bucket/prefix) of runs."


@app.command("sql")
def sql_command(
    query: Annotated[
        str, typer.Argument(help="DuckDB SQL over the views runs, conversations, turns, grades.")
    ],
    store: Annotated[str, typer.Option(metavar="DIR|URL", help=_STORE_HELP)] = "runs",
    as_json: Annotated[bool, typer.Option("--json", help="Print the rows as JSON lines.")] = False,
) -> None:
    """Run a SQL query over every run of the store and print the result as a table.

    A query that fails lists the views and their columns.
    """
    from ..store import sql

    frame = sql(query, store)
    if as_json:
        typer.echo(frame.to_json(orient="records", lines=True, date_format="iso").rstrip())
    elif frame.empty:
        typer.echo(f"no rows ({', '.join(map(str, frame.columns))})")
    else:
        typer.echo(frame.to_string(index=False))
