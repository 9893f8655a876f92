"""`evalkit report`: run a parameterised notebook and write a static HTML report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ._app import app
from ._errors import fail


def _value(text: str) -> Any:
    """``-p`` values: JSON when they parse (numbers, true/false/null, quoted strings), else text.

    Ids such as ``0012`` stay text (``-r`` forces text for anything).
    """
    import json

    if text.isdigit() and text.startswith("0") and text != "0":
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def _pairs(values: list[str] | None, raw: bool, option: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    items = values or []
    if len(items) % 2:
        raise fail(f"{option} takes NAME VALUE pairs; got {len(items)} word(s)", code=_usage())
    for name, value in zip(items[::2], items[1::2], strict=True):
        out[name] = value if raw else _value(value)
    return out


def _usage() -> Any:
    from ._errors import ExitCode

    return ExitCode.USAGE


@app.command("report")
def report_command(
    notebook: Annotated[Path, typer.Argument(help="The notebook (.ipynb).", metavar="NOTEBOOK")],
    parameter: Annotated[
        list[str] | None,
        typer.Option(
            "--parameter",
            "-p",
            help="NAME VALUE (repeatable); the value is read as JSON when it parses.",
            metavar="NAME VALUE",
        ),
    ] = None,
    raw_parameter: Annotated[
        list[str] | None,
        typer.Option(
            "--raw", "-r", help="NAME VALUE, the value kept as text.", metavar="NAME VALUE"
        ),
    ] = None,
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The HTML report.", metavar="FILE")
    ] = Path("report.html"),
    timeout: Annotated[
        float, typer.Option(help="Seconds before the whole run is stopped.", metavar="S")
    ] = 1800.0,
) -> None:
    """Execute NOTEBOOK with papermill and render it as static HTML (also when it fails).

    Unknown parameters are refused with the notebook's list. Exits with the notebook's status:
    0 when every cell ran, 1 when a cell raised, 124 when the timeout struck.
    """
    from ..report import execute_notebook

    params = _pairs(parameter, False, "-p") | _pairs(raw_parameter, True, "-r")
    result = execute_notebook(
        notebook, params, html=output, output=output.with_suffix(".ipynb"), timeout=timeout
    )
    where = result.html or "(no HTML: the notebook was not written)"
    if result.ok:
        typer.echo(f"report: {where} ({result.duration_s:.0f}s)")
        return
    typer.echo(f"evalkit: error: the notebook failed: {result.error}", err=True)
    typer.echo(f"report (up to the failure): {where}", err=True)
    raise typer.Exit(result.exit_code)
