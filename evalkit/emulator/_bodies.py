"""Reading request bodies: a size cap, UTF-8 JSON, no NaN or infinities, no deep-nesting crash,
no lone UTF-16 surrogates (``"\\ud800"`` parses to a string that cannot be encoded, stored or
answered) and no integers beyond a double's range (they overflow wherever a number is used).

Everything here answers 400 before a handler sees the body, so hostile input never reaches
the state.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from pydantic import BaseModel
from starlette.requests import ClientDisconnect, Request

from ..api import request_errors
from ._errors import api_error, raise_for_problems, synthesis_error

MAX_JSON_DEPTH = 64
"""Bodies nested deeper than this are refused (400) before anything walks them."""


MAX_INT_DIGITS = 308
"""Integers with more digits than this are refused: no double holds them (1.8e308)."""
_SURROGATE = re.compile("[\ud800-\udfff]")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:20]} is out of range")
    return value


def _bounded_int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise ValueError(f"has an integer of {digits} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _check_string(text: str) -> None:
    if _SURROGATE.search(text):
        raise ValueError("has a lone UTF-16 surrogate in a string (not valid Unicode)")


def json_depth(value: Any) -> int:
    """How deeply arrays and objects nest in ``value`` (iteratively: no recursion limit);
    raises ``ValueError`` for a string or key holding a lone surrogate."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            for key in item:
                _check_string(key)
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            if isinstance(item, str):
                _check_string(item)
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
        value = json.loads(
            text,
            parse_constant=_reject_constant,
            parse_float=_finite_float,
            parse_int=_bounded_int,
        )
    except RecursionError as exc:
        raise ValueError(f"is nested more than {MAX_JSON_DEPTH} levels deep") from exc
    except json.JSONDecodeError as exc:
        raise ValueError(f"is not valid JSON ({exc.msg} at position {exc.pos})") from exc
    if json_depth(value) > MAX_JSON_DEPTH:
        raise ValueError(f"is nested more than {MAX_JSON_DEPTH} levels deep")
    return value


async def read_json(
    request: Request, max_bytes: int, *, synthesis: bool = False, required: bool = False
) -> Any:
    """The request's JSON body; an empty body reads as ``{}`` unless ``required`` (then 400,
    as the OpenAPI document's ``requestBody.required`` says). Errors are 400 (413 when huge)."""

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
        if required:
            raise fail(400, "body: is required (a JSON object)")
        return {}
    try:
        return parse_json(raw)
    except ValueError as exc:
        raise fail(400, f"body: {exc}") from exc


def without_nulls(value: Any) -> Any:
    """``value`` with null-valued object keys removed, at every depth: a null optional field
    is an absent one (how the client models read it), so the handlers see it absent."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(v) for v in value]
    return value


def check_body(body: Any, model: type[BaseModel], *, synthesis: bool = False) -> Any:
    """400 unless ``body`` keeps every rule of ``model`` (the client checks the same rules,
    with the same messages, before it sends); the body with nulls removed when it does."""
    raise_for_problems(request_errors(model, body), synthesis=synthesis)
    return without_nulls(body)
