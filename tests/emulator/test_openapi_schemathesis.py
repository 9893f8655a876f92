"""schemathesis against a real emulator over loopback, from the document it serves: no 5xx, and
every answer conforms to the document (status code, content type, response schema); with
negative data, what the document forbids is refused."""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from evalkit.emulator import EmulatorServer

from .helpers import auth, fuzz_target

pytestmark = pytest.mark.slow
logger = logging.getLogger(__name__)

EXAMPLES = {GenerationMode.POSITIVE: 500, GenerationMode.NEGATIVE: 300}
"""Cases per mode: bounded so the test fits CI (about 30 s each on two shared cores)."""
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@pytest.fixture(scope="module")
def target() -> Iterator[tuple[EmulatorServer, dict[str, Any]]]:
    with fuzz_target("Schema target", seed=11) as made:
        emu = made.emu
        document = made.client.get("/openapi.json").json()
        ids = {"assistants": [made.built_id, made.plain_id], "list": made.list_id}
        # path parameters: mostly the known resources, so bodies reach the stored state
        for item in document["paths"].values():
            for method, op in item.items():
                for param in op.get("parameters", []):
                    known = ids["assistants"] if param["name"] != "listId" else [ids["list"]]
                    if method == "delete":
                        known = []  # keep the targets for later cases
                    param["schema"] = {"enum": [*known, str(uuid.uuid4())]}
        yield emu, {"document": document, **ids}


def _run(
    target: tuple[EmulatorServer, dict[str, Any]], mode: GenerationMode, checks: list[Any]
) -> Counter[tuple[str, int]]:
    emu, info = target
    schema = schemathesis.openapi.from_dict(info["document"])
    strategies = [
        op.ok().as_strategy(generation_mode=mode)
        for op in schema.get_all_operations()
        if mode == GenerationMode.POSITIVE or op.ok().method.upper() != "DELETE"
    ]
    seen: Counter[tuple[str, int]] = Counter()
    headers = {**auth(emu.api_key), "Connection": "close"}

    @settings(
        max_examples=EXAMPLES[mode],
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=st.one_of(strategies))
    def run(case: Any) -> None:
        if case.operation.path.endswith("/text-to-speech") and isinstance(case.body, dict):
            text = case.body.get("text")
            if isinstance(text, str) and len(text) > 60:
                case.body["text"] = text[:60]  # keep synthesis fast; the limit is tested apart
        response = case.call_and_validate(
            base_url=emu.base_url, headers=headers, checks=checks, timeout=30
        )
        seen[(f"{case.method} {case.operation.path}", response.status_code)] += 1

    run()
    return seen


def test_positive_cases_conform_to_the_document(
    target: tuple[EmulatorServer, dict[str, Any]],
) -> None:
    seen = _run(target, GenerationMode.POSITIVE, CHECKS)
    logger.info("schemathesis positive cases: %d", sum(seen.values()))
    assert sum(seen.values()) >= EXAMPLES[GenerationMode.POSITIVE] // 2
    assert any(status in (200, 201) for (_, status) in seen)
    assert target[0].emulator.last_resort.count == 0


def test_negative_cases_are_refused(target: tuple[EmulatorServer, dict[str, Any]]) -> None:
    seen = _run(target, GenerationMode.NEGATIVE, [*CHECKS, negative_data_rejection])
    logger.info("schemathesis negative cases: %d", sum(seen.values()))
    assert sum(seen.values()) >= EXAMPLES[GenerationMode.NEGATIVE] // 2
    assert target[0].emulator.last_resort.count == 0
