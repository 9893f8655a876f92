"""What a run IS: the grid and the target. One object yields both the identity hash stored in
the manifest and the words that say what changed when a resume is refused."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .. import _version
from .._util import canonical_json, now_iso
from ..grid import Grid
from ..store import identity_hash
from ..targets import ResolvedTarget

__all__ = ["RunDefinition"]


@dataclass(frozen=True)
class RunDefinition:
    """A run's identity: the grid's definition and the resolved target (assistant, config
    version, variant). Runtime knobs and the service's host are not part of it, so an
    emulator restarted on another port, or another concurrency, still resumes the run."""

    grid: dict[str, Any]
    target: dict[str, Any]

    @classmethod
    def of(cls, grid: Grid, resolved: ResolvedTarget) -> RunDefinition:
        """The definition of running ``grid`` against ``resolved``."""
        return cls(grid=grid.definition(), target=resolved.definition())

    @property
    def identity(self) -> str:
        """The SHA-256 identity hash stored as ``manifest["identity"]``."""
        return identity_hash({"grid": self.grid, "target": self.target})

    def manifest(
        self, run_id: str, resolved: ResolvedTarget, host: str, n_conversations: int
    ) -> dict[str, Any]:
        """The manifest of a new run with this definition."""
        return {
            "run_id": run_id,
            "identity": self.identity,
            "evalkit_version": _version.__version__,
            "base_url_host": host,
            "assistant_id": resolved.assistant_id,
            "target": resolved.label,
            "assistant_version": resolved.version,
            "config_snapshot": resolved.snapshot.to_json(),
            "variant": resolved.variant.definition() if resolved.variant else None,
            "on_clone": resolved.needs_clone,
            "target_definition": self.target,
            "grid": self.grid,
            "n_conversations": n_conversations,
            "created_at": now_iso(),
        }

    def changes_from(self, stored: Mapping[str, Any]) -> list[str]:
        """What differs from a stored manifest, in words ("repeats changed from 2 to 3")."""
        changes = _target_changes(stored, self.target)
        stored_grid = stored.get("grid")
        old: Mapping[str, Any] = stored_grid if isinstance(stored_grid, Mapping) else {}
        new = self.grid
        for key, noun in (("personas", "persona"), ("variables", "variables record")):
            changes += _set_changes(old.get(key) or [], new.get(key) or [], noun)
        changes += _set_changes(old.get("contexts") or [], new.get("contexts") or [], "context")
        for key in ("repeats", "shard", "sample", "version"):
            if old.get(key) != new.get(key):
                changes.append(
                    f"{key} changed from {_short(old.get(key))} to {_short(new.get(key))}"
                )
        if not changes and old.get("cells_digest") != new.get("cells_digest"):
            changes.append("the selection of cells changed")
        return changes


def _target_changes(stored: Mapping[str, Any], target: Mapping[str, Any]) -> list[str]:
    old = stored.get("target_definition")
    if not isinstance(old, Mapping):  # a manifest from before target_definition was stored
        old = {
            "label": stored.get("target"),
            "assistant_id": stored.get("assistant_id"),
            "config_version": stored.get("assistant_version"),
            "variant": stored.get("variant"),
        }
    words = {
        "label": "the target",
        "assistant_id": "the assistant",
        "config_version": "the assistant's config version",
        "variant": "the variant",
    }
    return [
        f"{words.get(key, key)} changed from {_short(old.get(key))} to {_short(target.get(key))}"
        for key in sorted(set(old) | set(target))
        if old.get(key) != target.get(key)
    ]


def _label(item: Any, noun: str) -> str:
    if isinstance(item, Mapping) and noun == "persona":
        return f"the persona {item.get('label')!r}"
    return f"the {noun} {_short(item)}"


def _set_changes(old: list[Any], new: list[Any], noun: str) -> list[str]:
    before = {canonical_json(item): item for item in old}
    after = {canonical_json(item): item for item in new}
    added = [_label(after[k], noun) + " was added" for k in after if k not in before]
    removed = [_label(before[k], noun) + " was removed" for k in before if k not in after]
    return added + removed


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= 60 else text[:57] + "..."
