"""evalkit's judge prompt (wire format in :mod:`evalkit.grading._judge_types`) and its schema.

The user message ends with a fenced JSON block. Backticks inside transcript or rule text are
written as the JSON escape ``\\u0060``, so no text can close the fence early; the block still
decodes to the same strings.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

from ._judge_types import JudgedRule, JudgeTask

__all__ = ["SYSTEM_PROMPT", "USER_PREAMBLE", "build_messages", "response_format"]

SYSTEM_PROMPT: Final = """\
You are a careful, impartial judge of recorded phone conversations between a voice agent \
("agent") and the person on the other end ("caller").

You receive the transcript, with every turn numbered, and a list of rules. Each rule has an id, \
a title and sometimes a criterion that says exactly what to check.

- Judge each rule independently of the others.
- Use only what the transcript shows. Do not assume anything that was not said.
- "pass": the transcript shows the rule was met.
- "fail": the transcript shows the rule was broken, or not met when it should have been.
- "na": the rule does not apply to this conversation (the situation it is about never came up).
- Give a short reason (one or two sentences) a person can check against the transcript.
- Cite the number of the turn that is the best evidence in "evidence_turn"; use null only when \
no single turn is evidence (for example for "na").

Answer with only one JSON object, no other text:
{"verdicts": [{"rule_id": "<a rule id given>", "verdict": "pass" | "fail" | "na", \
"reason": "<why>", "evidence_turn": <turn number or null>}]}
with exactly one entry per rule, using the rule ids as given."""

USER_PREAMBLE: Final = (
    "Judge this conversation against every rule below. The transcript and the rules are in "
    "the JSON block."
)


def _fenced_json(payload: Any) -> str:
    text = json.dumps(payload, ensure_ascii=False).replace("`", "\\u0060")
    return f"```json\n{text}\n```"


def build_messages(task: JudgeTask, rules: Sequence[JudgedRule]) -> list[dict[str, str]]:
    """The system and user messages that ask for ``rules`` (a subset of the task's) on ``task``."""
    payload = {
        "transcript": [
            {"turn": index, "role": role, "text": text} for index, role, text in task.turns
        ],
        "rules": [
            {"rule_id": r.rule_id, "title": r.title, "criterion": r.criterion} for r in rules
        ],
    }
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": f"{USER_PREAMBLE}\n\n{_fenced_json(payload)}"},
    ]


def response_format(rules: Sequence[JudgedRule]) -> dict[str, Any]:
    """A strict ``json_schema`` response format allowing exactly these rule ids.

    Only keywords every strict structured-output implementation takes (no ``minItems``): the
    count of verdicts is checked when the answer is parsed.
    """
    verdict = {
        "type": "object",
        "properties": {
            "rule_id": {"type": "string", "enum": [r.rule_id for r in rules]},
            "verdict": {"type": "string", "enum": ["pass", "fail", "na"]},
            "reason": {"type": "string"},
            "evidence_turn": {"type": ["integer", "null"]},
        },
        "required": ["rule_id", "verdict", "reason", "evidence_turn"],
        "additionalProperties": False,
    }
    schema = {
        "type": "object",
        "properties": {"verdicts": {"type": "array", "items": verdict}},
        "required": ["verdicts"],
        "additionalProperties": False,
    }
    return {
        "type": "json_schema",
        "json_schema": {"name": "judge_verdicts", "strict": True, "schema": schema},
    }
