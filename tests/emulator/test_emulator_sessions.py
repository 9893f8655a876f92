"""E6–E8: JWT credentials in the LiveKit claim layout, public access, credits, 503, delete."""

from __future__ import annotations

import json
import time

import httpx
import jwt
import pytest

from evalkit.emulator import EmulatorServer

from .helpers import create_assistant, make_config


def _claims(token: str) -> dict[str, object]:
    header = jwt.get_unverified_header(token)
    assert header["alg"] == "HS256"
    claims: dict[str, object] = jwt.decode(token, options={"verify_signature": False})
    return claims


def test_create_session_token_claims(emu: EmulatorServer, client: httpx.Client) -> None:
    config = make_config(session={"ttl": 120, "roomPrefix": "clinic-"})
    aid = create_assistant(client, config=config)["realtimeAssistantId"]
    response = client.post(
        f"/realtime-assistants/{aid}/createSession", json={"participantName": "Ayesha"}
    )
    assert response.status_code == 200
    creds = response.json()
    assert set(creds) == {"token", "wsUrl", "roomName"}
    assert creds["wsUrl"] == f"ws://127.0.0.1:{emu.port}"
    assert creds["roomName"].startswith("clinic-")
    claims = _claims(creds["token"])
    assert isinstance(claims["sub"], str)
    assert claims["sub"]
    assert claims["name"] == "Ayesha"
    assert isinstance(claims["iss"], str)
    assert str(claims["iss"]).startswith("API")
    assert claims["exp"] == claims["nbf"] + 120  # type: ignore[operator]
    assert abs(int(claims["nbf"]) - time.time()) < 60  # type: ignore[call-overload]
    assert claims["video"] == {
        "roomJoin": True,
        "room": creds["roomName"],
        "canPublish": True,
        "canPublishSources": ["microphone"],
        "canSubscribe": True,
    }
    assert json.loads(str(claims["metadata"]))["realtimeAssistantId"] == aid
    valid = httpx.get(f"{emu.url}/rtc/validate", params={"access_token": creds["token"]})
    assert valid.status_code == 200
    assert valid.json()["room"] == creds["roomName"]
    forged = jwt.encode({**claims, "name": "x"}, "another-secret-of-at-least-32-bytes!!", "HS256")
    assert httpx.get(f"{emu.url}/rtc/validate", params={"access_token": forged}).status_code == 401


def test_generated_room_names_are_unique_and_requested_ones_kept(client: httpx.Client) -> None:
    aid = create_assistant(client)["realtimeAssistantId"]
    path = f"/realtime-assistants/{aid}/createSession"
    rooms = {client.post(path, json={"participantName": "a"}).json()["roomName"] for _ in range(5)}
    assert len(rooms) == 5
    kept = client.post(path, json={"participantName": "a", "roomName": "my-room"}).json()
    assert kept["roomName"] == "my-room"
    assert _claims(kept["token"])["exp"] == _claims(kept["token"])["nbf"] + 600  # type: ignore[operator]


def test_session_validation(client: httpx.Client) -> None:
    aid = create_assistant(client)["realtimeAssistantId"]
    for body in ({}, {"participantName": ""}, {"participantName": 5}, []):
        response = client.post(f"/realtime-assistants/{aid}/createSession", json=body)
        assert response.status_code == 400
        assert response.json()["error"] == "Bad Request"
        assert all(isinstance(m, str) for m in response.json()["message"])


@pytest.mark.parametrize("operation", ["createPublicSession", "public-session"])
def test_public_sessions(emu: EmulatorServer, client: httpx.Client, operation: str) -> None:
    aid = create_assistant(client)["realtimeAssistantId"]
    url = f"{emu.base_url}/realtime-assistants/{aid}/{operation}"
    body = {"participantName": "Guest", "roomName": "lobby"}
    private = httpx.post(url, json=body)
    assert private.status_code == 403
    assert private.json() == {
        "message": "Assistant is not available publicly",
        "error": "Forbidden",
        "statusCode": 403,
    }
    client.post(f"/realtime-assistants/{aid}", json={"public": True})
    opened = httpx.post(url, json=body)
    assert opened.status_code == 200
    room = opened.json()["roomName"]
    if operation == "public-session":
        assert room.startswith("lobby-")
        assert room != "lobby"
    else:
        assert room == "lobby"
    unknown = httpx.post(url.replace(aid, "no-such-assistant"), json=body)
    assert unknown.status_code == 404
    assert unknown.json()["message"] == "Realtime assistant not found: no-such-assistant"
    empty = httpx.post(url, json={"participantName": ""})
    assert empty.status_code == 400
    assert any(m.startswith("participantName") for m in empty.json()["message"])


def test_e8_shortens_long_room_names(emu: EmulatorServer, client: httpx.Client) -> None:
    aid = create_assistant(client, public=True)["realtimeAssistantId"]
    url = f"{emu.base_url}/realtime-assistants/{aid}/public-session"
    room = httpx.post(url, json={"participantName": "g", "roomName": "r" * 200}).json()["roomName"]
    assert room.startswith("r" * 10)
    assert len(room) < 200


def test_e8_credits_and_unreadable_published_version(
    emu: EmulatorServer, client: httpx.Client
) -> None:
    aid = create_assistant(client, public=True)["realtimeAssistantId"]
    url = f"{emu.base_url}/realtime-assistants/{aid}/public-session"
    body = {"participantName": "Guest"}
    emu.set_credits(1)
    assert httpx.post(url, json=body).status_code == 200  # spends the last credit
    no_credit = httpx.post(url, json=body)
    assert no_credit.status_code == 402
    assert no_credit.json() == {
        "message": "Insufficient credits to start a realtime session",
        "error": "Payment Required",
        "statusCode": 402,
    }
    emu.set_credits(None)
    emu.publish(aid, readable=False)
    held = httpx.post(url, json=body)
    assert held.status_code == 503
    assert held.json() == {
        "message": f"Published version 1 of assistant {aid} is not readable yet",
        "statusCode": 503,
    }
    emu.set_readable(aid, True)
    assert httpx.post(url, json=body).status_code == 200


def test_sessions_use_the_published_config(emu: EmulatorServer, client: httpx.Client) -> None:
    aid = create_assistant(client, config=make_config(session={"ttl": 50}))["realtimeAssistantId"]
    emu.publish(aid)
    client.post(f"/realtime-assistants/{aid}", json={"config": make_config(session={"ttl": 900})})
    token = client.post(
        f"/realtime-assistants/{aid}/createSession", json={"participantName": "a"}
    ).json()["token"]
    claims = _claims(token)
    assert claims["exp"] == claims["nbf"] + 50  # type: ignore[operator]
    assert json.loads(str(claims["metadata"]))["version"] == 1


def test_after_delete_new_sessions_refused_issued_tokens_stay_valid(
    emu: EmulatorServer, client: httpx.Client
) -> None:
    aid = create_assistant(client, public=True)["realtimeAssistantId"]
    token = client.post(
        f"/realtime-assistants/{aid}/createSession", json={"participantName": "a"}
    ).json()["token"]
    assert client.delete(f"/realtime-assistants/{aid}").status_code == 204
    again = client.post(f"/realtime-assistants/{aid}/createSession", json={"participantName": "a"})
    assert again.status_code == 404
    public = httpx.post(
        f"{emu.base_url}/realtime-assistants/{aid}/public-session", json={"participantName": "a"}
    )
    assert public.status_code == 404
    valid = httpx.get(f"{emu.url}/rtc/validate", params={"access_token": token})
    assert valid.status_code == 200
