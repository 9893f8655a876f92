"""``Scorecard``: the service's scorecard plus an optional typed ``check`` per rule.

The wire form is camelCase (``rubricVersionId``, ``ruleId``), so the same file can go into an
assistant's ``config.grading.scorecard``. Every problem is reported at once in one
:class:`ScorecardError`. In a file (or a dict you wrote), an unknown key is a problem that names
it and the closest known key (``pionts`` -> ``points``): a typo must never silently drop a
rule's points or weaken its check. A scorecard read back from an assistant keeps the fields
the service stores beyond those evalkit knows (the spec does not show them). A file that does
not parse names the file, line and column.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Self, get_args

import yaml
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError, model_validator
from pydantic.alias_generators import to_camel

from .._util import content_hash, unknown_name
from ..api import Problem
from ..data import resolve
from ._check_models import CheckModel, JudgeCheck
from ._errors import ScorecardError

__all__ = ["Scorecard", "ScorecardRule", "canonical_hash"]

_CHECK: TypeAdapter[Any] = TypeAdapter(CheckModel)

#: Keys a scorecard and a rule may have (wire spelling; the snake_case names are accepted too).
SCORECARD_KEYS = ("rubricVersionId", "rules")
RULE_KEYS = ("ruleId", "title", "points", "check")
_SNAKE_KEYS = frozenset({"rubric_version_id", "rule_id"})


def canonical_hash(value: Any) -> str:
    """SHA-256 of ``value``'s canonical JSON (evalkit's one content hash)."""
    return content_hash(value)


class _Wire(BaseModel):
    model_config = ConfigDict(
        extra="allow", alias_generator=to_camel, populate_by_name=True, serialize_by_alias=True
    )


class ScorecardRule(_Wire):
    """One rule: ``rule_id`` (``ruleId``), ``title``, ``points`` and an optional ``check``."""

    rule_id: str
    title: str
    points: int | float
    check: CheckModel | None = None

    @property
    def judged(self) -> bool:
        """True when the LLM judge grades this rule (no check, or ``type: judge``)."""
        return self.check is None or not self.check.deterministic

    @property
    def criterion(self) -> str | None:
        """The judge criterion, when the rule has one."""
        return self.check.criterion if isinstance(self.check, JudgeCheck) else None

    @property
    def check_type(self) -> str:
        """The check's type (``judge`` for a rule without a check)."""
        return self.check.type if self.check is not None else "judge"

    def to_service(self, *, with_check: bool = True) -> dict[str, Any]:
        """The wire dict (camelCase), with or without ``check``."""
        data = self.model_dump(by_alias=True, exclude_none=True, exclude={"check"})
        if with_check and self.check is not None:
            data["check"] = self.check.model_dump(exclude_none=True)
        return data

    @property
    def rule_hash(self) -> str:
        """Hash of the rule's wire form (check included)."""
        return canonical_hash(self.to_service())


