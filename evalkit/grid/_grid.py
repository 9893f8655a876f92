"""Grids of simulated conversations: personas x variable records x contexts x repeats.

A :class:`Grid` is checked whole before anything is sent: every variables record and every
context against the spec's limits for E9 (variable keys at most 64 characters, a record's
compact JSON under 3000 characters, a context at most 8000 characters), plus the grid's own
rules. Every problem is listed in one :class:`~evalkit.InvalidRequestError`.

Cells have stable ids: a hash of the persona (label, behavior, path), the variables record
(canonical JSON) and the context, never of order or position. Reordering inputs, sampling or
sharding never changes a cell's id, so runs can be resumed and draft/prod paired by ``cell_id``.

Rules worth knowing:

* **Missing values.** In a record, a top-level missing value (``NaN``, ``pd.NA``, ``NaT``, and
  ``None`` in a DataFrame or CSV) means "this contact has no such field": the key is *omitted*,
  so the agent never reads ``nan`` aloud. An explicit ``None`` in a dict you pass is kept as JSON
  ``null``. A non-finite number nested deeper is an error.
* **CSV files** are read with every column as text (``dtype=str``), so ids and phone numbers
  keep leading zeros (``"0012"``); only empty cells are missing. Use :func:`load_variables`
  with ``csv_dtype=None`` (or pass your own DataFrame) to get numbers. A header that repeats a
  column name is an error; a record's problems name its line (``contacts.csv line 3: ...``).
* **Duplicates are rejected**, not merged: two identical personas, records or contexts would
  make two cells with one id. Drop them, or use ``repeats``. Persona labels must be unique too,
  since results are grouped by label.
* **Conversation order** is repeat-major: every cell's repeat 0, then every cell's repeat 1, so
  a run cut short by a budget still covers the whole grid once.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from .._util import canonical_json, content_hash
from ..api import InvalidRequestError, Problem, check_context
from ._personas import Persona, PersonaError, load_personas
from ._text import encodable, unsendable_text
from ._variables import VariablesInput, VariablesRecord, load_records, load_variables, record_keys

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Cell", "ConversationSlot", "Grid", "load_variables"]

PathLike: TypeAlias = str | os.PathLike[str]
PersonasInput: TypeAlias = "Sequence[Persona | Mapping[str, Any] | PathLike] | PathLike"
ContextsInput: TypeAlias = "str | Sequence[str | None] | None"

CELL_ID_HEX_CHARS = 16
DEFINITION_VERSION = 1


# --------------------------------------------------------------------------- cells


@dataclass(frozen=True, slots=True)
class Cell:
    """One combination of persona, variables record and context; run ``repeats`` times.

    ``cell_id`` depends only on the persona's label, behavior and path, the record and the
    context; ``index`` is the cell's position in the grid it was built in (informational).
    Treat ``variables`` as read-only.
    """

    cell_id: str
    persona: Persona
    variables: Mapping[str, Any] | None
    context: str | None
    index: int

    def __hash__(self) -> int:
        return hash(self.cell_id)

    @property
    def variables_json(self) -> str | None:
        """The record as canonical JSON text, or ``None`` when the cell has no variables."""
        return None if self.variables is None else canonical_json(self.variables)

    def simulate_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``client.simulate``: persona (E9 object), context, variables."""
        return {
            "persona": self.persona.to_api(),
            "context": self.context,
            "variables": None if self.variables is None else dict(self.variables),
        }


@dataclass(frozen=True, slots=True)
class ConversationSlot:
    """One planned conversation: a cell and its 0-based repeat number."""

    cell: Cell
    repeat: int

    @property
    def conversation_id(self) -> str:
        """``"{cell_id}-{repeat}"``: stable across runs, orderings, samples and shards."""
        return f"{self.cell.cell_id}-{self.repeat}"


def _cell_id(persona_json: str, variables_json: str, context_json: str) -> str:
    key = f"[{persona_json},{variables_json},{context_json}]"
    return content_hash(key, length=CELL_ID_HEX_CHARS)


def _persona_json(persona: Persona) -> str:
    return canonical_json([persona.label, persona.behavior, persona.path])


# --------------------------------------------------------------------------- inputs


