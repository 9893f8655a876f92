"""The pytest plugin, run in pytester sessions: insufficient evidence as fail, xfail or skip
(never a pass), each check's figures as JUnit XML properties, the Markdown summary, one
error for a session whose service cannot be reached, and the fixtures by name.

The grades are my own generator's (``SuiteGenerator``, one persona): a clear pass (no change,
600 conversations a side), a clear failure (a planted 40-point drop) and too little evidence
(six conversations a side); the first tests pin that the three are what they say.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pandas as pd
import pytest

from evalkit.testing import AssertOptions, CheckFailed, assert_not_worse
from tests.simulate._family_calibration import SuiteGenerator, suite_frames

pytest_plugins = ["pytester"]

#: name -> (seed, planted drop in points, cells, repeats a cell)
CASES = {"clear": (4, 0.0, 20, 30), "worse": (2, 40.0, 3, 20), "thin": (3, 0.0, 3, 2)}

SUITE = """
import pandas as pd
import pytest
from evalkit.testing import assert_not_worse

def frames(name):
    return pd.read_pickle(f"{name}-baseline.pkl"), pd.read_pickle(f"{name}-candidate.pkl")

@pytest.mark.parametrize("name", ["clear", "worse", "thin"])
def test_not_worse(name):
    assert_not_worse(*frames(name), margin=5.0)
"""


def frames(name: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    seed, drop, cells, repeats = CASES[name]
    gen = SuiteGenerator(parts=1, cells=cells, repeats=repeats)
    base, cand = gen.draw(1, seed=seed, drop=drop)
    grades = suite_frames(base, cand, gen.points)
    return grades.frame(0, "baseline"), grades.frame(0, "candidate")


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    for name in CASES:
        base, cand = frames(name)
        base.to_pickle(pytester.path / f"{name}-baseline.pkl")
        cand.to_pickle(pytester.path / f"{name}-candidate.pkl")
    pytester.makepyfile(test_suite=SUITE)
    return pytester


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "0", *args)


def test_the_three_cases_are_a_pass_a_failure_and_too_little_evidence() -> None:
    assert assert_not_worse(*frames("clear"), margin=5.0).outcome == "passed"
    with pytest.raises(CheckFailed):
        assert_not_worse(*frames("worse"), margin=5.0)
    # this session runs the plugin too: ask for a failure where pytest would xfail
    with pytest.raises(CheckFailed, match="insufficient evidence"):
        assert_not_worse(*frames("thin"), margin=5.0, options=AssertOptions(insufficient="fail"))


@pytest.mark.parametrize(
    ("mode", "outcomes"),
    [
        ("fail", {"passed": 1, "failed": 2}),
        ("xfail", {"passed": 1, "failed": 1, "xfailed": 1}),
        ("skip", {"passed": 1, "failed": 1, "skipped": 1}),
    ],
)
def test_insufficient_evidence_becomes_what_the_session_says(
    suite: pytest.Pytester, mode: str, outcomes: dict[str, int]
) -> None:
    result = run(suite, f"--evalkit-insufficient={mode}", "-rxs")
    result.assert_outcomes(**outcomes)
    if mode != "fail":  # the reason says what a decision would need
        result.stdout.fnmatch_lines(["*insufficient evidence (neither shown nor ruled out)*"])
        result.stdout.fnmatch_lines(["*conversations a side*"])


def test_a_wrong_mode_is_a_usage_error(suite: pytest.Pytester) -> None:
    result = run(suite, "--evalkit-insufficient=pass")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--evalkit-insufficient*must be one of fail, xfail, skip*"])


def test_each_check_is_in_the_junit_xml_and_the_markdown_summary(
    suite: pytest.Pytester, tmp_path: Path
) -> None:
    junit, summary = tmp_path / "junit.xml", tmp_path / "summary.md"
    run(suite, f"--junitxml={junit}", f"--evalkit-summary={summary}")
    cases = {
        case.get("name"): {p.get("name"): p.get("value") for p in case.iter("property")}
        for case in ET.parse(junit).getroot().iter("testcase")
    }
    assert set(cases) == {"test_not_worse[clear]", "test_not_worse[worse]", "test_not_worse[thin]"}
    wanted = {"passed": "clear", "failed": "worse", "insufficient": "thin"}
    for outcome, name in wanted.items():
        props = cases[f"test_not_worse[{name}]"]
        assert props["evalkit.outcome"] == outcome
        assert props["evalkit.check"] == "not_worse"
        assert props["evalkit.interval"].startswith("[")
        assert int(props["evalkit.n"]) > 0
    assert cases["test_not_worse[worse]"]["evalkit.verdict"] == "regressed"
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("## 3 evalkit checks: 1 passed, 1 failed, 1 with insufficient evidence")
    assert "| test | test outcome | check | claim | verdict | difference | interval | n |" in text
    # the checks that did not pass in full, each with its lines
    assert "### `test_suite.py::test_not_worse[worse]` (test failed)" in text
    assert "### `test_suite.py::test_not_worse[thin]` (test xfailed)" in text
    assert "### `test_suite.py::test_not_worse[clear]`" not in text


def test_a_service_that_cannot_be_reached_is_one_error_for_the_session(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    pytester.makepyfile(
        test_service="""
        import pytest

        @pytest.mark.parametrize("i", range(5))
        def test_uses_the_client(evalkit_client, i):
            pass
        """
    )
    summary = tmp_path / "summary.md"
    result = run(pytester, "--evalkit-base-url=http://127.0.0.1:9", f"--evalkit-summary={summary}")
    outcomes = result.parseoutcomes()
    assert outcomes.get("errors", 0) + outcomes.get("failed", 0) == 1, outcomes
    assert "passed" not in outcomes
    text = result.stdout.str()
    assert text.count("evalkit: ") >= 1
    result.stdout.fnmatch_lines(["*evalkit: *127.0.0.1:9*"])
    assert "Traceback" not in text
    assert "**The session stopped**" in summary.read_text(encoding="utf-8")


def test_the_fixtures_are_there_by_name(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--fixtures")
    for name in ("evalkit_service", "evalkit_client", "evalkit_store", "evalkit_judge"):
        result.stdout.fnmatch_lines([f"{name} *"])


def test_a_project_without_evalkit_tests_loads_nothing_heavy(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_plain="""
        import sys

        def test_plain():
            heavy = [m for m in ("pandas", "evalkit.testing", "evalkit.api") if m in sys.modules]
            assert heavy == []
        """
    )
    run(pytester).assert_outcomes(passed=1)
