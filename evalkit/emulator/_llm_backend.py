"""A dialogue backend that lets a real language model play both sides of a rehearsed call.

Any OpenAI-compatible ``POST {base_url}/chat/completions`` endpoint works. Each side has its own
system prompt and sees the conversation from its own seat (its turns as ``assistant``, the other
side's as ``user``):

- agent: the assistant's instructions with ``{{tokens}}`` substituted from the record, plus the
  greeting rule (speak first with ``greetingInstructions`` only when ``initialGreeting`` is true);
- caller: the persona's ``behavior`` verbatim, the ``context`` (or, without one, "you were not
  expecting this call") and the contact record.

Either side ends the call by ending its turn with :data:`END_TOKEN` (stripped from the text); the
caller is told to, the agent is allowed to. Every request sends ``temperature`` 0.7 and the
conversation's ``seed``. The API key goes only into the ``Authorization`` header: never into a
repr, a log line or an exception.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator, Mapping
from typing import Any, Final

import httpx

from .._exceptions import EvalkitError
from .._util import redact_text
from .dialogue import ConversationSetup, Role, Utterance, substitute_variables

__all__ = ["END_TOKEN", "LlmBackend", "LlmBackendError", "agent_prompt", "caller_prompt"]

logger = logging.getLogger(__name__)

END_TOKEN: Final = "[END]"
_END_RE: Final = re.compile(r"\[\s*END\s*\]", re.IGNORECASE)
_TEMPERATURE: Final = 0.7
_STYLE: Final = (
    "This is a live phone call. Reply with exactly one short spoken turn: plain words only, "
    "no stage directions, no speaker labels, no markdown."
)


class LlmBackendError(EvalkitError, RuntimeError):
    """The chat-completions endpoint failed or answered something unusable."""


class LlmBackend:
    """Plays agent and caller with an OpenAI-compatible chat-completions endpoint."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        max_turns: int = 12,
        timeout: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if max_turns < 1:
            raise ValueError(f"max_turns must be at least 1; got {max_turns}")
        if not model:
            raise ValueError("model must be a non-empty model name")
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._model = model
        self._api_key = api_key
        self._max_turns = max_turns
        self._timeout = timeout
        self._transport = transport

    def __repr__(self) -> str:
        key = "'***'" if self._api_key else "None"
        return (
            f"LlmBackend(url={self._url!r}, model={self._model!r}, api_key={key}, "
            f"max_turns={self._max_turns})"
        )

    async def conversation(self, setup: ConversationSetup) -> AsyncIterator[Utterance]:
        """Alternate the two sides until one ends the call or ``max_turns`` is reached."""
        prompts: dict[Role, str] = {"agent": agent_prompt(setup), "caller": caller_prompt(setup)}
        role: Role = "agent" if _greets_first(setup) else "caller"
        history: list[Utterance] = []
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        async with httpx.AsyncClient(
            timeout=self._timeout, transport=self._transport, headers=headers
        ) as client:
            for _ in range(self._max_turns):
                messages = _messages(prompts[role], role, history)
                reply = await self._complete(client, messages, setup.seed)
                ended = bool(_END_RE.search(reply))
                text = " ".join(_END_RE.sub(" ", reply).split())
                logger.debug(
                    "llm turn %d: %s, %d chars, ended=%s", len(history) + 1, role, len(text), ended
                )
                if text:
                    utterance = Utterance(role, text)
                    history.append(utterance)
                    yield utterance
                elif not ended:
                    raise LlmBackendError(f"the model returned an empty {role} turn")
                if ended:
                    return
                role = "caller" if role == "agent" else "agent"

    async def _complete(
        self, client: httpx.AsyncClient, messages: list[dict[str, str]], seed: int
    ) -> str:
        body = {
            "model": self._model,
            "messages": messages,
            "temperature": _TEMPERATURE,
            "seed": seed % 2**31,
        }
        try:
            response = await client.post(self._url, json=body)
        except httpx.HTTPError as exc:
            raise LlmBackendError(self._clean(f"chat completion request failed: {exc}")) from None
        if response.status_code >= 400:
            excerpt = response.text[:300]
            raise LlmBackendError(
                self._clean(f"chat completion failed with HTTP {response.status_code}: {excerpt}")
            )
        try:
            content = response.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise LlmBackendError(
                "chat completion answer has no choices[0].message.content"
            ) from None
        if not isinstance(content, str):
            raise LlmBackendError("chat completion content is not a string")
        return content

    def _clean(self, message: str) -> str:
        if self._api_key:
            message = message.replace(self._api_key, "***")
        return redact_text(message)


def _greets_first(setup: ConversationSetup) -> bool:
    agent = setup.config.get("agent")
    return isinstance(agent, Mapping) and agent.get("initialGreeting") is True


def agent_prompt(setup: ConversationSetup) -> str:
    """The agent's system prompt: substituted instructions plus the greeting rule."""
    agent = setup.config.get("agent")
    agent = agent if isinstance(agent, Mapping) else {}
    instructions = substitute_variables(str(agent.get("instructions") or ""), setup.variables)
    if _greets_first(setup):
        greeting = agent.get("greetingInstructions")
        how = (
            substitute_variables(greeting, setup.variables)
            if isinstance(greeting, str) and greeting.strip()
            else "Open with a short greeting and say who you are."
        )
        rule = f"You speak first. How to greet: {how}"
    else:
        rule = "The person you called speaks first; answer them."
    return (
        f"{instructions}\n\n{rule}\n{_STYLE}\n"
        f"When the conversation is over, end your last turn with {END_TOKEN}."
    )


def caller_prompt(setup: ConversationSetup) -> str:
    """The caller's system prompt: persona behaviour, what they know, and the contact record."""
    persona: Mapping[str, Any] = setup.persona if isinstance(setup.persona, Mapping) else {}
    parts = ["You are role-playing the person who picks up a phone call. Stay in character."]
    if persona.get("label"):
        parts.append(f"Who you are: {persona['label']}")
    if persona.get("behavior"):
        parts.append(str(persona["behavior"]))
    if setup.context:
        parts.append(f"What you know about this call: {setup.context}")
    else:
        parts.append("You were not expecting this call and do not know who is calling or why.")
    if setup.variables:
        record = json.dumps(dict(setup.variables), ensure_ascii=False)
        parts.append(f"Your details (answer consistently with them): {record}")
    parts.append(_STYLE)
    parts.append(f"When you want to end the call, end your turn with {END_TOKEN}.")
    return "\n".join(parts)


def _messages(system: str, role: Role, history: list[Utterance]) -> list[dict[str, str]]:
    messages = [{"role": "system", "content": system}]
    if not history:
        cue = (
            "(The call has connected. Speak first.)"
            if role == "agent"
            else "(Your phone rings and you pick up.)"
        )
        messages.append({"role": "user", "content": cue})
    for turn in history:
        messages.append(
            {"role": "assistant" if turn.role == role else "user", "content": turn.text}
        )
    return messages
