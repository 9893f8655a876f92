"""`evalkit refine`: one guarded refine build, or a refine loop with a held-out guard."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ._app import app

if TYPE_CHECKING:
    from ..refine import PollPolicy, RefineResult


def _feedback_text(
    feedback: str | None, feedback_file: Path | None, suggest_from: str | None, *, loop: bool
) -> str | None:
    """The feedback given (None: suggest from a run); exactly one source is allowed."""
    given = [x for x in (feedback, feedback_file, suggest_from) if x is not None]
    if len(given) != 1:
        raise typer.BadParameter(
            "give exactly one of --feedback, --feedback-file or --suggest-from",
            param_hint="--feedback",
        )
    if suggest_from is not None:
        if loop:
            raise typer.BadParameter(
                "with --rounds the loop suggests from its own rounds: use --feedback suggest",
                param_hint="--suggest-from",
            )
        return None
    if feedback_file is not None:
        try:
            return feedback_file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise typer.BadParameter(str(exc), param_hint="--feedback-file") from None
    return feedback


def _suggested(run_id: str, store: str, scorecard: Path | None) -> str:
    from ..grading import Grades, grade_run
    from ..refine import suggest_feedback
    from ..store import load_run

    run = load_run(run_id, store)
    if scorecard is not None:
        grades = grade_run(run, scorecard, judge=False)
    else:
        frame = run.grades()
        if frame.empty:
            raise typer.BadParameter(
                f"run {run_id} has no stored grades: pass --scorecard to grade it",
                param_hint="--suggest-from",
            )
        grades = Grades(frame, str(frame["rubric_version_id"].iloc[0]))
        turns = run.turns
        return suggest_feedback(grades, turns=turns)
    return suggest_feedback(grades)


def _echo_result(result: RefineResult) -> None:
    typer.echo(
        f"build {result.build_id}: version {result.before.version} -> {result.after.version} "
        f"({result.polls} polls, {result.waited_s:.0f} s)"
    )
    typer.echo(result.prompt_diff or "(the prompt did not change)")
    if result.overwritten:
        typer.echo("edits the build overwrote (put back with RefineResult.reapply(paths)):")
        for edit in result.overwritten:
            typer.echo(f"  {edit}")
    else:
        typer.echo("no other config path changed")


@app.command("refine")
def refine_command(
    assistant: Annotated[str, typer.Option("--assistant", "-a", help="A built assistant's id.")],
    feedback: Annotated[
        str | None,
        typer.Option(help="Owner feedback (<= 2000 characters); with --rounds, 'suggest'."),
    ] = None,
    feedback_file: Annotated[
        Path | None, typer.Option("--feedback-file", help="A file holding the owner feedback.")
    ] = None,
    suggest_from: Annotated[
        str | None,
        typer.Option("--suggest-from", help="Suggest feedback from a graded run (id in --store)."),
    ] = None,
    wait: Annotated[
        bool,
        typer.Option(help="Wait for a build already in flight instead of refusing."),
    ] = False,
    rounds: Annotated[
        int | None, typer.Option(min=1, help="Run a refine loop of N rounds over a grid.")
    ] = None,
    holdout: Annotated[
        float, typer.Option(min=0.01, max=0.99, help="Loop: share of cells held out.")
    ] = 0.3,
    store: Annotated[
        str,
        typer.Option(
            metavar="DIR|URL", help="Folder or URL (s3://bucket/prefix) holding runs and records."
        ),
    ] = "runs",
    scorecard: Annotated[
        Path | None, typer.Option(help="Scorecard YAML (the loop needs one).")
    ] = None,
    personas: Annotated[Path, typer.Option(help="Loop: personas YAML file or folder.")] = Path(
        "personas"
    ),
    variables: Annotated[Path | None, typer.Option(help="Loop: CSV of variable records.")] = None,
    context: Annotated[
        list[str] | None, typer.Option(metavar="TEXT", help="Loop: a caller context.")
    ] = None,
    repeats: Annotated[int, typer.Option(min=1, help="Loop: conversations per cell.")] = 3,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for each build.")] = 900.0,
    poll_interval: Annotated[
        float, typer.Option("--poll-interval", min=0.001, help="First seconds between polls.")
    ] = 5.0,
) -> None:
    """Refine a built assistant's prompt (E10) safely, or run a guarded refine loop."""
    from ..api import InvalidRequestError
    from ..refine import PollPolicy, RefineError

    poll = PollPolicy(
        interval=poll_interval, max_interval=max(30.0, poll_interval), timeout=timeout
    )
    text = _feedback_text(feedback, feedback_file, suggest_from, loop=rounds is not None)
    try:
        if rounds is None:
            _single(assistant, text, suggest_from, (store, scorecard), (wait, poll))
        else:
            if scorecard is None:
                raise typer.BadParameter("the loop needs --scorecard", param_hint="--scorecard")
            from ..grid import Grid
            from ..refine import RefineLoopOptions, RefineOptions, refine_loop

            grid = Grid(personas, variables=variables, contexts=context or None, repeats=repeats)
            options = RefineLoopOptions(
                rounds=rounds, holdout=holdout, refine=RefineOptions(poll=poll)
            )
            result = refine_loop(
                grid, assistant, scorecard, text or "", judge=False, store=store, options=options
            )
            typer.echo(result.rounds.drop(columns=["build_id"]).to_string(index=False))
            typer.echo(f"stopped: {result.stop_reason}")
    except (RefineError, InvalidRequestError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None


def _single(
    assistant: str,
    text: str | None,
    suggest_from: str | None,
    where: tuple[str, Path | None],
    how: tuple[bool, PollPolicy],
) -> None:
    from ..refine import RefineOptions, refine_and_wait

    store, scorecard = where
    wait, poll = how
    if text is None and suggest_from is not None:
        text = _suggested(suggest_from, store, scorecard)
        if not text:
            typer.echo(f"run {suggest_from} has no failing rules: nothing to suggest")
            return
        typer.echo(f"suggested feedback ({len(text)} characters):\n{text}\n")
    result = refine_and_wait(
        assistant,
        text or "",
        store=store,
        options=RefineOptions(poll=poll, wait_for_inflight=wait),
    )
    _echo_result(result)
