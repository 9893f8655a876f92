"""Fuzz the emulator from its own OpenAPI document with hypothesis: bodies generated from the
request schemas (valid ones and ones just past their limits), arbitrary JSON, raw bytes, odd
ids, wrong keys and wrong methods, lone UTF-16 surrogates in strings and keys, and integers of
309 to 5000 digits. Nothing may answer 5xx, the last-resort handler must never be what
answers, and the project can always list its assistants."""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalkit.emulator import EmulatorServer, openapi_document

from .helpers import auth, fuzz_target, parse_sse

DOC = openapi_document()
SCHEMAS = DOC["components"]["schemas"]
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def _inline(schema: Any) -> Any:
    """The schema with every local $ref replaced by its target (the document has no cycles)."""
    if isinstance(schema, dict):
        if "$ref" in schema:
            return _inline(SCHEMAS[schema["$ref"].rsplit("/", 1)[1]])
        return {k: _inline(v) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_inline(v) for v in schema]
    return schema


def _operations() -> list[tuple[str, str, dict[str, Any] | None]]:
    out = []
    for path, item in DOC["paths"].items():
        for method, op in item.items():
            body = op.get("requestBody", {}).get("content", {}).get("application/json", {})
            schema = _inline(body["schema"]) if body else None
            if schema is not None and path == "/synthesis/text-to-speech":
                schema = copy.deepcopy(schema)
                schema["properties"]["text"]["maxLength"] = 40  # keep synthesis fast
                schema["properties"]["text"].pop("pattern")
            out.append((method.upper(), path, schema))
    return out


OPERATIONS = _operations()
SEEN: Counter[tuple[str, str, int]] = Counter()
HOSTILE_SEEN: Counter[int] = Counter()
SURROGATES = st.sampled_from(["\ud800", "\udfff", "a\udc00b", "\ud83d"])
HUGE_INTS = st.integers(309, 4300).map(lambda n: int("9" * n))  # 4300: Python's str() limit
BEYOND_STR_LIMIT = b'{"dropRate": ' + b"9" * 5000 + b', "credits": 1}'
HOSTILE = st.one_of(SURROGATES, HUGE_INTS)
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=12,
)


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """A strategy for the JSON Schema subset the document uses (limits overshot now and then)."""
    if "const" in schema:
        return st.just(schema["const"])
    if "anyOf" in schema:
        return st.one_of([from_schema(s) for s in schema["anyOf"]])
    if "allOf" in schema:
        return from_schema(schema["allOf"][0])
    if schema.get("type") == "null":
        return st.none()
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "oneOf" in schema:
        return st.one_of([from_schema(s) for s in schema["oneOf"]])
    kind = schema.get("type")
    if kind == "object":
        props = schema.get("properties", {})
        required = [k for k in schema.get("required", []) if k in props]
        fixed = st.fixed_dictionaries(
            {k: from_schema(props[k]) for k in required},
            optional={k: from_schema(v) for k, v in props.items() if k not in required},
        )
        if schema.get("additionalProperties", True) is False:
            return fixed
        extras = st.dictionaries(st.text(max_size=8), JSON, max_size=2)
        return st.tuples(fixed, extras).map(lambda pair: {**pair[1], **pair[0]})
    if kind == "array":
        items = from_schema(schema["items"]) if "items" in schema else JSON
        low = schema.get("minItems", 0)
        return st.lists(items, min_size=low, max_size=min(schema.get("maxItems", 4), low + 4))
    if kind == "string":
        low, high = schema.get("minLength", 0), schema.get("maxLength")
        short = st.text(min_size=low, max_size=max(low, min(high or 30, 30)))
        if high is None:
            return short
        return st.one_of(short, st.text(min_size=high, max_size=high + 1))
    if kind == "integer":
        return st.integers(schema.get("minimum"), schema.get("maximum"))
    if kind == "number":
        low, high = schema.get("minimum"), schema.get("maximum")
        return st.integers(low, high) | st.floats(low, high, allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    return JSON


@pytest.fixture(scope="module")
def target() -> Iterator[tuple[EmulatorServer, dict[str, str]]]:
    with fuzz_target("Fuzz target", seed=5) as made:
        emu = made.emu
        ids = {
            "built": made.built_id,
            "plain": made.plain_id,
            "list": made.list_id,
            "other_key": emu.new_project()["apiKey"],
        }
        yield emu, ids


def _plant(value: Any, hostile: Any, where: int) -> Any:
    """``value`` with ``hostile`` planted in its ``where``-th container (as a value or key)."""
    containers: list[Any] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict | list):
            containers.append(item)
            stack.extend(item.values() if isinstance(item, dict) else item)
    if not containers:
        return {"x": hostile}
    target = containers[where % len(containers)]
    if isinstance(target, list):
        target.append(hostile)
    elif isinstance(hostile, str) and where % 2:
        target[hostile] = 1
    else:
        target[next(iter(target), "x")] = hostile
    return value


def _hostile_body(schema: dict[str, Any]) -> st.SearchStrategy[tuple[str, Any]]:
    return st.tuples(from_schema(schema), HOSTILE, st.integers(0, 50)).map(
        lambda t: ("hostile", _plant(t[0], t[1], t[2]))
    )


