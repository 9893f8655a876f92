"""Issue 33, item 5: a judge that stops answering (it trickles bytes) costs one deadline in all,
whatever the number of conversations: the calls in flight miss their deadline together, and
that deadline, missed with nothing answered, already says the endpoint is down, so the other
tasks fail fast without a call (real HTTP on loopback)."""

from __future__ import annotations

import pytest

from evalkit.api import RetryPolicy
from evalkit.grading import Judge, JudgeOptions

from ..waiting import wait_until
from .helpers import MODEL, task
from .hostile_judge import HostileJudge

DEADLINE = 1.0
CONCURRENCY = 4


def grade(url: str, n: int) -> tuple[Judge, list[str]]:
    options = JudgeOptions(
        timeout=DEADLINE,
        concurrency=CONCURRENCY,
        max_attempts=3,
        retry=RetryPolicy.no_wait(max_attempts=3),
    )
    judge = Judge(MODEL, url, options=options)
    verdicts = judge.judge([task(f"c{i}", "r1") for i in range(n)])
    assert {v.verdict for v in verdicts} == {"error"}
    return judge, [v.rationale for v in verdicts]


@pytest.mark.parametrize("n", [8, 40])
def test_a_trickling_judge_costs_a_few_calls_whatever_the_number_of_conversations(n: int) -> None:
    hostile = HostileJudge("trickle")
    with hostile.serve() as url:
        judge, rationales = grade(url, n)
        calls = judge.stats.calls
        wait_until(lambda: len(hostile.finished()) >= calls, 5, what="every call to end")
    # the first wave times out together and nobody calls again (no probe waits out a second
    # deadline), with 8 or 40 conversations alike (before, every task waited out its own)
    assert calls == CONCURRENCY, calls
    assert len(hostile.connections) == calls
    assert all(f"within the {DEADLINE:g} s deadline" in r for r in rationales)
    not_asked = [r for r in rationales if "was not asked" in r]
    assert len(not_asked) >= n - CONCURRENCY
    assert "grade again once it answers" in not_asked[0]
