"""`evalkit report`: run a parameterised notebook and write a static HTML report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ._app import app


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


_FLAGS = {"-p": False, "--parameter": False, "-r": True, "--raw": True}


def _parameters(args: list[str]) -> dict[str, Any]:
    """``-p NAME VALUE`` (JSON when it parses) and ``-r NAME VALUE`` (text), as papermill."""
    out: dict[str, Any] = {}
    rest = list(args)
    while rest:
        flag = rest.pop(0)
        if flag not in _FLAGS:
            raise typer.BadParameter(f"unexpected {flag!r}; parameters are -p NAME VALUE")
        if len(rest) < 2:
            raise typer.BadParameter(f"{flag} takes NAME VALUE")
        name, value = rest.pop(0), rest.pop(0)
        out[name] = value if _FLAGS[flag] else _value(value)
    return out


@app.command("report", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def report_command(
    ctx: typer.Context,
    notebook: Annotated[
        Path,
        typer.Argument(
            help="The notebook (.ipynb), or a bundled notebook by name (compare_draft_prod).",
            metavar="NOTEBOOK",
        ),
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The HTML report.", metavar="FILE")
    ] = Path("report.html"),
    timeout: Annotated[
        float, typer.Option(help="Seconds before the whole run is stopped.", metavar="S")
    ] = 1800.0,
) -> None:
    """Execute NOTEBOOK with papermill and render it as static HTML (also when it fails).

    Parameters: -p NAME VALUE (repeatable; VALUE is read as JSON when it parses, so 3 is a
    number and "x" a string; ids with leading zeros stay text) and -r NAME VALUE (always text).

    The notebook runs in this folder: relative paths in parameters (-p store runs) mean what
    they mean here. Unknown parameters are refused with the notebook's list. Exits with the
    notebook's status: 0 when every cell ran, 1 when a cell raised (its whole message is
    printed), 124 when the timeout struck.
    """
    from ..report import execute_notebook

    params = _parameters(list(ctx.args))
    cwd = Path.cwd()
    result = execute_notebook(
        notebook,
        params,
        html=output,
        output=output.with_suffix(".ipynb"),
        timeout=timeout,
        cwd=cwd,
    )
    where = result.html or "(no HTML: the notebook was not written)"
    if result.ok:
        typer.echo(f"report: {where} ({result.duration_s:.0f}s)")
        return
    typer.echo(f"evalkit: error: the notebook failed: {result.error}", err=True)
    typer.echo(f"the notebook ran in {cwd} (relative paths in parameters resolve there)", err=True)
    typer.echo(f"report (up to the failure): {where}", err=True)
    raise typer.Exit(result.exit_code)
