"""Helpers shared by the runner, reliability, target and store tests and by ``runner_child.py``.

Plain constants, functions and classes only (fixtures live in ``runner_fixtures.py``): the child
process imports this module too, so it imports neither pytest nor the emulator at run time.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from evalkit.api import Client
from evalkit.grid import Grid, Persona, load_personas

if __package__:  # imported as ``tests.runner_support``
    from .waiting import wait_until
else:  # imported by ``python tests/runner_child.py``: this folder is on sys.path
    from waiting import wait_until

if TYPE_CHECKING:
    from evalkit.emulator import EmulatorServer

CHILD = Path(__file__).resolve().parent / "runner_child.py"

PERSONAS_DIR = Path(__file__).resolve().parent.parent / "personas"
INSTRUCTIONS = "You remind {{name}} of an appointment on {{date}}. Confirm yes or no. Say goodbye."
RECORDS = [{"name": "Ali", "date": "Monday"}, {"name": "Sara", "date": "Friday"}]
PATH_SIMULATE = re.compile(r"/v1/realtime-assistants/builds/([^/]+)/simulate$")

# the conversation columns of the design, in order, and their dtypes
DESIGN_CONVERSATION_DTYPES = {
    "run_id": "str",
    "conversation_id": "str",
    "cell_id": "str",
    "repeat": "int64",
    "persona_label": "str",
    "variables": "str",
    "context": "str",
    "status": "str",
    "error_message": "str",
    "attempts": "int64",
    "n_turns": "int64",
    "ended_by": "str",
    "first_turn_s": "float64",
    "duration_s": "float64",
    "started_at": "datetime64[us, UTC]",
    "finished_at": "datetime64[us, UTC]",
    "transcript_hash": "str",
    "assistant_version": "Int64",
    "target": "str",
}
# every column of a stored conversations table: the design's, then the store's own
CONVERSATION_DTYPES = {**DESIGN_CONVERSATION_DTYPES, "persona_id": "str", "persona_tags": "str"}
TURN_DTYPES = {
    "run_id": "str",
    "conversation_id": "str",
    "index": "int64",
    "role": "str",
    "text": "str",
    "at_s": "float64",
    "latency_s": "float64",
}


def build_reminder(
    emu: EmulatorServer,
    instructions: str = INSTRUCTIONS,
    *,
    context: str = "Clinic appointment reminders",
    config: dict[str, Any] | None = None,
    api_key: str | None = None,
) -> dict[str, Any]:
    """Build a new reminder assistant (version 1, agent speaks first); the build's answer."""
    return emu.build(
        "Reminder",
        {"context": context, "sampleRows": RECORDS},
        instructions,
        initial_greeting=True,
        config=config,
        api_key=api_key,
    )


def build_assistant(emu: EmulatorServer, api_key: str | None = None) -> str:
    """A new reminder assistant with ``INSTRUCTIONS``; its id."""
    return str(build_reminder(emu, api_key=api_key)["realtimeAssistantId"])


def make_grid(personas: list[Persona], n: int = 5, repeats: int = 2, **kw: Any) -> Grid:
    """The first ``n`` personas over ``RECORDS`` in one context, ``repeats`` times."""
    return Grid(
        personas[:n], variables=RECORDS, contexts=["Clinic reminder"], repeats=repeats, **kw
    )


def load_grid(n_personas: int, repeats: int, shard: tuple[int, int] | None = None) -> Grid:
    """The grid the child process and its test both build (same cells, same ids)."""
    return make_grid(load_personas(PERSONAS_DIR), n_personas, repeats, shard=shard)


def wait_idle(emu: EmulatorServer, timeout: float = 10.0) -> dict[str, int]:
    """Poll the emulator until no simulation is active; its stats (``TimeoutError`` after
    ``timeout``)."""
    return wait_until(
        lambda: (stats := emu.stats())["active"] == 0 and stats,
        timeout,
        what="no simulation active on the emulator",
        interval=0.02,
    )


