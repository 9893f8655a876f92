"""A hostile judge endpoint (real HTTP on loopback) never hangs grading or floods memory.

Rows 3 and 4 of README's "Hostile inputs" table: every call ends within its total deadline
(``JudgeOptions.timeout``) and ends as an ``error`` verdict with the reason (a deadline missed
while the endpoint answered nothing is not waited out again); an answer over
``JudgeOptions.max_response_bytes`` is abandoned unread.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from evalkit.api import RetryPolicy
from evalkit.grading import Judge, JudgeOptions

from ..waiting import wait_until
from .helpers import MODEL, task
from .hostile_judge import HostileJudge, Mode

DEADLINE = 1.5
#: how late the server may see a call end after its deadline: the event loop's wake-up and the
#: close reaching the server on a machine shared with other test workers
SLACK = 1.0


def judge_on(url: str, **changes: object) -> Judge:
    opts = JudgeOptions(
        timeout=DEADLINE,
        max_attempts=2,
        retry=RetryPolicy.no_wait(),
        **changes,  # type: ignore[arg-type]
    )
    return Judge(MODEL, url, options=opts)


@pytest.mark.parametrize("mode", ["trickle", "silent"])
def test_every_call_ends_within_its_deadline_then_an_error(mode: Mode) -> None:
    hostile = HostileJudge(mode)
    with hostile.serve() as url:
        judge = judge_on(url)
        started = time.monotonic()
        verdicts = judge.judge([task("c1", "r1", "r2"), task("c2", "r1")])
        elapsed = time.monotonic() - started
        calls = judge.stats.calls
        wait_until(
            lambda: len(hostile.finished()) >= calls, 5, what="the server to see every close"
        )
    assert [v.verdict for v in verdicts] == ["error"] * 3
    assert all(f"within the {DEADLINE:g} s deadline" in v.rationale for v in verdicts)
    # the first deadline, missed with nothing answered, already says the endpoint is down:
    # no retry waits out a second one (max_attempts=2 would allow it)
    assert all("after 1 attempt(s)" in v.rationale for v in verdicts)
    finished = hostile.finished()
    assert len(finished) == calls == 2  # c1 and c2, side by side, once each
    for call in finished:
        assert call.seconds <= DEADLINE + SLACK, [c.seconds for c in finished]
    assert elapsed <= DEADLINE + 2 * SLACK
    if mode == "trickle":
        assert all(1 <= c.sent <= DEADLINE + 2 for c in finished)  # it really was trickling


@pytest.mark.parametrize("mode", ["huge", "huge_chunked"])
async def test_a_huge_answer_is_abandoned_after_the_limit(mode: Mode) -> None:
    hostile = HostileJudge(mode, size=50 * 1024 * 1024)
    with hostile.serve() as url:
        judge = judge_on(url, max_response_bytes=256 * 1024)
        verdicts = await judge.ajudge([task("c1", "r1")])
    assert verdicts[0].verdict == "error"
    assert "over the 262,144-byte limit" in verdicts[0].rationale
    if mode == "huge":
        assert "the answer is 52,428,800 bytes" in verdicts[0].rationale  # from Content-Length
    # abandoned: the server could not send more than the limit plus what sockets buffer
    assert all(c.sent < 16 * 1024 * 1024 for c in hostile.connections)


@pytest.mark.slow
def test_grading_75_conversations_against_a_50_mb_judge_keeps_memory_flat(
    tmp_path: Path,
) -> None:
    """Peak RSS (VmHWM) of a child process that grades 75 conversations with a judged
    scorecard while every answer is 50 MB (was 6.7 GB). The server runs in this process."""
    hostile = HostileJudge("huge_chunked", size=50 * 1024 * 1024)
    script = textwrap.dedent(
        """
        import json, re, sys
        import pandas as pd
        from evalkit.grading import Judge, Scorecard, grade_transcripts

        def peak_mb():
            # this process's own high-water mark (getrusage's ru_maxrss would carry the
            # forking test worker's peak over exec)
            status = open("/proc/self/status", encoding="ascii").read()
            return int(re.search(r"VmHWM:\\s+(\\d+) kB", status).group(1)) / 1024

        card = Scorecard.from_dict({"rubricVersionId": "hostile-judge", "rules": [
            {"ruleId": "polite", "title": "The agent is polite", "points": 60},
            {"ruleId": "confirms", "title": "The agent asks the caller to confirm", "points": 40,
             "check": {"type": "judge", "criterion": "A yes/no question about the slot."}},
        ]})
        turns = pd.DataFrame(
            [{"conversation_id": f"c{i:02d}", "index": k, "role": role, "text": text}
             for i in range(75)
             for k, (role, text) in enumerate(
                 [("agent", f"Assalam o alaikum, appointment {i} kal 5 baje hai. Theek hai?"),
                  ("caller", "Ji haan")], 1)])
        before = peak_mb()
        judge = Judge("m", sys.argv[1])  # the default options: 3 attempts, 1 MiB
        grades = grade_transcripts(turns, card, judge=judge)
        verdicts = grades.frame["verdict"].value_counts().to_dict()
        print(json.dumps({"before_mb": before, "peak_mb": peak_mb(), "verdicts": verdicts,
                          "calls": judge.stats.calls,
                          "reason": grades.frame["rationale"].iloc[0]}))
        """
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    with hostile.serve() as url:
        done = subprocess.run(
            [sys.executable, "-c", script, url],
            capture_output=True,
            text=True,
            timeout=240,
            env=env,
            cwd=tmp_path,
            check=False,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    print(result)  # the figure README quotes
    assert result["verdicts"] == {"error": 150}
    assert "over the 1,048,576-byte limit" in result["reason"]
    assert result["calls"] >= 75
    assert result["peak_mb"] < 300, result
