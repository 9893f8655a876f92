"""A static HTML overview of one or more runs: outcomes per run and transcripts side by side."""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from .._util import atomic_write_bytes
from ..store import STATUSES, Run

_STATUSES = STATUSES  # the one list of statuses, in evalkit.store

_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2rem auto;max-width:1200px;
color:#1d2330;padding:0 1rem}
h1{font-size:1.5rem}h2{font-size:1.15rem;margin-top:2rem}
table{border-collapse:collapse;margin:.5rem 0}
td,th{border:1px solid #d5d9e0;padding:.3rem .6rem;text-align:left;vertical-align:top}
th{background:#f3f5f8}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:1rem}
.conv{border:1px solid #d5d9e0;border-radius:6px;padding:.5rem .8rem;margin:.5rem 0}
.conv h3{font-size:.9rem;margin:.2rem 0 .5rem;color:#4a5468}
.t{margin:.25rem 0}.agent b{color:#1f5fbf}.caller b{color:#9a4d00}
.urdu{direction:rtl;unicode-bidi:plaintext}
.note{color:#4a5468;font-size:.9rem}
"""


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


def _transcript_html(run: Run, conversation_id: str) -> str:
    turns = run.transcript(conversation_id)
    conv = run.conversations.set_index("conversation_id").loc[conversation_id]
    lines = [
        f'<div class="t {html.escape(str(t.role))}"><b>{html.escape(str(t.role))}</b>: '
        f'<span class="urdu">{html.escape(str(t.text))}</span></div>'
        for t in turns.itertuples()
    ]
    head = (
        f"{html.escape(str(run.manifest.get('target', '')))} · {html.escape(str(conv['status']))}"
    )
    return f'<div class="conv"><h3>{head}</h3>{"".join(lines)}</div>'


def _examples(conversations: pd.DataFrame, shared: set[str], n: int) -> list[str]:
    """Up to ``n`` shared conversations, one per persona first (so the page shows variety)."""
    rows = conversations[conversations["conversation_id"].isin(shared)].sort_values(
        ["repeat", "cell_id"]
    )
    first = rows.drop_duplicates("persona_label")["conversation_id"].tolist()
    rest = [c for c in rows["conversation_id"] if c not in set(first)]
    return (first + rest)[:n]


def runs_overview_html(runs: Sequence[Run], title: str = "evalkit runs", examples: int = 3) -> str:
    """The overview page: an outcome table, then up to ``examples`` cells shown across runs."""
    parts = [f"<h1>{html.escape(title)}</h1>", "<h2>Outcomes</h2>"]
    parts.append(_outcome_table(runs).to_html(index=False, na_rep="–", border=0))
    if runs:
        shared = set(runs[0].conversations["conversation_id"])
        for run in runs[1:]:
            shared &= set(run.conversations["conversation_id"])
        parts.append("<h2>The same conversations, side by side</h2>")
        for cid in _examples(runs[0].conversations, shared, examples):
            row = runs[0].conversations.set_index("conversation_id").loc[cid]
            parts.append(
                f'<p class="note">persona <b>{html.escape(str(row["persona_label"]))}</b>, '
                f"variables <code>{html.escape(str(row['variables']))}</code></p>"
            )
            parts.append(
                '<div class="pair">' + "".join(_transcript_html(r, cid) for r in runs) + "</div>"
            )
    body = "\n".join(parts)
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{_CSS}</style></head><body>{body}</body></html>"
    )


def write_runs_overview(runs: Sequence[Run], path: str | Path, title: str = "evalkit runs") -> Path:
    """Write :func:`runs_overview_html` to ``path`` atomically and return the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(target, runs_overview_html(runs, title).encode("utf-8"))
    return target
