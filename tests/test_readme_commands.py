"""README's two set-up commands: one installs and runs the demo, one installs and runs the
tests, and CI (``.ci/run``) runs the second exactly as written."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FENCED = re.compile(r"```bash\n(.*?)```", re.DOTALL)


def _setup_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = [block.strip() for block in FENCED.findall(readme)]
    return [block for block in blocks if block.startswith("python3 -m venv")]


def test_readme_has_exactly_two_setup_commands_demo_and_tests() -> None:
    commands = _setup_commands()
    assert len(commands) == 2, commands
    demo, tests = commands
    assert demo.endswith("&& evalkit demo"), demo
    assert tests.endswith("&& pytest"), tests
    assert "\n" not in demo
    assert "\n" not in tests


def test_ci_runs_the_readme_test_command_as_written() -> None:
    tests = _setup_commands()[1]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert tests in ci.splitlines()
