"""Grading: scorecards, deterministic checks, the LLM judge, and stored grades."""

from __future__ import annotations

from .._util import publish
from ._agreement import AgreementOptions, judge_agreement
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
from ._label_queue import GradesOrRun, label_queue, planned_n
from ._left_out import RuleLeftOut
from ._score import conversation_points, score_from_points
from ._scorecard import Scorecard, ScorecardRule
from ._stored import stored_scorecards

__all__ = [
    "ALLOCATIONS",
    "CHECK_TYPES",
    "JUDGE_PROMPT_VERSION",
    "AgreementOptions",
    "CheckModel",
    "CheckType",
    "GradeOptions",
    "Grades",
    "GradesLike",
    "GradesOrRun",
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
    "RuleLeftOut",
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
    "stored_scorecards",
]

# What evalkit's other packages take from here and users need not: not public, not in the API
# snapshot (``x as x`` marks each as re-exported for the type checker).
from ._agreement import judge_drift_table as judge_drift_table
from ._correction import JudgeCorrection as JudgeCorrection
from ._correction import LabelsArg as LabelsArg
from ._correction import apply_labels as apply_labels
from ._left_out import left_out_mask as left_out_mask
from ._left_out import left_out_words as left_out_words

_SIBLING_API = (
    "JudgeCorrection",
    "LabelsArg",
    "apply_labels",
    "judge_drift_table",
    "left_out_mask",
    "left_out_words",
)

publish(globals())
