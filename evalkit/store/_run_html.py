"""A run's rich display in Jupyter: identity, target, conversations by status, gradings (the
template ``evalkit/templates/run_card.html``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._util import render_html, stylesheet
from ._records import STATUSES

__all__ = ["run_html"]


def _gradings(manifest: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    grades = manifest.get("grades")
    if not isinstance(grades, Mapping):
        return []
    rows = []
    for rubric, summary in sorted(grades.items()):
        info = summary if isinstance(summary, Mapping) else {}
        score = info.get("mean_score")
        shown = f"{score:.1f}" if isinstance(score, int | float) else "no score"
        rows.append((str(rubric), str(info.get("conversations", "?")), shown))
    return rows


def _spent(manifest: Mapping[str, Any]) -> str:
    """``cost USD 1.23`` when the run ran with a price table, else empty."""
    cost = manifest.get("cost")
    if isinstance(cost, Mapping) and isinstance(cost.get("total"), int | float):
        return f"cost {cost.get('currency') or ''} {cost['total']:,.2f}"
    return ""


def run_html(
    run_id: str, where: str, manifest: Mapping[str, Any], counts: Mapping[str, int]
) -> str:
    """The HTML of a run: what ran where, how many conversations ended how, what is graded."""
    version = manifest.get("assistant_version")
    finished = manifest.get("finalized_at")
    return render_html(
        "run_card.html",
        css=stylesheet(),
        run_id=run_id,
        where=where,
        target=str(manifest.get("target") or "?"),
        assistant=str(manifest.get("assistant_id") or "?"),
        version=None if version is None else str(version),
        started=str(manifest.get("created_at")),
        state=f"finished {finished}" if finished else "not finalized (running or stopped)",
        total=counts.get("total", 0),
        statuses=", ".join(f"{s} {counts.get(s, 0)}" for s in STATUSES if counts.get(s, 0)),
        gradings=_gradings(manifest),
        spent=_spent(manifest),
    )
