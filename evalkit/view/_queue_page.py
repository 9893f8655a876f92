"""The live viewer's "label next" mode: walk a run's label queue one pair at a time.

``/runs/<run>/queue.html?n=50&seed=0&allocation=neyman&known=12&i=0`` shows pair ``i`` of the
seeded queue (:func:`evalkit.grading.label_queue`), drawn with the labels stored when the walk
began (the first ``known`` stored label rows: counted, not drawn again, and read for a Neyman
allocation); without ``n`` the queue is as long as :func:`evalkit.grading.planned_n` says a
judge-corrected interval still needs, counting those labels. Every later link carries ``n``,
``seed``, ``allocation`` and ``known``, so the walk's draw, and so its inclusion
probabilities, stay fixed while labels are added. The page shows the rule, the judge's
verdict and reason, the transcript with the evidence turn highlighted, progress ("12 of
50"), and one button per verdict (keys ``p`` pass, ``f`` fail, ``n`` n/a, ``s`` skip). A label
is stored with the pair's inclusion probability and the page moves to the next pair.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pandas as pd
from markupsafe import Markup

from ..grading import ALLOCATIONS, LabelOptions, label_queue, planned_n
from ..report import TranscriptOptions, transcript_html
from ..store import LABEL_VALUES
from ._pages import Pages
from ._paths import seg

__all__ = ["queue_link", "queue_page"]

TRANSCRIPT_ANCHOR = "q-turn-"


def _int(query: Mapping[str, str], name: str, default: int, low: int) -> int:
    value = query.get(name)
    if value in (None, ""):
        return default
    try:
        number = int(str(value))
    except ValueError:
        raise ValueError(f"{name} must be a whole number, got {value!r}") from None
    if number < low:
        raise ValueError(f"{name} must be at least {low}, got {number}")
    return number


def queue_link(n: int, seed: int, i: int, allocation: str = "proportional", known: int = 0) -> str:
    """The queue page's query for pair ``i`` of a walk (module docstring)."""
    return f"queue.html?n={n}&seed={seed}&allocation={allocation}&known={known}&i={i}"


def _allocation(query: Mapping[str, str]) -> str:
    value = str(query.get("allocation") or "proportional")
    if value not in ALLOCATIONS:
        raise ValueError(f"allocation must be one of {', '.join(ALLOCATIONS)}, got {value!r}")
    return value


def _labels_before(run: Any, known: int) -> pd.DataFrame:
    """The latest label per pair among the first ``known`` stored label rows."""
    rows: pd.DataFrame = run.labels(latest=False).head(known)
    latest: pd.DataFrame = rows.drop_duplicates(["conversation_id", "rule_id"], keep="last")
    return latest


def queue_page(pages: Pages, run_id: str, query: Mapping[str, str]) -> str:
    """Pair ``i`` of the run's label queue (module docstring)."""
    seed = _int(query, "seed", 0, 0)
    i = _int(query, "i", 0, 0)
    allocation = _allocation(query)
    data = pages.site.run(run_id)
    known = _int(query, "known", len(data.run.labels(latest=False)), 0)
    labels = _labels_before(data.run, known)
    options = LabelOptions(seed=seed, allocation=allocation)  # type: ignore[arg-type]
    planned, judged = query.get("n") in (None, ""), bool(len(data.grades))
    if planned and judged:
        n, plan = planned_n(data.grades, labels, options=options)
        judged = not plan.empty  # no judged pass/fail verdict: nothing to plan for
    else:
        n = _int(query, "n", 0, 1)
    queue = (
        label_queue(data.grades, labels, options=replace(options, n=n))
        if len(data.grades) and n
        else None
    )
    total = 0 if queue is None else len(queue)
    context: dict[str, Any] = {
        "title": f"label next · {run_id}",
        "crumbs": [("../../index.html", "runs"), ("index.html", run_id), (None, "label next")],
        "run_id": run_id,
        "total": total,
        "position": i + 1,
        "done": queue is None or i >= total,
        "form_token": pages.form_token,
        "labeller": pages.labeller,
        "label_values": LABEL_VALUES,
        "n": n,
        "seed": seed,
        "allocation": allocation,
        "known": known,
        "planned": planned,
        "judged": judged,
    }
    if context["done"] or queue is None:
        return pages.render("view/queue.html", "../../", **context)
    item = queue.iloc[i]
    cid, rule = str(item["conversation_id"]), str(item["rule_id"])
    grade = data.grades_of(cid)
    grade = grade[grade["rule_id"].astype(str) == rule]
    row = grade.iloc[0]
    turn = row.get("evidence_turn")
    transcript = transcript_html(
        data.turns_of(cid), grade, TranscriptOptions(anchor=TRANSCRIPT_ANCHOR, rules=False)
    )
    context.update(
        cid=cid,
        cid_file=seg(cid),
        rule_id=rule,
        rule_title=str(row.get("title", rule)),
        verdict=str(item["verdict"]),
        rationale=str(row.get("rationale") or ""),
        evidence_turn=None if turn is None or pd.isna(turn) else int(turn),
        anchor=TRANSCRIPT_ANCHOR,
        probability=float(item["inclusion_probability"]),
        next_href=f"../../{queue_link(n, seed, i + 1, allocation, known)}",
        skip_href=queue_link(n, seed, i + 1, allocation, known),
        transcript=Markup(transcript),
    )
    return pages.render("view/queue.html", "../../", **context)
