"""The OpenAI chat-completions wire shapes the emulated judge and proposer answer in: a
completion envelope, an error body and a model list, so both endpoints speak the same dialect.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Iterable, Mapping
from typing import Any, Final

from starlette.responses import JSONResponse

__all__ = ["chat_completion", "fenced_json_block", "model_list", "openai_error"]

_FENCE_RE: Final = re.compile(r"```(?:json)?[ \t]*\n(.*?)```", re.DOTALL)


def chat_completion(*, completion_id: str, model: str, content: str, prompt: str) -> JSONResponse:
    """A ``chat.completion`` with one ``stop`` choice; tokens are counted as characters / 4."""
    prompt_tokens, completion_tokens = math.ceil(len(prompt) / 4), math.ceil(len(content) / 4)
    return JSONResponse(
        {
            "id": completion_id,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
    )


def openai_error(status: int, message: str, code: str | None = None) -> JSONResponse:
    """An ``invalid_request_error`` body with the given status."""
    error = {"message": message, "type": "invalid_request_error", "param": None, "code": code}
    return JSONResponse({"error": error}, status_code=status)


def model_list(names: Iterable[str]) -> JSONResponse:
    """The ``GET /models`` answer listing ``names``."""
    entries = [
        {"id": name, "object": "model", "created": 0, "owned_by": "evalkit-emulator"}
        for name in names
    ]
    return JSONResponse({"object": "list", "data": entries})


def fenced_json_block(body: Any) -> tuple[Any, str | None]:
    """``(block, None)``: the last fenced JSON block of a chat request's last user message (the
    emulated proposer's and generator's input); ``(None, why)`` when the request has none."""
    if not isinstance(body, Mapping) or not isinstance(body.get("messages"), list):
        return None, "messages must be a list"
    users = [
        m.get("content")
        for m in body["messages"]
        if isinstance(m, Mapping) and m.get("role") == "user"
    ]
    text = users[-1] if users and isinstance(users[-1], str) else ""
    blocks = _FENCE_RE.findall(text)
    if not blocks:
        return None, "the last user message has no fenced JSON block"
    try:
        return json.loads(blocks[-1]), None
    except ValueError:
        return None, "the fenced JSON block is not valid JSON"
