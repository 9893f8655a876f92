"""The pages that span runs: two runs compared (the report's verdict card, forest plot and
transcripts side by side) and one assistant's history (the trend plot and its table)."""

from __future__ import annotations

import logging
from typing import Any

import pandas as pd
from markupsafe import Markup

from .._exceptions import EvalkitError
from .._util import render_html
from ..compare import Comparison, compare_grades
from ..flows import HistoryOptions, history, series_labels, what_changed
from ..report import (
    TranscriptOptions,
    rule_table,
    side_by_side_html,
    table_html,
    transcript_html,
)
from ._figures import captioned_figure
from ._pages import Pages
from ._paths import changes_path, conversation_path, run_path
from ._site import RunData

__all__ = ["changes_page", "compare_page", "flagged_runs", "history_page"]

logger = logging.getLogger("evalkit.view")

EXAMPLES = 3
_HISTORY_COLUMNS = [
    "run_id", "started_at", "target", "assistant_version", "conversations", "score", "score_low",
    "score_high", "verdict_vs_previous", "verdict_vs_last_good", "alarm", "alarm_z",
    "alarm_variance", "note",
]  # fmt: skip


def _problem(a: RunData, b: RunData) -> str | None:
    if a.grades.empty or b.grades.empty:
        ungraded = ", ".join(d.run_id for d in (a, b) if d.grades.empty)
        return f"Not graded yet: {ungraded}. Grade with `evalkit grade RUN SCORECARD`."
    if a.rubric != b.rubric:
        return (
            f"The runs were graded with different scorecards ({a.rubric} and {b.rubric}); "
            "grade both with the same one to compare them."
        )
    return None


def _pair(pages: Pages, a: RunData, b: RunData, cell: str) -> str:
    root = "../../"
    panes = {}
    for data in (a, b):
        conv = data.conversations
        ids = conv.index[conv["cell_id"] == cell]
        if not len(ids):
            panes[data.run_id] = render_html("note.html", text="No conversation of this cell here.")
            continue
        cid = str(ids[0])
        score = data.scores.get(cid)
        shown = f" · score {score:.0f}" if score is not None and not pd.isna(score) else ""
        title = f"{cid} · {conv.at[cid, 'persona_label']!s}{shown}"
        link = render_html(
            "link.html", href=f"{root}{conversation_path(data.run_id, cid)}", text=f"open {cid}"
        )
        panes[data.run_id] = link + transcript_html(
            data.turns_of(cid),
            data.grades_of(cid),
            TranscriptOptions(title=title, anchor=f"{data.run_id}-{cid}", rules=False),
        )
    return side_by_side_html(panes)


def _judged_rules(*runs: RunData) -> set[str]:
    """Rules some judge graded (not a deterministic check) in any of ``runs``."""
    judged: set[str] = set()
    for data in runs:
        g = data.grades
        judged |= set(g.loc[~g["grader"].astype(str).str.startswith("check:"), "rule_id"])
    return judged


def judge_trust(a: RunData, b: RunData) -> dict[str, str]:
    """Per rule of the comparison: the judge's accuracy on the hand labels of both runs
    (pooled agreements over pooled pairs, with a Wilson interval), for judged rules only."""
    from ..grading import AgreementOptions, judge_agreement
    from ..stats import wilson_interval

    agree: dict[str, int] = {}
    pairs: dict[str, int] = {}
    for data in (a, b):
        labels = data.labels()
        if labels.empty or data.grades.empty:
            continue
        frame = judge_agreement(data.grades, labels, options=AgreementOptions(n_resamples=10))
        rules = frame[frame["rule_id"] != "(all)"]
        for rule_id, n_agree, n in zip(
            rules["rule_id"].astype(str), rules["agree"], rules["n"], strict=True
        ):
            agree[rule_id] = agree.get(rule_id, 0) + int(n_agree)
            pairs[rule_id] = pairs.get(rule_id, 0) + int(n)
    judged = _judged_rules(a, b)
    words: dict[str, str] = {}
    for rule_id in judged:
        n = pairs.get(rule_id, 0)
        if not n:
            words[rule_id] = "judged; no labels yet"
            continue
        low, high = wilson_interval(agree[rule_id], n)
        words[rule_id] = f"{agree[rule_id] / n:.2f} [{low:.2f}, {high:.2f}] on {n} labels"
    return words


def compare_page(pages: Pages, baseline: str, candidate: str) -> str:
    """``baseline`` against ``candidate``: verdict card, forest plot, rules, examples."""
    from ..report.plots import figure_to_img_tag, rule_forest

    a, b = pages.site.run(baseline), pages.site.run(candidate)
    context: dict[str, Any] = {
        "title": f"{baseline} → {candidate}",
        "crumbs": [("../../index.html", "runs"), (None, f"compare {baseline} → {candidate}")],
        "baseline": baseline,
        "candidate": candidate,
        "baseline_href": f"../../{run_path(baseline)}",
        "candidate_href": f"../../{run_path(candidate)}",
        "rubric": a.rubric,
        "problem": _problem(a, b),
        **_latency(a, b),
    }
    if context["problem"] is None:
        comparison: Comparison = compare_grades(a.grades, b.grades, labels=(a.labels(), b.labels()))
        cells = comparison.by_cell.dropna(subset=["difference"])
        moved = cells.reindex(cells["difference"].abs().sort_values(ascending=False).index)
        labels = b.labels()
        context.update(
            # the verdict card without its inline stylesheet: the page links the same one
            card=render_html(
                "comparison.html", result=comparison, css=None, **comparison.html_context()
            ),
            forest=Markup(figure_to_img_tag(rule_forest(comparison))),
            by_rule=Markup(table_html(_rule_table(comparison, a, b))),
            pairs=[Markup(_pair(pages, a, b, str(c))) for c in moved["cell_id"][:EXAMPLES]],
            agreement=pages._agreement(b, labels),
        )
    return pages.render("view/compare.html", "../../", **context)