def journal_lines(run_dir: Path) -> int:
    """How many complete lines the run's journal holds (0 before it exists)."""
    try:
        return (run_dir / "journal.jsonl").read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def start_child(emu: EmulatorServer, spec: dict[str, Any]) -> subprocess.Popen[str]:
    """``runner_child.py`` running ``spec`` against ``emu`` (the default client's env vars)."""
    env = {**os.environ, "EVALKIT_BASE_URL": emu.base_url, "EVALKIT_API_KEY": emu.api_key}
    env["PYTHONUNBUFFERED"] = "1"
    return subprocess.Popen(
        [sys.executable, str(CHILD), json.dumps(spec)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_child(
    child: subprocess.Popen[str], condition: Callable[[], Any], what: str, timeout: float = 90.0
) -> None:
    """Poll ``condition`` while ``child`` runs; fail at once (with its output) if it exits."""

    def ready() -> Any:
        if child.poll() is not None:
            out, err = child.communicate()
            raise AssertionError(f"child exited ({child.returncode}) before {what}:\n{out}\n{err}")
        return condition()

    wait_until(ready, timeout, what=what)


def communicate(child: subprocess.Popen[str], timeout: float) -> tuple[str, str]:
    """``child.communicate(timeout)``; past the deadline, fail with every thread's stack."""
    try:
        return child.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        child.send_signal(signal.SIGUSR1)  # runner_child.py dumps its threads' stacks
        time.sleep(1.0)
        child.kill()
        out, err = child.communicate(timeout=10)
        pytest.fail(f"the child still ran after {timeout:g} s\n{out}\n{err}")


def reap(child: subprocess.Popen[str]) -> None:
    """Kill ``child`` if it still runs and collect its pipes."""
    if child.poll() is None:
        child.kill()
    child.communicate(timeout=10)


def assistant_ids(emu: EmulatorServer) -> set[str]:
    """The ids of every assistant of the emulator's default project."""
    return {a.id for a in Client(emu.base_url, emu.api_key).list_assistants()}


class Tap(httpx.AsyncBaseTransport):
    """A real loopback transport that records every request and may rewrite simulate requests."""

    def __init__(self, rewrite: Callable[[httpx.Request, int], httpx.Request] | None = None):
        self.inner = httpx.AsyncHTTPTransport(limits=httpx.Limits(max_connections=100))
        self.rewrite = rewrite
        self.requests: list[tuple[str, str, bytes]] = []
        self.simulates = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append((request.method, request.url.path, request.content))
        if request.url.path.endswith("/simulate") and self.rewrite is not None:
            self.simulates += 1
            request = self.rewrite(request, self.simulates)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def created(self) -> list[dict[str, Any]]:
        """Bodies of E2 (create assistant) requests."""
        return [
            json.loads(body)
            for method, path, body in self.requests
            if method == "POST" and path == "/v1/realtime-assistants"
        ]

    def deleted(self) -> list[str]:
        """Ids of the assistants deleted."""
        return [
            path.rsplit("/", 1)[1]
            for method, path, _ in self.requests
            if method == "DELETE" and path.startswith("/v1/realtime-assistants/")
        ]

    def simulated_on(self) -> set[str]:
        """Ids of the assistants simulate requests went to."""
        return {m.group(1) for _, path, _ in self.requests if (m := PATH_SIMULATE.search(path))}


def replace_request(
    request: httpx.Request, *, body: Any = None, headers: dict[str, str] | None = None
) -> httpx.Request:
    """A copy of ``request`` with another JSON body and/or headers."""
    new_headers = {
        k.lower(): v for k, v in request.headers.items() if k.lower() != "content-length"
    }
    new_headers.update({k.lower(): v for k, v in (headers or {}).items()})
    content = request.content if body is None else json.dumps(body).encode()
    return httpx.Request(request.method, request.url, headers=new_headers, content=content)
