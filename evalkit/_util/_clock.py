"""The one clock: aware UTC timestamps."""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["now", "now_iso"]


def now() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


def now_iso(timespec: str = "seconds") -> str:
    """The current UTC time as ISO 8601 text (``2026-11-23T01:02:03+00:00``)."""
    return now().isoformat(timespec=timespec)
