"""E6–E8 over loopback: join credentials (a LiveKit-layout JWT whose lifetime is the session
ttl), public sessions sent without any credential, and E7/E8's 402/403/404/503 answers."""

from __future__ import annotations

from typing import Any

import jwt
import pytest

from evalkit.api import (
    Assistant,
    InvalidRequestError,
    NotFoundError,
    PaymentRequiredError,
    PermissionDeniedError,
    ServiceUnavailableError,
    SessionCredentials,
)
from evalkit.emulator import EmulatorServer
from tests.client_emulator.conftest import Api, MakeApi, auth_headers, make_config, new_project

MISSING = "00000000-0000-4000-8000-000000000000"
PUBLIC_OPERATIONS = ("create_public_session", "open_public_session")  # E7, E8


def claims(credentials: SessionCredentials) -> dict[str, Any]:
    """The join token's claims (the signature belongs to the room server, not to us)."""
    decoded: dict[str, Any] = jwt.decode(credentials.token, options={"verify_signature": False})
    return decoded


def lifetime(token_claims: dict[str, Any]) -> int:
    start = token_claims.get("iat", token_claims.get("nbf"))
    assert isinstance(start, int), token_claims
    return int(token_claims["exp"]) - start


def assert_livekit_layout(credentials: SessionCredentials, participant: str) -> dict[str, Any]:
    c = claims(credentials)
    assert isinstance(c.get("sub"), str), "identity (sub) missing"
    assert c["sub"]
    assert c["name"] == participant
    assert isinstance(c["exp"], int)
    video = c["video"]
    assert video["roomJoin"] is True
    assert video["room"] == credentials.room_name
    assert video.get("canPublish") is True
    assert "microphone" in video.get("canPublishSources", [])
    assert credentials.ws_url.startswith(("ws://", "wss://"))
    assert credentials.room_name
    return c


async def public_assistant(api: Api, **config: Any) -> str:
    created: Assistant = await api.create_assistant("Public", make_config(**config), public=True)
    return created.id


async def test_create_session_returns_livekit_credentials(api: Api) -> None:
    created = await api.create_assistant("Web", make_config(session={"ttl": 90}))
    first = await api.create_session(created.id, "Ayesha Khan")
    assert isinstance(first, SessionCredentials)
    c = assert_livekit_layout(first, "Ayesha Khan")
    assert lifetime(c) == 90
    second = await api.create_session(created.id, "Ayesha Khan")
    assert second.room_name != first.room_name  # generated names are unique
    assert (auth_headers(api.sent)[-1] or "").startswith("Bearer sk_api_")  # E6 takes the key


async def test_requested_room_name_and_room_prefix(api: Api) -> None:
    created = await api.create_assistant("Rooms", make_config(session={"roomPrefix": "clinic-"}))
    named = await api.create_session(created.id, "Bilal", room_name="consult-42")
    assert named.room_name == "consult-42"
    assert claims(named)["video"]["room"] == "consult-42"
    generated = await api.create_session(created.id, "Bilal")
    assert generated.room_name.startswith("clinic-")


async def test_default_ttl_is_600_seconds(api: Api) -> None:
    created = await api.create_assistant("Default ttl", make_config())
    assert lifetime(claims(await api.create_session(created.id, "Sana"))) == 600


async def test_ttl_comes_from_the_version_calls_run(api: Api, emu: EmulatorServer) -> None:
    """Once published, sessions run prod: a draft edit of the ttl does not change tokens yet."""
    created = await api.create_assistant("Ttl", make_config(session={"ttl": 120}))
    emu.publish(created.id)
    await api.update_assistant(created.id, config=make_config(session={"ttl": 300}))
    assert lifetime(claims(await api.create_session(created.id, "Omar"))) == 120
    emu.publish(created.id)
    assert lifetime(claims(await api.create_session(created.id, "Omar"))) == 300


async def test_ttl_written_as_120_point_0_is_honoured(api: Api) -> None:
    created = await api.create_assistant("Float ttl", make_config(session={"ttl": 120.0}))
    assert lifetime(claims(await api.create_session(created.id, "Omar"))) == 120


@pytest.mark.parametrize("operation", PUBLIC_OPERATIONS)
async def test_public_sessions_need_no_key_and_send_none(
    operation: str, api: Api, make_api: MakeApi
) -> None:
    assistant_id = await public_assistant(api, session={"ttl": 45})
    anonymous = make_api(api_key=None)
    credentials = await getattr(anonymous, operation)(assistant_id, "عائشہ")
    c = assert_livekit_layout(credentials, "عائشہ")
    assert lifetime(c) == 45
    # a client that has a key does not send it to E7/E8 either
    sent_before = len(api.sent)
    await getattr(api, operation)(assistant_id, "Visitor")
    assert auth_headers(anonymous.sent) == [None]
    assert auth_headers(api.sent[sent_before:]) == [None]


