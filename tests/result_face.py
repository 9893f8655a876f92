"""The checks every result type passes (DESIGN.md "Results and calling convention"), shared by
the tests that build one: a sentence, a DataFrame, a JSON-ready dict, template HTML, a short
repr, and no deprecation on the new spellings."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd

from evalkit._results import Result
from evalkit._util._html import stylesheet
from evalkit.compare import SequentialPlan
from evalkit.diagnose import WhyItFailed
from evalkit.flows import SequentialRun
from evalkit.flows._sequential import LOOK_COLUMNS


def assert_result_face(result: object) -> None:
    """``result`` has the one face; its typed attributes agree with its table."""
    assert isinstance(result, Result)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        headline = result.headline()
        summary = result.summary
        as_dict = result.to_dict()
        page = result._repr_html_()
    assert isinstance(headline, str)
    assert headline
    assert "\n" not in headline
    assert type(summary) is pd.DataFrame  # a plain DataFrame: nothing answers an old spelling
    json.dumps(as_dict, allow_nan=False)  # JSON-ready: no NaN, no numpy, no enums
    assert repr(result) == f"<{type(result).__name__}: {headline}>"
    assert stylesheet() in page  # the one stylesheet travels with it
    assert page.lstrip().startswith('<div class="ek ')  # drawn by a template of evalkit/templates
    for name in ("difference", "interval", "n"):
        value = getattr(result, name, None)
        if name == "interval" and value is not None:
            low, high = value
            assert math.isnan(low) or low <= high


def grades_frame(cells: int, fail_every: int, prefix: str) -> pd.DataFrame:
    """Two rules per cell, two repeats; ``rule-b`` fails in every ``fail_every``-th repeat."""
    rows = []
    for c in range(cells):
        for r in range(2):
            cid = f"{prefix}{c}-{r}"
            for rule, points in (("rule-a", 40.0), ("rule-b", 60.0)):
                failed = rule == "rule-b" and (c * 2 + r) % fail_every == 0
                rows.append((cid, f"cell{c}", rule, points, "fail" if failed else "pass", r))
    frame = pd.DataFrame(
        rows, columns=["conversation_id", "cell_id", "rule_id", "points", "verdict", "repeat"]
    )
    frame["points_awarded"] = np.where(frame["verdict"] == "pass", frame["points"], 0.0)
    frame["persona_label"] = "persona-" + (frame["cell_id"].str[-1])
    frame["title"] = frame["rule_id"].map({"rule-a": "<b>Greets</b>", "rule-b": "Confirms"})
    frame["grader"] = "check:test"
    frame["rubric_version_id"] = "test/v1"
    return frame


def sequential_run() -> SequentialRun:
    """One look that stopped for efficacy: 48 of 120 conversations spent."""
    looks = pd.DataFrame(
        [
            {
                **dict.fromkeys(LOOK_COLUMNS, 0.0),
                "look": 1,
                "conversations": 40,
                "difference": -9.0,
                "difference_low": -14.0,
                "difference_high": -4.0,
                "verdict": "regressed",
                "stop": True,
                "stopped_for": "efficacy",
            }
        ],
        columns=list(LOOK_COLUMNS),
    )
    return SequentialRun(SequentialPlan(), looks, max_conversations=120, spent=48, cancelled=8)


def empty_why() -> WhyItFailed:
    """Nothing moved, nothing flagged, the same lint on both sides."""
    return WhyItFailed(
        "prod",
        "draft",
        (),
        pd.DataFrame(
            columns=["rule_id", "cluster", "conversations_baseline", "conversations_candidate"]
        ),
        pd.DataFrame(columns=["rule_id", "cluster", "text"]),
        pd.DataFrame(columns=["rule_id", "cluster", "conversation_id", "side", "flag"]),
        pd.DataFrame(columns=["flag"]),
        None,
        pd.DataFrame(columns=["change"]),
    )
