"""``assert_no_regression`` on real nightly series: stores of graded nights (the series
tests' own generator, ``tests/stores/series_store.py``) read by ``history()``, so the check
reads the nightly alarm rule exactly as ``evalkit history --fail-on-regression`` does.

A steady series passes; a lasting 30-point drop (two nights) is a confirmed regression whose
message has the night's verdict line, the rule's statistic with its interval and why it
fired; one bad night is insufficient evidence (the next night decides), as is a first night
with nothing to compare with, and that becomes a failure, an xfail or a skip as asked.
"""

from __future__ import annotations

import contextvars
import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import pytest

from evalkit.flows import HistoryOptions, history, latest_regression
from evalkit.testing import (
    AssertOptions,
    CheckFailed,
    InsufficientEvidence,
    InsufficientMode,
    assert_no_regression,
)

from ..stores.series_store import write_night

STEADY = 8


def _series(root: Path, drops: Sequence[float]) -> pd.DataFrame:
    for night, drop in enumerate(drops):
        write_night(root, f"draft-{night:02d}", night=night, drop=drop)
    return history(root, options=HistoryOptions(assistant_id="asst_1", target="draft"))


def test_a_steady_series_passes(tmp_path: Path) -> None:
    frame = _series(tmp_path, [0.0] * STEADY)
    check = assert_no_regression(frame)
    assert check.outcome == "passed"
    assert check.n == STEADY
    newest = frame.iloc[-1]
    assert newest["alarm"] is None
    assert isinstance(newest["last_good_run"], str)
    # the numbers are the rule's statistic for the newest night, its interval around it
    low, high = check.interval
    assert low < check.difference < high
    assert check.difference == pytest.approx(newest["alarm_difference"])
    assert "against the last-known-good draft-06" in check.evidence


def test_a_lasting_drop_fails_with_the_verdict_line_the_interval_and_why(tmp_path: Path) -> None:
    frame = _series(tmp_path, [0.0] * STEADY + [30.0, 30.0])
    assert latest_regression(frame) is not None  # what `evalkit history` fails on
    with pytest.raises(CheckFailed) as caught:
        assert_no_regression(frame)
    message = str(caught.value)
    check = caught.value.check
    assert check is not None
    assert check.outcome == "failed"
    assert check.verdict == "regressed"
    assert message.startswith("the newest night is not a confirmed regression")
    newest = frame.iloc[-1]
    # the verdict line: the night, its score and interval, the last-known-good night
    assert f"night {newest['run_id']}" in message
    assert f"score {newest['score']:.1f} [{newest['score_low']:.1f}, " in message
    assert f"against the last-known-good {newest['last_good_run']} (regressed)" in message
    # the rule's statistic with its interval, wholly below zero, and why it fired
    found = re.search(r"95% CI ([-+][\d.]+) to ([-+][\d.]+)", message)
    assert found is not None, message
    assert float(found[1]) < float(found[2]) < 0
    assert check.interval[1] < 0
    assert str(newest["alarm_why"]) in message
    assert f"{STEADY + 2} nights" in message


@pytest.mark.parametrize(
    ("drops", "needed"),
    [
        ([0.0] * STEADY + [12.0], "one suspect night: the next night confirms or clears it"),
        ([0.0], "no last-known-good night to compare with yet: first of its series"),
    ],
    ids=["one-suspect-night", "first-night"],
)
@pytest.mark.parametrize("mode", ["fail", "xfail", "skip"])
def test_insufficient_evidence_is_never_a_pass(
    tmp_path: Path, drops: list[float], needed: str, mode: InsufficientMode
) -> None:
    frame = _series(tmp_path, drops)
    if len(drops) > 1:
        assert frame.iloc[-1]["alarm"] == "suspect"
    expected: type[BaseException] = {
        "fail": CheckFailed,
        "xfail": pytest.xfail.Exception,
        "skip": pytest.skip.Exception,
    }[mode]
    with pytest.raises(expected) as caught:
        assert_no_regression(frame, options=AssertOptions(insufficient=mode))
    assert "insufficient evidence (neither shown nor ruled out)" in str(caught.value)
    assert needed in str(caught.value)


def test_outside_a_session_insufficient_evidence_raises(tmp_path: Path) -> None:
    frame = _series(tmp_path, [0.0])
    # an empty context: no session's choice, what a notebook or a script sees
    with pytest.raises(InsufficientEvidence, match="first of its series"):
        contextvars.Context().run(assert_no_regression, frame)


def test_one_series_by_run_only(tmp_path: Path) -> None:
    frame = _series(tmp_path, [0.0, 0.0])
    write_night(tmp_path, "prod-00", night=0, target="prod")
    both = history(tmp_path, options=HistoryOptions(assistant_id="asst_1"))
    with pytest.raises(ValueError, match="holds 2 series"):
        assert_no_regression(both)
    by_rule = history(tmp_path, options=HistoryOptions(assistant_id="asst_1", by="rule"))
    with pytest.raises(ValueError, match="not by='rule'"):
        assert_no_regression(by_rule[by_rule["series"] == frame["series"].iloc[0]])
    with pytest.raises(TypeError, match="history_series"):
        assert_no_regression([1, 2])
