"""The chat-completions route every emulated model shares (the proposer, the persona
generator): the model named, the request's block read, a malformed answer drawn, the
completion answered."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ._bodies import read_json
from ._chat_wire import chat_completion, openai_error
from ._core import Emulator
from ._model_state import ModelState

__all__ = ["answer_chat"]


async def answer_chat(
    emu: Emulator,
    request: Request,
    model: str,
    state: ModelState[Any],
    read_block: Callable[[Any], dict[str, Any] | str],
    answer: Callable[[dict[str, Any]], str],
    prose: str,
) -> Response:
    """``model``'s answer to ``request``: 404 for another model, 400 with ``read_block``'s
    reason for a request without its block, ``prose`` when ``state`` draws a malformed
    answer, else ``answer(block)``."""
    body = await read_json(request, emu.settings.max_body_bytes)
    asked = body.get("model", model) if isinstance(body, Mapping) else model
    if asked != model:
        return openai_error(404, f"The model {asked!r} does not exist")
    block = read_block(body)
    if isinstance(block, str):
        return openai_error(400, block)
    content = prose if state.draw_malformed() else answer(block)
    return chat_completion(
        completion_id=f"chatcmpl-{model}-{state.calls}",
        model=model,
        content=content,
        prompt=json.dumps(body, ensure_ascii=False),
    )
