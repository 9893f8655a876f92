"""Config snapshots: every assistant config version evalkit reads, recorded (redacted) in the store.

The service returns only the *draft* config (E1), and simulate runs only the draft. To run
``prod`` when the draft has moved ahead, evalkit needs the config of the published version,
which it can only have if it saw that version while it was the draft. So every config evalkit
reads is kept here: ``<store>/.snapshots/<assistant_id>/v<version>.json``, in the store itself
(a bucket too), so every machine that writes to the store can run prod.

Credential values (provider ``apiKey``, tool header ``Authorization``, ...) are redacted by the
one redactor (last 4 characters kept); a clone made from a snapshot omits them and is billed
through the service.
"""

from __future__ import annotations

import json
import logging
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from .._util import now_iso, redact, strip_masked
from ..api import Assistant

if TYPE_CHECKING:
    from ..store import StoreLike, StoreLocation

logger = logging.getLogger("evalkit.targets")

SNAPSHOT_DIR = ".snapshots"


def redact_config(config: Any) -> Any:
    """A deep copy of ``config`` with every credential value masked (the one redactor)."""
    return redact(config)


def strip_redacted_keys(config: Any) -> Any:
    """``config`` without its masked credentials (so a clone is billed through the service)."""
    return strip_masked(config)


@dataclass(frozen=True, slots=True)
class ConfigSnapshot:
    """One config version of one assistant, as evalkit read it (redacted)."""

    assistant_id: str
    version: int
    name: str
    config: dict[str, Any]
    taken_at: str
    source: str = "list"

    @classmethod
    def from_assistant(cls, assistant: Assistant, source: str = "list") -> ConfigSnapshot:
        """The snapshot of the config an E1/E2 answer shows."""
        version = assistant.version
        if version is None and assistant.aliases is not None:
            version = assistant.aliases.draft.version
        if version is None:
            raise ValueError(
                f"assistant {assistant.id} was read without a version; cannot snapshot it"
            )
        return cls(
            assistant_id=assistant.id,
            version=version,
            name=assistant.name,
            config=redact_config(assistant.config.to_json()),
            taken_at=now_iso(),
            source=source,
        )

    def to_json(self) -> dict[str, Any]:
        """The snapshot as a JSON object (snake_case keys)."""
        return asdict(self)

    @property
    def instructions(self) -> str:
        """The system prompt of this version."""
        agent = self.config.get("agent") or {}
        return str(agent.get("instructions", ""))


class SnapshotStore:
    """Snapshots under ``<store>/.snapshots`` (one JSON file per assistant version), kept in the
    store itself, a folder or a URL alike: a job on any machine runs prod from the snapshot
    another machine took when that version was the draft."""

    def __init__(self, store: StoreLike = "runs") -> None:
        from ..store import open_store

        self._store = store
        self.root: StoreLocation = open_store(store) / SNAPSHOT_DIR

    def _io(self) -> AbstractContextManager[None]:
        """The store's I/O, whose refused or dropped connections say the store is unreachable
        (only here: the service's own connection errors stay the service's)."""
        from ..store import unreachable_store

        return unreachable_store(self._store)

    def _path(self, assistant_id: str, version: int) -> StoreLocation:
        safe = "".join(ch for ch in assistant_id if ch.isalnum() or ch in "-_")
        return self.root / safe / f"v{version:06d}.json"

    def save(self, snapshot: ConfigSnapshot) -> StoreLocation:
        """Record ``snapshot`` (a version already recorded keeps its first copy); locally the
        file is mode 0600: a config may hold what only its owner should read."""
        path = self._path(snapshot.assistant_id, snapshot.version)
        data = json.dumps(snapshot.to_json(), ensure_ascii=False, indent=2).encode("utf-8")
        with self._io():
            if path.exists():
                return path
            try:
                path.create_bytes(data, private=True)
            except FileExistsError:  # another writer recorded it first: its copy stays
                return path
        logger.info("recorded config snapshot of %s v%d", snapshot.assistant_id, snapshot.version)
        return path

    def load(self, assistant_id: str, version: int) -> ConfigSnapshot | None:
        """The snapshot of that version, or ``None`` when evalkit never saw it."""
        path = self._path(assistant_id, version)
        try:
            with self._io():
                raw = path.read_bytes()
        except FileNotFoundError:
            return None
        data = json.loads(raw.decode("utf-8"))
        return ConfigSnapshot(**data)

    def versions(self, assistant_id: str) -> list[int]:
        """Versions recorded for an assistant, ascending."""
        folder = self._path(assistant_id, 1).parent
        with self._io():
            return sorted(int(p.stem[1:]) for p in folder.files("v*.json"))
