"""What the comparison notebooks call: one request in, runs + grades + comparison out, and the
side outputs a CI job keeps (``summary.json``, parquet tables)."""

from __future__ import annotations

import functools
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from .._exceptions import EvalkitError
from .._util import atomic_write_bytes, json_default
from ..compare import CompareOptions, Comparison, SequentialPlan
from ..data import contacts_path, personas_path
from ..grading import Grades, Scorecard, left_out_of
from ..grid import Grid, load_personas
from ..store import Run, load_run
from ._compare_runs import compare_runs
from ._draft_vs_prod import DraftVsProdOptions, draft_vs_prod
from ._looks import compare_runs_sequential
from ._sequential import SequentialRun, sequential_record

__all__ = [
    "ComparisonOutcome",
    "ComparisonRequest",
    "Regression",
    "compare_request",
    "write_outputs",
]

logger = logging.getLogger("evalkit.flows")


class Regression(EvalkitError):
    """The candidate regressed against the baseline (raised when asked to fail on it)."""


@dataclass(frozen=True)
class ComparisonRequest:
    """A notebook's parameters: compare two stored runs, or run the grid on prod and draft first.

    With ``assistant_id`` the grid (``personas`` folder, ``contacts`` CSV, ``context``,
    ``repeats``) runs on prod and on the draft against the service configured by
    ``EVALKIT_BASE_URL``/``EVALKIT_API_KEY`` and is stored in ``store`` as ``baseline_run`` and
    ``candidate_run``; without it those two runs are read from ``store``. Judged rules use the
    judge configured by ``EVALKIT_JUDGE_*`` unless the runs hold current grades already.
    ``sequential`` runs the grid in waves and stops at the first deciding look (up to
    ``repeats`` repeats); stored runs that recorded a sequential comparison are compared at
    the look they stopped at, with their plan. ``labels``: judged rules are judge-corrected
    with the hand labels stored in the runs when they hold any (PPI++, as
    ``compare_runs(labels="stored")``; a sequential look is not corrected); False compares the
    judge's verdicts alone.
    """

    store: str | os.PathLike[str]
    scorecard: str | os.PathLike[str]
    baseline_run: str = "prod"
    candidate_run: str = "draft"
    assistant_id: str | None = None
    personas: str | os.PathLike[str] | None = None
    contacts: str | os.PathLike[str] | None = None
    context: str | None = None
    repeats: int = 3
    min_effect: float = 5.0
    confidence: float = 0.95
    sequential: bool = False
    labels: bool = True


@dataclass(frozen=True)
class ComparisonOutcome:
    """The two runs, the scorecard and the comparison a notebook shows (and, for a
    sequential comparison, its looks)."""

    baseline: Run
    candidate: Run
    scorecard: Scorecard
    comparison: Comparison
    sequential: SequentialRun | None = None
    labels: bool = False  # the stored hand labels were offered to the comparison

    @functools.cached_property
    def grades(self) -> Grades:
        """Both sides' grades stacked (``run_id`` tells them apart)."""
        sides = (self.baseline_grades, self.candidate_grades)
        left_out: dict[str, int] = {}
        for side in sides:
            for status, n in side.left_out.items():
                left_out[status] = left_out.get(status, 0) + n
        frame = pd.concat([side.frame for side in sides], ignore_index=True)
        return Grades(frame, self.scorecard.rubric_version_id, left_out=left_out)

    @functools.cached_property
    def baseline_grades(self) -> Grades:
        """The baseline run's grades under the scorecard."""
        return self._grades_of(self.baseline)

    @functools.cached_property
    def candidate_grades(self) -> Grades:
        """The candidate run's grades under the scorecard."""
        return self._grades_of(self.candidate)

    def _grades_of(self, run: Run) -> Grades:
        rubric = self.scorecard.rubric_version_id
        return Grades(run.grades(rubric), rubric, left_out=left_out_of(run.conversations))

    @property
    def judge_note(self) -> str:
        """Who graded the judged rules, in words (empty when no rule was judged)."""
        graders = set(self.grades.graders)  # read once, cached
        judges = sorted(g for g in graders if "judge:" in g)
        if not judges:
            return ""
        if all(g.startswith("emulated-judge:") for g in judges):
            return (
                "Judged rules were graded by the emulator's judge (emulated): its verdicts come "
                "from the acts of the emulator's own dialogue engine, not from a language model."
            )
        models = ", ".join(g.split(":", 1)[1] for g in judges)
        return f"Judged rules were graded by the LLM judge ({models})."

    @property
    def correction_note(self) -> str:
        """Whether the verdict rests on judge-corrected rates, in words ("Verdicts are
        judge-corrected with 75 + 75 hand labels (...)"), or why it rests on the judge alone
        (empty when no rule was judged)."""
        if not any("judge:" in g for g in self.grades.graders):
            return ""
        row = self.comparison.summary.iloc[0]
        if str(row.get("judge_correction", "none")) == "ppi++":
            by_rule = self.comparison.by_rule
            rules = ", ".join(by_rule.loc[by_rule["judge_corrected"], "rule_id"].astype(str))
            return (
                f"Verdicts are judge-corrected with {int(row['labelled_baseline'])} + "
                f"{int(row['labelled_candidate'])} hand labels ({rules}): judged rules' pass "
                "rates, the scores and the difference are prediction-powered estimates "
                "(PPI++) from the judge's verdicts and the hand labels stored in the runs."
            )
        if self.sequential is not None:
            why = "a sequential comparison is not judge-corrected"
        elif not self.labels:
            why = "the hand labels stored in the runs were not used (labels off)"
        else:
            why = str(row.get("judge_correction_reason") or "no hand labels in the runs")
        return f"Judged rules rest on the judge's verdicts alone: {why}."

    def fail_on_regression(self) -> None:
        """Raise :class:`Regression` when the verdict is ``regressed`` (papermill then fails)."""
        if self.comparison.verdict == "regressed":
            raise Regression(f"the candidate regressed: {self.comparison}")

    def fail_unless_non_inferior(self) -> None:
        """Raise :class:`Regression` unless the candidate is shown not worse than the baseline
        by more than the minimum effect (the one-sided bound; CI's usual gate)."""
        if not bool(self.comparison.summary["non_inferior"].iloc[0]):
            raise Regression(f"the candidate is not shown non-inferior: {self.comparison}")


