"""The runner's circuit breaker: a service that vanishes mid-run stops the run with the resume
line, instead of recording the rest of the grid ``failed`` (row 5 of README's "Hostile inputs").

The end-to-end test runs the real commands: ``evalkit emulator`` (state kept in ``--db``) and
``evalkit run`` in child processes; the emulator is SIGKILLed mid-run, then started again on
another port, and the printed resume line completes exactly the grid.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from evalkit.api import ApiConnectionError, AsyncClient, RetryPolicy
from evalkit.emulator import EmulatorServer
from evalkit.grid import Grid
from evalkit.runner import RunOptions, ServiceUnreachable, arun_grid
from evalkit.runner._breaker import CircuitBreaker, could_not_connect
from evalkit.store import ConversationRecord, load_run

from .cli_support import ROOT, emulator_command, read_exports
from .runner_fixtures import emulator_fixture
from .runner_support import build_assistant, journal_lines, load_grid
from .waiting import wait_until

KEY = "sk_api_breaker_test_key_000000000001"


def unreachable() -> ApiConnectionError:
    error = ApiConnectionError("POST /x: ConnectError: [Errno 111] Connection refused")
    error.__cause__ = httpx.ConnectError("[Errno 111] Connection refused")
    return error


def finished(n: int) -> tuple[ConversationRecord, list[Any]]:
    return (f"conv-{n}", [])  # type: ignore[return-value]  # the breaker never looks inside


# --------------------------------------------------------------------------- the breaker alone


def test_what_counts_as_unreachable() -> None:
    assert could_not_connect(unreachable())
    timeout = ApiConnectionError("POST /x: ConnectTimeout")
    timeout.__cause__ = httpx.ConnectTimeout("slow")
    assert could_not_connect(timeout)
    read = ApiConnectionError("POST /x: ReadError")
    read.__cause__ = httpx.ReadError("reset")  # it answered, then broke: not an outage
    assert not could_not_connect(read)
    assert not could_not_connect(None)


def test_a_streak_is_held_back_then_released_by_an_answer_or_trips() -> None:
    breaker = CircuitBreaker(limit=3, workers=8, address="http://svc/v1")
    assert breaker.settle(0, finished(1), unreachable()) == []
    assert breaker.settle(1, finished(2), unreachable()) == []
    # the service answered again: a blip, the held ones are recorded failed as they were
    assert breaker.settle(2, finished(3), None) == [finished(1), finished(2), finished(3)]
    breaker.settle(3, finished(4), unreachable())
    breaker.settle(4, finished(5), unreachable())
    with pytest.raises(ServiceUnreachable) as stopped:
        breaker.settle(5, finished(6), unreachable())
    assert stopped.value.conversations == 3
    assert "could not reach the service at http://svc/v1" in str(stopped.value)
    assert isinstance(stopped.value.__cause__, ApiConnectionError)
    assert breaker.held == []  # dropped: a resume runs them


def test_every_worker_unreachable_trips_before_the_limit() -> None:
    breaker = CircuitBreaker(limit=5, workers=2, address="http://svc/v1")
    breaker.settle(0, finished(1), unreachable())
    with pytest.raises(ServiceUnreachable):
        breaker.settle(1, finished(2), unreachable())


def test_zero_records_every_failure_as_before() -> None:
    breaker = CircuitBreaker(limit=0, workers=1, address="http://svc/v1")
    for n in range(10):
        assert breaker.settle(0, finished(n), unreachable()) == [finished(n)]


def test_a_short_streak_at_the_end_of_the_grid_is_recorded() -> None:
    breaker = CircuitBreaker(limit=5, workers=2, address="http://svc/v1")
    breaker.settle(0, finished(1), unreachable())
    assert breaker.retire(0) == []  # worker 1 is still running
    assert breaker.settle(1, finished(2), None) == [finished(1), finished(2)]
    assert breaker.retire(1) == []
    assert RunOptions().stop_after_unreachable == 5
    with pytest.raises(ValueError, match="stop_after_unreachable"):
        RunOptions(stop_after_unreachable=-1)


# --------------------------------------------------------------------------- in process

emu = emulator_fixture(time_scale=0.01, seed=5)


class Vanishing(httpx.AsyncHTTPTransport):
    """Real HTTP to the emulator until ``after`` simulate requests were sent; from then on every
    connection is refused, as from a service that went away."""

    def __init__(self, after: int) -> None:
        super().__init__()
        self.after = after
        self.simulations = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/simulate"):
            self.simulations += 1
        if self.simulations > self.after:
            raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
        return await super().handle_async_request(request)


async def run_vanishing(
    emu: EmulatorServer, store: Path, after: int, **options: Any
) -> tuple[Grid, str, BaseException | None]:
    grid = load_grid(3, 4)
    assistant = build_assistant(emu)
    client = AsyncClient(
        emu.base_url, emu.api_key, retry=RetryPolicy.no_wait(2), transport=Vanishing(after)
    )
    error = None
    async with client:
        try:
            await arun_grid(
                grid,
                assistant,
                client=client,
                store=store,
                run_id="cut",
                options=_options(**options),
            )
        except ServiceUnreachable as exc:
            error = exc
    return grid, assistant, error


async def test_a_vanished_service_stops_the_run_and_a_resume_completes_the_grid(
    emu: EmulatorServer, tmp_path: Path
) -> None:
    grid, assistant, error = await run_vanishing(emu, tmp_path, after=5)
    assert isinstance(error, ServiceUnreachable)
    assert error.address == emu.base_url
    cut = load_run("cut", store=tmp_path)
    assert 1 <= len(cut.conversations) <= 5
    assert set(cut.conversations["status"]) == {"done"}  # none marked failed
    async with AsyncClient(emu.base_url, emu.api_key) as client:
        run = await arun_grid(grid, assistant, client=client, store=tmp_path, run_id="cut")
    assert len(run.conversations) == len(grid)
    assert run.conversations["conversation_id"].is_unique
    assert set(run.conversations["status"]) == {"done"}


async def test_with_the_breaker_off_the_rest_is_recorded_failed(
    emu: EmulatorServer, tmp_path: Path
) -> None:
    grid, _, error = await run_vanishing(emu, tmp_path, after=5, stop_after_unreachable=0)
    assert error is None
    statuses = load_run("cut", store=tmp_path).conversations["status"].value_counts()
    assert statuses["failed"] >= len(grid) - 5
    assert statuses.sum() == len(grid)


def _options(**changes: Any) -> RunOptions:
    return RunOptions(concurrency=2, progress=False, **changes)


# --------------------------------------------------------------------------- end to end


@pytest.mark.slow
def test_a_vanished_emulator_stops_the_run_with_the_resume_line_and_the_resume_completes(
    tmp_path: Path,
) -> None:
    db, store = tmp_path / "emulator.db", tmp_path / "runs"
    emulator = ("--time-scale", "0.01", "--turn-delay", "4", "--seed", "3", "--db", str(db))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    with emulator_command(*emulator, "--api-key", KEY, "--demo-assistant", cwd=tmp_path) as emu:
        exports = read_exports(emu)
        assert emu.stdout is not None
        run_line = next(
            line for line in iter(emu.stdout.readline, "") if "evalkit run --assistant" in line
        )
        argv = shlex.split(run_line.strip().removeprefix("# "))[1:]
        argv += ["--repeats", "6", "--store", str(store), "--run-id", "cut", "--concurrency", "4"]
        run = subprocess.Popen(
            [sys.executable, "-m", "evalkit", *argv],
            env={**env, **exports},
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            wait_until(lambda: journal_lines(store / "cut") >= 4, 120, what="4 recorded")
            emu.send_signal(signal.SIGKILL)  # the service vanishes mid-run
            killed = time.monotonic()
            out, err = run.communicate(timeout=120)
            stopped_after = time.monotonic() - killed
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
    print(f"the run stopped {stopped_after:.1f} s after the emulator vanished")  # README figure
    assert run.returncode == 4, out + err
    address = exports["EVALKIT_BASE_URL"]
    assert f"could not reach the service at {address}" in err
    assert "cannot reach 127.0.0.1:" in err  # the CLI's connection hint
    resume = err.split("resume with: ", 1)[1].splitlines()[0]
    assert resume.startswith("evalkit run --assistant ")
    assert resume.endswith("--run-id cut")
    assert stopped_after < 30  # seconds, not the rest of the grid's attempts
    assert "Traceback" not in err

    cut = load_run("cut", store=store)
    grid_size = int(cut.manifest["n_conversations"])
    kept = cut.conversations.set_index("conversation_id")["transcript_hash"]
    assert 4 <= len(kept) < grid_size
    assert set(cut.conversations["status"]) == {"done"}  # nothing marked failed
    assert cut.manifest["outcome"] == "interrupted"

    # the service comes back on another port, with the same state: the resume line completes it
    with emulator_command(*emulator, "--api-key", KEY, cwd=tmp_path) as emu:
        exports = read_exports(emu)
        resumed = subprocess.run(
            [sys.executable, "-m", "evalkit", *shlex.split(resume)[1:]],
            env={**env, **exports},
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    run_after = load_run("cut", store=store)
    conv = run_after.conversations
    assert len(conv) == grid_size
    assert conv["conversation_id"].is_unique
    assert set(conv["status"]) == {"done"}
    again = conv.set_index("conversation_id")["transcript_hash"]
    assert again[kept.index].tolist() == kept.tolist()  # recorded conversations untouched
    assert run_after.manifest["outcome"] == "complete"