class Scorecard(_Wire):
    """A rubric version: rules whose points total exactly 100, with unique rule ids.

    Build one with :meth:`load` (YAML or JSON file), :meth:`from_dict` / :meth:`validate`
    (every problem at once) or :meth:`from_assistant`.
    """

    rubric_version_id: str
    rules: list[ScorecardRule]

    @model_validator(mode="after")
    def _service_rules(self) -> Self:
        problems = _rules_problems([r.model_dump(by_alias=True) for r in self.rules])
        if problems:
            raise ValueError("; ".join(str(p) for p in problems))
        return self

    # ------------------------------------------------------------------ building

    @classmethod
    def problems(
        cls,
        data: Any,
        persona_labels: Iterable[str] | None = None,
        *,
        unknown_keys: bool = False,
    ) -> list[Problem]:
        """Every problem with ``data`` (a scorecard dict); empty when it is valid.

        With ``persona_labels``, ``only_personas``/``skip_personas`` must name known personas.
        Unknown keys are problems unless ``unknown_keys`` (the service's own scorecards).
        """
        if not isinstance(data, Mapping):
            return [Problem("scorecard", f"must be a mapping, got {type(data).__name__}")]
        out: list[Problem] = [] if unknown_keys else _unknown_keys("", data, SCORECARD_KEYS)
        rvid = data.get("rubricVersionId", data.get("rubric_version_id"))
        if not isinstance(rvid, str) or not rvid.strip():
            out.append(Problem("rubricVersionId", f"{_missing(rvid)}a non-empty string"))
        rules = data.get("rules")
        if not isinstance(rules, list) or not rules:
            out.append(Problem("rules", "needs at least one rule"))
            return out
        out.extend(_rules_problems(rules))
        if not unknown_keys:
            for i, rule in enumerate(rules):
                if isinstance(rule, Mapping):
                    out.extend(_unknown_keys(_where(i, rule), rule, RULE_KEYS))
        labels = set(persona_labels) if persona_labels is not None else None
        for i, rule in enumerate(rules):
            if isinstance(rule, Mapping) and rule.get("check") is not None:
                out.extend(_check_problems(_where(i, rule), rule["check"], labels))
        return sorted(out, key=_reading_order)

    @classmethod
    def from_dict(
        cls,
        data: Any,
        *,
        source: str = "scorecard",
        persona_labels: Iterable[str] | None = None,
        unknown_keys: bool = False,
    ) -> Self:
        """Validate ``data`` and build the scorecard; :class:`ScorecardError` lists every problem.

        ``unknown_keys=True`` keeps keys evalkit does not know instead of refusing them.
        """
        problems = cls.problems(data, persona_labels, unknown_keys=unknown_keys)
        if problems:
            raise ScorecardError(problems, source)
        return cls.model_validate(data)

    @classmethod
    def validate(cls, value: Any) -> Self:
        """A scorecard from a dict, a file path or a scorecard; every problem at once."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str | os.PathLike):
            return cls.load(value)
        return cls.from_dict(value)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Self:
        """Read a YAML or JSON scorecard file, or a bundled scorecard by name
        (``appointment-reminder-ur``, see :func:`evalkit.data.resolve`);
        :class:`ScorecardError` lists every problem."""
        file = resolve(path, "scorecards")
        text = file.read_text(encoding="utf-8")
        try:
            data = json.loads(text) if file.suffix.lower() == ".json" else yaml.safe_load(text)
        except (json.JSONDecodeError, yaml.YAMLError) as exc:
            raise ScorecardError([_syntax_problem(file, exc)], str(file)) from None
        return cls.from_dict(data, source=str(file))

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Self:
        """Alias of :meth:`load`."""
        return cls.load(path)

    @classmethod
    def from_assistant(cls, assistant: Any) -> Self:
        """The scorecard in ``config.grading.scorecard`` of an Assistant, AssistantConfig or dict."""
        data: Any = assistant
        if isinstance(assistant, BaseModel):
            dump = getattr(assistant, "to_json", None)
            data = dump() if callable(dump) else assistant.model_dump(by_alias=True)
        if not isinstance(data, Mapping):
            raise TypeError(f"expected an Assistant, AssistantConfig or dict, got {type(data)}")
        config = data.get("config", data)
        scorecard = ((config or {}).get("grading") or {}).get("scorecard")
        if scorecard is None:
            raise ScorecardError(
                [Problem("config.grading.scorecard", "the assistant has no scorecard")]
            )
        return cls.from_dict(scorecard, source="config.grading.scorecard", unknown_keys=True)

    # ------------------------------------------------------------------ views

    def to_service(self, *, with_checks: bool = True) -> dict[str, Any]:
        """The wire dict; ``with_checks=False`` drops every rule's ``check``."""
        data = self.model_dump(by_alias=True, exclude_none=True, exclude={"rules"})
        data["rules"] = [rule.to_service(with_check=with_checks) for rule in self.rules]
        return data

    @property
    def content_hash(self) -> str:
        """SHA-256 of the rules' canonical JSON (checks included)."""
        return canonical_hash([rule.to_service() for rule in self.rules])

    @property
    def deterministic_rules(self) -> list[ScorecardRule]:
        """Rules graded by a deterministic check."""
        return [rule for rule in self.rules if not rule.judged]

    @property
    def judged_rules(self) -> list[ScorecardRule]:
        """Rules graded by the LLM judge."""
        return [rule for rule in self.rules if rule.judged]

    def __repr__(self) -> str:
        kinds = f"{len(self.deterministic_rules)} checked, {len(self.judged_rules)} judged"
        return f"<Scorecard {self.rubric_version_id!r}: {len(self.rules)} rule(s), {kinds}>"


def _reading_order(problem: Problem) -> tuple[int, bool]:
    """Rule by rule; within a rule, an unknown key first (it often explains a missing one)."""
    index = problem.field.removeprefix("rules[").split("]", 1)[0]
    return (int(index) if index.isdigit() else -1, "unknown key" not in problem.message)


