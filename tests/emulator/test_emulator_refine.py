"""Admin builds and E10 refine builds: lifecycle, concurrent-build failure, regeneration."""

from __future__ import annotations

from typing import Any

import httpx

from evalkit.emulator import EmulatorServer, serve
from tests.waiting import wait_until

from .helpers import BRIEF, client_for, create_assistant, make_config


def _wait_status(emu: EmulatorServer, build_id: str, status: str) -> dict[str, Any]:
    return wait_until(
        lambda: (seen := emu.build_status(build_id))["status"] == status and seen,
        10,
        what=f"build {build_id} {status}",
    )


def test_admin_build_creates_an_assistant_with_artifacts(emu: EmulatorServer) -> None:
    built = emu.build("Clinic reminder", BRIEF, "Remind {{name}}.", initial_greeting=True)
    assert built["name"] == "Clinic reminder"
    assert built["version"] == 1
    assert built["config"]["agent"] == {"instructions": "Remind {{name}}.", "initialGreeting": True}
    assert emu.build_status(built["buildId"])["status"] == "succeeded"
    with client_for(emu) as c:
        listed = c.get("/realtime-assistants").json()
    assert [a["realtimeAssistantId"] for a in listed] == [built["realtimeAssistantId"]]


def test_refine_lifecycle_regenerates_config_and_carries_the_prompt() -> None:
    with serve(time_scale=0.002) as emu, client_for(emu) as c:  # a build takes 0.24 s
        template = make_config(
            "Remind {{name}}.", tts={"default": {"provider": "serviceai", "voiceId": "v_8eelc901"}}
        )
        built = emu.build("Clinic reminder", BRIEF, "Remind {{name}}.", config=template)
        aid = built["realtimeAssistantId"]
        edited = make_config("Remind {{name}} politely.", session={"ttl": 30})
        c.post(f"/realtime-assistants/{aid}", json={"name": "Manual name", "config": edited})
        response = c.post(
            f"/realtime-assistants/builds/{aid}/refine",
            json={"ownerFeedback": "Say the date twice."},
        )
        assert response.status_code == 200
        started = response.json()
        assert set(started) == {"buildId", "assistantId", "status"}
        assert started["assistantId"] == aid
        assert started["status"] == "started"
        assert emu.build_status(started["buildId"])["status"] in ("started", "running")
        second = c.post(f"/realtime-assistants/builds/{aid}/refine", json={"ownerFeedback": "x"})
        assert second.status_code == 200
        assert second.json()["status"] == "started"
        assert emu.build_status(second.json()["buildId"])["status"] == "failed"
        assert _wait_status(emu, started["buildId"], "running")["status"] == "running"
        assert _wait_status(emu, started["buildId"], "succeeded")["status"] == "succeeded"
        meta = c.get(f"/realtime-assistants/{aid}/metadata").json()
        after = c.get("/realtime-assistants").json()[0]
    assert meta["aliases"]["draft"]["version"] == 3
    assert after["name"] == "Clinic reminder"  # regenerated from the build
    assert "session" not in after["config"]  # manual edits of other keys are lost
    assert after["config"]["tts"] == template["tts"]
    instructions = after["config"]["agent"]["instructions"]
    assert instructions.startswith("Remind {{name}} politely.")  # the prompt carries forward
    assert "Say the date twice." in instructions


def test_refine_errors(emu: EmulatorServer, client: httpx.Client) -> None:
    plain = create_assistant(client)["realtimeAssistantId"]
    no_artifacts = client.post(
        f"/realtime-assistants/builds/{plain}/refine", json={"ownerFeedback": "x"}
    )
    assert no_artifacts.status_code == 404
    assert no_artifacts.json() == {
        "message": "Assistant has no build artifacts to refine",
        "error": "Not Found",
        "statusCode": 404,
    }
    built = emu.build("b", BRIEF, "Prompt.")["realtimeAssistantId"]
    for body, field in (
        ({"ownerFeedback": "x" * 2001}, "ownerFeedback"),
        ({"ownerFeedback": 7}, "ownerFeedback"),
        ({}, "ownerFeedback"),
        ({"ownerFeedback": "ok", "brief": "not an object"}, "brief"),
    ):
        response = client.post(f"/realtime-assistants/builds/{built}/refine", json=body)
        assert response.status_code == 400
        assert any(m.startswith(field) for m in response.json()["message"]), body
    unknown = client.post(
        "/realtime-assistants/builds/8d0c1f4e-1111-4111-8111-111111111111/refine",
        json={"ownerFeedback": "x"},
    )
    assert unknown.status_code == 404
    assert (
        httpx.post(
            f"{emu.base_url}/realtime-assistants/builds/{built}/refine", json={"ownerFeedback": "x"}
        ).status_code
        == 401
    )


def test_refine_brief_replaces_the_stored_brief() -> None:
    new_brief = {"context": "A new reason to call.", "sampleRows": [{"name": "Zara"}]}
    with serve(time_scale=0.0005) as emu, client_for(emu) as c:
        aid = emu.build("b", BRIEF, "Prompt.")["realtimeAssistantId"]
        response = c.post(
            f"/realtime-assistants/builds/{aid}/refine",
            json={"ownerFeedback": "shorter", "brief": new_brief},
        )
        _wait_status(emu, response.json()["buildId"], "succeeded")
        assert emu.emulator.state.assistants[aid].artifacts.brief == new_brief  # type: ignore[union-attr]


def test_admin_build_validation(emu: EmulatorServer) -> None:
    with client_for(emu) as c:
        url = f"{emu.admin_url}/builds"
        response = c.post(url, json={"name": "", "brief": {"sampleRows": "x"}})
        assert response.status_code == 400
        messages = response.json()["message"]
        for field in ("name", "instructions", "brief.sampleRows"):
            assert any(m.startswith(field) for m in messages), field
        missing = c.get(f"{emu.admin_url}/builds/nope")
        assert missing.status_code == 404
