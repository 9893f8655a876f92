"""Inputs of the plots as plain frames: conversation scores from grades, runs by label, and
short labels for variable records."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from ..grading import GradesLike, as_grades_frame, conversation_points
from ..store import Run
from ._fonts import ArabicFont, plot_label

__all__ = ["RunsLike", "conversation_scores", "record_labels", "run_frames"]

#: One run, several runs, or conversations frames by label.
RunsLike = Run | Sequence[Run] | Mapping[str, Run | pd.DataFrame]


def conversation_scores(grades: GradesLike | pd.Series) -> pd.Series:
    """Score (0-100) per conversation id: awarded over applicable points (na/error left out).

    ``grades``: a :class:`~evalkit.grading.Grades` or grades frame; a Series is taken as scores
    already (indexed by conversation id). A conversation with no applicable rule scores NaN.
    """
    if isinstance(grades, pd.Series):
        return grades.astype("float64")
    points = conversation_points(as_grades_frame(grades))
    return points["score"].astype("float64").rename("score")


def _label_of(run: Run) -> str:
    target = run.manifest.get("target")
    return f"{run.run_id} ({target})" if target and str(target) != run.run_id else run.run_id


def run_frames(runs: RunsLike) -> dict[str, pd.DataFrame]:
    """Conversations frames by label from a run, a sequence of runs, or a mapping."""
    if isinstance(runs, Run):
        return {_label_of(runs): runs.conversations}
    if isinstance(runs, Mapping):
        return {str(k): v.conversations if isinstance(v, Run) else v for k, v in runs.items()}
    return {_label_of(run): run.conversations for run in runs}


def _short(value: Any, width: int = 18) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def record_labels(variables: pd.Series, font: ArabicFont | None) -> dict[str, str]:
    """A short, unique, drawable label per distinct variables JSON text (first seen order).

    The label is the record's first value (``"Ayesha Khan"``); Arabic-script values become
    ``"record 2"`` when no font can draw them; duplicates get ``" #2"``.
    """
    labels: dict[str, str] = {}
    seen: set[str] = set()
    for number, raw in enumerate(pd.unique(variables.astype(str)), start=1):
        try:
            record = json.loads(raw)
        except ValueError:
            record = raw
        first = next(iter(record.values()), "") if isinstance(record, dict) and record else record
        label = plot_label(_short(first), f"record {number}", font) or f"record {number}"
        if label in seen:
            label = f"{label} #{number}"
        seen.add(label)
        labels[str(raw)] = label
    return labels
