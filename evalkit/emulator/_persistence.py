"""Optional SQLite persistence: every record is a JSON document keyed by (kind, id).

The state writes through on every change, so a killed emulator loses nothing it answered.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any, Protocol


class DocumentStore(Protocol):
    """Where the state writes its records."""

    def put(self, kind: str, key: str, doc: dict[str, Any]) -> None: ...

    def delete(self, kind: str, key: str) -> None: ...

    def load(self) -> dict[str, dict[str, dict[str, Any]]]: ...

    def close(self) -> None: ...


class MemoryStore:
    """No persistence: keeps nothing (the state itself is the memory)."""

    def put(self, kind: str, key: str, doc: dict[str, Any]) -> None:
        return None

    def delete(self, kind: str, key: str) -> None:
        return None

    def load(self) -> dict[str, dict[str, dict[str, Any]]]:
        return {}

    def close(self) -> None:
        return None


class SqliteStore:
    """Documents in one SQLite table, written through with WAL journaling."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if self.path.parent and not self.path.parent.exists():
            raise FileNotFoundError(f"db: folder {self.path.parent} does not exist")
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = sqlite3.connect(
            str(self.path), check_same_thread=False, isolation_level=None
        )
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute(
            "CREATE TABLE IF NOT EXISTS docs ("
            " kind TEXT NOT NULL, id TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL,"
            " PRIMARY KEY (kind, id))"
        )
        row = self._conn.execute("SELECT COALESCE(MAX(seq), 0) FROM docs").fetchone()
        self._seq = int(row[0])

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError(f"db: {self.path} is closed")
        return self._conn

    def put(self, kind: str, key: str, doc: dict[str, Any]) -> None:
        body = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
        with self._lock:
            conn = self._connection()
            existing = conn.execute(
                "SELECT seq FROM docs WHERE kind = ? AND id = ?", (kind, key)
            ).fetchone()
            if existing is None:
                self._seq += 1
                seq = self._seq
            else:
                seq = int(existing[0])
            conn.execute(
                "INSERT OR REPLACE INTO docs (kind, id, seq, body) VALUES (?, ?, ?, ?)",
                (kind, key, seq, body),
            )

    def delete(self, kind: str, key: str) -> None:
        with self._lock:
            self._connection().execute("DELETE FROM docs WHERE kind = ? AND id = ?", (kind, key))

    def load(self) -> dict[str, dict[str, dict[str, Any]]]:
        """Every document by kind and id, in the order each was first written."""
        out: dict[str, dict[str, dict[str, Any]]] = {}
        with self._lock:
            rows = (
                self._connection()
                .execute("SELECT kind, id, body FROM docs ORDER BY seq")
                .fetchall()
            )
        for kind, key, body in rows:
            out.setdefault(kind, {})[key] = json.loads(body)
        return out

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
