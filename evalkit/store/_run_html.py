"""A run's rich display in Jupyter: identity, target, conversations by status, gradings."""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from ._records import STATUSES

__all__ = ["run_html"]


def _grading_rows(manifest: Mapping[str, Any]) -> list[str]:
    grades = manifest.get("grades")
    if not isinstance(grades, Mapping):
        return []
    rows = []
    for rubric, summary in sorted(grades.items()):
        info = summary if isinstance(summary, Mapping) else {}
        score = info.get("mean_score")
        shown = f"{score:.1f}" if isinstance(score, int | float) else "no score"
        rows.append(
            f"<tr><td><code>{html.escape(str(rubric))}</code></td>"
            f"<td>{html.escape(str(info.get('conversations', '?')))}</td><td>{shown}</td></tr>"
        )
    return rows


def run_html(
    run_id: str, where: str, manifest: Mapping[str, Any], counts: Mapping[str, int]
) -> str:
    """The HTML of a run: what ran where, how many conversations ended how, what is graded."""
    esc = html.escape
    target = manifest.get("target") or "?"
    assistant = manifest.get("assistant_id") or "?"
    version = manifest.get("assistant_version")
    at = f" version {esc(str(version))}" if version is not None else ""
    statuses = ", ".join(f"{s} {counts.get(s, 0)}" for s in STATUSES if counts.get(s, 0))
    finished = manifest.get("finalized_at")
    state = f"finished {esc(str(finished))}" if finished else "not finalized (running or stopped)"
    cost = manifest.get("cost")
    spent = (
        esc(f"; cost {cost.get('currency') or ''} {cost['total']:,.2f}")
        if isinstance(cost, Mapping) and isinstance(cost.get("total"), int | float)
        else ""
    )
    gradings = _grading_rows(manifest)
    graded = (
        "<table><thead><tr><th>rubric</th><th>conversations scored</th><th>mean score</th>"
        f"</tr></thead><tbody>{''.join(gradings)}</tbody></table>"
        if gradings
        else "<p>not graded yet</p>"
    )
    return (
        f'<div class="evalkit-run"><p><b>Run</b> <code>{esc(run_id)}</code> at '
        f"<code>{esc(where)}</code>: target {esc(str(target))} of assistant "
        f"<code>{esc(str(assistant))}</code>{at}; started {esc(str(manifest.get('created_at')))}, "
        f"{state}</p><p>{counts.get('total', 0)} conversation(s): {esc(statuses or 'none')}{spent}</p>"
        f"{graded}</div>"
    )
