"""End-to-end flows over the data-flow packages: run a grid on two targets, grade, compare;
a store's history in series (:func:`history`) and nightly trend (:func:`nightly_trend`).

The run -> grade -> compare pipeline (:func:`run_and_grade`, :func:`compare_graded`) is
written once here and used by :func:`draft_vs_prod`, the refine loop, tune and the
sequential comparison.
"""

from __future__ import annotations

from .._util import publish
from ._bisect import BisectError, BisectOptions, BisectResult, abisect, bisect
from ._changes import CHANGE_COLUMNS, MissingSnapshotError, what_changed
from ._compare_runs import acompare_runs, compare_runs, record_look
from ._draft_vs_prod import DraftVsProd, DraftVsProdOptions, adraft_vs_prod, draft_vs_prod
from ._history import (
    HISTORY_COLUMNS,
    HistoryOptions,
    history,
    latest_regression,
    series_labels,
)
from ._judge_drift import JudgeDrift, JudgeDriftOptions, compare_judges
from ._looks import acompare_runs_sequential, compare_runs_sequential
from ._notebook import (
    ComparisonOutcome,
    ComparisonRequest,
    Regression,
    compare_request,
    write_outputs,
)
from ._pipeline import (
    GradedRun,
    PipelineOptions,
    RunSpec,
    arun_and_grade,
    compare_graded,
    run_and_grade,
)
from ._sequential import SequentialRun, sequential_record
from ._trend import TREND_SUMMARY_COLUMNS, NightlyTrend, nightly_trend

__all__ = [
    "CHANGE_COLUMNS",
    "HISTORY_COLUMNS",
    "TREND_SUMMARY_COLUMNS",
    "BisectError",
    "BisectOptions",
    "BisectResult",
    "ComparisonOutcome",
    "ComparisonRequest",
    "DraftVsProd",
    "DraftVsProdOptions",
    "GradedRun",
    "HistoryOptions",
    "JudgeDrift",
    "JudgeDriftOptions",
    "MissingSnapshotError",
    "NightlyTrend",
    "PipelineOptions",
    "Regression",
    "RunSpec",
    "SequentialRun",
    "abisect",
    "acompare_runs",
    "acompare_runs_sequential",
    "adraft_vs_prod",
    "arun_and_grade",
    "bisect",
    "compare_graded",
    "compare_judges",
    "compare_request",
    "compare_runs",
    "compare_runs_sequential",
    "draft_vs_prod",
    "history",
    "latest_regression",
    "nightly_trend",
    "record_look",
    "run_and_grade",
    "sequential_record",
    "series_labels",
    "what_changed",
    "write_outputs",
]

publish(globals())
