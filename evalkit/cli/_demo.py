"""`evalkit demo`: draft vs prod on the embedded emulator."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._app import app


@app.command("demo")
def demo_command(
    output_dir: Annotated[
        Path, typer.Option("--output-dir", "-o", help="Where runs and the report go.")
    ] = Path("evalkit-demo"),
    repeats: Annotated[int, typer.Option(min=1, help="Conversations per cell.")] = 3,
    seed: Annotated[int, typer.Option(help="Emulator seed (the demo is reproducible).")] = 7,
) -> None:
    """Draft vs prod on the embedded emulator, end to end, ending in an HTML report."""
    from ..demo import run_demo
    from ._outcome import RunReport

    result = run_demo(output_dir, repeats=repeats, seed=seed)
    for run in (result.prod, result.draft):
        typer.echo(RunReport.of(run.manifest, str(run.path)).sentence())
    typer.echo(f"report: {result.report.resolve()}")
