"""Client configuration: base URL and key from arguments or the environment, timeouts, limits."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from evalkit.api import AsyncClient, Client, ConfigurationError, RetryPolicy

from .twins import BASE, KEY, run_async_client

OTHER_KEY = "sk_api_0therKey9876543210zyxwvu"
AID = "3f1c2b9e-8a44-4c1e-9d57-0b6a1f2e7c10"
CREDENTIALS = {"token": "t", "wsUrl": "wss://rooms.test", "roomName": "r"}


class Server:
    """Records requests; answers every one with ``[]`` or session credentials."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if request.method == "POST":
            return httpx.Response(200, json=CREDENTIALS)
        return httpx.Response(200, json=[])


@dataclass
class Twin:
    kind: str

    def client(self, *args: Any, server: Server | None = None, **kwargs: Any) -> Any:
        if server is not None:
            kwargs["transport"] = httpx.MockTransport(server)
        cls = Client if self.kind == "sync" else AsyncClient
        return cls(*args, **kwargs)

    def run(self, client: Any, fn: Callable[[Any], Any]) -> Any:
        if self.kind == "sync":
            with client:
                return fn(client)
        return run_async_client(client, fn)


@pytest.fixture(params=["sync", "async"])
def twin(request: pytest.FixtureRequest) -> Twin:
    return Twin(request.param)


def sent(twin: Twin, client: Any, server: Server) -> httpx.Request:
    """The one request ``list_assistants`` makes."""
    twin.run(client, lambda c: c.list_assistants())
    [request] = server.requests
    return request


# --------------------------------------------------------------------------- base URL and key


def test_arguments(twin: Twin) -> None:
    server = Server()
    request = sent(twin, twin.client(BASE, KEY, server=server), server)
    assert str(request.url) == f"{BASE}/realtime-assistants"
    assert request.headers["authorization"] == f"Bearer {KEY}"


