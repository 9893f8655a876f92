"""Typed rows of a run: one :class:`ConversationRecord` per conversation, its :class:`TurnRecord` s.

The field order of :class:`ConversationRecord` is the column order of ``conversations.parquet``.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any, Final, Literal, Protocol, TypeAlias, get_args

from .._util import content_hash

__all__ = [
    "CONVERSATION_FIELDS",
    "ENDED_BY",
    "ROLES",
    "STATUSES",
    "ConversationRecord",
    "ConversationStatus",
    "TurnLike",
    "TurnRecord",
    "dump_tags",
    "dump_variables",
    "transcript_hash",
]

ConversationStatus: TypeAlias = Literal["done", "error", "dropped", "failed"]
Role: TypeAlias = Literal["agent", "caller"]

#: Every conversation ends in exactly one of these (DESIGN.md "Outcomes"); all four are final.
#: The one list of statuses: the type above, the run list, the run pages and the CLI read it.
STATUSES: Final[tuple[str, ...]] = get_args(ConversationStatus)
ROLES: Final[tuple[str, ...]] = get_args(Role)
ENDED_BY: Final[tuple[str | None, ...]] = ("agent", "caller", None)


@dataclass(slots=True, kw_only=True)
class ConversationRecord:
    """One finished conversation: a row of the ``conversations`` table.

    ``variables`` is JSON text (see :func:`dump_variables`); ``started_at`` and ``finished_at``
    are timezone-aware datetimes (stored in UTC); ``n_turns`` equals the number of turns stored.
    ``persona_tags`` is the persona's tags as a JSON list (``'["angry","urdu"]'``, ``"[]"`` for
    none; see :func:`dump_tags`), or ``None`` when unknown (runs recorded before the column).
    """

    run_id: str
    conversation_id: str
    cell_id: str
    repeat: int
    persona_label: str
    variables: str
    context: str | None = None
    status: ConversationStatus
    error_message: str | None = None
    attempts: int = 1
    n_turns: int
    ended_by: Role | None = None
    first_turn_s: float | None = None
    duration_s: float | None = None
    started_at: datetime
    finished_at: datetime
    transcript_hash: str | None = None
    assistant_version: int | None = None
    target: str
    persona_id: str | None = None
    persona_tags: str | None = None

    def variables_dict(self) -> dict[str, Any]:
        """The variables as a dict (parsed from the JSON text)."""
        value = json.loads(self.variables)
        if not isinstance(value, dict):
            raise ValueError(f"conversation {self.conversation_id}: variables is not a JSON object")
        return value

    def check(self) -> None:
        """Raise ``ValueError`` naming the field when a value breaks the table's contract."""
        where = f"conversation {self.conversation_id!r}"
        for name in (
            "run_id",
            "conversation_id",
            "cell_id",
            "persona_label",
            "variables",
            "target",
        ):
            if not isinstance(getattr(self, name), str):
                raise ValueError(f"{where}: {name} must be a str")
        if not self.conversation_id:
            raise ValueError("conversation_id must not be empty")
        for name in ("repeat", "attempts", "n_turns"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{where}: {name} must be a non-negative int, not {value!r}")
        if self.status not in STATUSES:
            raise ValueError(f"{where}: status must be one of {STATUSES}, not {self.status!r}")
        if self.ended_by not in ENDED_BY:
            raise ValueError(f"{where}: ended_by must be 'agent', 'caller' or None")
        for name in ("started_at", "finished_at"):
            value = getattr(self, name)
            if not isinstance(value, datetime) or value.utcoffset() is None:
                raise ValueError(f"{where}: {name} must be a timezone-aware datetime")
        if self.persona_tags is not None and not _is_json_list_of_str(self.persona_tags):
            raise ValueError(f"{where}: persona_tags must be a JSON list of strings, or None")
        version = self.assistant_version
        if version is not None and (not isinstance(version, int) or isinstance(version, bool)):
            raise ValueError(f"{where}: assistant_version must be an int or None")

    def to_json_dict(self) -> dict[str, Any]:
        """A JSON-ready dict: datetimes as ISO 8601 in UTC, non-finite floats as null."""
        out: dict[str, Any] = {}
        for name in CONVERSATION_FIELDS:
            value = getattr(self, name)
            if isinstance(value, datetime):
                value = value.astimezone(UTC).isoformat()
            elif isinstance(value, float) and not math.isfinite(value):
                value = None
            out[name] = value
        return out

    @classmethod
    def from_json_dict(cls, data: Mapping[str, Any]) -> ConversationRecord:
        """Inverse of :meth:`to_json_dict` (also takes datetimes, as Arrow's ``to_pylist`` gives)."""
        values: dict[str, Any] = {name: data.get(name) for name in CONVERSATION_FIELDS}
        for name in ("started_at", "finished_at"):
            value = values[name]
            if isinstance(value, str):
                value = datetime.fromisoformat(value)
            if isinstance(value, datetime):
                values[name] = value.astimezone(UTC)
        return cls(**values)


CONVERSATION_FIELDS: Final[tuple[str, ...]] = tuple(f.name for f in fields(ConversationRecord))


@dataclass(frozen=True, slots=True)
class TurnRecord:
    """One utterance: 1-based ``index`` in speaking order, ``role`` and ``text``; ``at_s`` is
    when its turn event arrived, seconds from the simulate request (None: not recorded)."""

    index: int
    role: Role
    text: str
    at_s: float | None = None


class TurnLike(Protocol):
    """Anything with ``index``, ``role`` and ``text`` (:class:`TurnRecord`, ``evalkit.Turn``);
    an ``at_s`` attribute, where there is one, is kept."""

    @property
    def index(self) -> int: ...
    @property
    def role(self) -> str: ...
    @property
    def text(self) -> str: ...


TurnInput: TypeAlias = TurnLike | tuple[int, str, str] | tuple[int, str, str, float | None]


def as_turn_record(turn: TurnInput) -> TurnRecord:
    """Normalise a turn object or an ``(index, role, text[, at_s])`` tuple; ``ValueError`` if
    invalid."""
    index: Any
    role: Any
    text: Any
    at_s: Any = None
    if isinstance(turn, TurnRecord):
        index, role, text, at_s = turn.index, turn.role, turn.text, turn.at_s
    elif isinstance(turn, tuple):
        if len(turn) == 3:
            index, role, text = turn
        elif len(turn) == 4:
            index, role, text, at_s = turn
        else:
            raise ValueError(f"a turn tuple is (index, role, text[, at_s]), not {turn!r}")
    else:
        index, role, text = turn.index, turn.role, turn.text
        at_s = getattr(turn, "at_s", None)
    if not isinstance(index, int) or isinstance(index, bool) or index < 1:
        raise ValueError(f"turn index must be an int >= 1, not {index!r}")
    if role not in ROLES:
        raise ValueError(f"turn {index}: role must be 'agent' or 'caller', not {role!r}")
    if not isinstance(text, str):
        raise ValueError(f"turn {index}: text must be a str")
    if at_s is not None:
        if isinstance(at_s, bool) or not isinstance(at_s, int | float):
            raise ValueError(f"turn {index}: at_s must be a number of seconds or None")
        if not math.isfinite(at_s) or at_s < 0:
            raise ValueError(f"turn {index}: at_s must be finite and >= 0, not {at_s!r}")
        at_s = float(at_s)
    return TurnRecord(index, role, text, at_s)


def _role_text(turn: Any) -> tuple[str, str]:
    if isinstance(turn, tuple):
        if len(turn) == 2:
            return str(turn[0]), str(turn[1])
        if len(turn) == 3:
            return str(turn[1]), str(turn[2])
        raise ValueError(f"a turn tuple is (role, text) or (index, role, text), not {turn!r}")
    role = getattr(turn, "role", None)
    if role is None:
        role = turn.speaker  # evalkit.api.TranscriptTurn from the `done` event
    return str(role), str(turn.text)


def transcript_hash(turns: Iterable[Any]) -> str:
    """SHA-256 (hex) of the ``(role, text)`` sequence of a transcript; indexes do not count.

    Takes :class:`TurnRecord`, ``evalkit.Turn``, ``evalkit.api.TranscriptTurn`` (``speaker``),
    ``(role, text)`` or ``(index, role, text)`` tuples. The same words from the same speakers in
    the same order always give the same hash, whatever produced them.
    """
    pairs = [_role_text(turn) for turn in turns]
    return content_hash(pairs)


def dump_tags(tags: Iterable[str]) -> str:
    """Tags as the JSON list text stored in the ``persona_tags`` column, in the given order."""
    return json.dumps(list(tags), ensure_ascii=False, separators=(",", ":"))


def _is_json_list_of_str(text: Any) -> bool:
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return False
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def dump_variables(variables: Mapping[str, Any] | None) -> str:
    """Variables as the JSON text stored in the ``variables`` column (``"{}"`` for None)."""
    return json.dumps(dict(variables or {}), ensure_ascii=False, separators=(",", ":"))


def check_turns(record: ConversationRecord, turns: Sequence[TurnInput]) -> list[TurnRecord]:
    """Validate ``turns`` against ``record`` and return them as :class:`TurnRecord` s."""
    checked = [as_turn_record(turn) for turn in turns]
    for before, after in itertools.pairwise(checked):
        if after.index <= before.index:
            raise ValueError(
                f"conversation {record.conversation_id!r}: turn indexes must increase "
                f"({before.index} then {after.index})"
            )
    if record.n_turns != len(checked):
        raise ValueError(
            f"conversation {record.conversation_id!r}: n_turns is {record.n_turns} "
            f"but {len(checked)} turn(s) were given"
        )
    return checked
