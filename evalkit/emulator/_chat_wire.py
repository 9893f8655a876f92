"""The OpenAI chat-completions wire shapes the emulated judge and proposer answer in: a
completion envelope, an error body and a model list, so both endpoints speak the same dialect.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable

from starlette.responses import JSONResponse

__all__ = ["chat_completion", "model_list", "openai_error"]


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
