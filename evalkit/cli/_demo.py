"""`evalkit demo`: draft vs prod on the embedded emulator."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated

import typer

from ._app import app


class _LintInTheStory(logging.Filter):
    """The runner's lint findings, told as a line of the demo's story instead of a log record."""

    def filter(self, record: logging.LogRecord) -> bool:
        lint = getattr(record, "lint", None)
        if not isinstance(lint, dict):
            return True
        typer.echo(
            f"lint of the {lint['target']} (v{lint['version']}) before it runs: "
            f"{lint['findings']} (`evalkit lint` shows why)",
            err=True,
        )
        return False


@contextlib.contextmanager
def _lint_in_the_story() -> Iterator[None]:
    runner = logging.getLogger("evalkit.runner")
    told = _LintInTheStory()
    runner.addFilter(told)
    try:
        yield
    finally:
        runner.removeFilter(told)


@app.command("demo")
def demo_command(
    output_dir: Annotated[
        Path, typer.Option("--output-dir", "-o", help="Where runs and the report go.")
    ] = Path("evalkit-demo"),
    repeats: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Conversations per cell (at most, with --sequential). [default: 3; 6 with --sequential]",
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Emulator seed (the demo is reproducible).")] = 7,
    sequential: Annotated[
        bool,
        typer.Option(
            "--sequential",
            help="Run in waves of one repeat per cell and stop at the first deciding look.",
        ),
    ] = False,
    biased_judge: Annotated[
        bool,
        typer.Option(
            "--biased-judge",
            help="A lenient judge hides part of the regression; 60 queue labels a side restore it.",
        ),
    ] = False,
) -> None:
    """Draft vs prod on the embedded emulator, end to end, ending in an HTML report."""
    from ..demo import run_biased_judge_demo, run_demo
    from ._outcome import RunReport

    if biased_judge:
        typer.echo(
            "evalkit demo --biased-judge: the demo's draft vs prod graded by a lenient judge, "
            f"then corrected with hand labels from the label queue (the exact judge labels); "
            f"seed {seed}",
            err=True,
        )
        with _lint_in_the_story():
            story = run_biased_judge_demo(output_dir, repeats=repeats or 3, seed=seed)
        for line in story.lines():
            typer.echo(line)
        typer.echo(f"browse every run: evalkit view --store {output_dir / 'runs'}")
        return

    repeats = repeats or (6 if sequential else 3)
    per_cell = (
        f"up to {repeats} repeats per cell, stopping early"
        if sequential
        else (f"{repeats} repeat(s) per cell")
    )
    typer.echo(
        "evalkit demo: an Urdu clinic reminder on the embedded emulator; prod (v1) against a "
        f"draft (v2) that lost its Nastaliq and confirmation lines; {per_cell}; seed {seed} "
        "(the same --seed gives the same numbers)",
        err=True,
    )
    with _lint_in_the_story():
        demo = run_demo(output_dir, repeats=repeats, seed=seed, sequential=sequential)
    for run in (demo.result.baseline, demo.result.candidate):
        typer.echo(RunReport.of(run.manifest, str(run.path)).sentence())
    typer.echo(str(demo.comparison))
    if demo.result.sequential is not None:
        typer.echo(demo.result.sequential.headline())
    if not demo.notebook.ok:
        typer.echo(f"the report notebook failed: {demo.notebook.error}", err=True)
    typer.echo(f"report: {demo.report.resolve()}")
    typer.echo(f"browse every run: evalkit view --store {output_dir / 'runs'}")
