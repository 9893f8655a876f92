"""Issue 33, item 8: a notebook's tune printed the same lint warning for every arm and every
wave; the findings of one target are logged once per process."""

from __future__ import annotations

import logging

import pytest

from evalkit.runner._preflight import _linted, log_lint
from evalkit.targets import ConfigSnapshot, ResolvedTarget

#: greetingInstructions without initialGreeting: a lint warning
CONFIG = {"agent": {"instructions": "Say hello.", "greetingInstructions": "Greet them."}}


def target(label: str, version: int = 1) -> ResolvedTarget:
    snapshot = ConfigSnapshot("asst-1", version, "a", CONFIG, "2026-01-01T00:00:00Z")
    return ResolvedTarget(label, "asst-1", version, snapshot)


def test_the_same_findings_of_a_target_are_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    _linted().clear()
    with caplog.at_level(logging.INFO, logger="evalkit.runner"):
        for _ in range(3):  # three waves
            log_lint(target("draft"))
        log_lint(target("draft", version=2))  # another version: said again
        log_lint(target("arm-b"))  # another target: said again
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("lint of ")]
    assert len(said) == 3, said
    assert "greeting-instructions-ignored" in said[0]