def _body_strategy(schema: dict[str, Any] | None) -> st.SearchStrategy[tuple[str, Any]]:
    junk = st.one_of(
        JSON.map(lambda v: ("json", v)),
        st.binary(max_size=64).map(lambda b: ("raw", b)),
        st.sampled_from(
            [b"{", b"[1,", b"NaN", b'{"a": 1e999}', b"[" * 5000, b"\xff\xfe", BEYOND_STR_LIMIT]
        ).map(lambda b: ("raw", b)),
    )
    if schema is None:
        return junk
    return st.one_of(from_schema(schema).map(lambda v: ("json", v)), _hostile_body(schema), junk)


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)
@given(data=st.data())
def _generated_requests(target: tuple[EmulatorServer, dict[str, str]], data: st.DataObject) -> None:
    """One generated request per example; what answered is counted in SEEN."""
    emu, ids = target
    method, path, schema = data.draw(st.sampled_from(OPERATIONS), label="operation")
    if data.draw(st.integers(0, 9), label="wrong method?") == 0:
        method = data.draw(st.sampled_from(METHODS), label="method")
    known = [ids["list"]] if "listId" in path else [ids["built"], ids["plain"]]
    if method == "DELETE":
        known = []  # keep the targets alive for later examples
    odd_id = st.one_of(st.uuids().map(str), st.text(min_size=1, max_size=40))
    pick_known = known and data.draw(st.integers(0, 9), label="known id?") < 7
    ident = data.draw(st.sampled_from(known) if pick_known else odd_id, label="id")
    url = path.replace("{realtimeAssistantId}", quote(ident, safe="")).replace(
        "{listId}", quote(ident, safe="")
    )
    key = data.draw(
        st.sampled_from([emu.api_key] * 6 + [None, ids["other_key"], "sk_api_bogus"]), label="key"
    )
    kind, body = data.draw(_body_strategy(schema), label="body")
    headers = auth(key) if key else {}
    content = body if kind == "raw" else json.dumps(body).encode()  # surrogates as \\ud800
    with (
        httpx.Client(base_url=emu.base_url, timeout=30) as c,
        c.stream(
            method, url, content=content, headers={**headers, "content-type": "application/json"}
        ) as response,
    ):
        assert response.status_code < 500, (method, url, response.read())
        SEEN[(method, path, response.status_code)] += 1
        if kind == "hostile" and method == "POST" and key == emu.api_key:
            assert response.status_code in (400, 404, 405), (url, response.read())
            HOSTILE_SEEN[response.status_code] += 1
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            events = parse_sse(list(response.iter_lines()))
            assert len([e for e in events if e[0] in ("done", "error")]) == 1
        else:
            response.read()


@pytest.mark.slow
def test_no_5xx_from_generated_requests_and_never_the_last_resort(
    target: tuple[EmulatorServer, dict[str, str]],
) -> None:
    SEEN.clear()
    HOSTILE_SEEN.clear()
    _generated_requests(target)  # every example, then what they add up to
    emu, _ = target
    assert sum(SEEN.values()) >= 50  # the examples ran (hypothesis may stop short of 200)
    statuses = Counter(status for (_, _, status) in SEEN.elements())
    assert statuses[400] > 0
    assert (statuses[200] + statuses[201]) > 0
    assert emu.stats()["unhandledErrors"] == 0
    assert emu.emulator.last_resort.count == 0
    assert HOSTILE_SEEN[400] > 0
    with httpx.Client(base_url=emu.base_url, headers=auth(emu.api_key), timeout=30) as c:
        assert c.get("/realtime-assistants").status_code == 200


def test_openapi_document_covers_the_thirteen_operations() -> None:
    operation_ids = {op["operationId"] for item in DOC["paths"].values() for op in item.values()}
    assert len(operation_ids) == 13
    assert DOC["info"]["version"] == "1.0"


def test_deep_nesting_and_huge_bodies_are_refused_not_crashed(
    target: tuple[EmulatorServer, dict[str, str]],
) -> None:
    emu, ids = target
    deep = "[" * 900 + "]" * 900
    config = json.dumps({"agent": {"instructions": "x"}, "extra": "PLACEHOLDER"})
    cases = [
        (
            "/realtime-assistants",
            '{"name": "x", "config": ' + config.replace('"PLACEHOLDER"', deep) + "}",
        ),
        (
            f"/realtime-assistants/builds/{ids['plain']}/simulate",
            '{"variables": {"a": ' + deep + "}}",
        ),
        ("/synthesis/phrase-replacement-config", '{"phraseReplacements": ' + deep + "}"),
    ]
    with httpx.Client(base_url=emu.base_url, headers=auth(emu.api_key), timeout=30) as c:
        for path, body in cases:
            response = c.post(path, content=body.encode())
            assert response.status_code == 400, path
            assert "nested" in json.dumps(response.json())
        huge = c.post("/realtime-assistants", content=b" " * (3 * 1024 * 1024))
        assert huge.status_code == 413
        assert huge.json()["statusCode"] == 413
    assert emu.emulator.last_resort.count == 0
