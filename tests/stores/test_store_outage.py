"""Issue 33, item 4: an object store that cannot be reached, at start or mid-run, is one line
naming the store and the command that resumes, with its own exit code (6), never a traceback;
a run whose store vanished resumes once the store is back."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest
import s3fs
from moto.moto_server.threaded_moto_server import ThreadedMotoServer

from evalkit.emulator import EmulatorServer
from evalkit.store import StoreUnreachableError, is_unreachable, unreachable_store

from ..runner_fixtures import emulator_fixture
from ..runner_support import build_assistant, reap, wait_for_child
from .conftest import CREDENTIALS

emu = emulator_fixture(time_scale=0.01, seed=17, turn_delay=2.0)

STORE_UNREACHABLE = 6


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def evalkit(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "evalkit", *args],
        env={**env, "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def aws(endpoint: str, emulator: EmulatorServer | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("EVALKIT_", "AWS_"))}
    env.update({**CREDENTIALS, "AWS_ENDPOINT_URL": endpoint})
    if emulator is not None:
        env.update({"EVALKIT_BASE_URL": emulator.base_url, "EVALKIT_API_KEY": emulator.api_key})
    return env


def assert_one_line(err: str, store: str, resume: str) -> None:
    """One error line (progress lines aside), no traceback."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) <= 6, err[-3000:]  # the progress lines, then the error
    lines = [line for line in lines if line.startswith("evalkit:")]
    assert len(lines) == 1, err[-3000:]
    assert lines[0].startswith(f"evalkit: error: cannot reach the store {store} ("), lines[0]
    assert resume in lines[0]
    assert "Traceback" not in err


def test_errors_of_every_backend_are_recognised_along_the_causes() -> None:
    from botocore.exceptions import EndpointConnectionError

    down = EndpointConnectionError(endpoint_url="http://127.0.0.1:9/bkt")
    wrapped = OSError("write failed")
    wrapped.__cause__ = down
    assert is_unreachable(wrapped, backends_only=True)
    assert not is_unreachable(ValueError("no"))
    assert not is_unreachable(ConnectionRefusedError(), backends_only=True)
    with pytest.raises(StoreUnreachableError) as caught, unreachable_store("s3://b/runs"):
        raise down
    assert caught.value.store == "s3://b/runs"
    assert "Could not connect to the endpoint URL" in caught.value.reason


@pytest.mark.slow
def test_runs_on_an_unreachable_store_is_one_line_and_exit_6() -> None:
    store = "s3://no-answer/runs"
    child = evalkit(["runs", "--store", store], aws(f"http://127.0.0.1:{free_port()}"))
    _out, err = child.communicate(timeout=240)
    assert child.returncode == STORE_UNREACHABLE, err[-3000:]
    assert_one_line(err, store, f"run again: evalkit runs --store {store}")


@pytest.mark.slow
def test_run_on_an_unreachable_store_is_one_line_with_the_resume_command(
    emu: EmulatorServer,
) -> None:
    store = "s3://no-answer/runs"
    assistant = build_assistant(emu)
    args = ["run", "--assistant", assistant, "--store", store, "--run-id", "r1"]
    child = evalkit(args, aws(f"http://127.0.0.1:{free_port()}", emu))
    _out, err = child.communicate(timeout=240)
    assert child.returncode == STORE_UNREACHABLE, err[-3000:]
    assert_one_line(err, store, f"resume with: evalkit run --assistant {assistant}")


@pytest.fixture
def own_s3() -> Iterator[tuple[ThreadedMotoServer, str, int]]:
    """A moto server of this test's own (it is stopped mid-run), and its endpoint."""
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    try:
        yield server, endpoint, port
    finally:
        server.stop()


def journal_objects(fs: s3fs.S3FileSystem, path: str) -> int:
    try:
        return len(fs.ls(f"{path}/journal", refresh=True))
    except FileNotFoundError:
        return 0


@pytest.mark.slow
def test_a_store_that_vanishes_mid_run_ends_in_one_line_and_the_run_resumes(
    emu: EmulatorServer, own_s3: tuple[ThreadedMotoServer, str, int]
) -> None:
    server, endpoint, port = own_s3
    fs = s3fs.S3FileSystem(
        key=CREDENTIALS["AWS_ACCESS_KEY_ID"],
        secret=CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        endpoint_url=endpoint,
        use_listings_cache=False,
        skip_instance_cache=True,
    )
    fs.mkdir("vanishing")
    store = "s3://vanishing/runs"
    assistant = build_assistant(emu)
    args = ["run", "--assistant", assistant, "--store", store, "--repeats", "2"]
    args += ["--concurrency", "2", "--run-id", "mid"]
    child = evalkit(args, aws(endpoint, emu))
    try:
        wait_for_child(
            child, lambda: journal_objects(fs, "vanishing/runs/mid") >= 1, "a first commit"
        )
        server.stop()  # the store vanishes mid-run
        _out, err = child.communicate(timeout=240)
    finally:
        reap(child)
    assert child.returncode == STORE_UNREACHABLE, err[-3000:]
    assert_one_line(err, store, f"resume with: evalkit {' '.join(args[:-2])} --run-id mid")
    resume = err.rsplit("resume with: evalkit ", 1)[1].split()

    back = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    back.start()  # moto keeps its buckets in this process: the store is back as it was
    try:
        again = evalkit(resume, aws(endpoint, emu))
        _out, err = again.communicate(timeout=300)
        assert again.returncode == 0, err[-3000:]
        assert fs.exists("vanishing/runs/mid/conversations.parquet")  # finalized at the URL
    finally:
        back.stop()
