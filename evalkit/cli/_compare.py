"""`evalkit compare`: is the candidate better or worse than the baseline, and how sure are we?"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any

import typer

from ._app import app
from ._errors import ExitCode
from ._grade import judge_from_options
from ._options import ScorecardOption, StoreOption
from ._pricing import PricingOption, load_pricing

#: ``--fail-on-regression`` with a regressed verdict exits with this code.
REGRESSION_EXIT = int(ExitCode.ERROR)


def _num(value: Any, spec: str) -> str:
    return "-" if value is None or not math.isfinite(float(value)) else format(value, spec)


def _pct(value: Any) -> str:
    text = _num(None if value is None else 100 * value, ".0f")
    return text if text == "-" else text + "%"


def comparison_text(comparison: Any) -> str:
    """The verdict first, then the per-rule table (pass rates, difference with interval)."""
    printed = str(comparison).splitlines()
    rest = [line for line in printed[1:] if line.startswith("  warning: ")]
    head_lines = 4 if "look" in comparison.summary.columns else 3  # a sequential look's line
    lines = [*printed[:head_lines], *rest, ""]
    head = f"{'rule':<26} {'baseline':>9} {'candidate':>9} {'difference [interval]':>24}  direction"
    lines.append(head)
    for r in comparison.by_rule.to_dict("records"):
        interval = (
            f"{_num(r['difference'], '+.1f')} [{_num(r['difference_low'], '+.1f')}, "
            f"{_num(r['difference_high'], '+.1f')}]"
        )
        base = _pct(r["pass_rate_baseline"])
        cand = _pct(r["pass_rate_candidate"])
        lines.append(
            f"{str(r['rule_id'])[:26]:<26} {base:>9} {cand:>9} {interval:>24}  "
            f"{str(r['direction']).replace('_', ' ')}"
        )
    if len(comparison.by_rule):
        adjustment = comparison.by_rule["adjustment"].iloc[0]
        lines.append(f"(per-rule intervals are {adjustment}-adjusted for the number of rules)")
    return "\n".join(lines)


def _latency(baseline: str, candidate: str, store: str) -> tuple[dict[str, Any] | None, str]:
    """Agent latency beside the score: the comparison's dict and a line (or why there is
    none: runs recorded before turn timing)."""
    from ..compare import LatencyUnavailableError, compare_latency
    from ..store import load_run

    try:
        result = compare_latency(load_run(baseline, store=store), load_run(candidate, store=store))
    except LatencyUnavailableError as exc:
        return None, f"agent latency: not compared ({exc})"
    lines = [result.headline(), *(f"  warning: {w}" for w in result.warnings)]
    return result.to_dict(), "\n".join(lines)


@app.command("compare")
def compare_command(
    baseline: Annotated[
        str, typer.Argument(help="Baseline run id (e.g. prod).", metavar="BASELINE")
    ],
    candidate: Annotated[
        str, typer.Argument(help="Candidate run id (e.g. draft).", metavar="CANDIDATE")
    ],
    scorecard: ScorecardOption,
    store: StoreOption = "runs",
    min_effect: Annotated[
        float, typer.Option(help="Points below which a difference counts as none.", metavar="X")
    ] = 5.0,
    confidence: Annotated[float, typer.Option(help="Interval level.", metavar="LEVEL")] = 0.95,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Write the comparison's JSON to FILE (nothing is written unless asked).",
            metavar="FILE",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the JSON instead.")] = False,
    fail_on_regression: Annotated[
        bool, typer.Option("--fail-on-regression", help="Exit 1 when the verdict is regressed.")
    ] = False,
    fail_unless_non_inferior: Annotated[
        bool,
        typer.Option(
            "--fail-unless-non-inferior",
            help="Exit 1 unless the candidate is shown not worse than the baseline by more "
            "than --min-effect (one-sided bound; a regression and too little evidence both fail).",
        ),
    ] = False,
    judge_model: Annotated[
        str | None,
        typer.Option("--judge-model", help="Judge model for runs not graded yet.", metavar="MODEL"),
    ] = None,
    no_judge: Annotated[
        bool, typer.Option("--no-judge", help="Leave judged rules n/a when grading.")
    ] = False,
    sequential: Annotated[
        bool,
        typer.Option(
            "--sequential",
            help="A sequential look: with --assistant, run the grid in waves on prod and draft "
            "and stop at the first deciding look; without, look at the stored runs (their "
            "recorded plan, or the repeats both have).",
        ),
    ] = False,
    max_repeats: Annotated[
        int | None,
        typer.Option(
            "--max-repeats", min=1, metavar="N", help="With --sequential: waves at most [6]."
        ),
    ] = None,
    assistant: Annotated[
        str | None,
        typer.Option(
            "--assistant", "-a", metavar="ID", help="With --sequential: run the grid on it first."
        ),
    ] = None,
    personas: Annotated[
        Path | None,
        typer.Option(metavar="PATH", help="With --assistant: personas [default: the bundled]."),
    ] = None,
    variables: Annotated[
        Path | None, typer.Option(metavar="CSV", help="With --assistant: variable records.")
    ] = None,
    context: Annotated[
        list[str] | None, typer.Option(metavar="TEXT", help="With --assistant: a context.")
    ] = None,
    pricing: PricingOption = None,
) -> None:
    """Compare two stored runs under a scorecard (grades from cache); -o FILE writes its JSON.

    With --sequential --assistant ID the grid runs first, in waves, stopping early.
    Exit codes: 0 compared; 1 regressed with --fail-on-regression, not shown non-inferior with
    --fail-unless-non-inferior (or an error); 2 usage.
    """
    from .._util import atomic_write_bytes, json_default
    from ..compare import CompareOptions
    from ..flows import compare_runs
    from ..store import load_run

    if sequential:
        from ._sequential import SequentialRequest, sequential_comparison

        comparison = sequential_comparison(
            SequentialRequest(
                baseline,
                candidate,
                scorecard,
                store,
                judge_from_options(judge_model, no_judge),
                confidence,
                min_effect,
                max_repeats,
                assistant,
                personas,
                variables,
                tuple(context or ()),
                stop_when_non_inferior=fail_unless_non_inferior,
                pricing=load_pricing(pricing),
            )
        )
    elif assistant is not None or max_repeats is not None:
        raise typer.BadParameter(
            "--assistant and --max-repeats go with --sequential", param_hint="--sequential"
        )
    else:
        comparison = compare_runs(
            load_run(baseline, store=store),
            load_run(candidate, store=store),
            scorecard,
            judge=judge_from_options(judge_model, no_judge),
            options=CompareOptions(confidence=confidence, min_effect=min_effect),
        )
    latency, latency_line = _latency(baseline, candidate, store)
    payload = {
        **comparison.to_dict(),
        "baseline_run": baseline,
        "candidate_run": candidate,
        "latency": latency,
    }
    text = json.dumps(payload, indent=2, ensure_ascii=False, default=json_default)
    if output is not None:  # only when asked: never a file in the working folder by default
        atomic_write_bytes(output, (text + "\n").encode("utf-8"), durable=False)
    typer.echo(text if as_json else comparison_text(comparison) + "\n" + latency_line)
    if output is not None and not as_json:
        typer.echo(f"comparison written to {output}")
    if fail_on_regression and comparison.verdict == "regressed":
        raise typer.Exit(REGRESSION_EXIT)
    if fail_unless_non_inferior and not comparison.summary["non_inferior"].iloc[0]:
        typer.echo(
            f"not shown non-inferior: the candidate may be worse than the baseline by more "
            f"than {min_effect:g} points",
            err=True,
        )
        raise typer.Exit(REGRESSION_EXIT)
