"""The local record of refine builds in flight: ``<store>/.refine/<assistant>.json``.

The service accepts a second refine while one is in flight and fails it silently, and it has
no status poll the spec shows. So evalkit keeps its own record, one small JSON file per
assistant, written atomically; every read-modify-write holds an exclusive ``fcntl.flock`` on a
sibling ``.lock`` file, so two processes never both claim the assistant.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from .._util import atomic_write_bytes
from ._errors import RefineError

__all__ = ["REFINE_DIR", "InFlightBuild", "InFlightLedger"]

REFINE_DIR = ".refine"


@dataclass(frozen=True, slots=True)
class InFlightBuild:
    """A build evalkit submitted and has not yet seen finish.

    ``build_id`` is empty while the submit is under way (or when a process died before the
    answer came back); ``version_before`` is the draft version the build must move past.
    """

    assistant_id: str
    build_id: str
    started_at: str
    version_before: int
    pid: int

    def describe(self) -> str:
        """The build in words, for messages."""
        name = f"build {self.build_id}" if self.build_id else "a build whose id was never recorded"
        return (
            f"{name} of assistant {self.assistant_id}, started {self.started_at} from draft "
            f"version {self.version_before} (process {self.pid})"
        )


def _safe(assistant_id: str) -> str:
    safe = "".join(ch for ch in assistant_id if ch.isalnum() or ch in "-_")
    if not safe:
        raise RefineError(f"assistant id {assistant_id!r} has no usable characters")
    return safe


class InFlightLedger:
    """Records of builds in flight under ``<store>/.refine`` (one file per assistant)."""

    def __init__(self, store: str | os.PathLike[str] = "runs") -> None:
        self.root = Path(store) / REFINE_DIR

    def path(self, assistant_id: str) -> Path:
        """Where the record of ``assistant_id`` lives."""
        return self.root / f"{_safe(assistant_id)}.json"

    @contextlib.contextmanager
    def locked(self, assistant_id: str) -> Iterator[None]:
        """Hold the assistant's exclusive lock (across processes) for a read-modify-write."""
        self.root.mkdir(parents=True, exist_ok=True)
        lock = self.root / f"{_safe(assistant_id)}.lock"
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def read(self, assistant_id: str) -> InFlightBuild | None:
        """The recorded build in flight, or ``None``."""
        path = self.path(assistant_id)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise RefineError(f"unreadable refine record {path}: {exc}") from exc
        return InFlightBuild(**data)

    def write(self, record: InFlightBuild) -> Path:
        """Record ``record`` atomically (call under :meth:`locked`)."""
        path = self.path(record.assistant_id)
        data = json.dumps(asdict(record), indent=2).encode("utf-8")
        atomic_write_bytes(path, data)
        return path

    def clear(self, assistant_id: str, build_id: str | None = None) -> None:
        """Forget the record (only when it is ``build_id``'s, if given; call under :meth:`locked`)."""
        current = self.read(assistant_id)
        if current is None or (build_id is not None and current.build_id != build_id):
            return
        with contextlib.suppress(FileNotFoundError):
            self.path(assistant_id).unlink()
