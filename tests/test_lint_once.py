"""Issue 33, item 8: a notebook's tune printed the same lint warning, and the same config
warning of every clone it saved, for every arm and every wave. Each is logged once per target
by a client (its ``said_once`` memory, not module state): another client says it again."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from evalkit._util import SaidOnce
from evalkit.api import AsyncClient, Client
from evalkit.emulator import EmulatorServer
from evalkit.runner._preflight import log_lint
from evalkit.targets import ConfigSnapshot, ResolvedTarget

from .runner_fixtures import emulator_fixture

emu = emulator_fixture(time_scale=0.002, seed=8)

#: greetingInstructions without initialGreeting: a lint warning
CONFIG = {"agent": {"instructions": "Say hello.", "greetingInstructions": "Greet them."}}


def target(label: str, version: int = 1) -> ResolvedTarget:
    snapshot = ConfigSnapshot("asst-1", version, "a", CONFIG, "2026-01-01T00:00:00Z")
    return ResolvedTarget(label, "asst-1", version, snapshot)


def lint_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("lint of ")]


def test_the_same_findings_of_a_target_are_logged_once(caplog: pytest.LogCaptureFixture) -> None:
    said = SaidOnce()
    with caplog.at_level(logging.INFO, logger="evalkit.runner"):
        for _ in range(3):  # three waves
            log_lint(target("draft"), said)
        log_lint(target("draft", version=2), said)  # another version: said again
        log_lint(target("arm-b"), said)  # another target: said again
    said_lines = lint_lines(caplog)
    assert len(said_lines) == 3, said_lines
    assert "greeting-instructions-ignored" in said_lines[0]


def test_each_client_says_it_once(caplog: pytest.LogCaptureFixture) -> None:
    first = Client("http://127.0.0.1:9/v1", "sk_api_x")
    second = Client("http://127.0.0.1:9/v1", "sk_api_x")
    twin = AsyncClient.from_client(first)  # what a run makes of a sync client: the same memory
    with caplog.at_level(logging.INFO, logger="evalkit.runner"):
        for client in (first, twin, second, second):
            log_lint(target("draft"), client.said_once)
    assert len(lint_lines(caplog)) == 2
    assert twin.said_once is first.said_once
    first.close()
    second.close()


#: the service stores a tool_endpoint tool without connectionId: a warning, not a 400
WARNED: dict[str, Any] = {
    "agent": {
        "instructions": "Say hello.",
        "tools": [
            {
                "name": "book",
                "description": "Books a slot",
                "parameters": {"type": "object", "properties": {}},
                "execution": {"type": "tool_endpoint"},
            }
        ],
    }
}


def test_a_clones_config_warning_is_said_once_per_target(
    emu: EmulatorServer, caplog: pytest.LogCaptureFixture
) -> None:
    """A tune saves each arm's clone every wave (E2): its config's warning is said once."""
    made = []
    with caplog.at_level(logging.WARNING, logger="evalkit.api"):
        with Client(emu.base_url, emu.api_key) as client:
            for _ in range(3):  # three waves of two arms
                for arm in ("arm-a", "arm-b"):
                    made.append(client.create_assistant(f"evalkit-clone {arm} of x v1", WARNED))
        with Client(emu.base_url, emu.api_key) as another:
            made.append(another.create_assistant("evalkit-clone arm-a of x v1", WARNED))
    warned = [r.getMessage() for r in caplog.records if "connectionId" in r.getMessage()]
    assert len(warned) == 3, warned
    assert warned[0].startswith("assistant 'evalkit-clone arm-a of x v1': config.agent.tools[0]")
    assert len(made) == 7  # the warning never stops a save
