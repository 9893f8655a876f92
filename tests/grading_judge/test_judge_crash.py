"""A grading process SIGKILLed during judge calls loses nothing and repeats nothing.

The judge's answers reach its on-disk cache one by one (atomic writes), so a re-grade after a
kill asks only for the verdicts that were not cached, and every cached one is read back whole.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ..loopback import serve_app
from ..waiting import wait_until
from .fake_llm import FakeLLM
from .helpers import MODEL, Endpoint, make_judge, task

ROOT = Path(__file__).resolve().parents[2]
TASKS = 40


def cached(cache: Path) -> list[Path]:
    return sorted(cache.glob("*/*.json"))


@pytest.mark.slow
def test_sigkill_during_judge_calls_loses_and_repeats_nothing(tmp_path: Path) -> None:
    cache = tmp_path / "judge-cache"
    fake = FakeLLM(delay=0.25)
    child_code = textwrap.dedent(
        f"""
        import sys
        from evalkit.grading import Judge, JudgeOptions
        from tests.grading_judge.helpers import task
        judge = Judge({MODEL!r}, sys.argv[1], options=JudgeOptions(concurrency=4),
                      cache_dir=sys.argv[2])
        judge.judge([task(f"c{{i:02d}}", "r1", "r2") for i in range({TASKS})])
        print("finished")
        """
    )
    with serve_app(fake.app()) as url:
        child = subprocess.Popen(
            [sys.executable, "-c", child_code, url + "/v1", str(cache)],
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            wait_until(lambda: len(cached(cache)) >= 8, 60, what="8 verdicts cached")
            child.send_signal(signal.SIGKILL)  # while 4 calls are in flight
            child.wait(10)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()
        assert child.returncode == -signal.SIGKILL
        entries = cached(cache)
        assert 8 <= len(entries) < 2 * TASKS  # killed part-way
        for entry in entries:  # every entry that exists is whole
            assert json.loads(entry.read_bytes())["verdict"] == "pass"
        calls_before = fake.calls

        judge = make_judge(Endpoint(fake, url + "/v1"), cache_dir=cache)
        verdicts = judge.judge([task(f"c{i:02d}", "r1", "r2") for i in range(TASKS)])
    assert [v.verdict for v in verdicts] == ["pass"] * (2 * TASKS)
    assert sum(v.cached for v in verdicts) == len(entries)  # nothing cached was lost
    tasks_left = len({v.conversation_id for v in verdicts if not v.cached})
    assert fake.calls - calls_before == tasks_left  # and nothing was asked twice
    assert len(cached(cache)) == 2 * TASKS
