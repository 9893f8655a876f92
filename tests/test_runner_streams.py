"""The runner's stream slots: one single-connection client per worker, one SSL context."""

from __future__ import annotations

import httpx
import pytest

from evalkit.api import AsyncClient
from evalkit.runner._runner import _stream_clients

BASE = "http://127.0.0.1:9/v1"


def _pool(client: AsyncClient) -> object:
    return client._http._transport._pool  # type: ignore[attr-defined]


async def test_each_worker_gets_its_own_client_of_one_connection() -> None:
    async with AsyncClient(BASE, "sk_api_slots") as caller:
        async with _stream_clients(caller, 5) as slots:
            assert len(slots) == 5
            assert len({id(s) for s in slots}) == 5
            assert caller not in slots
            pools = [_pool(s) for s in slots]
            assert {p._max_connections for p in pools} == {1}  # type: ignore[attr-defined]
            assert len({id(p._ssl_context) for p in pools}) == 1  # type: ignore[attr-defined]
            assert all(s.base_url == caller.base_url for s in slots)
            assert all(s.retry is caller.retry for s in slots)
            assert all(s.stream_deadline == caller.stream_deadline for s in slots)
        assert all(s._http.is_closed for s in slots)
        assert not caller._http.is_closed  # the caller's client is the caller's to close


async def test_an_https_service_keeps_certificate_verification() -> None:
    async with (
        AsyncClient("https://api.example.test/v1", "sk_api_slots") as caller,
        _stream_clients(caller, 2) as slots,
    ):
        context = _pool(slots[0])._ssl_context  # type: ignore[attr-defined]
        assert context.check_hostname
        assert context.verify_mode.name == "CERT_REQUIRED"
        assert context.cert_store_stats()["x509_ca"] > 0  # the default CA bundle is loaded


async def test_a_custom_transport_is_shared_as_it_is() -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(204))
    async with (
        AsyncClient(BASE, "sk_api_slots", transport=transport) as caller,
        _stream_clients(caller, 3) as slots,
    ):
        assert slots == [caller, caller, caller]


async def test_a_proxy_from_the_environment_keeps_the_callers_client(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example.test:3128")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    async with (
        AsyncClient("http://api.example.test/v1", "sk_api_slots") as caller,
        _stream_clients(caller, 2) as slots,
    ):
        assert slots == [caller, caller]


async def test_no_proxy_for_the_host_gives_slots(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://proxy.example.test:3128")
    monkeypatch.setenv("NO_PROXY", "api.example.test")
    async with (
        AsyncClient("http://api.example.test/v1", "sk_api_slots") as caller,
        _stream_clients(caller, 2) as slots,
    ):
        assert caller not in slots
