"""The admin API and E13 contact lists."""

from __future__ import annotations

import httpx

from evalkit.emulator import EmulatorServer

from .helpers import client_for

CONTACT_LIST = {
    "name": "November reminders",
    "sourceKind": "csv_upload",
    "summary": {
        "willBeCalled": 2,
        "excluded": {
            "invalidPhone": 1,
            "missingName": 0,
            "duplicate": 1,
            "dnc": 0,
            "recentlyCalled": 0,
        },
        "errors": [{"row": 3, "issue": "invalidPhone", "value": "12"}],
    },
    "contactCount": 2,
}


def test_contact_list_round_trip(emu: EmulatorServer, client: httpx.Client) -> None:
    stored = emu.create_contact_list(CONTACT_LIST)
    for key, value in CONTACT_LIST.items():
        assert stored[key] == value
    assert stored["createdAt"] == stored["updatedAt"]
    assert stored["version"] == 1
    assert stored["projectId"] == emu.admin("GET", "/projects/me")["projectId"]
    fetched = client.get(f"/contact-lists/{stored['listId']}")
    assert fetched.status_code == 200
    assert fetched.json() == stored
    missing = client.get("/contact-lists/5b0a1c2d-0000-4000-8000-000000000000")
    assert missing.status_code == 404
    assert missing.json() == {
        "message": "Contact list not found: 5b0a1c2d-0000-4000-8000-000000000000",
        "error": "Not Found",
        "statusCode": 404,
    }
    with client_for(emu, emu.new_project()["apiKey"]) as stranger:
        other = stranger.get(f"/contact-lists/{stored['listId']}")
    assert other.status_code == 403
    assert other.json()["message"] == "Forbidden resource"
    assert httpx.get(f"{emu.base_url}/contact-lists/{stored['listId']}").status_code == 401


def test_contact_list_ids_and_count_are_the_emulators(emu: EmulatorServer) -> None:
    body = {k: v for k, v in CONTACT_LIST.items() if k != "contactCount"}
    stored = emu.create_contact_list({**body, "listId": "mine", "version": 7})
    assert stored["listId"] != "mine"
    assert stored["version"] == 1
    assert stored["contactCount"] == 2
    with client_for(emu) as c:
        bad = c.post(
            f"{emu.admin_url}/contact-lists",
            json={**CONTACT_LIST, "contactCount": 5, "sourceKind": "fax"},
        )
    assert bad.status_code == 400
    messages = bad.json()["message"]
    assert any(m.startswith("contactCount") for m in messages)
    assert any(m.startswith("sourceKind") for m in messages)


def test_projects_share_an_organization_when_asked(emu: EmulatorServer) -> None:
    first = emu.new_project()
    second = emu.new_project(organization_id=first["organizationId"])
    assert second["organizationId"] == first["organizationId"]
    assert second["projectId"] != first["projectId"]
    emu.set_credits(0, api_key=first["apiKey"])
    assert emu.admin("GET", "/credits", api_key=second["apiKey"]) == {"credits": 0}


def test_admin_needs_a_project_key(emu: EmulatorServer) -> None:
    for method, path in (
        ("GET", "/stats"),
        ("PUT", "/faults"),
        ("POST", "/builds"),
        ("PUT", "/credits"),
    ):
        response = httpx.request(method, f"{emu.admin_url}{path}", json={})
        assert response.status_code == 401, path
    created = httpx.post(f"{emu.admin_url}/projects")
    assert created.status_code == 201
    assert created.json()["apiKey"].startswith("sk_api_")


def test_admin_bodies_are_validated(emu: EmulatorServer) -> None:
    with client_for(emu) as c:
        for method, path, body in (
            ("PUT", "/credits", {"credits": -1}),
            ("PUT", "/credits", {}),
            ("PUT", "/synthesis-limit", {"requestsPerMinute": 0}),
            ("POST", "/projects", {"organizationId": 5}),
            ("POST", "/contact-lists", []),
            ("POST", "/assistants/x/publish", {"readable": "no"}),
        ):
            response = c.request(method, f"{emu.admin_url}{path}", json=body)
            assert response.status_code == 400, (path, body)
            assert response.json()["error"] == "Bad Request"
    stats = emu.stats()
    assert {"started", "completed", "cancelled", "active"} <= set(stats)
    assert stats["unhandledErrors"] == 0
