"""Shared test configuration: no developer settings leak in, and hypothesis draws are seeded."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from .docs.collect import docs_directory
from .docs.tally import DocsTally

ENV_NAMES = (
    "EVALKIT_BASE_URL",
    "EVALKIT_API_KEY",
    "EVALKIT_JUDGE_BASE_URL",
    "EVALKIT_JUDGE_API_KEY",
    "EVALKIT_JUDGE_MODEL",
    "EVALKIT_DEBUG",
)


def pytest_configure(config: pytest.Config) -> None:
    """Hypothesis runs the same examples every time and in every xdist worker (``ci``, the
    default); ``HYPOTHESIS_PROFILE=explore`` draws fresh examples and keeps a database."""
    settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
    settings.register_profile("explore", derandomize=False)
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
    config.pluginmanager.register(DocsTally(), "evalkit-docs-tally")


def pytest_collect_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """tests/docs also collects README.md and the docs pages (``tests/docs/collect.py``)."""
    return docs_directory(path, parent)


@pytest.fixture(autouse=True)
def _no_evalkit_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never pick up a developer's real service settings."""
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)