async def test_e8_room_name_keeps_the_request_and_appends_a_session_id(
    api: Api, make_api: MakeApi
) -> None:
    assistant_id = await public_assistant(api)
    anonymous = make_api(api_key=None)
    first = await anonymous.open_public_session(assistant_id, "Visitor", room_name="lobby")
    second = await anonymous.open_public_session(assistant_id, "Visitor", room_name="lobby")
    assert first.room_name != second.room_name
    for credentials in (first, second):
        assert claims(credentials)["video"]["room"] == credentials.room_name
        assert credentials.room_name.startswith("lobby")


@pytest.mark.parametrize("operation", PUBLIC_OPERATIONS)
async def test_not_public_is_forbidden(operation: str, api: Api, make_api: MakeApi) -> None:
    created = await api.create_assistant("Private", make_config())
    with pytest.raises(PermissionDeniedError) as caught:
        await getattr(make_api(api_key=None), operation)(created.id, "Visitor")
    assert caught.value.status_code == 403
    assert caught.value.messages == ["Assistant is not available publicly"]
    assert caught.value.error == "Forbidden"


@pytest.mark.parametrize("operation", PUBLIC_OPERATIONS)
async def test_unknown_assistant_is_not_found(operation: str, make_api: MakeApi) -> None:
    with pytest.raises(NotFoundError) as caught:
        await getattr(make_api(api_key=None), operation)(MISSING, "Visitor")
    assert caught.value.status_code == 404
    assert caught.value.messages == [f"Realtime assistant not found: {MISSING}"]
    assert caught.value.error == "Not Found"


async def test_making_an_assistant_public_opens_it(api: Api, make_api: MakeApi) -> None:
    created = await api.create_assistant("Later public", make_config())
    anonymous = make_api(api_key=None)
    with pytest.raises(PermissionDeniedError):
        await anonymous.open_public_session(created.id, "Visitor")
    await api.update_assistant(created.id, public=True)
    assert (await anonymous.open_public_session(created.id, "Visitor")).token


async def test_e8_without_credits_is_payment_required(
    make_api: MakeApi, emu: EmulatorServer
) -> None:
    key = new_project(emu)["apiKey"]
    owner = make_api(api_key=key)
    assistant_id = await public_assistant(owner)
    emu.set_credits(1, api_key=key)
    anonymous = make_api(api_key=None)
    assert (await anonymous.open_public_session(assistant_id, "Visitor")).token
    emu.set_credits(0, api_key=key)
    with pytest.raises(PaymentRequiredError) as caught:
        await anonymous.open_public_session(assistant_id, "Visitor")
    assert caught.value.status_code == 402
    assert caught.value.messages == ["Insufficient credits to start a realtime session"]
    assert caught.value.error == "Payment Required"
    assert (await owner.create_session(assistant_id, "Owner")).token  # E6 is not billed this way


async def test_e8_unreadable_published_version_is_unavailable(
    api: Api, make_api: MakeApi, emu: EmulatorServer
) -> None:
    assistant_id = await public_assistant(api)
    await api.update_assistant(assistant_id, description="second save")
    emu.publish(assistant_id)
    emu.set_readable(assistant_id, False)
    anonymous = make_api(api_key=None)
    with pytest.raises(ServiceUnavailableError) as caught:
        await anonymous.open_public_session(assistant_id, "Visitor")
    assert caught.value.status_code == 503
    assert caught.value.messages == [
        f"Published version 2 of assistant {assistant_id} is not readable yet"
    ]
    assert caught.value.error is None
    assert len(anonymous.sent) == 1  # E8 is not idempotent: a 503 is not retried
    emu.set_readable(assistant_id, True)
    assert (await anonymous.open_public_session(assistant_id, "Visitor")).token


@pytest.mark.parametrize("operation", ["create_session", *PUBLIC_OPERATIONS])
async def test_empty_participant_name_is_refused_before_sending(operation: str, api: Api) -> None:
    created = await api.create_assistant("Names", make_config(), public=True)
    sent = len(api.sent)
    with pytest.raises(InvalidRequestError) as caught:
        await getattr(api, operation)(created.id, "")
    assert caught.value.fields == ["participantName"]
    assert len(api.sent) == sent
