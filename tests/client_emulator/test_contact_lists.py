"""E13 over loopback: a contact list's metadata with its import summary, 404 for an unknown
list, 403 for another project's list, 401 for a bad key."""

from __future__ import annotations

from typing import Any

import pytest

from evalkit.api import (
    AuthenticationError,
    ContactList,
    NotFoundError,
    PermissionDeniedError,
)
from evalkit.emulator import EmulatorServer
from tests.client_emulator.conftest import MakeApi, new_project

MISSING = "00000000-0000-4000-8000-00000000abcd"


def a_list(**extra: Any) -> dict[str, Any]:
    """A contact list as an import leaves it (without ids and timestamps)."""
    return {
        "name": "October reminders",
        "sourceKind": "csv_upload",
        "summary": {
            "willBeCalled": 3,
            "excluded": {
                "invalidPhone": 1,
                "missingName": 0,
                "duplicate": 2,
                "dnc": 1,
                "recentlyCalled": 0,
            },
            "errors": [
                {"row": 4, "issue": "invalidPhone", "value": "0300-12"},
                {"row": 6, "issue": "duplicate", "value": "+923001234567"},
            ],
        },
        "contactCount": 3,
        **extra,
    }


async def test_get_contact_list_metadata(make_api: MakeApi, emu: EmulatorServer) -> None:
    project = new_project(emu)
    stored = emu.create_contact_list(a_list(sheetRef={"id": "sheet-1"}), api_key=project["apiKey"])
    got = await make_api(api_key=project["apiKey"]).get_contact_list(stored["listId"])
    assert isinstance(got, ContactList)
    assert got.list_id == stored["listId"]
    assert (got.organization_id, got.project_id) == (
        project["organizationId"],
        project["projectId"],
    )
    assert got.name == "October reminders"
    assert got.source_kind == "csv_upload"
    assert got.summary.will_be_called == 3 == got.contact_count
    assert got.summary.excluded is not None
    assert (got.summary.excluded.invalid_phone, got.summary.excluded.duplicate) == (1, 2)
    assert got.summary.excluded.dnc == 1
    assert got.summary.errors is not None
    assert [(e.row, e.issue, e.value) for e in got.summary.errors] == [
        (4, "invalidPhone", "0300-12"),
        (6, "duplicate", "+923001234567"),
    ]
    assert got.version == 1
    assert got.created_at is not None
    assert got.created_at == got.updated_at
    assert got.to_json() == stored  # every field kept, the unnamed source reference too


async def test_unknown_contact_list_is_not_found(make_api: MakeApi) -> None:
    with pytest.raises(NotFoundError) as caught:
        await make_api().get_contact_list(MISSING)
    assert caught.value.status_code == 404
    assert caught.value.messages == [f"Contact list not found: {MISSING}"]
    assert caught.value.error == "Not Found"


async def test_another_projects_list_is_forbidden(make_api: MakeApi, emu: EmulatorServer) -> None:
    theirs = emu.create_contact_list(a_list(), api_key=new_project(emu)["apiKey"])
    with pytest.raises(PermissionDeniedError) as caught:
        await make_api().get_contact_list(theirs["listId"])
    assert caught.value.status_code == 403
    assert caught.value.messages == ["Forbidden resource"]
    assert caught.value.error == "Forbidden"


async def test_bad_key_is_unauthorized(make_api: MakeApi, emu: EmulatorServer) -> None:
    ours = emu.create_contact_list(a_list())
    with pytest.raises(AuthenticationError) as caught:
        await make_api(api_key="sk_api_unknown_key_000000000000").get_contact_list(ours["listId"])
    assert caught.value.status_code == 401
    assert caught.value.messages == ["invalid authorization"]
