"""`evalkit lint ID|FILE`: a config's silent failures and ignored knobs, with the spec's reasons.

Exit 1 when a finding is an ``error`` (the call or the save fails); with ``--strict``, exit 1
on any finding. ``--json`` prints the findings as a JSON array.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ._app import app
from ._errors import ExitCode

__all__ = ["lint_command"]


@app.command("lint")
def lint_command(
    source: Annotated[
        str, typer.Argument(metavar="ID|FILE", help="An assistant id, or a config YAML/JSON file.")
    ],
    strict: Annotated[
        bool, typer.Option("--strict", help="Exit 1 on any finding, warnings and info too.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the findings as JSON.")] = False,
    variables: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="Variables records (CSV/JSON) a run would send: check the prompt's {{tokens}}.",
        ),
    ] = None,
) -> None:
    """Lint an assistant's config: every pitfall the spec describes, with its field path."""
    from ..diagnose import lint

    if Path(source).is_file() or source.endswith((".yaml", ".yml", ".json")):
        from ..data import resolve

        try:
            file = resolve(source, "examples")  # the bundled example by name: assistant.yaml
        except FileNotFoundError as exc:
            raise typer.BadParameter(f"{exc.strerror}: {source}", param_hint="ID|FILE") from None
        findings = lint(file, variables=variables)
    else:
        from ._client import cli_client

        with cli_client() as client:
            findings = lint(source, variables=variables, client=client)
    rows = findings.to_dict(orient="records")
    if as_json:
        typer.echo(json.dumps(rows, ensure_ascii=False, indent=2))
    elif not rows:
        typer.echo("no findings")
    else:
        for row in rows:
            typer.echo(f"{row['severity']:<7}  {row['rule_id']}  {row['path']}: {row['message']}")
            typer.echo(f"         spec: {row['reason']}")
        counts = findings["severity"].value_counts()
        typer.echo(
            ", ".join(f"{int(counts.get(s, 0))} {s}(s)" for s in ("error", "warning", "info"))
        )
    errors = bool((findings["severity"] == "error").any()) if rows else False
    if errors or (strict and rows):
        raise typer.Exit(int(ExitCode.ERROR))
