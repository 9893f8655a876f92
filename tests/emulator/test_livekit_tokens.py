"""Session tokens a real LiveKit server accepts: livekit-api's TokenVerifier checks E6/E7/E8
tokens signed with a key pair set through serve(), the environment or the command line."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import jwt
import pytest
from livekit.api import TokenVerifier

from evalkit.emulator import serve

from .helpers import auth, create_assistant

KEY = "APIevalkitTest1"
SECRET = "s3cret-" + "x" * 36  # 43 printable characters
ROOT = Path(__file__).resolve().parents[2]


def _three_sessions(base_url: str, api_key: str) -> list[dict[str, str]]:
    with httpx.Client(base_url=base_url, headers=auth(api_key), timeout=30) as c:
        aid = create_assistant(c, public=True)["realtimeAssistantId"]
        ra = f"/realtime-assistants/{aid}"
        body = {"participantName": "Ayesha", "roomName": "clinic"}
        out = []
        for path in ("/createSession", "/createPublicSession", "/public-session"):
            response = c.post(ra + path, json=body)
            assert response.status_code == 200, response.text
            out.append(response.json())
        return out


def _verify(creds: dict[str, str], key: str, secret: str) -> None:
    """LiveKit's verifier accepts the token under (key, secret) and reads the right grants."""
    claims = TokenVerifier(key, secret).verify(creds["token"])
    assert jwt.get_unverified_header(creds["token"])["alg"] == "HS256"
    assert claims.name == "Ayesha"
    assert claims.identity
    assert claims.video.room_join is True
    assert claims.video.room == creds["roomName"]
    assert claims.video.can_publish_sources == ["microphone"]


def test_serve_arguments_sign_tokens_livekit_accepts() -> None:
    with serve(livekit_api_key=KEY, livekit_api_secret=SECRET) as emu:
        assert (emu.livekit_api_key, emu.livekit_api_secret) == (KEY, SECRET)
        sessions = _three_sessions(emu.base_url, emu.api_key)
        for creds in sessions:
            _verify(creds, KEY, SECRET)
            assert creds["wsUrl"] == f"ws://127.0.0.1:{emu.port}" == emu.livekit_url
            with pytest.raises(jwt.InvalidSignatureError):
                TokenVerifier(KEY, SECRET[::-1]).verify(creds["token"])
        assert SECRET not in repr(emu.emulator.settings)


def test_environment_variables_set_the_pair(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALKIT_LIVEKIT_API_KEY", KEY)
    monkeypatch.setenv("EVALKIT_LIVEKIT_API_SECRET", SECRET)
    with serve() as emu:
        assert (emu.livekit_api_key, emu.livekit_api_secret) == (KEY, SECRET)
        sessions = _three_sessions(emu.base_url, emu.api_key)
    assert len(sessions) == 3
    for creds in sessions:
        _verify(creds, KEY, SECRET)
        assert jwt.decode(creds["token"], options={"verify_signature": False})["iss"] == KEY
        with pytest.raises(jwt.InvalidSignatureError):  # signed with this pair, no other
            TokenVerifier(KEY, "y" * 43).verify(creds["token"])


def test_the_generated_pair_is_printable_and_verifies() -> None:
    with serve() as emu:
        key, secret = emu.livekit_api_key, emu.livekit_api_secret
        assert re.fullmatch(r"API[0-9a-f]{12}", key)
        assert re.fullmatch(r"[A-Za-z0-9_-]{43}", secret)
        _verify(_three_sessions(emu.base_url, emu.api_key)[2], key, secret)


def test_the_generated_pair_is_kept_across_restarts(tmp_path: Path) -> None:
    db = tmp_path / "emu.sqlite"
    with serve(db=db) as first:
        pair = (first.livekit_api_key, first.livekit_api_secret)
    with serve(db=db) as second:
        assert (second.livekit_api_key, second.livekit_api_secret) == pair


@pytest.mark.parametrize("secret", ["short", "x" * 31, "has space " + "x" * 32])
def test_a_secret_livekit_would_refuse_is_refused(secret: str) -> None:
    with pytest.raises(ValueError, match="livekit_api_secret"):
        serve(livekit_api_secret=secret)


@pytest.fixture
def command() -> Iterator[tuple[subprocess.Popen[str], dict[str, str]]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALKIT_")}
    env["PYTHONPATH"] = str(ROOT)
    args = [sys.executable, "-m", "evalkit", "emulator", "--port", "0"]
    args += ["--livekit-api-key", KEY, "--livekit-api-secret", SECRET]
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
    )
    printed: dict[str, str] = {}
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 30
        while "LIVEKIT_API_SECRET" not in printed and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            name, _, value = line.strip().removeprefix("export ").partition("=")
            printed[name] = shlex.split(value)[0] if value else value
        yield proc, printed
    finally:
        proc.terminate()
        proc.wait(10)


def test_the_command_line_pair_signs_and_is_printed(
    command: tuple[subprocess.Popen[str], dict[str, str]],
) -> None:
    _, printed = command
    assert printed["LIVEKIT_API_KEY"] == KEY
    assert printed["LIVEKIT_API_SECRET"] == SECRET
    base = printed["EVALKIT_BASE_URL"]
    assert printed["LIVEKIT_URL"] == "ws" + base.removesuffix("/v1")[len("http") :]
    for creds in _three_sessions(base, printed["EVALKIT_API_KEY"]):
        _verify(creds, KEY, SECRET)
        assert creds["wsUrl"] == printed["LIVEKIT_URL"]
