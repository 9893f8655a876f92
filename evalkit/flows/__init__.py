"""End-to-end flows over the data-flow packages: run a grid on two targets, grade, compare;
a store's nightly trend (:func:`nightly_trend`).

The run -> grade -> compare pipeline (:func:`run_and_grade`, :func:`compare_graded`) is
written once here and used by :func:`draft_vs_prod`, the refine loop, tune and the
sequential comparison.
"""

from __future__ import annotations

from .._util import publish
from ._compare_runs import acompare_runs, compare_runs, record_look
from ._draft_vs_prod import DraftVsProd, DraftVsProdOptions, adraft_vs_prod, draft_vs_prod
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
from ._trend import NightlyTrend, nightly_trend

__all__ = [
    "ComparisonOutcome",
    "ComparisonRequest",
    "DraftVsProd",
    "DraftVsProdOptions",
    "GradedRun",
    "NightlyTrend",
    "PipelineOptions",
    "Regression",
    "RunSpec",
    "SequentialRun",
    "acompare_runs",
    "adraft_vs_prod",
    "arun_and_grade",
    "compare_graded",
    "compare_request",
    "compare_runs",
    "draft_vs_prod",
    "nightly_trend",
    "record_look",
    "run_and_grade",
    "sequential_record",
    "write_outputs",
]

publish(globals())
