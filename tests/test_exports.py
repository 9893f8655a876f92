"""The public surface: a curated, sorted ``__all__`` whose every name resolves (httpx's test)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import evalkit
import evalkit.api


def test_all_is_sorted_and_unique() -> None:
    names = [n for n in evalkit.__all__ if n != "__version__"]
    assert names == sorted(names)
    assert len(set(evalkit.__all__)) == len(evalkit.__all__)


def test_every_exported_name_resolves_and_claims_a_public_home() -> None:
    for name in evalkit.__all__:
        value = getattr(evalkit, name)
        if isinstance(value, type) or (callable(value) and hasattr(value, "__code__")):
            assert value.__module__.startswith("evalkit"), (name, value.__module__)


def test_api_all_is_part_of_the_top_level() -> None:
    assert set(evalkit.api.__all__) <= set(evalkit.__all__)


def test_unknown_attribute_raises() -> None:
    with pytest.raises(AttributeError, match="not_a_name"):
        evalkit.not_a_name  # noqa: B018


def test_import_has_no_side_effects_and_stays_light() -> None:
    """Importing evalkit configures no logging handlers and does not load pandas."""
    code = (
        "import logging, sys, evalkit\n"
        "assert not logging.getLogger().handlers, 'root logger configured'\n"
        "assert not logging.getLogger('evalkit').handlers\n"
        "print('pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
