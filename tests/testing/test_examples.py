"""``examples/tests``, the example assistant's eval suite, run as a user runs it: against the
embedded emulator, over two pytest-xdist workers sharing one store, with a JUnit report and
the Markdown summary. The draft is not worse than prod and answers quickly; the per-persona
family has too little evidence at 9 conversations a persona (xfail, saying how many would
decide); the demo's simplified prompt is caught."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import evalkit

EXAMPLES = Path(evalkit.__file__).resolve().parent.parent / "examples" / "tests"

pytestmark = pytest.mark.slow


def test_the_example_suite_runs_against_the_emulator(tmp_path: Path) -> None:
    junit, summary, store = tmp_path / "junit.xml", tmp_path / "summary.md", tmp_path / "runs"
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("EVALKIT_") and k != "PYTEST_ADDOPTS"
    }
    args = ["-q", "-n", "2", "-p", "no:cacheprovider", f"--rootdir={EXAMPLES}"]
    args += [f"--junitxml={junit}", f"--evalkit-summary={summary}", f"--evalkit-store={store}"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", str(EXAMPLES), *args, f"--basetemp={tmp_path / 'tmp'}"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    outcomes: dict[str, str] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        kinds = {child.tag for child in case}
        outcomes[case.get("name", "")] = (
            "skipped"
            if "skipped" in kinds
            else "failed"
            if kinds & {"failure", "error"}
            else "passed"
        )
    assert outcomes["test_the_draft_is_not_worse_than_prod"] == "passed"
    assert outcomes["test_a_simplified_prompt_would_be_caught"] == "passed"
    assert outcomes["test_answers_come_quickly"] == "passed"
    assert len(outcomes) == 14
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("## ")
    assert "test_no_persona_is_worse[hostile]" in text
    # both workers recorded into one store: one prod run and one draft run, not one per worker
    manifests = sorted(p.parent.name for p in store.rglob("manifest.json"))
    assert len(manifests) == len(set(manifests))
    assert len(manifests) == 3, manifests  # prod, draft and the simplified variant