def compare_request(request: ComparisonRequest) -> ComparisonOutcome:
    """Do what ``request`` asks and return the runs and their comparison."""
    scorecard = Scorecard.load(request.scorecard)
    if request.assistant_id is not None:
        grid = Grid(
            load_personas(request.personas or personas_path()),
            variables=Path(request.contacts or contacts_path()),
            contexts=[request.context] if request.context else None,
            repeats=request.repeats,
        )
        result = draft_vs_prod(
            grid,
            request.assistant_id,
            scorecard,
            store=request.store,
            options=DraftVsProdOptions(
                baseline_run_id=request.baseline_run,
                candidate_run_id=request.candidate_run,
                min_effect=request.min_effect,
                confidence=request.confidence,
                sequential=SequentialPlan(
                    request.repeats, confidence=request.confidence, min_effect=request.min_effect
                )
                if request.sequential
                else None,
                labels="stored" if request.labels else None,
            ),
        )
        return ComparisonOutcome(
            result.baseline,
            result.candidate,
            scorecard,
            result.comparison,
            result.sequential,
            labels=request.labels,
        )
    baseline = load_run(request.baseline_run, store=request.store)
    candidate = load_run(request.candidate_run, store=request.store)
    record = sequential_record(candidate)
    if record is not None:
        comparison = compare_runs_sequential(baseline, candidate, scorecard)
        return ComparisonOutcome(baseline, candidate, scorecard, comparison, record)
    comparison = compare_runs(
        baseline,
        candidate,
        scorecard,
        options=CompareOptions(confidence=request.confidence, min_effect=request.min_effect),
        labels="stored" if request.labels else None,
    )
    return ComparisonOutcome(baseline, candidate, scorecard, comparison, labels=request.labels)


def write_outputs(outcome: ComparisonOutcome, output_dir: str | os.PathLike[str]) -> Path:
    """``summary.json`` (verdict, figures, runs) and parquet tables in ``output_dir``."""
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    summary: dict[str, Any] = {
        **outcome.comparison.to_dict(),
        "baseline_run": outcome.baseline.run_id,
        "candidate_run": outcome.candidate.run_id,
        "rubric_version_id": outcome.scorecard.rubric_version_id,
    }
    text = json.dumps(summary, indent=2, ensure_ascii=False, default=json_default)
    path = out / "summary.json"
    atomic_write_bytes(path, (text + "\n").encode("utf-8"), durable=False)
    tables = {
        "by_rule": outcome.comparison.by_rule,
        "by_persona": outcome.comparison.by_persona,
        "by_cell": outcome.comparison.by_cell,
        "grades": outcome.grades.frame,
    }
    for name, frame in tables.items():
        frame.to_parquet(out / f"{name}.parquet", index=False)
    logger.info("wrote %s and %d tables to %s", path.name, len(tables), out)
    return path
