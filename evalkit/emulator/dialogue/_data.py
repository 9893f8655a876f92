"""The phrase banks and word lists, read once from the package's ``phrases/*.json``."""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

__all__ = ["Bank", "load"]

Bank = dict[str, Any]
"""``{"acts": [...], "en": [...], "ru": [...], "ur": [...], "mix"?: [...]}``."""


@functools.cache
def load(name: str) -> dict[str, Any]:
    """The parsed data file ``phrases/<name>.json``."""
    text = resources.files(__package__).joinpath("phrases", f"{name}.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data
