"""E9: rehearse a call. Validation and faults answer before streaming (plain JSON); then an
SSE stream of `turn` events and exactly one terminal `done` or `error`, with `: ping`
keepalives, the five-minute ceiling, per-turn latency and a conversation task that stops as
soon as the client goes away.

Each conversation's seed derives from stable inputs only: the emulator seed, a digest of the
assistant's config (canonical JSON, not its random id), a digest of the request body and how
many times that exact body was simulated on that config in the project before (whichever
assistant held it: the clones a sweep or a sequential run makes per wave continue the count,
as the real service's sampling would not repeat itself). Repeats of a cell differ, while two
emulators with the same seed given the same requests write the same transcripts, whatever the
arrival order across cells. ``personaId`` in ``done`` derives from the seed too.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import hashlib
import json
import logging
import uuid
from collections.abc import AsyncIterator, Mapping
from typing import Any

from sse_starlette import EventSourceResponse, ServerSentEvent
from sse_starlette.sse import SendTimeoutError
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from .._util import redact_text
from ..api import AssistantConfig, Problem, SimulateBody, config_advice, request_errors
from ._auth import authenticate, owned_assistant
from ._bodies import check_body, read_json
from ._core import Emulator
from ._errors import ApiHttpError, envelope, raise_for_problems
from ._faults import FaultPlan
from ._ids import canonical_json, derive_seed
from ._latency import TurnLatency
from ._records import AssistantRecord
from .dialogue import ConversationSetup, DialogueBackend

logger = logging.getLogger("evalkit.emulator")

CEILING_MESSAGE = "Simulation reached the five-minute ceiling"
INJECTED_ERROR_MESSAGE = "Conversation failed mid-flight: upstream model error (injected fault)"
RETRY_AFTER_S = 2.0
"""Emulated seconds a 429 asks the client to wait (scaled; also sent as `retry-after-ms`)."""

Item = tuple[str, Any]


def check_setup(config: Any) -> list[Problem]:
    """Problems that make a stored config unusable for a rehearsal: anything a save would
    refuse, and what a save stores but a provider refuses when the call runs (an unsupported
    provider or model, a value the provider rejects)."""
    return request_errors(AssistantConfig, config, at="config") or config_advice(
        config, rehearsal=True
    )


def _digest(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def config_digest(config: Any) -> str:
    """The digest a config's conversations are seeded and counted by (canonical JSON)."""
    return _digest(config)


def conversation_seed(emulator_seed: int, config: Any, body_digest: str, occurrence: int) -> int:
    """A conversation's seed from stable inputs (never a random id)."""
    return derive_seed(emulator_seed, config_digest(config), body_digest, occurrence)


