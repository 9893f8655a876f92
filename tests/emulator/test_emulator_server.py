"""serve(), create_app(), the command, SQLite persistence and shutdown with streams open."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

from evalkit.emulator import create_app, serve

from .helpers import BRIEF, FakeBackend, client_for, create_assistant, make_config


def test_serve_handle(tmp_path: Path) -> None:
    with serve(port=0, api_key="sk_api_given_key_1234", time_scale=0.01) as emu:
        assert emu.base_url.endswith("/v1")
        assert emu.base_url.startswith("http://127.0.0.1:")
        assert emu.api_key == "sk_api_given_key_1234"
        assert emu.admin_url.endswith("/_emulator")
        assert "sk_api_given_key_1234" not in repr(emu)
        assert httpx.get(f"{emu.base_url}/openapi.json").json()["openapi"].startswith("3.")
    with serve() as generated:
        assert generated.api_key.startswith("sk_api_")
    with pytest.raises(ValueError, match="sk_api_"):
        serve(api_key="not-a-key")


def test_state_survives_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "emulator.db"
    with serve(db=db, time_scale=0.001) as emu, client_for(emu) as c:
        key = emu.api_key
        aid = create_assistant(c, public=True)["realtimeAssistantId"]
        c.post(f"/realtime-assistants/{aid}", json={"config": make_config("Second.")})
        emu.publish(aid)
        built = emu.build("Built", BRIEF, "Prompt.")["realtimeAssistantId"]
        list_id = emu.create_contact_list(
            {"name": "l", "sourceKind": "paste", "summary": {"willBeCalled": 0}}
        )["listId"]
        config_id = c.post(
            "/synthesis/phrase-replacement-config",
            json={"phraseReplacements": [{"phrase": "a", "replacement": "b"}]},
        ).json()["configId"]
        build_id = c.post(
            f"/realtime-assistants/builds/{built}/refine", json={"ownerFeedback": "x"}
        ).json()["buildId"]
        emu.set_credits(3)
        token = c.post(
            f"/realtime-assistants/{aid}/createSession", json={"participantName": "a"}
        ).json()["token"]
        before = c.get("/realtime-assistants").json()
    assert key not in db.read_bytes().decode("utf-8", "replace")  # keys are stored as digests
    with serve(db=db, api_key=key, time_scale=0.001) as emu, client_for(emu) as c:
        assert [a["realtimeAssistantId"] for a in c.get("/realtime-assistants").json()][:2] == [
            a["realtimeAssistantId"] for a in before
        ][:2]
        meta = c.get(f"/realtime-assistants/{aid}/metadata").json()
        assert meta["aliases"]["prod"]["version"] == 2
        assert emu.versions(aid)[0]["version"] == 1
        assert c.get(f"/contact-lists/{list_id}").status_code == 200
        assert emu.admin("GET", "/credits") == {"credits": 3}
        assert emu.build_status(build_id)["status"] in ("started", "running", "succeeded")
        tts = c.post(
            "/synthesis/text-to-speech",
            json={"text": "a", "voiceId": "v_8eelc901", "phraseReplacementConfigId": config_id},
        )
        assert tts.status_code == 200
        valid = httpx.get(f"{emu.url}/rtc/validate", params={"access_token": token})
        assert valid.status_code == 200
    with serve(db=db) as emu, client_for(emu) as c:  # a fresh key reaches the default project
        assert emu.api_key != key
        assert len(c.get("/realtime-assistants").json()) == 2


def test_shutdown_with_streams_open() -> None:
    backend = FakeBackend(turns=None, pause=0.01)
    server = serve(time_scale=1.0, backend=backend).start()
    client = client_for(server)
    aid = create_assistant(client)["realtimeAssistantId"]
    ended: list[str] = []

    def reader() -> None:
        try:
            with client.stream("POST", f"/realtime-assistants/builds/{aid}/simulate", json={}) as r:
                lines = list(r.iter_lines())
            ended.append("done" if "event: done" in lines else "no terminal")
        except httpx.HTTPError as exc:
            ended.append(type(exc).__name__)

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    while server.emulator.stats.active < 3:
        threading.Event().wait(0.01)
    thread = server._thread
    server.stop()
    assert thread is not None
    assert not thread.is_alive()
    for t in threads:
        t.join(10)
    client.close()
    assert len(ended) == 3
    assert "done" not in ended


def test_create_app_embeds_without_a_server() -> None:
    app = create_app(api_key="sk_api_embedded_key_0001", time_scale=0.01)
    key = app.state.emulator.api_key

    async def call() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://emu/v1") as c:
            return await c.get("/realtime-assistants", headers={"Authorization": f"Bearer {key}"})

    response = asyncio.run(call())
    assert response.status_code == 200
    assert response.json() == []


def test_command_prints_settings_and_serves(tmp_path: Path) -> None:
    code = "import typer; from evalkit.cli._emulator_command import emulator; typer.run(emulator)"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            code,
            "--port",
            "0",
            "--time-scale",
            "0.01",
            "--db",
            str(tmp_path / "e.db"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert proc.stdout is not None
        settings = dict(proc.stdout.readline().strip().split("=", 1) for _ in range(2))
        assert settings["EVALKIT_BASE_URL"].endswith("/v1")
        assert settings["EVALKIT_API_KEY"].startswith("sk_api_")
        response = httpx.get(
            f"{settings['EVALKIT_BASE_URL']}/realtime-assistants",
            headers={"Authorization": f"Bearer {settings['EVALKIT_API_KEY']}"},
        )
        assert response.status_code == 200
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(20)
    assert proc.returncode == 0


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        ("/realtime-assistants", {"GET", "HEAD", "POST"}),
        ("/realtime-assistants/00000000-0000-0000-0000-000000000000", {"POST", "DELETE"}),
        ("/synthesis/text-to-speech", {"POST"}),
    ],
    ids=["list-create", "update-delete", "tts"],
)
def test_405_lists_every_allowed_method(client: httpx.Client, path: str, allowed: set[str]) -> None:
    response = client.put(path, json={})
    assert response.status_code == 405
    assert {m.strip() for m in response.headers["allow"].split(",")} == allowed
    assert response.json()["statusCode"] == 405
