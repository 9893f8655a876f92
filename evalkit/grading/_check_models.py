"""The ``check`` block of a scorecard rule: one typed model per check type.

``CheckModel`` is a discriminated union on ``type``; unknown keys are errors (a typo must never
silently weaken a rule) and parameters are strictly typed (``"yes"`` is not a boolean).
scorecards/README.md documents every type; ``CHECK_TYPES`` in ``_checks`` maps each to its
function.
"""

from __future__ import annotations

from typing import Annotated, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ._regex import pattern_problem

__all__ = [
    "AgentSpeaksFirstCheck",
    "CheckModel",
    "ContainsCheck",
    "EndedByCheck",
    "JudgeCheck",
    "MaxTurnCharsCheck",
    "NoPlaceholdersCheck",
    "NoRepetitionCheck",
    "NotContainsCheck",
    "RegexCheck",
    "ScriptCheck",
    "Speaker",
    "TurnsCheck",
    "UsesVariableCheck",
]

Speaker = Literal["agent", "caller", "all"]
NonEmpty = Annotated[str, Field(min_length=1)]
Count = Annotated[int, Field(ge=0)]


class _Check(BaseModel):
    """Keys every check type takes."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    only_personas: list[NonEmpty] | None = Field(default=None, min_length=1)
    skip_personas: list[NonEmpty] | None = Field(default=None, min_length=1)

    @property
    def deterministic(self) -> bool:
        """False for judge rules."""
        return True


class _TextCheck(_Check):
    text: NonEmpty | None = None
    any: list[NonEmpty] | None = Field(default=None, min_length=1)
    speaker: Speaker = "agent"
    case_sensitive: bool = False
    whole_word: bool = False

    @model_validator(mode="after")
    def _needs_text(self) -> Self:
        if self.text is None and self.any is None:
            raise ValueError("needs 'text' or 'any'")
        return self

    @property
    def needles(self) -> list[str]:
        """Every string the check looks for."""
        return [*([self.text] if self.text else []), *(self.any or [])]


class ContainsCheck(_TextCheck):
    """Passes when the text (or one of ``any``) occurs in some turn of ``speaker``."""

    type: Literal["contains"]


class NotContainsCheck(_TextCheck):
    """Passes when none of the texts occurs in any turn of ``speaker``."""

    type: Literal["not_contains"]


class RegexCheck(_Check):
    """``mode`` any: some turn matches; all: every turn does; none: no turn does.

    ``expect: match`` is ``mode: any`` and ``expect: no_match`` is ``mode: none``. The pattern
    must compile on RE2 or on the ``regex`` package (which runs it under a time limit).
    """

    type: Literal["regex"]
    pattern: NonEmpty
    speaker: Speaker = "all"
    ignore_case: bool = True
    expect: Literal["match", "no_match"] | None = None
    mode: Literal["any", "all", "none"] | None = None

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        problem = pattern_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @model_validator(mode="after")
    def _one_mode(self) -> Self:
        if self.expect is not None and self.mode is not None:
            raise ValueError("give 'expect' or 'mode', not both")
        return self

    @property
    def effective_mode(self) -> Literal["any", "all", "none"]:
        """The mode, with ``expect`` translated."""
        if self.mode is not None:
            return self.mode
        return "none" if self.expect == "no_match" else "any"


class TurnsCheck(_Check):
    """Passes when ``min`` <= number of turns by ``speaker`` <= ``max``."""

    type: Literal["turns"]
    min: Count | None = None
    max: Count | None = None
    speaker: Speaker = "all"

    @model_validator(mode="after")
    def _bounds(self) -> Self:
        if self.min is None and self.max is None:
            raise ValueError("needs 'min' or 'max'")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError(f"min ({self.min}) > max ({self.max})")
        return self


class EndedByCheck(_Check):
    """Passes when the call was ended by ``speaker``."""

    type: Literal["ended_by"]
    speaker: Literal["agent", "caller"]


class AgentSpeaksFirstCheck(_Check):
    """Passes when (the first turn is the agent's) == ``expected``."""

    type: Literal["agent_speaks_first"]
    expected: bool = True


class ScriptCheck(_Check):
    """Passes when letters of ``script`` make at least ``min_share`` of the speaker's letters."""

    type: Literal["script"]
    script: Literal["arabic", "latin"]
    min_share: Annotated[float, Field(gt=0, le=1)]
    speaker: Speaker = "agent"


class NoPlaceholdersCheck(_Check):
    """Passes when no ``{{token}}`` or ``{identifier}`` is left in the speaker's turns."""

    type: Literal["no_placeholders"]
    speaker: Speaker = "agent"


class UsesVariableCheck(_Check):
    """Passes when the variable's value (or its Urdu-script form) occurs in the speaker's turns."""

    type: Literal["uses_variable"]
    variable: NonEmpty
    speaker: Speaker = "agent"
    partial: bool = False
    case_sensitive: bool = False


class NoRepetitionCheck(_Check):
    """Passes when no utterance (>= ``min_chars``) occurs more than ``max_occurrences`` times."""

    type: Literal["no_repetition"]
    speaker: Speaker = "agent"
    max_occurrences: Annotated[int, Field(ge=1)] = 2
    min_chars: Count = 20


class MaxTurnCharsCheck(_Check):
    """Passes when no turn of ``speaker`` is longer than ``max_chars`` characters."""

    type: Literal["max_turn_chars"]
    max_chars: Annotated[int, Field(ge=1)]
    speaker: Speaker = "agent"


class JudgeCheck(_Check):
    """Graded by the LLM judge from the rule's title and ``criterion``."""

    type: Literal["judge"]
    criterion: NonEmpty | None = None

    @property
    def deterministic(self) -> bool:
        """False for judge rules."""
        return False


CheckModel = Annotated[
    AgentSpeaksFirstCheck
    | ContainsCheck
    | EndedByCheck
    | JudgeCheck
    | MaxTurnCharsCheck
    | NoPlaceholdersCheck
    | NoRepetitionCheck
    | NotContainsCheck
    | RegexCheck
    | ScriptCheck
    | TurnsCheck
    | UsesVariableCheck,
    Field(discriminator="type"),
]
