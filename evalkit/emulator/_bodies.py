"""Reading request bodies: a size cap, UTF-8 JSON, no NaN or infinities, no deep-nesting crash."""

from __future__ import annotations

import json
import math
from typing import Any

from starlette.requests import ClientDisconnect, Request

from ._errors import api_error, synthesis_error

MAX_JSON_DEPTH = 64
"""Bodies nested deeper than this are refused (400) before anything walks them."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:20]} is out of range")
    return value


def json_depth(value: Any) -> int:
    """How deeply arrays and objects nest in ``value`` (iteratively: no recursion limit)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children)
    return deepest


def parse_json(raw: bytes) -> Any:
    """Parse a JSON body; raises ``ValueError`` with a short reason."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError("is not UTF-8") from exc
    try:
        value = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
    except RecursionError as exc:
        raise ValueError(f"is nested more than {MAX_JSON_DEPTH} levels deep") from exc
    except json.JSONDecodeError as exc:
        raise ValueError(f"is not valid JSON ({exc.msg} at position {exc.pos})") from exc
    if json_depth(value) > MAX_JSON_DEPTH:
        raise ValueError(f"is nested more than {MAX_JSON_DEPTH} levels deep")
    return value


async def read_json(request: Request, max_bytes: int, *, synthesis: bool = False) -> Any:
    """The request's JSON body; an empty body reads as ``{}``. Errors are 400 (413 when huge)."""

    def fail(status: int, message: str) -> Exception:
        return (
            synthesis_error(status, message)
            if synthesis
            else api_error(status, message if status != 400 else [message])
        )

    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > max_bytes:
        raise fail(413, f"body: larger than {max_bytes} bytes")
    chunks: list[bytes] = []
    total = 0
    try:
        async for chunk in request.stream():
            total += len(chunk)
            if total > max_bytes:
                raise fail(413, f"body: larger than {max_bytes} bytes")
            chunks.append(chunk)
    except ClientDisconnect as exc:
        raise fail(400, "body: the client disconnected while sending it") from exc
    raw = b"".join(chunks)
    if not raw.strip():
        return {}
    try:
        return parse_json(raw)
    except ValueError as exc:
        raise fail(400, f"body: {exc}") from exc
