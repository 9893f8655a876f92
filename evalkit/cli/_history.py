"""`evalkit history`: a store's graded runs as series (each under its own heading), verdicts
against the night before and the last-known-good run, and the nightly alarm;
``--fail-on-regression`` exits 1 when a series' newest run is a confirmed regression."""

from __future__ import annotations

import json
import math
from typing import Annotated, Any, Final

import typer

from ._app import app
from ._errors import ExitCode

__all__ = ["format_changes", "format_history"]

REGRESSION_EXIT: Final = int(ExitCode.ERROR)
_ALARM: Final = {"suspect": "suspect", "regressed": "REGRESSED"}
_SHORT: Final = {
    "improved": "improved",
    "regressed": "REGRESSED",
    "no_difference": "same",
    "insufficient_evidence": "unsure",
}


def _num(value: Any, spec: str = ".1f") -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return format(value, spec)


def _table(rows: list[dict[str, Any]]) -> str:
    by_rule = any("rule_id" in row for row in rows)
    header = ["run", "started (UTC)", *(["rule"] if by_rule else []), "n", "score", "interval"]
    header += ["vs previous", "vs last good", "good", "alarm", "alarm z", "note"]
    body = []
    for row in rows:
        started = str(row.get("started_at") or "-")[:16].replace("T", " ")
        cells = [str(row["run_id"]), started, *([str(row.get("rule_id"))] if by_rule else [])]
        cells += [
            str(row.get("conversations", "-")),
            _num(row.get("score")),
            f"[{_num(row.get('score_low'))}, {_num(row.get('score_high'))}]",
            _SHORT.get(str(row.get("verdict_vs_previous")), "-"),
            _SHORT.get(str(row.get("verdict_vs_last_good")), "-"),
            "*" if row.get("is_last_good") else "",
            _ALARM.get(str(row.get("alarm")), ""),
            _num(row.get("alarm_z"), ".2f"),
            str(row.get("note") or ""),
        ]
        body.append(cells)
    widths = [max(len(line[i]) for line in (header, *body)) for i in range(len(header))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
        for line in (header, *body)
    )


def _variance_line(rows: list[dict[str, Any]]) -> str:
    """The variance the newest compared run's alarm used, in words."""
    used = [str(r["alarm_variance"]) for r in rows if r.get("alarm_variance")]
    return f"\nalarm variance (newest run): {used[-1]}" if used else ""


def format_history(rows: list[dict[str, Any]], labels: dict[str, str] | None = None) -> str:
    """Each series under its own heading, then a fixed-width table: run, started, [rule], n,
    score [low, high], verdicts, last good, alarm and its z, note; then the variance the
    newest run's alarm used."""
    by_series: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_series.setdefault(str(row.get("series")), []).append(row)
    words = labels or {}
    return "\n\n".join(
        f"series {series}: {words.get(series, series)} ({len({r['run_id'] for r in part})} "
        f"point(s))\n{_table(part)}{_variance_line(part)}"
        for series, part in by_series.items()
    )


