"""``grade_run`` takes ``options=GradeOptions(...)`` as ``grade_transcripts`` does, and a given
options object is honoured or refused, never ignored (issue 21)."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pytest

from evalkit.grading import GradeOptions, grade_run

from .helpers import FakeJudge
from .test_grade import CARD, CachingJudge, judge_confirm_pass_on_c1, make_run


def test_judge_samples_from_options_are_used(tmp_path: Path) -> None:
    judge = FakeJudge(judge_confirm_pass_on_c1)
    grades = grade_run(make_run(tmp_path), CARD, judge=judge, options=GradeOptions(judge_samples=3))
    assert len(judge.calls) == 3 * 3  # three conversations, three samples each
    assert set(grades.frame["judge_samples"].dropna()) == {3}


def test_another_runs_id_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="is not the run's id 'r1'"):
        grade_run(make_run(tmp_path), CARD, judge=False, options=GradeOptions(run_id="other"))


class _RecordingJudge(CachingJudge):
    """A judge that notes the cache folder grading hands it."""

    handed: ClassVar[list[Path]] = []

    def with_cache_dir(self, path: Path) -> CachingJudge:
        _RecordingJudge.handed.append(path)
        return super().with_cache_dir(path)


def test_the_cache_folder_from_options_is_handed_to_the_judge(tmp_path: Path) -> None:
    _RecordingJudge.handed.clear()
    mine = tmp_path / "my-cache"
    judge = _RecordingJudge(judge_confirm_pass_on_c1)
    grade_run(
        make_run(tmp_path / "s"), CARD, judge=judge, options=GradeOptions(judge_cache_dir=mine)
    )
    assert _RecordingJudge.handed == [mine]
    grade_run(make_run(tmp_path / "t"), CARD, judge=judge, options=GradeOptions(reuse=False))
    assert _RecordingJudge.handed[-1] == tmp_path / "t" / ".judge-cache"  # the store's default
