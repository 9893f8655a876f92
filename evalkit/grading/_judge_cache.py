"""The judge's on-disk, content-addressed cache of rule verdicts.

A key is the sha256 of (transcript hash, rule hash, judge model, prompt version, sample index);
its entry is one small JSON file ``<root>/<key[:2]>/<key>.json``, written atomically (temp file
and rename). Entries are not fsync'd: a lost or torn entry only costs a call again, because an
unreadable entry counts as a miss. Only real verdicts are stored, never ``error``.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal, cast

from .._util import atomic_write_bytes, content_hash
from ._judge_types import JudgeVerdict

__all__ = ["CachedVerdict", "JudgeCache", "cache_key"]

logger = logging.getLogger("evalkit.grading.judge")

_VERDICTS: Final = frozenset({"pass", "fail", "na"})


def cache_key(
    transcript_hash: str, rule_hash: str, model: str, prompt_version: str, sample: int
) -> str:
    """The hex sha256 naming one rule's verdict on one transcript (unambiguous: a JSON list)."""
    parts = [transcript_hash, rule_hash, model, prompt_version, sample]
    return content_hash(parts)


@dataclass(frozen=True, slots=True)
class CachedVerdict:
    """What a cache entry holds."""

    verdict: Literal["pass", "fail", "na"]
    rationale: str
    evidence_turn: int | None
    prompt_tokens: int | None
    completion_tokens: int | None

    @classmethod
    def from_json(cls, data: Any) -> CachedVerdict | None:
        """The entry, or ``None`` when ``data`` is not a well-formed entry."""
        if not isinstance(data, dict) or data.get("verdict") not in _VERDICTS:
            return None
        fields = (
            data.get("evidence_turn"),
            data.get("prompt_tokens"),
            data.get("completion_tokens"),
        )
        if not isinstance(data.get("rationale"), str) or not all(
            v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in fields
        ):
            return None
        verdict = cast(Literal["pass", "fail", "na"], data["verdict"])
        return cls(verdict, data["rationale"], *fields)


class JudgeCache:
    """Verdicts by cache key under ``root`` (created on first write)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._prefix = os.fspath(root) + os.sep  # str paths: a lookup is mostly pathlib otherwise
        self._made: set[Path] = set()  # shard folders known to exist

    def path_for(self, key: str) -> Path:
        """Where the entry for ``key`` lives."""
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> CachedVerdict | None:
        """The stored verdict, or ``None`` (missing or unreadable entries are misses)."""
        try:
            with open(f"{self._prefix}{key[:2]}{os.sep}{key}.json", "rb") as file:
                raw = file.read()
        except FileNotFoundError:
            return None
        except OSError as exc:
            logger.debug("judge cache entry %s unreadable: %s", key, exc)
            return None
        try:
            entry = CachedVerdict.from_json(json.loads(raw))
        except ValueError:
            entry = None
        if entry is None:
            logger.debug("judge cache entry %s is not a verdict; ignored", key)
        return entry

    def put(self, key: str, verdict: JudgeVerdict) -> None:
        """Store a real verdict (``error`` verdicts are refused with ``ValueError``)."""
        if verdict.verdict not in _VERDICTS:
            raise ValueError(f"only pass/fail/na verdicts are cached, not {verdict.verdict!r}")
        entry = {
            "verdict": verdict.verdict,
            "rationale": verdict.rationale,
            "evidence_turn": verdict.evidence_turn,
            "prompt_tokens": verdict.prompt_tokens,
            "completion_tokens": verdict.completion_tokens,
            "model": verdict.model,
            "prompt_version": verdict.prompt_version,
        }
        target = self.path_for(key)
        if target.parent not in self._made:
            target.parent.mkdir(parents=True, exist_ok=True)
            self._made.add(target.parent)
        data = json.dumps(entry, ensure_ascii=False).encode()
        atomic_write_bytes(target, data, durable=False)
