"""The Arrow schemas of a run's tables (conversations, turns, grades), in a module that imports
nothing else of the store, so the journal and the table I/O can both read them."""

from __future__ import annotations

from typing import Final

import pyarrow as pa

__all__ = ["CONVERSATIONS_SCHEMA", "GRADES_SCHEMA", "TURNS_SCHEMA"]

_STR = pa.large_string()
_TS = pa.timestamp("us", tz="UTC")


def _f(name: str, type_: pa.DataType, nullable: bool = False) -> pa.Field:
    return pa.field(name, type_, nullable=nullable)


CONVERSATIONS_SCHEMA: Final = pa.schema(
    [
        _f("run_id", _STR),
        _f("conversation_id", _STR),
        _f("cell_id", _STR),
        _f("repeat", pa.int64()),
        _f("persona_label", _STR),
        _f("variables", _STR),
        _f("context", _STR, True),
        _f("status", _STR),
        _f("error_message", _STR, True),
        _f("attempts", pa.int64()),
        _f("n_turns", pa.int64()),
        _f("ended_by", _STR, True),
        _f("first_turn_s", pa.float64(), True),
        _f("duration_s", pa.float64(), True),
        _f("started_at", _TS),
        _f("finished_at", _TS),
        _f("transcript_hash", _STR, True),
        _f("assistant_version", pa.int64(), True),
        _f("target", _STR),
        _f("persona_id", _STR, True),
        _f("persona_tags", _STR, True),
    ]
)

TURNS_SCHEMA: Final = pa.schema(
    [
        _f("run_id", _STR),
        _f("conversation_id", _STR),
        _f("index", pa.int64()),
        _f("role", _STR),
        _f("text", _STR),
        _f("at_s", pa.float64(), True),
    ]
)

#: Grades (written by evalkit.grading): one row per conversation x rule.
GRADES_SCHEMA: Final = pa.schema(
    [
        _f("run_id", _STR),
        _f("conversation_id", _STR),
        _f("cell_id", _STR, True),
        _f("persona_label", _STR, True),
        _f("repeat", pa.int64(), True),
        _f("rubric_version_id", _STR),
        _f("rule_id", _STR),
        _f("title", _STR),
        _f("points", pa.float64()),
        _f("verdict", _STR),
        _f("points_awarded", pa.float64(), True),
        _f("rationale", _STR, True),
        _f("evidence_turn", pa.int64(), True),
        _f("grader", _STR),
        _f("judge_model", _STR, True),
        _f("prompt_version", _STR, True),
        _f("judge_samples", pa.int64(), True),
        _f("judge_agreement", pa.float64(), True),
        _f("prompt_tokens", pa.int64(), True),
        _f("completion_tokens", pa.int64(), True),
        _f("transcript_hash", _STR, True),
        _f("scorecard_hash", _STR, True),
    ]
)
