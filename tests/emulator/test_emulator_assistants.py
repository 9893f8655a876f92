"""E1–E5 over real HTTP: shapes, versions and aliases, authentication and project isolation."""

from __future__ import annotations

import httpx

from evalkit.emulator import EmulatorServer

from .helpers import auth, client_for, create_assistant, make_config

CREATE_FIELDS = {
    "realtimeAssistantId",
    "organizationId",
    "projectId",
    "name",
    "description",
    "config",
    "public",
    "createdAt",
    "updatedAt",
    "createdBy",
    "updatedBy",
}


def test_create_returns_the_assistant_without_version_or_aliases(client: httpx.Client) -> None:
    config = make_config(customKey={"kept": [1, 2.5, None]})
    created = create_assistant(client, description="demo", config=config)
    assert set(created) == CREATE_FIELDS
    assert created["config"] == config  # stored as given: no defaults injected
    assert created["public"] is False
    assert created["createdAt"] == created["updatedAt"]
    assert created["createdBy"].startswith("sk_api_…")
    assert client.headers["authorization"].split()[1] not in created["createdBy"]


def test_list_shows_drafts_with_aliases(client: httpx.Client) -> None:
    a = create_assistant(client)
    listed = client.get("/realtime-assistants").json()
    assert [x["realtimeAssistantId"] for x in listed] == [a["realtimeAssistantId"]]
    item = listed[0]
    assert item["version"] == 1
    assert item["aliases"]["draft"]["version"] == 1
    assert "prod" not in item["aliases"]


def test_every_save_bumps_version_and_publish_sets_prod(
    emu: EmulatorServer, client: httpx.Client
) -> None:
    aid = create_assistant(client)["realtimeAssistantId"]
    path = f"/realtime-assistants/{aid}"
    new_config = make_config("A changed prompt.")
    saved = client.post(path, json={"config": new_config})
    assert saved.status_code == 200
    assert saved.json()["version"] == 2
    assert saved.json()["config"] == new_config
    emu.publish(aid)
    client.post(path, json={"public": True})
    client.post(path, json={"name": "Renamed"})
    meta = client.get(f"{path}/metadata").json()
    assert set(meta) == {"realtimeAssistantId", "name", "aliases"}
    assert meta["name"] == "Renamed"
    assert meta["aliases"]["draft"]["version"] == 4
    assert meta["aliases"]["prod"]["version"] == 2
    versions = emu.versions(aid)
    assert [v["version"] for v in versions] == [1, 2, 3, 4]
    assert versions[1]["config"] == new_config
    listed = client.get("/realtime-assistants").json()[0]
    assert listed["public"] is True
    assert listed["version"] == 4


def test_update_validates_and_keeps_the_assistant(client: httpx.Client) -> None:
    aid = create_assistant(client)["realtimeAssistantId"]
    bad = client.post(f"/realtime-assistants/{aid}", json={"public": "yes", "name": ""})
    assert bad.status_code == 400
    body = bad.json()
    assert body["error"] == "Bad Request"
    assert body["statusCode"] == 400
    assert any(m.startswith("public") for m in body["message"])
    assert any(m.startswith("name") for m in body["message"])
    assert (
        client.get(f"/realtime-assistants/{aid}/metadata").json()["aliases"]["draft"]["version"]
        == 1
    )


def test_create_validation_names_each_field(client: httpx.Client) -> None:
    config = {
        "agent": {"instructions": ""},
        "grading": {
            "scorecard": {
                "rubricVersionId": "r",
                "rules": [
                    {"ruleId": "a", "title": "A", "points": 60},
                    {"ruleId": "b", "title": "B", "points": 30},
                ],
            }
        },
        "noiseCancellation": {"model": "nc_xx"},
        "backgroundNoise": {},
    }
    response = client.post("/realtime-assistants", json={"name": "x", "config": config})
    assert response.status_code == 400
    messages = response.json()["message"]
    for field in (
        "config.agent.instructions",
        "config.grading.scorecard.rules",
        "config.noiseCancellation.enabled",
        "config.noiseCancellation.model",
        "config.backgroundNoise.enabled",
    ):
        assert any(m.startswith(field) for m in messages), field
    missing = client.post("/realtime-assistants", json={}).json()["message"]
    assert any(m.startswith("name") for m in missing)
    assert any(m.startswith("config") for m in missing)


def test_delete_then_gone(client: httpx.Client) -> None:
    aid = create_assistant(client)["realtimeAssistantId"]
    deleted = client.delete(f"/realtime-assistants/{aid}")
    assert deleted.status_code == 204
    assert deleted.content == b""
    assert client.get("/realtime-assistants").json() == []
    gone = client.get(f"/realtime-assistants/{aid}/metadata")
    assert gone.status_code == 404
    assert gone.json() == {
        "message": f"Realtime assistant not found: {aid}",
        "error": "Not Found",
        "statusCode": 404,
    }


def test_missing_or_unknown_key_is_401(emu: EmulatorServer) -> None:
    expected = {"message": "invalid authorization", "error": "Unauthorized", "statusCode": 401}
    for headers in ({}, auth("sk_api_unknown"), {"Authorization": "Basic abc"}, auth("nope")):
        response = httpx.get(f"{emu.base_url}/realtime-assistants", headers=headers)
        assert response.status_code == 401
        assert response.json() == expected


def test_projects_are_kept_apart(emu: EmulatorServer, client: httpx.Client) -> None:
    aid = create_assistant(client)["realtimeAssistantId"]
    other = emu.new_project()
    assert other["apiKey"].startswith("sk_api_")
    with client_for(emu, other["apiKey"]) as stranger:
        assert stranger.get("/realtime-assistants").json() == []
        forbidden = {"message": "Forbidden resource", "error": "Forbidden", "statusCode": 403}
        for method, path, body in (
            ("GET", f"/realtime-assistants/{aid}/metadata", None),
            ("POST", f"/realtime-assistants/{aid}", {"public": True}),
            ("DELETE", f"/realtime-assistants/{aid}", None),
            ("POST", f"/realtime-assistants/{aid}/createSession", {"participantName": "x"}),
            ("POST", f"/realtime-assistants/builds/{aid}/simulate", {}),
            ("POST", f"/realtime-assistants/builds/{aid}/refine", {"ownerFeedback": "x"}),
        ):
            response = stranger.request(method, path, json=body)
            assert response.status_code == 403, (method, path)
            assert response.json() == forbidden
    assert client.get(f"/realtime-assistants/{aid}/metadata").status_code == 200


def test_unknown_ids_routes_and_methods_get_envelopes(client: httpx.Client) -> None:
    for aid in ("not-a-uuid", "00000000-0000-0000-0000-000000000000", "x" * 300, "%E2%9C%93"):
        response = client.get(f"/realtime-assistants/{aid}/metadata")
        assert response.status_code == 404
        assert response.json()["message"].startswith("Realtime assistant not found: ")
    unknown_route = client.get("/no/such/thing")
    assert unknown_route.status_code == 404
    assert unknown_route.json()["statusCode"] == 404
    wrong_method = client.put("/realtime-assistants")
    assert wrong_method.status_code == 405
    assert wrong_method.json()["error"] == "Method Not Allowed"
