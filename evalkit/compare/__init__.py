"""Draft vs prod with honest statistics: intervals, a paired comparison, a verdict that can
say "not sure yet", and planning before spending.

    comparison = compare_grades(prod_grades, draft_grades, options=CompareOptions(min_effect=5))
    comparison.verdict        # Verdict.REGRESSED, ...
    print(comparison)         # verdict first, difference with interval, n
    comparison.by_rule        # pass rates (Wilson) and Bonferroni-adjusted paired differences
    plan_repeats(pilot_grades, options=RepeatPlanOptions(effect=10, power=0.9))
    compare_latency(prod_run, draft_run)   # agent response time: p50/p95 with intervals

Pure functions of grades and tables: nothing here reads or writes a store (comparing stored
runs is :func:`evalkit.compare_runs`, in :mod:`evalkit.flows`).
"""

from __future__ import annotations

from .._util import publish
from ._alarms import NightlyRule
from ._compare import compare_grades
from ._comparison import Comparison
from ._comparison import level_words as level_words  # _SIBLING_API
from ._latency import compare_latency, latency_quantiles
from ._latency_options import LatencyOptions
from ._latency_result import LatencyComparison, LatencyUnavailableError
from ._options import CompareOptions
from ._options import check_levels as check_levels  # _SIBLING_API
from ._planning import RepeatPlan, RepeatPlanOptions, plan_repeats
from ._sequential import SequentialPlan, compare_sequential, first_repeats
from ._verdict import VERDICT_RULES, Verdict, decide

__all__ = [
    "VERDICT_RULES",
    "CompareOptions",
    "Comparison",
    "LatencyComparison",
    "LatencyOptions",
    "LatencyUnavailableError",
    "NightlyRule",
    "RepeatPlan",
    "RepeatPlanOptions",
    "SequentialPlan",
    "Verdict",
    "compare_grades",
    "compare_latency",
    "compare_sequential",
    "decide",
    "first_repeats",
    "latency_quantiles",
    "plan_repeats",
]

#: Names sibling packages import from here that users need not (not public).
_SIBLING_API = ("check_levels", "level_words")

publish(globals())
