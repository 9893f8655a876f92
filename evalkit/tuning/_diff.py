"""A config change in words: a unified diff of the JSON, then the prompt line by line."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from typing import Any

from ..targets import redact_config

__all__ = ["config_diff"]


def _prompt(config: Mapping[str, Any]) -> str:
    agent = config.get("agent")
    return str((agent or {}).get("instructions") or "") if isinstance(agent, Mapping) else ""


def config_diff(before: Mapping[str, Any], after: Mapping[str, Any], label: str) -> str:
    """``before`` -> ``after`` (credentials redacted on both sides); empty when equal."""
    old, new = redact_config(dict(before)), redact_config(dict(after))
    out = list(
        difflib.unified_diff(
            json.dumps(old, indent=2, sort_keys=True, ensure_ascii=False).splitlines(),
            json.dumps(new, indent=2, sort_keys=True, ensure_ascii=False).splitlines(),
            "current config",
            f"{label} config",
            lineterm="",
        )
    )
    if _prompt(old) != _prompt(new):
        out += ["", "prompt:"]
        out += list(
            difflib.unified_diff(
                _prompt(old).splitlines() or [""],
                _prompt(new).splitlines() or [""],
                "current prompt",
                f"{label} prompt",
                lineterm="",
            )
        )
    return "\n".join(out)
