"""Reading a judge's answer: the first JSON object in the content
(:func:`evalkit._chat.extract_json_object`), validated with pydantic.

An answer is well-formed when it holds exactly one verdict for every requested rule id (no
unknown, missing or repeated ids), each ``pass``, ``fail`` or ``na`` with a reason, and every
evidence turn is a turn of the transcript (or null). Anything else is a
:class:`MalformedAnswer` whose message says what was wrong.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from .._chat import MalformedAnswer, extract_json_object

__all__ = ["AnswerVerdict", "parse_answer"]


class AnswerVerdict(BaseModel):
    """One rule's verdict as the judge gave it."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    rule_id: str
    verdict: Literal["pass", "fail", "na"]
    reason: str
    evidence_turn: int | None = None

    @field_validator("verdict", mode="before")
    @classmethod
    def _normalise_verdict(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    verdicts: list[AnswerVerdict]


def _validation_summary(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "answer"
    return f"{exc.error_count()} problem(s), first at {where}: {first['msg']}"


def parse_answer(
    content: str, rule_ids: Sequence[str], turns: Collection[int]
) -> dict[str, AnswerVerdict]:
    """The verdicts by rule id, in ``rule_ids`` order; :class:`MalformedAnswer` otherwise."""
    try:
        answer = _Answer.model_validate(extract_json_object(content))
    except ValidationError as exc:
        raise MalformedAnswer(f"the answer is not verdicts: {_validation_summary(exc)}") from None
    given: dict[str, AnswerVerdict] = {}
    for item in answer.verdicts:
        if item.rule_id in given:
            raise MalformedAnswer(f"rule {item.rule_id!r} answered twice")
        given[item.rule_id] = item
    wanted = set(rule_ids)
    unknown = sorted(set(given) - wanted)
    missing = [r for r in rule_ids if r not in given]
    if unknown or missing:
        parts = [f"unknown rule id(s) {unknown}"] if unknown else []
        parts += [f"missing rule id(s) {missing}"] if missing else []
        raise MalformedAnswer("; ".join(parts))
    for item in given.values():
        if item.evidence_turn is not None and item.evidence_turn not in turns:
            raise MalformedAnswer(
                f"rule {item.rule_id!r} cites turn {item.evidence_turn}, not a turn of the transcript"
            )
    return {r: given[r] for r in rule_ids}
