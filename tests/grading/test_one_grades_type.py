"""One grades type: every function that takes grades takes a ``Grades`` or its frame alike.

Acceptance of issue 21: ``compare_grades(grade_run(...), grade_run(...))`` works; ``len`` of a
``Grades`` counts conversations; a ``Grades`` and a ``Run`` render as HTML in Jupyter.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import matplotlib
import pandas as pd
import pytest

from evalkit.compare import compare_grades, plan_repeats
from evalkit.grading import Grades, as_grades_frame, grade_run, judge_agreement
from evalkit.refine import suggest_feedback
from evalkit.report import RunBrowser, transcript_html
from evalkit.report.plots import conversation_scores, persona_record_heatmap, score_distributions
from evalkit.stats import wilson_interval

from .helpers import FakeJudge
from .test_grade import CARD, judge_confirm_pass_on_c1, make_run

matplotlib.use("Agg")


def _graded(
    tmp_path: Path, name: str, statuses: dict[str, str] | None = None
) -> tuple[Any, Grades]:
    run = make_run(tmp_path / name, statuses)
    return run, grade_run(run, CARD, judge=FakeJudge(judge_confirm_pass_on_c1))


def test_compare_grades_takes_what_grade_run_returns(tmp_path: Path) -> None:
    _, prod = _graded(tmp_path, "prod")
    _, draft = _graded(tmp_path, "draft", {"c3": "error"})
    from_objects = compare_grades(prod, draft)
    from_frames = compare_grades(prod.frame, draft.frame)
    pd.testing.assert_frame_equal(
        from_objects.summary.drop(columns=["left_out_candidate"]),
        from_frames.summary.drop(columns=["left_out_candidate"]),
    )
    # a Grades knows what it left out; a bare frame cannot
    assert from_objects.summary["left_out_candidate"].iloc[0] == 1
    assert from_frames.summary["left_out_candidate"].iloc[0] == 0
    assert from_objects.summary["conversations_candidate"].iloc[0] == 2


def test_len_counts_conversations_and_the_repr_says_what_was_left_out(tmp_path: Path) -> None:
    _, grades = _graded(tmp_path, "r", {"c3": "dropped"})
    assert len(grades.frame) == 6  # 2 conversations x 3 rules
    assert len(grades) == 2
    assert grades.left_out == {"dropped": 1}
    text = repr(grades)
    assert "2 conversation(s) graded" in text
    assert "1 left out (dropped 1)" in text
    assert "judge:fake-judge" in text
    assert "check:agent_speaks_first" in text


def test_grades_html_shows_rule_pass_rates_with_wilson_intervals(tmp_path: Path) -> None:
    _, grades = _graded(tmp_path, "r", {"c3": "error"})
    page = grades._repr_html_()
    assert "<table" in page
    text = html.unescape(re.sub(r"<[^>]+>", " ", page))
    assert "2 conversation(s) graded, 1 left out (error 1)" in text
    assert "judge:fake-judge" in text
    # "confirm": c1 pass, c2 fail -> 50% with the Wilson interval of 1 of 2
    low, high = wilson_interval(1, 2)
    assert f"50% ({100 * low:.0f}–{100 * high:.0f})" in text
    summary = grades.summary.set_index("rule_id")
    assert summary.loc["confirm", "pass_rate_low"] == pytest.approx(low)
    for rule in ("first", "thanks", "confirm"):
        assert rule in text


def test_run_has_a_rich_display(tmp_path: Path) -> None:
    run, _ = _graded(tmp_path, "r", {"c3": "error"})
    page = run._repr_html_()
    text = html.unescape(re.sub(r"<[^>]+>", " ", page))
    assert "r1" in text
    assert "3 conversation(s): done 2, error 1" in text
    assert "demo/v1" in text  # the grading it holds
    assert "done 2, error 1" in repr(run)


def test_as_grades_frame_names_what_it_got() -> None:
    with pytest.raises(TypeError, match="got list"):
        as_grades_frame([1, 2])  # type: ignore[arg-type]


def _labels(grades: Grades) -> pd.DataFrame:
    f = grades.frame
    return f[["conversation_id", "rule_id", "verdict"]].assign(verdict="pass")


CALLS = {
    "judge_agreement": lambda g, run: judge_agreement(g, _labels(Grades.of(g))),
    "suggest_feedback": lambda g, run: suggest_feedback(g, turns=run.turns),
    "conversation_scores": lambda g, run: conversation_scores(g),
    "plan_repeats": lambda g, run: str(_pilot_plan(g)),
    "transcript_html": lambda g, run: transcript_html(run.transcript("c1"), g),
    "run_browser": lambda g, run: RunBrowser(
        run, g, comparison_run=run, comparison_grades=g
    ).to_html(limit=2),
    "persona_record_heatmap": lambda g, run: _axes_text(persona_record_heatmap(g, run)),
    "score_distributions": lambda g, run: _axes_text(score_distributions([g, g])),
}


def _pilot_plan(grades: Any) -> Any:
    frame = as_grades_frame(grades).assign(cell_id="one-cell")  # two repeats of one cell
    return plan_repeats(Grades.of(frame) if isinstance(grades, Grades) else frame)


def _axes_text(fig: Any) -> str:
    return "|".join(t.get_text() for ax in fig.axes for t in ax.texts) + "|".join(
        ax.get_title() for ax in fig.axes
    )


@pytest.mark.parametrize("name", sorted(CALLS))
def test_every_function_that_takes_grades_takes_both(tmp_path: Path, name: str) -> None:
    run, grades = _graded(tmp_path, "r", {"c3": "error"})
    from_object = CALLS[name](grades, run)
    from_frame = CALLS[name](grades.frame, run)
    if isinstance(from_object, pd.DataFrame | pd.Series):
        assert from_object.equals(from_frame)
    else:
        assert from_object == from_frame