def test_environment(twin: Twin, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALKIT_BASE_URL", "http://127.0.0.1:8787/v1")
    monkeypatch.setenv("EVALKIT_API_KEY", KEY)
    server = Server()
    client = twin.client(server=server)
    assert client.base_url == "http://127.0.0.1:8787/v1"
    assert client.host == "127.0.0.1:8787"
    assert client.has_api_key
    request = sent(twin, client, server)
    assert str(request.url) == "http://127.0.0.1:8787/v1/realtime-assistants"
    assert request.headers["authorization"] == f"Bearer {KEY}"


def test_arguments_override_environment(twin: Twin, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALKIT_BASE_URL", "http://env.test/v1")
    monkeypatch.setenv("EVALKIT_API_KEY", OTHER_KEY)
    server = Server()
    request = sent(twin, twin.client(BASE, KEY, server=server), server)
    assert request.url.host == "svc.test"
    assert request.headers["authorization"] == f"Bearer {KEY}"


def test_key_argument_with_url_from_environment(
    twin: Twin, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALKIT_BASE_URL", BASE)
    monkeypatch.setenv("EVALKIT_API_KEY", OTHER_KEY)
    server = Server()
    request = sent(twin, twin.client(api_key=KEY, server=server), server)
    assert request.headers["authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("https://svc.test/v1", "https://svc.test/v1"),
        ("https://svc.test/v1/", "https://svc.test/v1"),
        ("http://127.0.0.1:8787/v1", "http://127.0.0.1:8787/v1"),
        ("https://gw.test/voice/api/v1", "https://gw.test/voice/api/v1"),
    ],
)
def test_base_url_accepted(twin: Twin, given: str, expected: str) -> None:
    server = Server()
    client = twin.client(given, KEY, server=server)
    assert client.base_url == expected
    assert str(sent(twin, client, server).url) == f"{expected}/realtime-assistants"


@pytest.mark.parametrize(
    "url",
    [
        "https://svc.test",
        "https://svc.test/",
        "https://svc.test/v2",
        "https://svc.test/v1/realtime-assistants",
        "https://svc.test/v10",
        "svc.test/v1",
        "ftp://svc.test/v1",
        "https:///v1",
    ],
)
def test_base_url_must_be_http_and_end_with_v1(twin: Twin, url: str) -> None:
    with pytest.raises(ConfigurationError, match="/v1"):
        twin.client(url, KEY)


def test_base_url_from_environment_is_checked_too(
    twin: Twin, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALKIT_BASE_URL", "https://svc.test/api")
    with pytest.raises(ConfigurationError, match="/v1"):
        twin.client(api_key=KEY)


def test_missing_base_url(twin: Twin) -> None:
    with pytest.raises(ConfigurationError, match="EVALKIT_BASE_URL"):
        twin.client(api_key=KEY)


@pytest.mark.parametrize(
    "bad_key",
    [
        "pk_live_VerySecretValue123",
        "SK_API_UpperCaseSecret99",
        "sk-api-DashedSecret4567",
        "VerySecretBareToken",
    ],
)
def test_key_without_prefix_refused_without_echoing_it(twin: Twin, bad_key: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        twin.client(BASE, bad_key)
    message = str(info.value)
    assert "sk_api_" in message
    assert bad_key not in message
    assert bad_key[-8:] not in message
    assert bad_key not in repr(info.value)


def test_key_from_environment_without_prefix_refused(
    twin: Twin, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad_key = "pk_live_EnvSecretValue123"
    monkeypatch.setenv("EVALKIT_API_KEY", bad_key)
    with pytest.raises(ConfigurationError) as info:
        twin.client(BASE)
    assert "sk_api_" in str(info.value)
    assert bad_key not in str(info.value)


@pytest.mark.parametrize("empty", ["", None])
def test_no_key_is_allowed_until_an_operation_needs_one(
    twin: Twin, monkeypatch: pytest.MonkeyPatch, empty: str | None
) -> None:
    if empty is not None:
        monkeypatch.setenv("EVALKIT_API_KEY", empty)
    server = Server()
    client = twin.client(BASE, server=server)
    assert not client.has_api_key
    creds = twin.run(client, lambda c: c.open_public_session(AID, "Guest"))
    assert creds.room_name == "r"
    assert "authorization" not in server.requests[0].headers


@pytest.mark.parametrize(
    ("call", "operation"),
    [
        (lambda c: c.list_assistants(), "GET /realtime-assistants"),
        (lambda c: c.delete_assistant(AID), f"DELETE /realtime-assistants/{AID}"),
        (lambda c: c.create_session(AID, "A"), f"POST /realtime-assistants/{AID}/createSession"),
        (lambda c: c.refine(AID, "x"), f"POST /realtime-assistants/builds/{AID}/refine"),
        (lambda c: c.simulate(AID, {"label": "l", "behavior": "b"}).collect(), "/simulate"),
        (
            lambda c: c.text_to_speech("t", "v_8eelc901", "WAV_22050_16"),
            "/synthesis/text-to-speech",
        ),
    ],
)
def test_operation_without_key_raises_configuration_error(
    twin: Twin, call: Callable[[Any], Any], operation: str
) -> None:
    server = Server()
    with pytest.raises(ConfigurationError) as info:
        twin.run(twin.client(BASE, server=server), call)
    assert operation in str(info.value)
    assert "EVALKIT_API_KEY" in str(info.value)
    assert server.requests == []


# --------------------------------------------------------------------------- timeouts


def _timeout(twin: Twin, **kwargs: Any) -> dict[str, float | None]:
    """The timeout the client put on its request (httpx carries it in the extensions)."""
    server = Server()
    request = sent(twin, twin.client(BASE, KEY, server=server, **kwargs), server)
    timeout: dict[str, float | None] = request.extensions["timeout"]
    return timeout


def test_default_timeouts_fit_long_streams(twin: Twin) -> None:
    timeout = _timeout(twin)
    assert timeout["read"] is not None
    assert timeout["read"] >= 45.0
    assert timeout["pool"] is None
    assert timeout["connect"] is not None
    assert timeout["write"] is not None


def test_simulate_uses_the_same_read_timeout(twin: Twin) -> None:
    body = (
        b'event: done\ndata: {"personaId":"p","personaLabel":"l","archetype":"happy",'
        b'"path":"negative","turns":[]}\n\n'
    )
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=body, headers={"content-type": "text/event-stream"})

    client = twin.client(BASE, KEY, transport=httpx.MockTransport(handler))
    twin.run(client, lambda c: c.simulate(AID, {"label": "l", "behavior": "b"}).collect())
    read = seen[0].extensions["timeout"]["read"]
    assert read is not None
    assert read >= 45.0


@pytest.mark.parametrize("seconds", [1, 5.0, 30])
def test_plain_number_timeout_keeps_the_read_floor(twin: Twin, seconds: float) -> None:
    timeout = _timeout(twin, timeout=seconds)
    assert timeout["connect"] == seconds
    assert timeout["write"] == seconds
    assert timeout["read"] == 45.0
    assert timeout["pool"] is None


def test_plain_number_above_the_floor_is_used_for_reads(twin: Twin) -> None:
    timeout = _timeout(twin, timeout=120)
    assert timeout["read"] == 120.0
    assert timeout["pool"] is None


def test_explicit_httpx_timeout_is_used_but_a_short_read_warns(
    twin: Twin, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="evalkit.api"):
        timeout = _timeout(twin, timeout=httpx.Timeout(10.0))
    assert timeout["read"] == 10.0
    assert "keepalive" in caplog.text


def test_default_timeouts_log_no_warning(twin: Twin, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="evalkit.api"):
        _timeout(twin)
    assert caplog.records == []


# --------------------------------------------------------------------------- connection limits


_NO_LIMITS = httpx.Limits()


@pytest.fixture
def limits_seen(monkeypatch: pytest.MonkeyPatch) -> list[httpx.Limits]:
    """Capture the ``limits`` each client passes to httpx."""
    seen: list[httpx.Limits] = []

    class SpyClient(httpx.Client):
        def __init__(self, *args: Any, limits: httpx.Limits = _NO_LIMITS, **kwargs: Any) -> None:
            seen.append(limits)
            super().__init__(*args, limits=limits, **kwargs)

    class SpyAsyncClient(httpx.AsyncClient):
        def __init__(self, *args: Any, limits: httpx.Limits = _NO_LIMITS, **kwargs: Any) -> None:
            seen.append(limits)
            super().__init__(*args, limits=limits, **kwargs)

    monkeypatch.setattr(httpx, "Client", SpyClient)
    monkeypatch.setattr(httpx, "AsyncClient", SpyAsyncClient)
    return seen


def test_default_connection_limits_fit_hundreds_of_streams(
    twin: Twin, limits_seen: list[httpx.Limits]
) -> None:
    client = twin.client(BASE, KEY)
    twin.run(client, lambda c: None)
    [limits] = limits_seen
    assert limits.max_connections is not None
    assert limits.max_connections >= 1000
    assert limits.max_keepalive_connections is None or limits.max_keepalive_connections >= 100


def test_connection_limits_can_be_given(twin: Twin, limits_seen: list[httpx.Limits]) -> None:
    mine = httpx.Limits(max_connections=2000, max_keepalive_connections=2000)
    twin.run(twin.client(BASE, KEY, limits=mine), lambda c: None)
    assert limits_seen == [mine]


# --------------------------------------------------------------------------- stream deadline


def test_stream_deadline_default_a_little_above_five_minutes(twin: Twin) -> None:
    client = twin.client(BASE, KEY)
    assert 300.0 < client.stream_deadline <= 360.0
    twin.run(client, lambda c: None)


def test_stream_deadline_can_be_given(twin: Twin) -> None:
    client = twin.client(BASE, KEY, stream_deadline=12.5)
    assert client.stream_deadline == 12.5
    twin.run(client, lambda c: None)


# --------------------------------------------------------------------------- misc


def test_retry_policy_is_kept(twin: Twin) -> None:
    policy = RetryPolicy.no_wait(max_attempts=2)
    client = twin.client(BASE, KEY, retry=policy)
    assert client.retry is policy
    twin.run(client, lambda c: None)


def test_repr_shows_url_not_key(twin: Twin) -> None:
    client = twin.client(BASE, KEY)
    text = repr(client)
    assert BASE in text
    assert KEY not in text
    assert KEY[7:] not in text
    twin.run(client, lambda c: None)


def test_key_from_environment_is_stripped(twin: Twin, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALKIT_API_KEY", f"  {KEY}\n")
    server = Server()
    request = sent(twin, twin.client(BASE, server=server), server)
    assert request.headers["authorization"] == f"Bearer {KEY}"
