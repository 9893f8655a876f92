"""End-to-end flows over the data-flow packages: run a grid on two targets, grade, compare;
a store's nightly trend."""

from __future__ import annotations

from .._util import publish
from ._draft_vs_prod import DraftVsProd, DraftVsProdOptions, adraft_vs_prod, draft_vs_prod
from ._notebook import (
    ComparisonOutcome,
    ComparisonRequest,
    Regression,
    compare_request,
    write_outputs,
)
from ._trend import NightlyTrend, nightly_trend

__all__ = [
    "ComparisonOutcome",
    "ComparisonRequest",
    "DraftVsProd",
    "DraftVsProdOptions",
    "NightlyTrend",
    "Regression",
    "adraft_vs_prod",
    "compare_request",
    "draft_vs_prod",
    "nightly_trend",
    "write_outputs",
]

publish(globals())