def _load_personas(source: Any, problems: list[Problem]) -> list[Persona]:
    if isinstance(source, str | os.PathLike):
        try:
            return load_personas(source)
        except PersonaError as exc:
            problems.extend(Problem("personas", str(p)) for p in exc.problems)
            return []
    if isinstance(source, Persona):
        source = [source]
    if not isinstance(source, Iterable) or isinstance(source, Mapping | bytes):
        message = f"must be a list of Persona or a path, got {type(source).__name__}"
        problems.append(Problem("personas", message))
        return []
    out: list[Persona] = []
    for i, item in enumerate(source):
        if isinstance(item, Persona):
            out.append(item)
        elif isinstance(item, str | os.PathLike):
            out.extend(_load_personas(item, problems))
        elif isinstance(item, Mapping):
            try:
                out.append(Persona.from_mapping(item))
            except PersonaError as exc:
                problems.extend(
                    Problem(f"personas[{i}].{p.field}", p.message) for p in exc.problems
                )
        else:
            message = f"must be a Persona, a mapping or a path, got {type(item).__name__}"
            problems.append(Problem(f"personas[{i}]", message))
    if not out and not problems:
        problems.append(Problem("personas", "must not be empty"))
    return out


def _load_contexts(source: Any, problems: list[Problem]) -> list[str | None]:
    if source is None:
        return [None]
    if isinstance(source, str):
        problems.extend(check_context(source, "contexts"))
        problems.extend(unsendable_text(source, "contexts"))
        return [source]
    if not isinstance(source, Iterable) or isinstance(source, Mapping | bytes):
        message = f"must be None, a string or a list of strings, got {type(source).__name__}"
        problems.append(Problem("contexts", message))
        return []
    out = list(source)
    if not out:
        problems.append(Problem("contexts", "must not be empty (pass None for no context)"))
    for i, context in enumerate(out):
        problems.extend(check_context(context, f"contexts[{i}]"))
        problems.extend(unsendable_text(context, f"contexts[{i}]"))
    return out


def _indexed(field: str) -> Callable[[int], str]:
    return lambda i: f"{field}[{i}]"


def _duplicates(
    keys: Sequence[str],
    what: str,
    field: Callable[[int], str],
    ref: Callable[[int], str] | None = None,
) -> list[Problem]:
    """A problem per key equal to an earlier one; ``field``/``ref`` name an item in full/short."""
    first: dict[str, int] = {}
    out: list[Problem] = []
    ref = ref or field
    for i, key in enumerate(keys):
        if key in first:
            message = f"duplicates {ref(first[key])} ({what}); drop it or use repeats"
            out.append(Problem(field(i), message))
        else:
            first[key] = i
    return out


def _check_shard(shard: Any, field: str = "shard") -> list[Problem]:
    if shard is None:
        return []
    if (
        not isinstance(shard, tuple | list)
        or len(shard) != 2
        or not all(isinstance(x, int) and not isinstance(x, bool) for x in shard)
    ):
        return [Problem(field, f"must be a pair of integers (index, count), got {shard!r}")]
    index, count = shard
    if count < 1:
        return [Problem(field, f"count must be at least 1, got {count}")]
    if not 0 <= index < count:
        return [Problem(field, f"index must be in 0..{count - 1} (0-based), got {index}")]
    return []


# --------------------------------------------------------------------------- the grid


