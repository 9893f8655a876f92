"""`evalkit runs`: the runs of a store, as a table that fits 100 columns (or JSON)."""

from __future__ import annotations

import contextlib
import json
from datetime import UTC, datetime
from typing import Annotated, Any, Final

import typer

from ._app import app

__all__ = ["format_runs"]

WIDTH: Final = 100


def _cell(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "-"
    text = str(value)
    return "-" if text in ("<NA>", "NaT", "nan", "None") else text


def _created(value: Any) -> str:
    """Minutes in UTC, from the manifest's ISO text (or a timestamp)."""
    text = _cell(value)
    if text == "-":
        return text
    with contextlib.suppress(ValueError):
        when = datetime.fromisoformat(text)
        text = (when.astimezone(UTC) if when.tzinfo else when).isoformat()
    return text[:16].replace("T", " ")


def format_runs(rows: list[dict[str, Any]], width: int = WIDTH) -> str:
    """A fixed-width table: run id, created, target, outcome, recorded/grid, counts by status.

    The run id column shrinks (keeping its end, where ids differ) so a line fits ``width``.
    """
    from ..store import STATUSES as _STATUS_COLUMNS  # the one list of statuses

    header = ("run", "created (UTC)", "target", "outcome", "recorded", *_STATUS_COLUMNS)
    body = [
        (
            _cell(row["run_id"]),
            _created(row["created_at"]),
            _cell(row["target"]),
            _cell(row["outcome"]),
            f"{_cell(row['n_conversations'])}/{_cell(row['grid_size'])}",
            *(_cell(row[s]) for s in _STATUS_COLUMNS),
        )
        for row in rows
    ]
    widths = [max(len(line[i]) for line in (header, *body)) for i in range(len(header))]
    widths[2] = min(widths[2], 14)
    others = sum(widths[1:]) + 2 * (len(widths) - 1)
    widths[0] = max(8, min(widths[0], width - others))

    def fit(text: str, size: int) -> str:
        return text if len(text) <= size else "…" + text[len(text) - size + 1 :]

    def line(cells: tuple[str, ...]) -> str:
        parts = [
            fit(c, w).rjust(w) if i >= 4 else fit(c, w).ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    return "\n".join(line(cells) for cells in (header, *body))


@app.command("runs")
def runs_command(
    store: Annotated[
        str,
        typer.Option(metavar="DIR|URL", help="Folder or URL (s3://bucket/prefix) holding runs."),
    ] = "runs",
    as_json: Annotated[
        bool, typer.Option("--json", help="Print every column as a JSON array, for scripts.")
    ] = False,
) -> None:
    """List the runs in a store: outcome (complete, partial, interrupted), counts, grid size."""
    if as_json:
        from ..store import list_runs

        records = json.loads(list_runs(store).to_json(orient="records", date_format="iso"))
        typer.echo(json.dumps(records, ensure_ascii=False, indent=2))
        return
    from ..store import run_rows  # the table reads manifests only and imports no pandas

    rows = run_rows(store)
    if not rows:
        typer.echo(f"no runs in {store}")
        return
    typer.echo(format_runs(rows))