def _latency(a: RunData, b: RunData) -> dict[str, Any]:
    """Agent latency beside the score: the latency card and the distributions per side, or
    why there is none (runs recorded before turn timing)."""
    from ..compare import LatencyUnavailableError, compare_latency
    from ..report.plots import agent_latency, figure_to_img_tag

    try:
        result = compare_latency(a.run, b.run)
    except LatencyUnavailableError as exc:
        return {"latency_note": str(exc)}
    return {
        "latency_card": Markup(result._repr_html_()),
        "latency_plot": Markup(figure_to_img_tag(agent_latency([a.run, b.run]))),
    }


def _rule_table(comparison: Comparison, a: RunData, b: RunData) -> pd.DataFrame:
    """The comparison's rules in words (the report's :func:`rule_table`: pass rates in percent
    with intervals, the difference in points, the direction without underscores) with, beside
    each judged rule, the judge's measured accuracy."""
    table = rule_table(comparison)
    if table.empty:
        return table
    trust = judge_trust(a, b)
    table["judge accuracy on hand labels"] = [
        trust.get(str(r), "check (deterministic)") for r in table["rule"]
    ]
    return table


def history_page(pages: Pages, assistant_id: str) -> str:
    """One assistant's graded runs over time, one line per series: the plot of every series,
    a picker (links to each series' section), and per series its plot, table and runs."""
    from ..report.plots import score_trend

    context: dict[str, Any] = {
        "title": f"History of {assistant_id}",
        "crumbs": [("../index.html", "runs"), (None, f"history {assistant_id}")],
        "assistant": assistant_id,
        "problem": None,
    }
    frame = history(pages.site.root, options=HistoryOptions(assistant_id=assistant_id))
    if frame.empty:
        context["problem"] = f"No graded runs of assistant {assistant_id} in this store."
        return pages.render("view/history.html", "../", **context)
    labels = series_labels(frame)
    context["plot"] = captioned_figure(score_trend(frame, labels=labels))
    sections = []
    for series, rows in frame.groupby("series", sort=False):
        rows = rows.reset_index(drop=True)
        shown = rows[[c for c in _HISTORY_COLUMNS if c in rows.columns]]
        flagged = rows[rows["alarm"].notna()]
        sections.append(
            {
                "id": str(series),
                "label": labels[str(series)],
                "plot": captioned_figure(score_trend(rows, title=labels[str(series)])),
                "table": Markup(table_html(shown, max_rows=200)),
                "variance": _newest_variance(rows),
                "links": [(f"../{run_path(str(r))}", str(r)) for r in rows["run_id"]],
                "flagged": [
                    (f"../{changes_path(str(r['run_id']))}", str(r["run_id"]), str(r["alarm"]))
                    for r in flagged.to_dict("records")
                ],
            }
        )
    context["sections"] = sections
    return pages.render("view/history.html", "../", **context)


def _newest_variance(rows: pd.DataFrame) -> str | None:
    """The variance the newest compared run's alarm used, in words (None: nothing compared)."""
    used = rows["alarm_variance"].dropna()
    used = used[used != ""]
    return None if used.empty else str(used.iloc[-1])


def flagged_runs(pages: Pages, assistant_id: str) -> list[str]:
    """The runs of an assistant's history the nightly rule flagged (suspect or regressed)."""
    frame = history(pages.site.root, options=HistoryOptions(assistant_id=assistant_id))
    return [] if frame.empty else [str(r) for r in frame[frame["alarm"].notna()]["run_id"]]


def changes_page(pages: Pages, run_id: str) -> str:
    """What changed from a run's last-known-good run: one row per change (kind, path,
    before, after), prompt changes by hunk."""
    context: dict[str, Any] = {
        "title": f"What changed in {run_id}",
        "crumbs": [("../index.html", "runs"), (None, f"what changed in {run_id}")],
        "run_id": run_id,
        "run_href": f"../{run_path(run_id)}",
        "problem": None,
    }
    try:
        frame = what_changed(pages.site.root, run_id)
    except (EvalkitError, ValueError) as exc:
        context["problem"] = str(exc)
        return pages.render("view/changes.html", "../", **context)
    context["against"] = frame.attrs.get("against")
    context["against_href"] = f"../{run_path(str(context['against']))}"
    context["rows"] = frame.to_dict("records")
    return pages.render("view/changes.html", "../", **context)
