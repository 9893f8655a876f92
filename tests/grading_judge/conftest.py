"""Fixtures of the judge tests: a fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ..loopback import serve_app
from .fake_llm import FakeLLM
from .helpers import Endpoint


@pytest.fixture(autouse=True)
def _no_judge_model_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALKIT_JUDGE_MODEL", raising=False)


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    fake = FakeLLM()
    with serve_app(fake.app()) as url:
        yield Endpoint(fake, url + "/v1")
