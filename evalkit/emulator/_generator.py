"""The emulated persona generator: an OpenAI-compatible chat-completions endpoint that reads
evalkit's persona-generator prompt and writes one persona per requested trait combination from
a table of sentences (:mod:`._generator_rules`).

``POST /_emulator/generator/v1/chat/completions`` (model ``emulator-generator``, any bearer or
none) parses the last fenced JSON block of the last user message (``{"requests": [{"id",
"traits": {axis: value}, "describe": {axis: words}}], "max_behavior_chars"}``) and answers
``{"personas": [{"id", "label", "description", "behavior"}]}`` as the message content, seeded
by the generator's seed and the request's content (the same request gets the same personas).
``GET|PUT /_emulator/generator`` ``{malformedRate, flawRate, seed}``: a share of answers that
are prose, and a share of personas that carry a generator's mistake (too long, a token, a
secret, a near copy, the asked-for behaviour left out, no label).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Mapping
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from ..api import Problem
from ._auth import authenticate
from ._bodies import read_json
from ._chat_wire import fenced_json_block, model_list
from ._core import Emulator
from ._errors import raise_for_problems
from ._generator_rules import FLAWS, behaviour_for, label_for, spoil
from ._generator_state import GeneratorSettings
from ._model_route import answer_chat

__all__ = ["GENERATOR_MODEL", "chat_completions", "generate", "generator_settings", "models"]

GENERATOR_MODEL: Final = "emulator-generator"
_PROSE: Final = "Here are some interesting callers you could try: an angry man, a busy mother."
_MAX_REQUESTS: Final = 32
_DEFAULT_MAX_CHARS: Final = 1500


def _block(body: Any) -> dict[str, Any] | str:
    """The request's generator block, or what is wrong with the request."""
    block, why = fenced_json_block(body)
    if why is not None:
        return why
    requests = block.get("requests") if isinstance(block, Mapping) else None
    if not isinstance(requests, list) or not all(
        isinstance(r, Mapping) and isinstance(r.get("traits"), Mapping) for r in requests
    ):
        return "the JSON block must hold requests: a list of objects with traits"
    return dict(block)


def _flaw(rng: random.Random, rate: float, drawn: int) -> str | None:
    return FLAWS[drawn % len(FLAWS)] if rate > 0 and rng.random() < rate else None


def generate(
    block: Mapping[str, Any], seed: int, *, flaw_rate: float = 0.0
) -> list[dict[str, str]]:
    """The personas for one request (module docstring)."""
    limit = block.get("max_behavior_chars")
    max_chars = limit if isinstance(limit, int) and limit > 0 else _DEFAULT_MAX_CHARS
    key = hashlib.sha256(json.dumps([seed, dict(block)], sort_keys=True).encode()).digest()
    rng = random.Random(int.from_bytes(key[:8], "big"))
    out: list[dict[str, str]] = []
    flaws = 0
    for request in list(block["requests"])[:_MAX_REQUESTS]:
        traits = {str(k): str(v) for k, v in request["traits"].items()}
        describe = request.get("describe")
        words = (
            {str(k): str(v) for k, v in describe.items()} if isinstance(describe, Mapping) else {}
        )
        persona = {
            "id": str(request.get("id", len(out) + 1)),
            "label": label_for(traits, rng),
            "description": "A generated caller: "
            + ", ".join(f"{axis} {value}" for axis, value in traits.items()),
            "behavior": behaviour_for(traits, words, rng),
        }
        flaw = _flaw(rng, flaw_rate, flaws)
        if flaw is not None:
            flaws += 1
            persona = spoil(flaw, persona, traits, out[-1] if out else None, rng, max_chars)
        out.append(persona)
    return out


async def chat_completions(emu: Emulator, request: Request) -> Response:
    """The emulated persona generator (model ``emulator-generator``), OpenAI-compatible: it reads
    evalkit's persona-generator prompt (the last fenced JSON block of the last user message,
    ``{"requests": [{"id", "traits", "describe"}], "max_behavior_chars"}``) and answers
    ``{"personas": [{"id", "label", "description", "behavior"}]}``, one per request, written
    from a table of sentences per trait value and seeded by the request's content."""
    state = emu.generator

    def answer(block: dict[str, Any]) -> str:
        personas = generate(block, state.seed, flaw_rate=state.settings.flaw_rate)
        state.count(len(personas))
        return json.dumps({"personas": personas}, ensure_ascii=False)

    return await answer_chat(emu, request, GENERATOR_MODEL, state, _block, answer, _PROSE)


async def models(emu: Emulator, request: Request) -> Response:
    """The generator's models (OpenAI-compatible list)."""
    return model_list([GENERATOR_MODEL])


def _rate(body: Mapping[str, Any], name: str, problems: list[Problem]) -> float:
    rate = body.get(name, 0.0)
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 <= rate <= 1:
        problems.append(Problem(name, "must be a number from 0 to 1"))
        return 0.0
    return float(rate)


def _settings_from_body(body: Any) -> GeneratorSettings:
    if not isinstance(body, Mapping):
        raise_for_problems([Problem("body", "must be an object")])
    assert isinstance(body, Mapping)
    problems: list[Problem] = []
    malformed = _rate(body, "malformedRate", problems)
    flaws = _rate(body, "flawRate", problems)
    seed = body.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        problems.append(Problem("seed", "must be an integer or null"))
    raise_for_problems(problems)
    return GeneratorSettings(malformed_rate=malformed, flaw_rate=flaws, seed=seed)


async def generator_settings(emu: Emulator, request: Request) -> Response:
    """The emulated persona generator's noise, ``{malformedRate, flawRate, seed}``: a share of
    answers that are prose, not JSON, and a share of personas that carry a generator's mistake
    (too long, a token, a secret, a near copy, the asked-for behaviour left out, no label).
    A PUT replaces all."""
    authenticate(emu, request)
    if request.method == "PUT":
        emu.generator.configure(
            _settings_from_body(await read_json(request, emu.settings.max_body_bytes))
        )
    return JSONResponse(emu.generator.settings.to_json())