def persona_id(seed: int) -> str:
    """The ``personaId`` of a conversation: a version-4 UUID from seeded bytes."""
    digest = hashlib.sha256(f"persona\x1f{seed}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def _fallbacks(rec: AssistantRecord, body: Mapping[str, Any]) -> tuple[str | None, Any]:
    context = body.get("context")
    variables = body.get("variables")
    brief = rec.artifacts.brief if rec.artifacts is not None else {}
    if context is None and isinstance(brief.get("context"), str):
        context = brief["context"]
    if variables is None:
        rows = brief.get("sampleRows")
        if isinstance(rows, list) and rows and isinstance(rows[0], Mapping):
            variables = rows[0]
    return context, variables


def _refusal(emu: Emulator, status: int) -> ApiHttpError:
    if status == 429:
        wait = emu.settings.scaled(RETRY_AFTER_S)
        headers = {"Retry-After": str(round(wait)), "retry-after-ms": str(round(wait * 1000))}
        return ApiHttpError(429, envelope(429, "Too many requests (injected fault)"), headers)
    return ApiHttpError(503, envelope(503, "Service temporarily unavailable (injected fault)"))


async def simulate(emu: Emulator, request: Request) -> Response:
    """POST /realtime-assistants/builds/{assistantId}/simulate."""
    project, _ = authenticate(emu, request)
    raw = await read_json(request, emu.settings.max_body_bytes, required=True)
    body = check_body(raw, SimulateBody)
    rec = owned_assistant(emu, project, request.path_params["assistant_id"])
    config = copy.deepcopy(rec.current.config)
    raise_for_problems(check_setup(config))
    plan = emu.faults.draw(project.project_id)
    if plan.http_status is not None:
        raise _refusal(emu, plan.http_status)
    persona = body.get("persona") if isinstance(body.get("persona"), Mapping) else {}
    context, variables = _fallbacks(rec, body)
    digest = _digest(body)
    occurrence = emu.state.next_occurrence(project.project_id, config_digest(config), digest)
    setup = ConversationSetup(
        config=config,
        persona=copy.deepcopy(dict(persona)),
        context=context,
        variables=copy.deepcopy(dict(variables)) if isinstance(variables, Mapping) else None,
        seed=conversation_seed(emu.seed, config, digest, occurrence),
    )
    header = {
        "personaLabel": persona.get("label") if isinstance(persona.get("label"), str) else "",
        "path": persona.get("path") if isinstance(persona.get("path"), str) else "negative",
    }
    s = emu.settings
    return _EventStream(
        _events(emu, setup, header, plan),
        ping=s.ping_interval,
        sep="\n",
        ping_message_factory=lambda: ServerSentEvent(comment="ping", sep="\n"),
        send_timeout=s.send_timeout_s,
    )


class _EventStream(EventSourceResponse):
    """An event stream that ends quietly when the client stops reading (``send_timeout``)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        except SendTimeoutError:
            logger.info("simulate stream closed: the client stopped reading")


def _event(name: str, data: Mapping[str, Any]) -> bytes:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return f"event: {name}\ndata: {text}\n\n".encode()


async def _produce(
    backend: DialogueBackend,
    setup: ConversationSetup,
    queue: asyncio.Queue[Item],
    latency: TurnLatency,
) -> None:
    """Run the conversation, putting each utterance on the queue after its turn latency."""
    try:
        iterator = backend.conversation(setup)
        try:
            async for utterance in iterator:
                role, text = getattr(utterance, "role", None), getattr(utterance, "text", None)
                if role not in ("agent", "caller") or not isinstance(text, str):
                    raise TypeError(f"the dialogue backend produced {type(utterance).__name__}")
                wait = latency.next(role)
                if wait > 0:
                    await asyncio.sleep(wait)
                queue.put_nowait(("turn", (role, text)))
        finally:
            aclose = getattr(iterator, "aclose", None)
            if aclose is not None:
                await aclose()
        queue.put_nowait(("end", None))
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        logger.warning("dialogue backend failed: %s: %s", type(exc).__name__, redact_text(str(exc)))
        queue.put_nowait(("fail", f"Conversation failed: {type(exc).__name__}"))


async def _events(
    emu: Emulator, setup: ConversationSetup, header: Mapping[str, Any], plan: FaultPlan
) -> AsyncIterator[bytes]:
    """The stream body; the `finally` keeps the counters and stops the conversation task."""
    stats = emu.stats
    stats.started += 1
    stats.active += 1
    queue: asyncio.Queue[Item] = asyncio.Queue()
    emu.streams.add(queue)
    latency = TurnLatency.for_conversation(
        emu.settings.turn_latency, setup.config, setup.seed, emu.settings.turn_jitter
    )
    producer = asyncio.create_task(_produce(emu.backend, setup, queue, latency))
    emu.tasks.add(producer)
    producer.add_done_callback(emu.tasks.discard)
    deadline = asyncio.get_running_loop().time() + emu.settings.ceiling
    turns: list[dict[str, str]] = []
    outcome = "cancelled"
    try:
        while True:
            item: Item | None = None
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout_at(deadline):
                    item = await queue.get()
            if item is None:
                yield _event("error", {"message": CEILING_MESSAGE})
                outcome = "errored"
                return
            kind, value = item
            if kind == "shutdown":
                return
            if kind == "fail":
                yield _event("error", {"message": str(value)})
                outcome = "errored"
                return
            ending = kind == "end"
            if plan.drop_after is not None and (ending or len(turns) >= plan.drop_after):
                outcome = "dropped"
                return
            if plan.error_after is not None and (ending or len(turns) >= plan.error_after):
                yield _event("error", {"message": INJECTED_ERROR_MESSAGE})
                outcome = "errored"
                return
            if ending:
                yield _event(
                    "done",
                    {
                        "personaId": persona_id(setup.seed),
                        "personaLabel": header["personaLabel"],
                        "archetype": "happy",
                        "path": header["path"],
                        "turns": turns,
                    },
                )
                outcome = "completed"
                return
            role, text = value
            turns.append({"speaker": role, "text": text})
            yield _event("turn", {"index": len(turns), "role": role, "text": text})
    finally:
        producer.cancel()
        emu.streams.discard(queue)
        stats.active -= 1
        if outcome in ("completed", "errored"):
            stats.completed += 1
        if outcome == "errored":
            stats.errored += 1
        elif outcome == "dropped":
            stats.dropped += 1
        elif outcome == "cancelled":
            stats.cancelled += 1
