"""E10 over loopback: a refine of a built assistant starts a build that later succeeds (the
prompt carries forward with the owner feedback; name and config are regenerated; the version
bumps), a second refine while one is in flight is accepted and later `failed`, hand-made
assistants have no build artifacts (404), and the feedback limit is checked before sending."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from evalkit.api import Assistant, InvalidRequestError, NotFoundError, RefineResponse
from evalkit.emulator import EmulatorServer
from tests.client_emulator.conftest import NEUTRAL, SEED, Api, make_config, serving
from tests.waiting import wait_until

BRIEF = {
    "context": "Hamid booked a dental check-up at the Karachi Clinic and expects a reminder.",
    "sampleRows": [{"customer_name": "Hamid", "appointment_date": "Monday"}],
}
INSTRUCTIONS = "You remind {{customer_name}} of the appointment on {{appointment_date}}."
GREETING = 'Say: "Hello {{customer_name}}, this is the Karachi Clinic."'
GREETING_CONFIG = make_config("replaced by the build", greeting=GREETING)
FINAL = ("succeeded", "failed")
BUILD_TIME_SCALE = 0.004
"""Builds take 120 emulated seconds: 0.48 s here (the simulate ceiling is still 1.2 s)."""


@pytest.fixture(scope="module")
def emu() -> Iterator[EmulatorServer]:
    """This module's emulator: faster builds than the shared default."""
    with serving(time_scale=BUILD_TIME_SCALE, seed=SEED) as server:
        yield server


def build(emu: EmulatorServer, name: str = "Clinic reminder", **extra: Any) -> dict[str, Any]:
    """An assistant built from a brief (so it has build artifacts)."""
    return emu.build(name, BRIEF, INSTRUCTIONS, config=GREETING_CONFIG, **extra)


def finished(emu: EmulatorServer, build_id: str) -> str:
    status = wait_until(
        lambda: (s := emu.build_status(build_id)["status"]) in FINAL and s,
        interval=0.05,
        what=f"build {build_id} to finish",
    )
    assert isinstance(status, str)
    return status


async def instructions_of(api: Api, assistant_id: str) -> str:
    items: list[Assistant] = await api.list_assistants()
    (item,) = [a for a in items if a.id == assistant_id]
    return item.config.agent.instructions


async def test_refine_starts_a_build_that_applies_the_feedback(
    api: Api, emu: EmulatorServer
) -> None:
    built = build(emu)
    assistant_id = built["realtimeAssistantId"]
    feedback = "Always give the clinic's phone number, 021-111-222, before saying goodbye."
    started = await api.refine(assistant_id, feedback)
    assert isinstance(started, RefineResponse)
    assert started.status == "started"
    assert started.assistant_id == assistant_id
    uuid.UUID(started.build_id)
    assert finished(emu, started.build_id) == "succeeded"
    meta = await api.get_assistant_metadata(assistant_id)
    assert meta.aliases.draft.version == built["version"] + 1
    instructions = await instructions_of(api, assistant_id)
    assert instructions.startswith(INSTRUCTIONS)
    assert feedback in instructions


async def test_a_finished_build_regenerates_name_and_config(api: Api, emu: EmulatorServer) -> None:
    """Manual edits are overwritten; only the prompt (as it was when the run began) carries on."""
    assistant_id = build(emu)["realtimeAssistantId"]
    edited = make_config(
        "Hand-edited prompt.", greeting=GREETING, backgroundNoise={"enabled": True}
    )
    await api.update_assistant(assistant_id, name="Renamed by hand", config=edited)
    started = await api.refine(assistant_id, "Speak more slowly.")
    assert finished(emu, started.build_id) == "succeeded"
    (item,) = [a for a in await api.list_assistants() if a.id == assistant_id]
    assert item.name == "Clinic reminder"
    assert item.config.background_noise is None
    assert item.config.agent.instructions.startswith("Hand-edited prompt.")
    assert "Speak more slowly." in item.config.agent.instructions
    assert item.version == 3


async def test_second_refine_in_flight_is_accepted_then_failed(
    api: Api, emu: EmulatorServer
) -> None:
    assistant_id = build(emu)["realtimeAssistantId"]
    first = await api.refine(assistant_id, "Be brief.")
    second = await api.refine(assistant_id, "Be briefer.")
    assert (first.status, second.status) == ("started", "started")  # both answered 200
    assert first.build_id != second.build_id
    assert finished(emu, second.build_id) == "failed"
    assert finished(emu, first.build_id) == "succeeded"
    instructions = await instructions_of(api, assistant_id)
    assert "Be brief." in instructions
    assert "Be briefer." not in instructions


async def test_hand_made_assistant_has_no_build_artifacts(api: Api) -> None:
    created = await api.create_assistant("Hand made", make_config())
    with pytest.raises(NotFoundError) as caught:
        await api.refine(created.id, "Be brief.")
    assert caught.value.status_code == 404
    assert caught.value.messages == ["Assistant has no build artifacts to refine"]
    assert caught.value.error == "Not Found"


async def test_owner_feedback_limit_is_checked_before_sending(
    api: Api, emu: EmulatorServer
) -> None:
    assistant_id = build(emu)["realtimeAssistantId"]
    sent = len(api.sent)
    with pytest.raises(InvalidRequestError) as caught:
        await api.refine(assistant_id, "x" * 2001)
    assert caught.value.fields == ["ownerFeedback"]
    assert len(api.sent) == sent
    at_limit = await api.refine(assistant_id, "y" * 2000)
    assert at_limit.status == "started"


async def test_brief_in_extra_body_replaces_the_stored_brief(api: Api, emu: EmulatorServer) -> None:
    assistant_id = build(emu)["realtimeAssistantId"]
    brief = {
        "context": "Nadia asked for a reminder call from the Karachi Clinic.",
        "sampleRows": [{"customer_name": "Nadia", "appointment_date": "Friday"}],
    }
    started = await api.refine(assistant_id, "Mention parking.", extra_body={"brief": brief})
    assert started.status == "started"
    assert finished(emu, started.build_id) == "succeeded"
    # a rehearsal without variables falls back to the first sample row of the stored brief
    transcript = await api.collect(assistant_id, NEUTRAL)
    assert transcript.turns[0].text == "Hello Nadia, this is the Karachi Clinic."