@app.command("history")
def history_command(
    store: Annotated[
        str, typer.Option(metavar="DIR|URL", help="Folder or URL (s3://bucket/prefix) of runs.")
    ] = "runs",
    assistant: Annotated[
        str | None, typer.Option("--assistant", help="Only this assistant's runs.")
    ] = None,
    rubric: Annotated[
        str | None, typer.Option(help="Rubric version id (default: the newest run's).")
    ] = None,
    since: Annotated[
        str | None, typer.Option(help="Only runs started on/after (ISO date).")
    ] = None,
    target: Annotated[
        str | None, typer.Option(help="Only runs of this target (prod, draft...).")
    ] = None,
    by_rule: Annotated[bool, typer.Option("--by-rule", help="One row per run x rule.")] = False,
    min_effect: Annotated[float, typer.Option(help="Points that count as a difference.")] = 5.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the rows as JSON.")] = False,
    explain: Annotated[
        str | None,
        typer.Option(
            "--explain",
            metavar="RUN",
            help="What changed from RUN's last-known-good run (config, prompt hunks, grid, ...).",
        ),
    ] = None,
    against: Annotated[
        str | None,
        typer.Option(metavar="RUN", help="With --explain: diff against this run instead."),
    ] = None,
    fail_on_regression: Annotated[
        bool,
        typer.Option(
            "--fail-on-regression",
            help="Exit 1 when a series' newest run is a confirmed regression (alarm REGRESSED).",
        ),
    ] = False,
) -> None:
    """Score by run over time, one series per assistant, target, scorecard and grid, with
    intervals, verdicts and the nightly alarm; --explain RUN says what changed."""
    if explain is not None:
        _explain(store, explain, against, as_json)
        return
    from ..flows import HistoryOptions, history, latest_regression, series_labels

    options = HistoryOptions(
        assistant_id=assistant,
        rubric=rubric,
        since=since,
        target=target,
        by="rule" if by_rule else None,
        min_effect=min_effect,
    )
    frame = history(store, options=options)
    rows = json.loads(frame.to_json(orient="records", date_format="iso"))
    if as_json:
        typer.echo(json.dumps(rows, ensure_ascii=False, indent=2))
    elif not rows:
        typer.echo(
            _nothing_matched(
                store, {"assistant": assistant, "rubric": rubric, "target": target, "since": since}
            )
        )
        if fail_on_regression:  # a CI gate that checked nothing must not pass quietly
            raise typer.Exit(REGRESSION_EXIT)
    else:
        typer.echo(format_history(rows, series_labels(frame)))
    regression = latest_regression(frame)
    if fail_on_regression and regression is not None:
        what = f" (rule {regression['rule_id']})" if regression.get("rule_id") else ""
        typer.echo(
            f"regression: run {regression['run_id']}{what} scored "
            f"{_num(regression.get('score'))}, below last-known-good run "
            f"{regression['last_good_run']} by {_num(-regression['difference_vs_last_good'])} "
            "points",
            err=True,
        )
        raise typer.Exit(REGRESSION_EXIT)


def _nothing_matched(store: str, filters: dict[str, str | None]) -> str:
    """Why no run was listed: the store holds none graded, or none that match the filters
    (and what the store does hold, so a typo shows)."""
    from ..store import catalog

    given = {k: v for k, v in filters.items() if v is not None}
    runs = catalog(store)
    if runs.empty or not given:
        return f"no graded runs in {store}"
    held = {
        "assistant": sorted(set(runs["assistant_id"].dropna())),
        "target": sorted(set(runs["target"].dropna())),
        "rubric": sorted(
            {r for value in runs["rubrics"].dropna() for r in str(value).split(",") if r}
        ),
    }
    shown = "; ".join(f"{k}s: {', '.join(map(str, v)) or 'none'}" for k, v in held.items())
    wanted = ", ".join(f"--{k} {v}" for k, v in given.items())
    return f"no graded runs in {store} match {wanted} (the store's {len(runs)} run(s) have {shown})"


def format_changes(frame: Any, run_id: str) -> str:
    """What changed, one block per change: kind and path, then before and after."""
    against = frame.attrs.get("against", "?")
    if frame.empty:
        return (
            f"nothing changed from {against} to {run_id} (config, prompt, grid, scorecard, judge)"
        )
    lines = [f"what changed from {against} (before) to {run_id} (after): {len(frame)} change(s)"]
    for row in frame.to_dict("records"):
        lines.append(f"\n[{row['kind']}] {row['path']}")
        lines.append(f"  - {row['before'] if row['before'] is not None else '(absent)'}")
        lines.append(f"  + {row['after'] if row['after'] is not None else '(absent)'}")
    return "\n".join(lines)


def _explain(store: str, run_id: str, against: str | None, as_json: bool) -> None:
    from ..flows import what_changed

    frame = what_changed(store, run_id, against)
    if as_json:
        typer.echo(frame.to_json(orient="records", force_ascii=False, indent=2))
    else:
        typer.echo(format_changes(frame, run_id))
