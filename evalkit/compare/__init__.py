"""Draft vs prod with honest statistics: intervals, a paired comparison, a verdict that can
say "not sure yet", and planning before spending.

    comparison = compare_grades(prod_grades, draft_grades, options=CompareOptions(min_effect=5))
    comparison.verdict        # Verdict.REGRESSED, ...
    print(comparison)         # verdict first, difference with interval, n
    comparison.by_rule        # pass rates (Wilson) and Bonferroni-adjusted paired differences
    plan_repeats(pilot_grades, options=RepeatPlanOptions(effect=10, power=0.9))
    nightly_alarms({"mon": grades_mon, "tue": grades_tue, ...})   # the nightly rule, one row a night
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
from ._nightly import NIGHTLY_COLUMNS, NightlyAlarms, Nights, nightly_alarms
from ._options import CompareOptions
from ._options import check_levels as check_levels  # _SIBLING_API
from ._planning import RepeatPlan, RepeatPlanOptions, plan_repeats
from ._sequential import SequentialPlan, compare_sequential, first_repeats
from ._verdict import VERDICT_RULES, Verdict, decide

__all__ = [
    "NIGHTLY_COLUMNS",
    "VERDICT_RULES",
    "CompareOptions",
    "Comparison",
    "LatencyComparison",
    "LatencyOptions",
    "LatencyUnavailableError",
    "NightlyAlarms",
    "NightlyRule",
    "Nights",
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
    "nightly_alarms",
    "plan_repeats",
]

# What evalkit's other packages take from here and users need not: not public, not in the API
# snapshot (``x as x`` marks each as re-exported for the type checker).
from ._compare import grades_headline as grades_headline
from ._compare import side_score as side_score
from ._decision import Scenarios as Scenarios
from ._decision import decide_grid as decide_grid
from ._decision import errors_differ as errors_differ
from ._options import check_confidence as check_confidence
from ._options import check_min_effect as check_min_effect
from ._sides import REQUIRED_COLUMNS as REQUIRED_COLUMNS
from ._sides import Side as Side
from ._sides import unique_values as unique_values

_SIBLING_API = (
    "REQUIRED_COLUMNS",
    "Scenarios",
    "Side",
    "check_confidence",
    "check_levels",
    "check_min_effect",
    "decide_grid",
    "errors_differ",
    "grades_headline",
    "level_words",
    "side_score",
    "unique_values",
)

publish(globals())
