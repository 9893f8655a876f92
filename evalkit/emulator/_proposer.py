"""The emulated proposer: an OpenAI-compatible chat-completions endpoint that reads evalkit's
proposer prompt and answers candidate prompts drawn from a table of remedies.

``POST /_emulator/proposer/v1/chat/completions`` (model ``emulator-proposer``, any bearer or
none) parses the last fenced JSON block of the last user message (``{"instructions",
"failing_rules": [{"rule_id", "title", "criterion", ...}], "candidates"}``), matches each failing
rule to a behaviour and answers ``{"candidates": [{"instructions", "rationale"}]}`` as the
message content: each candidate is the current prompt with one remedy applied
(:mod:`._proposer_rules`: some helpful, some neutral, some harmful), drawn without
replacement, seeded by the emulator's seed and the request's content (the same request gets the
same candidates). ``GET|PUT /_emulator/proposer`` ``{malformedRate, noop, seed}``: a share of
answers that are prose, and a mode whose candidates change nothing.
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
from ._model_route import answer_chat
from ._proposer_rules import GENERIC, REMEDIES, Remedy, apply_remedy, behaviour_of
from ._proposer_state import ProposerSettings

__all__ = ["PROPOSER_MODEL", "chat_completions", "models", "propose", "proposer_settings"]

PROPOSER_MODEL: Final = "emulator-proposer"
_PROSE: Final = "Here is a better prompt: be clearer and friendlier with every caller."
_MAX_CANDIDATES: Final = 16


def _block(body: Any) -> dict[str, Any] | str:
    """The request's proposer block, or what is wrong with the request."""
    block, why = fenced_json_block(body)
    if why is not None:
        return why
    if not (
        isinstance(block, Mapping)
        and isinstance(block.get("instructions"), str)
        and isinstance(block.get("failing_rules"), list)
    ):
        return "the JSON block must hold instructions (text) and failing_rules (a list)"
    return dict(block)


def propose(block: Mapping[str, Any], seed: int, *, noop: bool = False) -> list[dict[str, str]]:
    """The candidates for one request (module docstring)."""
    instructions = str(block["instructions"])
    wanted = block.get("candidates", 4)
    k = min(int(wanted), _MAX_CANDIDATES) if isinstance(wanted, int) and wanted > 0 else 4
    if noop:
        return [{"instructions": instructions, "rationale": "no change"} for _ in range(k)]
    behaviours: list[str] = []
    for rule in block["failing_rules"]:
        if isinstance(rule, Mapping):
            found = behaviour_of(f"{rule.get('title', '')} {rule.get('criterion', '')}")
            if found and found not in behaviours:
                behaviours.append(found)
    pool: list[Remedy] = [r for b in behaviours for r in REMEDIES if r.behaviour == b]
    pool += list(GENERIC)
    pool = [r for r in pool if apply_remedy(instructions, r) != instructions]
    key = hashlib.sha256(json.dumps([seed, dict(block)], sort_keys=True).encode()).digest()
    rng = random.Random(int.from_bytes(key[:8], "big"))
    chosen = rng.sample(pool, min(k, len(pool)))
    return [
        {"instructions": apply_remedy(instructions, r), "rationale": r.rationale} for r in chosen
    ]


async def chat_completions(emu: Emulator, request: Request) -> Response:
    """The emulated proposer (model ``emulator-proposer``), OpenAI-compatible: it reads evalkit's
    proposer prompt and answers ``{"candidates": [{"instructions", "rationale"}]}``, each the
    current prompt with one remedy applied (helpful, neutral or harmful), seeded by the
    emulator's seed and the request. Any bearer or none."""
    state = emu.proposer

    def answer(block: dict[str, Any]) -> str:
        candidates = propose(block, state.seed, noop=state.settings.noop)
        return json.dumps({"candidates": candidates}, ensure_ascii=False)

    return await answer_chat(emu, request, PROPOSER_MODEL, state, _block, answer, _PROSE)


async def models(emu: Emulator, request: Request) -> Response:
    """The proposer's models (OpenAI-compatible list)."""
    return model_list([PROPOSER_MODEL])


def _settings_from_body(body: Any) -> ProposerSettings:
    if not isinstance(body, Mapping):
        raise_for_problems([Problem("body", "must be an object")])
    assert isinstance(body, Mapping)
    problems: list[Problem] = []
    rate = body.get("malformedRate", 0.0)
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 <= rate <= 1:
        problems.append(Problem("malformedRate", "must be a number from 0 to 1"))
        rate = 0.0
    noop = body.get("noop", False)
    if not isinstance(noop, bool):
        problems.append(Problem("noop", "must be true or false"))
    seed = body.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        problems.append(Problem("seed", "must be an integer or null"))
    raise_for_problems(problems)
    return ProposerSettings(malformed_rate=float(rate), noop=bool(noop), seed=seed)


async def proposer_settings(emu: Emulator, request: Request) -> Response:
    """The emulated proposer's settings, ``{malformedRate, noop, seed}``: a share of answers that
    are prose, and a mode whose candidates change nothing. A PUT replaces all."""
    authenticate(emu, request)
    if request.method == "PUT":
        emu.proposer.configure(
            _settings_from_body(await read_json(request, emu.settings.max_body_bytes))
        )
    return JSONResponse(emu.proposer.settings.to_json())