class Grid:
    """Personas x variables records x contexts, each cell run ``repeats`` times.

    ``personas``: a list of :class:`Persona` (or mappings), or a path/directory of persona
    YAML. ``variables``: ``None``, a dict, a list of dicts, a DataFrame or a CSV/JSON/JSONL path
    (see :func:`load_variables`). ``contexts``: ``None``, a string, or a list of strings
    (``None`` entries mean "no context"). ``shard=(index, count)`` keeps one 0-based shard.

    ``len(grid)`` counts conversations (cells x repeats). Raises
    :class:`~evalkit.InvalidRequestError` (``what="grid"``) listing every problem at once.
    """

    __slots__ = ("_cells", "_contexts", "_personas", "_records", "_repeats", "_selection")

    _personas: tuple[Persona, ...]
    _records: tuple[VariablesRecord | None, ...]
    _contexts: tuple[str | None, ...]
    _repeats: int
    _cells: tuple[Cell, ...]
    _selection: tuple[dict[str, Any], ...]

    def __init__(
        self,
        personas: PersonasInput,
        variables: VariablesInput = None,
        contexts: ContextsInput = None,
        repeats: int = 1,
        *,
        shard: tuple[int, int] | None = None,
    ) -> None:
        problems: list[Problem] = []
        persona_list = _load_personas(personas, problems)
        persona_keys = [_persona_json(p) for p in persona_list]
        for i, (persona, key) in enumerate(zip(persona_list, persona_keys, strict=True)):
            if not encodable(key):
                for name in ("label", "behavior", "path"):
                    problems.extend(
                        unsendable_text(getattr(persona, name), f"personas[{i}].{name}")
                    )
        records, places = load_records(variables, problems)
        records_keys = record_keys(records, places, problems)
        context_list = _load_contexts(contexts, problems)
        context_keys = [
            canonical_json(c)
            if c is None or (isinstance(c, str) and encodable(c))
            else f"<invalid {i}>"
            for i, c in enumerate(context_list)
        ]
        if not isinstance(repeats, int) or isinstance(repeats, bool) or repeats < 1:
            problems.append(Problem("repeats", f"must be an integer >= 1, got {repeats!r}"))
        problems.extend(_check_shard(shard))

        same_persona = "same label, behavior and path"
        problems.extend(_duplicates(persona_keys, same_persona, _indexed("personas")))
        labels_seen: dict[str, int] = {}
        for i, (persona, key) in enumerate(zip(persona_list, persona_keys, strict=True)):
            j = labels_seen.setdefault(persona.label, i)
            if j != i and persona_keys[j] != key:
                message = (
                    f"duplicate label {persona.label!r} (personas[{j}]); labels must be unique"
                )
                problems.append(Problem(f"personas[{i}].label", message))
        same_record = "an identical record"
        problems.extend(_duplicates(records_keys, same_record, places.field, places.ref))
        problems.extend(_duplicates(context_keys, "an identical context", _indexed("contexts")))
        if problems:
            raise InvalidRequestError(problems, what="grid")

        cells: list[Cell] = []
        index = 0
        for persona, p_key in zip(persona_list, persona_keys, strict=True):
            for record, r_key in zip(records, records_keys, strict=True):
                for context, c_key in zip(context_list, context_keys, strict=True):
                    cell_id = _cell_id(p_key, r_key, c_key)
                    cells.append(Cell(cell_id, persona, record, context, index))
                    index += 1
        self._personas = tuple(persona_list)
        self._records = tuple(records)
        self._contexts = tuple(context_list)
        self._repeats = repeats
        self._cells = tuple(cells)
        self._selection = ()
        if shard is not None:
            self._cells = self._shard_cells(*shard)
            self._selection = ({"shard": {"index": shard[0], "count": shard[1]}},)

    def _derive(self, cells: Sequence[Cell], step: dict[str, Any]) -> Grid:
        grid = object.__new__(Grid)
        grid._personas = self._personas
        grid._records = self._records
        grid._contexts = self._contexts
        grid._repeats = self._repeats
        grid._cells = tuple(cells)
        grid._selection = (*self._selection, step)
        return grid

    def with_repeats(self, repeats: int) -> Grid:
        """The same cells, each run ``repeats`` times (a new grid identity)."""
        if not isinstance(repeats, int) or isinstance(repeats, bool) or repeats < 1:
            raise ValueError(f"repeats must be an integer >= 1, got {repeats!r}")
        grid = object.__new__(Grid)
        grid._personas = self._personas
        grid._records = self._records
        grid._contexts = self._contexts
        grid._repeats = repeats
        grid._cells = self._cells
        grid._selection = self._selection
        return grid

    # ---------------------------------------------------------------- views

    @property
    def personas(self) -> tuple[Persona, ...]:
        """The personas the grid was built from (before any sample or shard)."""
        return self._personas

    @property
    def repeats(self) -> int:
        """How many conversations each cell gets."""
        return self._repeats

    @property
    def n_cells(self) -> int:
        """Number of cells (after any sample or shard)."""
        return len(self._cells)

    def cells(self) -> Iterator[Cell]:
        """The cells, in grid order (persona, then record, then context)."""
        return iter(self._cells)

    def conversations(self) -> Iterator[ConversationSlot]:
        """Every planned conversation, repeat-major: all cells' repeat 0, then repeat 1, ..."""
        for repeat in range(self._repeats):
            for cell in self._cells:
                yield ConversationSlot(cell, repeat)

    def __len__(self) -> int:
        return len(self._cells) * self._repeats

    def __repr__(self) -> str:
        steps = "".join(f", {k}={v}" for step in self._selection for k, v in step.items())
        return (
            f"Grid(personas={len(self._personas)}, variables={len(self._records)}, "
            f"contexts={len(self._contexts)}, cells={len(self._cells)}, repeats={self._repeats}, "
            f"conversations={len(self)}{steps})"
        )

    # ---------------------------------------------------------------- selection

    def sample(self, n: int, seed: int) -> Grid:
        """``n`` cells chosen reproducibly by ``seed`` (all of them when ``n`` >= the count).

        The choice depends on the set of cell ids, not on input order; cells keep grid order.
        """
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ValueError(f"sample: n must be an integer >= 0, got {n!r}")
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise ValueError(f"sample: seed must be an integer, got {seed!r}")
        by_id = sorted(range(len(self._cells)), key=lambda i: self._cells[i].cell_id)
        chosen = sorted(random.Random(seed).sample(by_id, min(n, len(by_id))))
        return self._derive([self._cells[i] for i in chosen], {"sample": {"n": n, "seed": seed}})

    def shard(self, index: int, count: int) -> Grid:
        """The cells of shard ``index`` (0-based) of ``count``, chosen by a hash of ``cell_id``.

        Shards are disjoint and together make the grid; a cell's shard never depends on the
        other cells, so adding rows does not move existing cells between CI jobs.
        """
        problems = _check_shard((index, count))
        if problems:
            raise InvalidRequestError(problems, what="grid")
        step = {"shard": {"index": index, "count": count}}
        return self._derive(self._shard_cells(index, count), step)

    def _shard_cells(self, index: int, count: int) -> tuple[Cell, ...]:
        return tuple(c for c in self._cells if int(c.cell_id, 16) % count == index)

    # ---------------------------------------------------------------- descriptions

    def definition(self) -> dict[str, Any]:
        """A JSON-able description of the grid, independent of input order.

        Holds the personas (E9 fields only: tags and descriptions are not part of a run's
        identity), the records and contexts (sorted canonically), repeats, the sample and shard
        steps in the order applied, and a digest of the selected cell ids.
        """
        personas = sorted((p.to_api() for p in self._personas), key=canonical_json)
        records = [json.loads(text) for text in sorted(canonical_json(r) for r in self._records)]
        contexts = sorted(self._contexts, key=lambda c: (c is not None, c or ""))
        ids = sorted(c.cell_id for c in self._cells)
        shard = [s["shard"] for s in self._selection if "shard" in s]
        sample = [s["sample"] for s in self._selection if "sample" in s]
        return {
            "version": DEFINITION_VERSION,
            "personas": personas,
            "variables": records,
            "contexts": contexts,
            "repeats": self._repeats,
            "shard": shard[-1] if shard else None,
            "sample": sample[-1] if sample else None,
            "selection": [{k: dict(v) for k, v in s.items()} for s in self._selection],
            "n_cells": len(ids),
            "n_conversations": len(self),
            "cells_digest": content_hash("\n".join(ids)),
        }

    def digest(self) -> str:
        """SHA-256 of the canonical :meth:`definition`: equal grids, equal digests."""
        return content_hash(self.definition())

    @classmethod
    def from_definition(cls, definition: Mapping[str, Any]) -> Grid:
        """Rebuild a grid from :meth:`definition` (same cells, ids and selection)."""
        version = definition.get("version")
        if version != DEFINITION_VERSION:
            raise ValueError(f"unsupported grid definition version {version!r}")
        grid = cls(
            [
                Persona.from_mapping(p, field=f"personas[{i}]")
                for i, p in enumerate(definition["personas"])
            ],
            variables=list(definition["variables"]),
            contexts=list(definition["contexts"]),
            repeats=definition["repeats"],
        )
        for step in definition.get("selection", []):
            if "sample" in step:
                grid = grid.sample(step["sample"]["n"], step["sample"]["seed"])
            elif "shard" in step:
                grid = grid.shard(step["shard"]["index"], step["shard"]["count"])
            else:
                raise ValueError(f"unknown grid selection step {step!r}")
        return grid

    def to_frame(self) -> pd.DataFrame:
        """One row per cell: ``cell_id``, ``index``, ``persona_label``, ``variables`` (JSON
        text, missing when the cell has none) and ``context``; text columns use ``string``."""
        import pandas as pd

        cells = self._cells
        json_by_record = {id(r): (None if r is None else canonical_json(r)) for r in self._records}
        frame = pd.DataFrame(
            {
                "cell_id": pd.array([c.cell_id for c in cells], dtype="string"),
                "index": pd.array([c.index for c in cells], dtype="int64"),
                "persona_label": pd.array([c.persona.label for c in cells], dtype="string"),
                "variables": pd.array(
                    [json_by_record[id(c.variables)] for c in cells], dtype="string"
                ),
                "context": pd.array([c.context for c in cells], dtype="string"),
            }
        )
        return frame
