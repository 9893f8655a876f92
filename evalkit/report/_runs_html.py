"""A static HTML overview of one or more runs: outcomes per run and transcripts side by side."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from .._util import atomic_write_bytes, render_html
from ..store import STATUSES, Run
from ._transcript_html import html_page, table_html

_STATUSES = STATUSES  # the one list of statuses, in evalkit.store


def _outcome_table(runs: Sequence[Run]) -> pd.DataFrame:
    rows = []
    for run in runs:
        conv = run.conversations
        counts = conv["status"].value_counts()
        done = conv[conv["status"] == "done"]
        rows.append(
            {
                "run": run.run_id,
                "target": str(run.manifest.get("target", "")),
                "assistant version": run.manifest.get("assistant_version"),
                "conversations": len(conv),
                **{s: int(counts.get(s, 0)) for s in _STATUSES},
                "mean turns (done)": round(float(done["n_turns"].mean()), 1) if len(done) else None,
                "caller ended (done)": f"{(done['ended_by'] == 'caller').mean():.0%}"
                if len(done)
                else None,
            }
        )
    return pd.DataFrame(rows)


def _transcript(run: Run, conversation_id: str) -> dict[str, object]:
    conv = run.conversations.set_index("conversation_id").loc[conversation_id]
    return {
        "head": f"{run.manifest.get('target', '')} · {conv['status']}",
        "turns": [(str(t.role), str(t.text)) for t in run.transcript(conversation_id).itertuples()],
    }


def _examples(conversations: pd.DataFrame, shared: set[str], n: int) -> list[str]:
    """Up to ``n`` shared conversations, one per persona first (so the page shows variety)."""
    rows = conversations[conversations["conversation_id"].isin(shared)].sort_values(
        ["repeat", "cell_id"]
    )
    first = rows.drop_duplicates("persona_label")["conversation_id"].tolist()
    rest = [c for c in rows["conversation_id"] if c not in set(first)]
    return (first + rest)[:n]


def runs_overview_html(runs: Sequence[Run], title: str = "evalkit runs", examples: int = 3) -> str:
    """The overview page: an outcome table, then up to ``examples`` cells shown across runs
    (the template ``evalkit/templates/runs_overview.html``)."""
    cells = []
    if runs:
        shared = set(runs[0].conversations["conversation_id"])
        for run in runs[1:]:
            shared &= set(run.conversations["conversation_id"])
        for cid in _examples(runs[0].conversations, shared, examples):
            row = runs[0].conversations.set_index("conversation_id").loc[cid]
            cells.append(
                {
                    "persona": str(row["persona_label"]),
                    "variables": str(row["variables"]),
                    "panes": [_transcript(r, cid) for r in runs],
                }
            )
    body = render_html(
        "runs_overview.html",
        title=title,
        outcomes=table_html(_outcome_table(runs), max_rows=len(runs) or 1),
        cells=cells,
        compared=bool(runs),
    )
    return html_page(title, body)


def write_runs_overview(runs: Sequence[Run], path: str | Path, title: str = "evalkit runs") -> Path:
    """Write :func:`runs_overview_html` to ``path`` atomically and return the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(target, runs_overview_html(runs, title).encode("utf-8"))
    return target
