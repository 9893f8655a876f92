"""`evalkit grade` and `evalkit scorecard validate`: grade a stored run; check a scorecard."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ._app import app
from ._errors import EXIT_CODES_HELP, ExitCode, fail
from ._options import ScorecardOption, StoreOption

if TYPE_CHECKING:
    from ..grading import JudgeArg

scorecard_app = typer.Typer(
    name="scorecard",
    help="Check scorecards (the service's format plus evalkit's checks).",
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(scorecard_app)


@scorecard_app.command("validate")
def validate_command(
    file: Annotated[Path, typer.Argument(help="A scorecard YAML or JSON file.", metavar="FILE")],
) -> None:
    """List every problem of a scorecard (points, rule ids, checks) and exit 1 if it has any."""
    from ..grading import Scorecard, ScorecardError

    try:
        card = Scorecard.load(file)
    except ScorecardError as exc:
        typer.echo(f"{file}: {len(exc.problems)} problem(s)", err=True)
        for problem in exc.problems:
            typer.echo(f"  - {problem}", err=True)
        raise typer.Exit(int(ExitCode.ERROR)) from None
    except OSError as exc:
        raise fail(f"cannot read {file}: {exc.strerror or exc}") from None
    judged = len(card.judged_rules)
    typer.echo(
        f"{file}: valid ({card.rubric_version_id}: {len(card.rules)} rules, "
        f"{len(card.rules) - judged} deterministic, {judged} judged)"
    )


def judge_from_options(model: str | None, no_judge: bool) -> JudgeArg:
    """``--no-judge``: judged rules are left n/a; ``--judge-model``: that model at
    ``EVALKIT_JUDGE_BASE_URL``; otherwise the judge configured by ``EVALKIT_JUDGE_*``."""
    if no_judge:
        return False
    if model is None:
        return None
    from ..grading import Judge

    return Judge(model=model)


def _rate(value: float) -> str:
    return "-" if not math.isfinite(value) else f"{100 * value:.0f}%"


#: The verdicts ``evalkit grade --fail-on`` takes.
FAIL_ON_VERDICTS = ("fail", "na", "error")


def parse_verdicts(value: str | None) -> tuple[str, ...]:
    """``error,fail`` as verdicts; an unknown one is a usage error naming the known ones."""
    if value is None:
        return ()
    found = tuple(v.strip() for v in value.split(",") if v.strip())
    unknown = [v for v in found if v not in FAIL_ON_VERDICTS]
    if unknown or not found:
        raise typer.BadParameter(
            f"unknown verdict(s) {', '.join(unknown) or repr(value)}: choose from "
            f"{', '.join(FAIL_ON_VERDICTS)}",
            param_hint="--fail-on",
        )
    return found


@app.command("grade", epilog=EXIT_CODES_HELP)
def grade_command(
    run: Annotated[
        str, typer.Argument(help="A run id in --store, or a run folder.", metavar="RUN")
    ],
    scorecard: ScorecardOption,
    store: StoreOption = "runs",
    judge_model: Annotated[
        str | None,
        typer.Option(
            "--judge-model",
            help="Judge model at EVALKIT_JUDGE_BASE_URL (default: EVALKIT_JUDGE_MODEL).",
            metavar="MODEL",
        ),
    ] = None,
    judge_samples: Annotated[
        int, typer.Option(min=1, help="Ask the judge K times per rule (reports agreement).")
    ] = 1,
    no_judge: Annotated[
        bool, typer.Option("--no-judge", help="Leave judged rules n/a (deterministic only).")
    ] = False,
    fail_on: Annotated[
        str | None,
        typer.Option(
            "--fail-on",
            metavar="VERDICTS",
            help="Exit 5 when any grade has one of these verdicts, e.g. error (a judge that "
            "did not answer) or error,fail.",
        ),
    ] = None,
) -> None:
    """Grade a stored run's done conversations with a scorecard; print per-rule pass rates.

    The mean score names the rules it leaves out whole (no pass or fail, only errors, as when
    the judge does not answer): such a score is not the scorecard's.
    """
    from ..grading import GradeOptions, grade_run
    from ..store import load_run

    fail_verdicts = parse_verdicts(fail_on)
    loaded = load_run(run, store=store)
    grades = grade_run(
        loaded,
        scorecard,
        judge=judge_from_options(judge_model, no_judge),
        options=GradeOptions(judge_samples=judge_samples),
    )
    summary = grades.summary
    typer.echo(f"{'rule':<28} {'pass rate':>9} {'pass':>5} {'fail':>5} {'n/a':>5} {'error':>5}")
    for row in summary.to_dict("records"):
        typer.echo(
            f"{str(row['rule_id'])[:28]:<28} {_rate(float(row['pass_rate'])):>9} "
            f"{row['pass']:>5} {row['fail']:>5} {row['na']:>5} {row['error']:>5}"
        )
    typer.echo(
        f"run {loaded.run_id}: {len(grades.scores)} conversation(s) graded, "
        f"{grades.score_text}; grades in {grades.path}"
    )
    if judge_samples > 1:
        unstable = grades.judge_stability()
        flagged = unstable[unstable["unstable"]]["rule_id"].tolist()
        typer.echo(f"unstable judged rules (agreement < 80%): {', '.join(flagged) or 'none'}")
    counts = grades.frame["verdict"].value_counts()
    matched = [f"{int(counts[v])} {v}" for v in fail_verdicts if counts.get(v, 0)]
    if matched:
        typer.echo(f"--fail-on: the grades hold {', '.join(matched)}", err=True)
        raise typer.Exit(int(ExitCode.FAIL_ON))
