"""The contract between grading and any LLM judge: what is asked, what comes back.

A :class:`JudgeTask` is one conversation's transcript and the judged rules to decide on it
(one chat-completions call per task and sample). The judge answers one :class:`JudgeVerdict`
per rule. ``grade_run`` builds tasks; :class:`~evalkit.grading.Judge` (an OpenAI-compatible
endpoint) or any object with the :class:`JudgeBackend` shape answers them.

The wire format of evalkit's judge prompt (prompt version :data:`JUDGE_PROMPT_VERSION`), which
the emulator's judge also reads:

* a ``system`` message with the instructions, then one ``user`` message whose last part is a
  fenced JSON block (```` ```json ... ``` ````) holding
  ``{"transcript": [{"turn": 1, "role": "agent", "text": "..."}, ...],
  "rules": [{"rule_id": "...", "title": "...", "criterion": "..." | null}, ...]}``;
* the answer is a JSON object (``response_format`` JSON schema when the endpoint takes it)
  ``{"verdicts": [{"rule_id": "...", "verdict": "pass" | "fail" | "na",
  "reason": "...", "evidence_turn": 3 | null}, ...]}``, one entry per rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal, Protocol

__all__ = [
    "JUDGE_PROMPT_VERSION",
    "JudgeBackend",
    "JudgeTask",
    "JudgeVerdict",
    "JudgedRule",
    "Verdict",
]

JUDGE_PROMPT_VERSION: Final = "judge-prompt/1"

Verdict = Literal["pass", "fail", "na", "error"]


@dataclass(frozen=True, slots=True)
class JudgedRule:
    """A rule the judge decides: its id, title, optional criterion and content hash."""

    rule_id: str
    title: str
    criterion: str | None
    rule_hash: str


@dataclass(frozen=True, slots=True)
class JudgeTask:
    """One conversation to judge against some rules; ``sample`` is the repeat index (0..k-1)."""

    conversation_id: str
    transcript_hash: str
    turns: tuple[tuple[int, str, str], ...]
    """``(index, role, text)`` in speaking order; index is 1-based."""
    rules: tuple[JudgedRule, ...]
    sample: int = 0


@dataclass(frozen=True, slots=True)
class JudgeVerdict:
    """The judge's decision on one rule of one task (``error`` when no valid answer came)."""

    conversation_id: str
    rule_id: str
    sample: int
    verdict: Verdict
    rationale: str
    evidence_turn: int | None
    model: str
    prompt_version: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached: bool = False


class JudgeBackend(Protocol):
    """What grading needs from a judge."""

    @property
    def model(self) -> str:
        """The judge model's name, recorded on every grade."""
        ...

    async def ajudge(self, tasks: Sequence[JudgeTask]) -> list[JudgeVerdict]:
        """Answer every rule of every task; never raises for a failed call (verdict ``error``)."""
        ...
