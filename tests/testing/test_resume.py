"""Runs recorded by a test suite are asked once: a second session with an unchanged assistant
and grid, on the same ``--evalkit-store``, starts no simulation and calls no judge, and comes
to the same verdicts; two pytest-xdist workers recording the same runs at once share them
through the store's one-writer rule, so each conversation is simulated once.

The suite is a small one written here (two runs of the demo's reminder, a comparison and a
Holm family of pass rates), run by ``python -m pytest`` in a subprocess against an emulator
this module serves, whose counters (``/_emulator/stats``) say what the sessions asked.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalkit.demo import CONTACTS, CONTEXT, PROD_INSTRUCTIONS
from evalkit.emulator import EmulatorServer, EmulatorSettings, serve
from evalkit.testing._session import EMULATOR_SETTINGS

pytestmark = pytest.mark.slow

PERSONAS = ("cooperative", "busy-hangs-up")
REPEATS = 2
TARGETS = ("prod", "draft")
#: Conversations the suite plans: personas x contacts x repeats, for each target.
PLANNED = len(PERSONAS) * len(CONTACTS) * REPEATS * len(TARGETS)
KEY_RULES = ("urdu-script", "no-placeholders")

CONFTEST = f"""
import os
from pathlib import Path

import pytest

from evalkit import Grid, Scorecard, load_personas
from evalkit.data import bundled_path
from evalkit.demo import CONTACTS, CONTEXT
from evalkit.runner import RunOptions
from evalkit.testing import pass_rates, record


@pytest.fixture(scope="session")
def scorecard():
    return Scorecard.load("appointment-reminder-ur")


@pytest.fixture(scope="session")
def runs(evalkit_client, evalkit_store, worker_id):
    # which worker asked for the runs (the xdist test checks that both did)
    Path(os.environ["SUITE_ASKED"], worker_id).touch()
    personas = [p for p in load_personas(bundled_path("personas")) if p.label in {PERSONAS!r}]
    grid = Grid(personas, variables=CONTACTS, contexts=[CONTEXT], repeats={REPEATS})
    quiet = RunOptions(concurrency=8, progress=False)
    assistant_id = os.environ["SUITE_ASSISTANT_ID"]
    return {{
        target: record(
            grid, assistant_id, target, client=evalkit_client, store=evalkit_store, options=quiet
        )
        for target in {TARGETS!r}
    }}


@pytest.fixture(scope="session")
def rates(runs, scorecard, evalkit_judge):
    return pass_rates(
        runs["draft"], at_least=0.5, rules={KEY_RULES!r}, scorecard=scorecard, judge=evalkit_judge
    )
"""

SUITE = f"""
import pytest

from evalkit.testing import assert_not_worse, assert_pass_rate


def test_the_draft_is_not_worse(runs, scorecard, evalkit_judge):
    assert_not_worse(
        runs["prod"], runs["draft"], margin=5.0, scorecard=scorecard, judge=evalkit_judge
    )


@pytest.mark.parametrize("rule", {KEY_RULES!r})
def test_key_rule(rates, rule):
    assert_pass_rate(rates, rule)
"""


@pytest.fixture(scope="module")
def emulator() -> Iterator[EmulatorServer]:
    with serve(settings=EmulatorSettings(**EMULATOR_SETTINGS)) as emu:
        yield emu


@pytest.fixture
def assistant_id(emulator: EmulatorServer) -> str:
    """A new reminder for each test: its runs are new to any store."""
    built = emulator.build(
        "Clinic appointment reminder",
        {"context": CONTEXT, "sampleRows": CONTACTS[:1]},
        PROD_INSTRUCTIONS,
        initial_greeting=True,
    )
    return str(built["realtimeAssistantId"])


def _session(
    tmp_path: Path, emulator: EmulatorServer, assistant_id: str, name: str, *args: str
) -> tuple[dict[str, dict[str, str]], set[str]]:
    """Run the suite once against ``emulator``; each test's outcome and evalkit properties
    (from the JUnit XML), and the workers that asked for the runs."""
    suite = tmp_path / "suite"
    if not suite.exists():
        suite.mkdir()
        (suite / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        (suite / "conftest.py").write_text(CONFTEST, encoding="utf-8")
        (suite / "test_suite.py").write_text(SUITE, encoding="utf-8")
    junit, asked = tmp_path / f"{name}.xml", tmp_path / f"{name}-asked"
    asked.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("EVALKIT_") and k != "PYTEST_ADDOPTS"
    }
    env |= {
        "EVALKIT_API_KEY": emulator.api_key,
        "EVALKIT_JUDGE_BASE_URL": emulator.judge_base_url,
        "EVALKIT_JUDGE_MODEL": "emulator-judge",
        "SUITE_ASSISTANT_ID": assistant_id,
        "SUITE_ASKED": str(asked),
    }
    command = [sys.executable, "-m", "pytest", str(suite), "-q", "-p", "no:cacheprovider"]
    command += [f"--rootdir={suite}", f"--basetemp={tmp_path / name}", f"--junitxml={junit}"]
    command += [f"--evalkit-base-url={emulator.base_url}", f"--evalkit-store={tmp_path / 'runs'}"]
    done = subprocess.run(
        [*command, "--evalkit-insufficient=xfail", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    cases = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        props = {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
        kinds = {child.tag for child in case} & {"failure", "error", "skipped"}
        cases[case.get("name", "")] = {"test": ",".join(sorted(kinds)) or "passed", **props}
    return cases, {p.name for p in asked.iterdir()}


def _asked(emulator: EmulatorServer) -> tuple[int, int]:
    stats = emulator.stats()
    return int(stats["started"]), int(stats["judgeCalls"])


def test_a_second_session_asks_nothing_again(
    tmp_path: Path, emulator: EmulatorServer, assistant_id: str
) -> None:
    started, judged = _asked(emulator)
    first, _ = _session(tmp_path, emulator, assistant_id, "first", "-n", "0")
    after_first = _asked(emulator)
    assert after_first[0] - started == PLANNED  # every planned conversation, once
    assert after_first[1] > judged  # the scorecard's judged rules were judged
    assert len(first) == 1 + len(KEY_RULES)
    assert all("evalkit.verdict" in case for case in first.values())

    second, _ = _session(tmp_path, emulator, assistant_id, "second", "-n", "0")
    assert _asked(emulator) == after_first  # no simulation, no judge call
    assert second == first  # the same outcomes, verdicts, differences, intervals and n


def test_xdist_workers_simulate_each_conversation_once(
    tmp_path: Path, emulator: EmulatorServer, assistant_id: str
) -> None:
    started, _ = _asked(emulator)
    cases, asked = _session(tmp_path, emulator, assistant_id, "xdist", "-n", "2")
    assert asked == {"gw0", "gw1"}  # both workers recorded the runs
    assert _asked(emulator)[0] - started == PLANNED
    assert len(cases) == 1 + len(KEY_RULES)
    runs = sorted(p.parent.name for p in (tmp_path / "runs").rglob("manifest.json"))
    assert len(runs) == len(TARGETS), runs