def _missing(value: Any) -> str:
    return "missing: " if value is None else "must be "


def _unknown_keys(where: str, data: Mapping[Any, Any], known: tuple[str, ...]) -> list[Problem]:
    """A problem for each key of ``data`` evalkit does not know, naming the closest known one."""
    return [
        Problem(f"{where}.{key}" if where else str(key), unknown_name(str(key), known))
        for key in data
        if key not in known and key not in _SNAKE_KEYS
    ]


def _syntax_problem(file: Path, exc: json.JSONDecodeError | yaml.YAMLError) -> Problem:
    """``scorecard.yaml, line 3, column 9: not valid YAML: mapping values are not allowed``."""
    if isinstance(exc, json.JSONDecodeError):
        return Problem(
            f"{file}, line {exc.lineno}, column {exc.colno}", f"not valid JSON: {exc.msg}"
        )
    mark = getattr(exc, "problem_mark", None)
    where = f"{file}, line {mark.line + 1}, column {mark.column + 1}" if mark else str(file)
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    return Problem(where, f"not valid YAML: {problem}" + (f" ({context})" if context else ""))


def _where(i: int, rule: Any) -> str:
    rid = rule.get("ruleId", rule.get("rule_id")) if isinstance(rule, Mapping) else None
    return f"rules[{i}] ({rid})" if isinstance(rid, str) else f"rules[{i}]"


def _rules_problems(rules: list[Any]) -> list[Problem]:
    out: list[Problem] = []
    seen: dict[str, int] = {}
    total = 0.0
    for i, rule in enumerate(rules):
        where = _where(i, rule)
        if not isinstance(rule, Mapping):
            out.append(Problem(where, "a rule must be a mapping"))
            continue
        rid = rule.get("ruleId", rule.get("rule_id"))
        if not isinstance(rid, str) or not rid:
            out.append(Problem(f"{where}.ruleId", "must be a non-empty string"))
        elif rid in seen:
            out.append(Problem(f"{where}.ruleId", f"duplicate rule id (also rules[{seen[rid]}])"))
        else:
            seen[rid] = i
        title = rule.get("title")
        if not isinstance(title, str):
            out.append(Problem(f"{where}.title", f"{_missing(title)}a string"))
        points = rule.get("points")
        if points is None:
            out.append(Problem(f"{where}.points", "missing: a number >= 0"))
        elif isinstance(points, bool) or not isinstance(points, int | float) or points < 0:
            out.append(Problem(f"{where}.points", f"must be a number >= 0, got {points!r}"))
        else:
            total += points
    if not any(p.field.endswith(".points") for p in out) and abs(total - 100) > 1e-9:
        out.append(Problem("rules", f"points must total exactly 100, they total {total:g}"))
    return out


def _check_problems(where: str, check: Any, labels: set[str] | None) -> list[Problem]:
    field = f"{where}.check"
    if not isinstance(check, Mapping):
        return [Problem(field, f"must be a mapping, got {check!r}")]
    from ._checks import CHECK_TYPES  # the table of types lives with the functions

    kind = check.get("type")
    if kind not in CHECK_TYPES:
        known = ", ".join(sorted(CHECK_TYPES))
        return [Problem(f"{field}.type", f"unknown check type {kind!r} (known: {known})")]
    out: list[Problem] = []
    try:
        _CHECK.validate_python(dict(check))
    except ValidationError as exc:
        for err in exc.errors():
            loc = [str(x) for x in err["loc"][1:]]  # drop the union tag
            path = ".".join([field, *loc])
            if err["type"] == "extra_forbidden" and len(loc) == 1:
                message = unknown_name(loc[0], _check_keys(str(kind)))
            elif err["type"] == "missing":
                message = f"missing (a {kind} check needs it)"
            else:
                message = err["msg"].removeprefix("Value error, ")
            out.append(Problem(path, message))
    if labels is not None:
        for key in ("only_personas", "skip_personas"):
            for label in check.get(key) or []:
                if label not in labels:
                    out.append(Problem(f"{field}.{key}", f"names unknown persona {label!r}"))
    return out


def _check_keys(kind: str) -> tuple[str, ...]:
    """The keys a check of type ``kind`` takes."""
    union = get_args(CheckModel)[0]
    for model in get_args(union):
        if kind in get_args(model.model_fields["type"].annotation):
            return tuple(model.model_fields)
    return ()
