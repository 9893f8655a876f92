"""Personas: who picks up the phone in a simulated conversation.

A persona is what the service's simulate operation (E9) receives as ``persona``: a display
``label``, a ``behavior`` text placed verbatim into the caller model's system prompt, and a
``path`` (the spec's default is ``negative``). evalkit adds ``tags`` and a ``description`` for
people, and, for a generated persona, the ``traits`` it was asked for (axis -> value) and its
``provenance`` (the generator, its prompt template's version, the seed); none of these is sent
or part of a cell's id.

Persona files are YAML (``personas/*.yaml``): one mapping per file, or a list of mappings.
:func:`load_personas` reports every problem it finds, each naming the file and the field.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, TypeAlias

import yaml

from .._exceptions import EvalkitError
from ..api import type_name
from ..data import resolve

__all__ = ["Persona", "PersonaError", "PersonaProblem", "load_personas"]

PathLike: TypeAlias = str | os.PathLike[str]

DEFAULT_PATH = "negative"
_KNOWN_KEYS = ("label", "behavior", "path", "tags", "description", "traits", "provenance")
ProvenanceValue: TypeAlias = str | int | float | bool | None
_SUFFIXES = (".yaml", ".yml")


class PersonaProblem(NamedTuple):
    """One thing wrong with a persona: the file (or ``None``), the field, the message."""

    file: str | None
    field: str
    message: str

    def __str__(self) -> str:
        where = f"{self.file}: " if self.file else ""
        return f"{where}{self.field}: {self.message}"


class PersonaError(EvalkitError, ValueError):
    """Personas could not be built or loaded.

    ``problems`` lists every problem found; ``file`` and ``field`` are those of the first.
    """

    def __init__(self, problems: Sequence[PersonaProblem]) -> None:
        self.problems = list(problems)
        first = self.problems[0] if self.problems else PersonaProblem(None, "persona", "invalid")
        self.file = first.file
        self.field = first.field
        if len(self.problems) <= 1:
            message = str(first)
        else:
            lines = "\n".join(f"  - {p}" for p in self.problems)
            message = f"{len(self.problems)} problems in personas:\n{lines}"
        super().__init__(message)


def _type_name(value: Any) -> str:
    return type_name(value, mapping="mapping", sequence="list")


def _mapping_field_problems(
    name: str, value: Any, prefix: str, values: tuple[type, ...], what: str
) -> list[tuple[str, str]]:
    """Problems of an optional mapping field whose keys are text and values ``values``."""
    if value is None:
        return []
    if not isinstance(value, Mapping):
        return [(f"{prefix}{name}", f"must be a mapping, got {_type_name(value)}")]
    out: list[tuple[str, str]] = []
    for key, item in value.items():
        if not isinstance(key, str) or not key.strip():
            out.append((f"{prefix}{name}", f"keys must be non-empty strings, got {key!r}"))
        elif not isinstance(item, values) or (isinstance(item, str) and not item.strip()):
            out.append((f"{prefix}{name}.{key}", f"must be {what}, got {item!r}"))
    return out


def _field_problems(
    label: Any, behavior: Any, path: Any, tags: Any, description: Any, prefix: str
) -> list[tuple[str, str]]:
    """(field, message) pairs for every invalid persona field."""
    out: list[tuple[str, str]] = []
    for name, value in (("label", label), ("behavior", behavior), ("path", path)):
        if not isinstance(value, str):
            out.append((f"{prefix}{name}", f"must be a string, got {_type_name(value)}"))
        elif not value.strip():
            out.append((f"{prefix}{name}", "must not be empty"))
    if isinstance(tags, str) or not isinstance(tags, list | tuple):
        out.append((f"{prefix}tags", f"must be a list of strings, got {_type_name(tags)}"))
    else:
        for i, tag in enumerate(tags):
            if not isinstance(tag, str) or not tag.strip():
                out.append((f"{prefix}tags[{i}]", f"must be a non-empty string, got {tag!r}"))
    if description is not None and not isinstance(description, str):
        out.append((f"{prefix}description", f"must be a string, got {_type_name(description)}"))
    return out


@dataclass(frozen=True, slots=True)
class Persona:
    """Who answers a simulated call.

    ``label``, ``behavior`` and ``path`` are sent to the service (:meth:`to_api`); ``tags``
    (normalised to a tuple) and ``description`` are evalkit's, for filtering and for people.
    ``traits`` (axis -> value, both text) and ``provenance`` (text -> a scalar) say what a
    generated persona was asked to be and what made it (``evalkit.personas``); like tags they
    are never sent and leave the cell id alone (nor do they count in equality's hash).
    """

    label: str
    behavior: str
    path: str = DEFAULT_PATH
    tags: tuple[str, ...] = ()
    description: str | None = None
    traits: Mapping[str, str] | None = dataclasses.field(default=None, hash=False)
    provenance: Mapping[str, ProvenanceValue] | None = dataclasses.field(default=None, hash=False)

    def __post_init__(self) -> None:
        tags: Any = self.tags
        if isinstance(tags, list):
            tags = tuple(tags)
            object.__setattr__(self, "tags", tags)
        problems = _field_problems(
            self.label, self.behavior, self.path, tags, self.description, prefix=""
        )
        problems += _extra_problems(self.traits, self.provenance, prefix="")
        if problems:
            raise PersonaError([PersonaProblem(None, f, m) for f, m in problems])

    @property
    def tags_json(self) -> str:
        """The tags as compact JSON list text (``"[]"`` for none): a run's ``persona_tags``."""
        return json.dumps(list(self.tags), ensure_ascii=False, separators=(",", ":"))

    def to_api(self) -> dict[str, str]:
        """The ``persona`` object E9 receives: label, behavior and path."""
        return {"label": self.label, "behavior": self.behavior, "path": self.path}

    def to_mapping(self) -> dict[str, Any]:
        """The persona as a persona file holds it (what :meth:`from_mapping` reads back):
        ``label``, ``description``, ``path``, ``tags``, ``traits``, ``provenance`` (those
        set) and ``behavior``."""
        out: dict[str, Any] = {"label": self.label}
        if self.description is not None:
            out["description"] = self.description
        out["path"] = self.path
        if self.tags:
            out["tags"] = list(self.tags)
        if self.traits:
            out["traits"] = dict(self.traits)
        if self.provenance:
            out["provenance"] = dict(self.provenance)
        out["behavior"] = self.behavior
        return out

    @classmethod
    def from_mapping(
        cls, data: Mapping[str, Any], *, file: str | None = None, field: str = ""
    ) -> Persona:
        """Build a persona from a mapping (a YAML document), checking keys and types.

        Raises :class:`PersonaError` listing every problem, each named ``file: field``.
        """
        problems = _mapping_problems(data, file, field)
        if problems:
            raise PersonaError(problems)
        tags = data.get("tags")
        return cls(
            label=data["label"].strip(),
            behavior=data["behavior"].strip(),
            path=(data.get("path") or DEFAULT_PATH).strip(),
            tags=tuple(t.strip() for t in tags) if tags is not None else (),
            description=data.get("description"),
            traits=_text_mapping(data.get("traits")),
            provenance=dict(data["provenance"]) if data.get("provenance") else None,
        )


def _text_mapping(value: Mapping[str, str] | None) -> dict[str, str] | None:
    return {k.strip(): v.strip() for k, v in value.items()} if value else None


def _extra_problems(traits: Any, provenance: Any, prefix: str) -> list[tuple[str, str]]:
    """Problems of the generated persona's ``traits`` and ``provenance``."""
    return _mapping_field_problems(
        "traits", traits, prefix, (str,), "a non-empty string"
    ) + _mapping_field_problems(
        "provenance", provenance, prefix, (str, int, float, bool, type(None)), "a scalar"
    )


def _mapping_problems(data: Any, file: str | None, field: str) -> list[PersonaProblem]:
    prefix = f"{field}." if field else ""
    if not isinstance(data, Mapping):
        name = field or "persona"
        return [PersonaProblem(file, name, f"must be a mapping, got {_type_name(data)}")]
    problems: list[PersonaProblem] = []
    for key in data:
        if key not in _KNOWN_KEYS:
            close = difflib.get_close_matches(str(key), _KNOWN_KEYS, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            known = ", ".join(_KNOWN_KEYS)
            problems.append(
                PersonaProblem(file, f"{prefix}{key}", f"unknown key{hint} (known keys: {known})")
            )
    for key in ("label", "behavior"):
        if key not in data:
            problems.append(PersonaProblem(file, f"{prefix}{key}", "is required"))
    fields = _field_problems(
        data.get("label", ""),
        data.get("behavior", ""),
        DEFAULT_PATH if data.get("path") is None else data["path"],
        () if data.get("tags") is None else data["tags"],
        data.get("description"),
        prefix,
    )
    fields += _extra_problems(data.get("traits"), data.get("provenance"), prefix)
    required_missing = {p.field for p in problems}
    problems.extend(PersonaProblem(file, f, m) for f, m in fields if f not in required_missing)
    return problems


def _read_file(path: Path) -> tuple[list[tuple[str, Persona]], list[PersonaProblem]]:
    """The (field prefix, persona) pairs a file holds, and its problems."""
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [], [PersonaProblem(file, "file", f"cannot be read: {exc}")]
    try:
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown position"
        what = exc.problem or exc.context or "invalid YAML"
        return [], [PersonaProblem(file, "file", f"YAML syntax error at {where}: {what}")]
    except yaml.YAMLError as exc:
        return [], [PersonaProblem(file, "file", f"YAML error: {exc}")]
    if data is None:
        return [], [PersonaProblem(file, "file", "is empty; expected a persona mapping")]
    entries: list[tuple[str, Any]]
    if isinstance(data, list):
        if not data:
            return [], [PersonaProblem(file, "file", "holds an empty list; expected personas")]
        entries = [(f"[{i}]", item) for i, item in enumerate(data)]
    elif isinstance(data, Mapping):
        entries = [("", data)]
    else:
        message = f"must hold a mapping or a list of mappings, got {_type_name(data)}"
        return [], [PersonaProblem(file, "file", message)]
    personas: list[tuple[str, Persona]] = []
    problems: list[PersonaProblem] = []
    for field, item in entries:
        try:
            personas.append((field, Persona.from_mapping(item, file=file, field=field)))
        except PersonaError as exc:
            problems.extend(exc.problems)
    return personas, problems


def _expand(source: PathLike | Iterable[PathLike]) -> tuple[list[Path], list[PersonaProblem]]:
    """The persona files a source names, in order (a directory's files sorted by name)."""
    sources: list[PathLike]
    if isinstance(source, str | os.PathLike):
        sources = [source]
    else:
        sources = list(source)
        if not sources:
            return [], [PersonaProblem(None, "path", "no persona paths given")]
    files: list[Path] = []
    problems: list[PersonaProblem] = []
    for item in sources:
        try:
            path = resolve(item, "personas")
        except FileNotFoundError as exc:
            problems.append(PersonaProblem(str(item), "path", f"does not exist ({exc.strerror})"))
            continue
        if path.is_dir():
            found = sorted(
                (p for p in path.iterdir() if p.suffix.lower() in _SUFFIXES and p.is_file()),
                key=lambda p: p.name,
            )
            if not found:
                message = "directory holds no persona files (*.yaml, *.yml)"
                problems.append(PersonaProblem(str(path), "path", message))
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            problems.append(PersonaProblem(str(path), "path", "does not exist"))
    return files, problems


def load_personas(path: PathLike | Iterable[PathLike]) -> list[Persona]:
    """Load personas from a directory of ``*.yaml``/``*.yml`` files, a file, or several paths.

    A directory's files are read in file-name order; a file holds one persona mapping or a list
    of them. Labels must be unique across everything loaded. Every problem found (missing or
    mistyped fields, unknown keys, YAML syntax errors with their line, duplicate labels, an empty
    directory) is raised together as one :class:`PersonaError`.
    """
    files, problems = _expand(path)
    personas: list[Persona] = []
    origin: dict[str, str] = {}
    for file in files:
        loaded, file_problems = _read_file(file)
        problems.extend(file_problems)
        for field, persona in loaded:
            if persona.label in origin:
                message = (
                    f"duplicate label {persona.label!r} (first defined in {origin[persona.label]})"
                )
                name = f"{field}.label" if field else "label"
                problems.append(PersonaProblem(str(file), name, message))
                continue
            origin[persona.label] = str(file)
            personas.append(persona)
    if problems:
        raise PersonaError(problems)
    return personas
