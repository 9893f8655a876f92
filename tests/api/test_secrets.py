"""The API key never appears in a repr, an exception, a log line or a CLI traceback."""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import httpx
import pytest

import evalkit
from evalkit import Client, RetryPolicy

KEY = "sk_api_SECRET_do_not_leak_4242"


def _transport(status: int, body: object) -> httpx.MockTransport:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, json=body)

    return httpx.MockTransport(handler)


def test_repr_and_str_of_client_hide_key() -> None:
    client = Client("http://127.0.0.1:1/v1", KEY)
    for text in (repr(client), str(client), repr(client._settings), repr(client._settings.api_key)):
        assert KEY not in text
        assert "SECRET" not in text
    assert "api_key=<set>" in repr(client)


def test_error_messages_and_logs_hide_key(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    body = {"message": [f"bad key {KEY}"], "error": "Bad Request", "statusCode": 400}
    client = Client(
        "http://127.0.0.1:1/v1", KEY, transport=_transport(400, body), retry=RetryPolicy.no_wait()
    )
    with pytest.raises(evalkit.BadRequestError) as info:
        client.list_assistants()
    assert KEY not in str(info.value)
    assert all(KEY not in m for m in info.value.messages)
    client503 = Client(
        "http://127.0.0.1:1/v1",
        KEY,
        transport=_transport(503, {"message": "x"}),
        retry=RetryPolicy.no_wait(),
    )
    with pytest.raises(evalkit.ServiceUnavailableError):
        client503.list_assistants()
    assert "retrying" in caplog.text  # the retry was logged ...
    assert KEY not in caplog.text  # ... without the key


def test_bad_prefix_error_does_not_echo_key() -> None:
    with pytest.raises(evalkit.ConfigurationError) as info:
        Client("http://127.0.0.1:1/v1", "not_a_key_SECRET_value")
    assert "SECRET" not in str(info.value)


def test_cli_traceback_shows_no_locals() -> None:
    """A crash inside a command prints no local variables (typer's default would)."""
    code = (
        "import typer, evalkit.cli as c\n"
        "@c.app.command()\n"
        "def boom() -> None:\n"
        f"    api_key = {KEY!r}\n"
        "    raise RuntimeError('boom')\n"
        "c.main()\n"
    )
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "120", "_TYPER_FORCE_DISABLE_TERMINAL": ""}
    result = subprocess.run(
        [sys.executable, "-c", code, "boom"], capture_output=True, text=True, env=env, timeout=60
    )
    assert result.returncode != 0
    assert "boom" in result.stderr + result.stdout
    assert KEY not in result.stderr + result.stdout


def test_version_flag() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "evalkit", "--version"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0
    assert result.stdout.strip() == f"evalkit {evalkit.__version__}"
