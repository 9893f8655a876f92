"""Shared test configuration."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_evalkit_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never pick up a developer's real service settings."""
    for name in (
        "EVALKIT_BASE_URL",
        "EVALKIT_API_KEY",
        "EVALKIT_JUDGE_BASE_URL",
        "EVALKIT_JUDGE_API_KEY",
        "EVALKIT_JUDGE_MODEL",
        "EVALKIT_DEBUG",
    ):
        monkeypatch.delenv(name, raising=False)
