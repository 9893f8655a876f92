"""Draft vs prod with honest statistics: intervals, a paired comparison, a verdict that can
say "not sure yet", and planning before spending.

    comparison = compare_grades(prod_grades, draft_grades, min_effect=5)
    comparison.verdict        # Verdict.REGRESSED, ...
    print(comparison)         # verdict first, difference with interval, n
    comparison.by_rule        # pass rates (Wilson) and Bonferroni-adjusted paired differences
    plan_repeats(pilot_grades, effect=10, power=0.9)
    compare_latency(prod_run, draft_run)   # agent response time: p50/p95 with intervals
"""

from __future__ import annotations

from .._util import publish
from ._alarms import NightlyRule
from ._calibration import calibrate, calibrate_sequential
from ._compare import compare_grades, compare_runs, record_look
from ._comparison import Comparison
from ._generator import Design, GradeGenerator
from ._latency import compare_latency
from ._latency_result import LatencyComparison, LatencyUnavailableError
from ._options import CompareOptions
from ._planning import RepeatPlan, plan_repeats
from ._sequential import SequentialPlan, compare_sequential, first_repeats
from ._synthetic import VERDICT_CODES, SyntheticTruth, synthetic_grades
from ._verdict import VERDICT_RULES, Verdict, decide

__all__ = [
    "VERDICT_CODES",
    "VERDICT_RULES",
    "CompareOptions",
    "Comparison",
    "Design",
    "GradeGenerator",
    "LatencyComparison",
    "LatencyUnavailableError",
    "NightlyRule",
    "RepeatPlan",
    "SequentialPlan",
    "SyntheticTruth",
    "Verdict",
    "calibrate",
    "calibrate_sequential",
    "compare_grades",
    "compare_latency",
    "compare_runs",
    "compare_sequential",
    "decide",
    "first_repeats",
    "plan_repeats",
    "record_look",
    "synthetic_grades",
]

publish(globals())
