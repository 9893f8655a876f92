"""Web-session credentials (E6/E7/E8): HS256 JWTs a LiveKit server accepts.

They are signed with the emulator's LiveKit key pair (``iss`` is the API key, the secret is
the HMAC key), so a LiveKit server configured with the same pair (``keys: {KEY: SECRET}``)
and livekit-api's ``TokenVerifier`` accept them. ``wsUrl`` is the server's base
(``ws://host:port``): LiveKit clients append ``/rtc`` themselves.

Claims: ``iss`` (the LiveKit API key), ``sub`` (the participant identity),
``name`` (the display name), ``nbf``, ``exp`` (now + ``config.session.ttl``, default 600),
``jti`` (the session id), ``metadata`` (JSON text: assistant id and the version calls run)
and the ``video`` grant {roomJoin, room, canPublish, canPublishSources: ["microphone"],
canSubscribe}. ``GET /rtc/validate`` checks a token the way a room server would.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

import jwt
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..api import DEFAULT_SESSION_TTL_S
from ._core import Emulator
from ._errors import api_error
from ._records import AssistantRecord

E8_ROOM_NAME_KEEP = 48
"""E8 keeps at most this many characters of a requested room name before the session id."""


def _session_settings(config: Any) -> tuple[int, str]:
    session = config.get("session") if isinstance(config, dict) else None
    ttl, prefix = DEFAULT_SESSION_TTL_S, ""
    if isinstance(session, dict):
        raw_ttl = session.get("ttl")
        # JSON has one number type: 120.0 is the integer 120, as validation agrees
        if (
            isinstance(raw_ttl, int | float)
            and not isinstance(raw_ttl, bool)
            and float(raw_ttl).is_integer()
            and raw_ttl >= 1
        ):
            ttl = int(raw_ttl)
        if isinstance(session.get("roomPrefix"), str):
            prefix = session["roomPrefix"]
    return ttl, prefix


def ws_url(request: Request) -> str:
    """The room server address: this emulator's host and port, ws:// scheme, no path."""
    scheme = "wss" if request.url.scheme == "https" else "ws"
    return f"{scheme}://{request.url.netloc}"


def mint_session(
    emu: Emulator,
    rec: AssistantRecord,
    request: Request,
    participant_name: str,
    room_name: str | None,
    *,
    append_session_id: bool,
) -> dict[str, str]:
    """Session credentials for the version calls run (prod once published, else the draft)."""
    live = rec.live
    ttl, prefix = _session_settings(live.config)
    session_id = uuid.uuid4().hex[:12]
    if room_name is None or room_name == "":
        room = f"{prefix}{session_id}" if prefix else f"room-{session_id}"
    elif append_session_id:
        room = f"{room_name[:E8_ROOM_NAME_KEEP]}-{session_id}"
    else:
        room = room_name
    now = int(time.time())
    claims: dict[str, Any] = {
        "iss": emu.livekit_api_key,
        "sub": f"participant-{uuid.uuid4().hex[:12]}",
        "name": participant_name,
        "nbf": now,
        "exp": now + ttl,
        "jti": session_id,
        "metadata": json.dumps(
            {"realtimeAssistantId": rec.assistant_id, "version": live.version},
            separators=(",", ":"),
        ),
        "video": {
            "roomJoin": True,
            "room": room,
            "canPublish": True,
            "canPublishSources": ["microphone"],
            "canSubscribe": True,
        },
    }
    token = jwt.encode(claims, emu.livekit_api_secret, algorithm="HS256")
    return {"token": token, "wsUrl": ws_url(request), "roomName": room}


def decode_token(emu: Emulator, token: str) -> dict[str, Any]:
    """A token's claims; raises ``jwt.InvalidTokenError`` when forged or expired."""
    claims: dict[str, Any] = jwt.decode(
        token,
        emu.livekit_api_secret,
        algorithms=["HS256"],
        issuer=emu.livekit_api_key,
        options={"require": ["exp", "sub", "iss"]},
    )
    return claims


async def validate_token(emu: Emulator, request: Request) -> Response:
    """``GET /rtc/validate?access_token=...``: 200 with the room and identity, else 401."""
    token = request.query_params.get("access_token", "")
    if not token:
        header = request.headers.get("authorization", "")
        token = header.partition(" ")[2].strip()
    try:
        claims = decode_token(emu, token)
    except jwt.InvalidTokenError as exc:
        raise api_error(401, f"invalid token: {exc}") from exc
    video = claims.get("video") or {}
    return JSONResponse(
        {"valid": True, "identity": claims["sub"], "room": video.get("room"), "exp": claims["exp"]}
    )
