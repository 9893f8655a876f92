"""Grading: scorecards, deterministic checks, the LLM judge, and stored grades."""

from __future__ import annotations

from .._util import publish
from ._agreement import judge_agreement
from ._check_models import CheckModel
from ._checks import CHECK_TYPES, CheckType
from ._errors import GradingError, ScorecardError
from ._grade import (
    GradeOptions,
    ScorecardLike,
    agrade_run,
    agrade_transcripts,
    grade_run,
    grade_transcripts,
    left_out_of,
)
from ._grades import Grades, GradesLike, as_grades_frame
from ._judge import Judge
from ._judge_config import JudgeNotConfigured, JudgeOptions, JudgeStats
from ._judge_types import (
    JUDGE_PROMPT_VERSION,
    JudgeBackend,
    JudgedRule,
    JudgeTask,
    JudgeVerdict,
)
from ._judging import JudgeArg
from ._label_options import ALLOCATIONS, LabelOptions
from ._label_plan import plan_labels
from ._label_queue import label_queue, planned_n
from ._score import conversation_points, score_from_points
from ._scorecard import Scorecard, ScorecardRule

__all__ = [
    "ALLOCATIONS",
    "CHECK_TYPES",
    "JUDGE_PROMPT_VERSION",
    "CheckModel",
    "CheckType",
    "GradeOptions",
    "Grades",
    "GradesLike",
    "GradingError",
    "Judge",
    "JudgeArg",
    "JudgeBackend",
    "JudgeNotConfigured",
    "JudgeOptions",
    "JudgeStats",
    "JudgeTask",
    "JudgeVerdict",
    "JudgedRule",
    "LabelOptions",
    "Scorecard",
    "ScorecardError",
    "ScorecardLike",
    "ScorecardRule",
    "agrade_run",
    "agrade_transcripts",
    "as_grades_frame",
    "conversation_points",
    "grade_run",
    "grade_transcripts",
    "judge_agreement",
    "label_queue",
    "left_out_of",
    "plan_labels",
    "planned_n",
    "score_from_points",
]

# Names the sibling packages use that users should not (not in ``__all__``): the judge
# correction a comparison applies to its two sides.
from ._correction import JudgeCorrection as JudgeCorrection
from ._correction import LabelsArg as LabelsArg
from ._correction import apply_labels as apply_labels

_SIBLING_API = ("JudgeCorrection", "LabelsArg", "apply_labels")

publish(globals())
