"""Builds: assistants built from a brief (admin) and refine builds (E10).

A refine build reports `started`, then `running`, then `succeeded` after
``120 s × time_scale``; a refine submitted while another build of the assistant is in flight
is answered 200 but reported `failed`. On success the name and the whole config are
regenerated from the build artifacts (manual edits of other keys are lost); only the prompt
carries forward, as it was when the build started, with the owner feedback appended as a
clearly marked paragraph. Builds finish lazily: every request settles the builds that are
due (wall-clock deadlines, so a restarted emulator finishes them too).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from ..api import AssistantConfig, Problem, Rule, request_errors
from ._core import Emulator
from ._ids import new_id, now_iso
from ._records import AssistantRecord, Build, BuildArtifacts, Project
from ._requests import BuildBrief
from ._settings import BUILD_RUNNING_FRACTION

FEEDBACK_HEADING = "## Owner feedback"
BRIEF_FIELD = "brief"
"""The name the emulator accepts for E10's optional brief replacement (not shown by the spec)."""


def default_config(instructions: str, initial_greeting: bool | None) -> dict[str, Any]:
    """The config a build generates when the build request gives none."""
    agent: dict[str, Any] = {"instructions": instructions}
    if initial_greeting is not None:
        agent["initialGreeting"] = initial_greeting
    return {
        "agent": agent,
        "stt": {"default": {"provider": "serviceai", "model": "large-v3", "language": "ur"}},
        "llm": {"default": {"provider": "vendor_c", "model": "llm-5.4-mini"}},
        "tts": {"default": {"provider": "serviceai", "voiceId": "v_8eelc901"}},
    }


class BuildBody(BaseModel):
    """A ``POST /_emulator/builds`` body: what an original build starts from."""

    model_config = ConfigDict(extra="allow")

    name: Annotated[str, Rule(min_length=1)]
    instructions: Annotated[str, Rule(min_length=1)]
    brief: BuildBrief
    initial_greeting: bool | None = Field(None, alias="initialGreeting")
    public: bool | None = None
    description: str | None = None
    config: dict[str, Any] | None = None


def check_build_body(body: Any) -> list[Problem]:
    """The build body's problems, then those of the config the build would store."""
    return request_errors(BuildBody, body) or request_errors(
        AssistantConfig, build_template(body), at="config"
    )


def build_template(body: Mapping[str, Any]) -> dict[str, Any]:
    """The config template of a build: the given config (or a default) with the build's
    instructions and initialGreeting in its agent block."""
    greeting = body.get("initialGreeting")
    if body.get("config") is None:
        return default_config(str(body["instructions"]), greeting)
    template = copy.deepcopy(dict(body["config"]))
    agent = template.get("agent")
    agent = dict(agent) if isinstance(agent, Mapping) else {}
    agent["instructions"] = body["instructions"]
    if greeting is not None:
        agent["initialGreeting"] = greeting
    template["agent"] = agent
    return template


def create_built_assistant(
    emu: Emulator, project: Project, body: Mapping[str, Any], by: str
) -> tuple[AssistantRecord, Build]:
    """An assistant with build artifacts, as an original build leaves it (at version 1)."""
    template = build_template(body)
    artifacts = BuildArtifacts(str(body["name"]), copy.deepcopy(dict(body["brief"])), template)
    rec = emu.state.create_assistant(
        project,
        name=artifacts.name,
        description=body.get("description"),
        config=template,
        public=bool(body.get("public", False)),
        by=by,
        artifacts=artifacts,
    )
    now = now_iso()
    build = Build(
        build_id=new_id(),
        assistant_id=rec.assistant_id,
        project_id=project.project_id,
        status="succeeded",
        created_at=now,
        running_at=time.time(),
        finishes_at=time.time(),
        owner_feedback="",
        requested_by=by,
        base_instructions=str(body["instructions"]),
        finished_at=now,
    )
    emu.state.put_build(build)
    return rec, build


def apply_feedback(instructions: str, feedback: str) -> str:
    """The prompt with the owner feedback appended as a marked paragraph (once)."""
    text = feedback.strip()
    block = f"{FEEDBACK_HEADING}\n{text}"
    if not text or block in instructions:
        return instructions
    return f"{instructions.rstrip()}\n\n{block}"


def _instructions(config: Mapping[str, Any]) -> str:
    agent = config.get("agent")
    if isinstance(agent, Mapping) and isinstance(agent.get("instructions"), str):
        return str(agent["instructions"])
    return ""


def start_refine(
    emu: Emulator, project: Project, rec: AssistantRecord, body: Mapping[str, Any], by: str
) -> Build:
    """Record a refine build: in flight, or `failed` at once when another one is in flight."""
    settle_builds(emu)
    busy = any(b.assistant_id == rec.assistant_id for b in emu.state.in_flight_builds())
    now = time.time()
    duration = emu.settings.build_duration
    build = Build(
        build_id=new_id(),
        assistant_id=rec.assistant_id,
        project_id=project.project_id,
        status="failed" if busy else "started",
        created_at=now_iso(),
        running_at=now + duration * BUILD_RUNNING_FRACTION,
        finishes_at=now + duration,
        owner_feedback=str(body["ownerFeedback"]),
        requested_by=by,
        base_instructions=_instructions(rec.current.config),
    )
    if busy:
        build.finished_at = build.created_at
        build.error = "another build is in flight for this assistant"
    elif BRIEF_FIELD in body and rec.artifacts is not None:
        artifacts = copy.deepcopy(rec.artifacts)
        artifacts.brief = copy.deepcopy(dict(body[BRIEF_FIELD]))
        emu.state.set_artifacts(rec, artifacts)
    emu.state.put_build(build)
    return build


def settle_builds(emu: Emulator, now: float | None = None) -> None:
    """Move every due build forward: `started` → `running` → `succeeded` (or `failed`)."""
    now = time.time() if now is None else now
    for build in emu.state.in_flight_builds():
        if now >= build.finishes_at:
            _finish(emu, build)
        elif now >= build.running_at and build.status == "started":
            build.status = "running"
            emu.state.put_build(build)


def _finish(emu: Emulator, build: Build) -> None:
    rec = emu.state.get_assistant(build.assistant_id)
    build.finished_at = now_iso()
    if rec is None or rec.artifacts is None:
        build.status = "failed"
        build.error = "the assistant was deleted during the build"
        emu.state.put_build(build)
        return
    config = copy.deepcopy(rec.artifacts.config_template)
    agent = config.get("agent")
    agent = dict(agent) if isinstance(agent, Mapping) else {}
    agent["instructions"] = apply_feedback(build.base_instructions, build.owner_feedback)
    config["agent"] = agent
    emu.state.save_assistant(rec, by=build.requested_by, name=rec.artifacts.name, config=config)
    build.status = "succeeded"
    emu.state.put_build(build)
