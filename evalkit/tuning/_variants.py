"""Variants from a YAML file: a name, a JSON merge patch or a prompt, and a note.

::

    variants:
      - name: nastaliq-confirm
        note: asks for Nastaliq script and a yes-or-no confirmation
        instructions: "You are Sana ..."          # or instructions_file: prompts/v1.txt
      - name: low-reasoning
        patch: {llm: {default: {reasoningEffort: low}}}

A top-level list works too. ``instructions`` (or the file's text, relative to the YAML file)
becomes ``agent.instructions`` on top of ``patch``. Every problem of a file is reported at
once, naming the entry, the variant and the field; the values a patch sets are checked
against the service's config rules (:mod:`evalkit.api`'s models and knob table) at load.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .._exceptions import EvalkitError
from .._util import unknown_name
from ..api import patch_problems
from ..data import resolve
from ..targets import Variant, merge_patch

__all__ = ["VariantSpec", "VariantsFileError", "load_variants", "variant_specs"]

logger = logging.getLogger("evalkit.tuning")

_KEYS = frozenset({"name", "note", "patch", "instructions", "instructions_file", "base"})


class VariantsFileError(EvalkitError, ValueError):
    """A variants file that cannot be read; the message names the entry and the field."""


@dataclass(frozen=True)
class VariantSpec:
    """One arm of a sweep: its :class:`~evalkit.Variant` and the note that explains it."""

    variant: Variant
    note: str = ""


class _Entry:
    """One entry of a variants file, read with every problem it has (not only the first)."""

    def __init__(self, raw: Any, where: str, folder: Path) -> None:
        self.where = where
        self.problems: list[str] = []
        self.warnings: list[str] = []
        self.spec = self._read(raw, folder) if self._shape(raw) else None

    def _problem(self, field: str, message: str) -> None:
        self.problems.append(f"{self.where}{field}: {message}")

    def _shape(self, raw: Any) -> bool:
        if not isinstance(raw, Mapping):
            self._problem("", "expected a mapping with name and patch or instructions")
            return False
        name = raw.get("name")
        if isinstance(name, str) and name.strip():
            self.where = f"{self.where} ({name.strip()})"
        unknown = sorted(str(key) for key in set(raw) - _KEYS)
        if unknown:
            named = "; ".join(unknown_name(key, _KEYS, "field") for key in unknown)
            self._problem("", f"{named}; fields are {sorted(_KEYS)}")
        return True

    def _read(self, raw: Mapping[str, Any], folder: Path) -> VariantSpec | None:
        name = raw.get("name")
        if not isinstance(name, str) or not name.strip():
            self._problem(".name", "a non-empty string is required")
        patch = raw.get("patch") or {}
        if not isinstance(patch, Mapping):
            self._problem(".patch", "must be a mapping (a JSON merge patch)")
            patch = {}
        for p in patch_problems(patch, at=".patch"):
            (self.warnings if p.severity == "warning" else self.problems).append(f"{self.where}{p}")
        text = self._instructions(raw, folder)
        if text is not None:
            patch = merge_patch(patch, {"agent": {"instructions": text.strip()}})
        if not patch and not self.problems:
            self._problem("", "a variant needs a patch or instructions")
        if self.problems or not isinstance(name, str):
            return None
        try:
            variant = Variant(name.strip(), dict(patch), raw.get("base", "draft"))
        except ValueError as exc:
            self._problem("", str(exc))
            return None
        return VariantSpec(variant, str(raw.get("note") or "").strip())

    def _instructions(self, raw: Mapping[str, Any], folder: Path) -> str | None:
        if "instructions" in raw and "instructions_file" in raw:
            self._problem("", "give instructions or instructions_file, not both")
            return None
        text = raw.get("instructions")
        if "instructions_file" in raw:
            path = folder / str(raw["instructions_file"])
            try:
                text = path.read_text(encoding="utf-8")
            except OSError as exc:
                self._problem(".instructions_file", f"cannot read {path}: {exc}")
                return None
        if text is not None and (not isinstance(text, str) or not text.strip()):
            self._problem(".instructions", "a non-empty string is required")
            return None
        return text


def load_variants(path: str | Path) -> list[VariantSpec]:
    """The variants of a YAML file (see the module docstring). Every problem of the file is
    reported at once (:class:`VariantsFileError`), each with the entry, the variant's name
    and the field: the values a patch sets are checked against the service's config rules
    here, not when an arm's clone is saved waves into a sweep. Keys the spec does not list
    are logged as warnings. A bundled example is taken by name
    (``variants/urdu_reminder.yaml``)."""
    file = Path(path)
    try:
        file = resolve(path, "examples")
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise VariantsFileError(f"variants file {file}: {exc}") from exc
    except yaml.YAMLError as exc:
        raise VariantsFileError(f"variants file {file}: not valid YAML: {exc}") from exc
    entries = data.get("variants") if isinstance(data, Mapping) else data
    if not isinstance(entries, list) or not entries:
        raise VariantsFileError(f"variants file {file}: expected a non-empty list under 'variants'")
    read = [_Entry(raw, f"variants[{i}]", file.parent) for i, raw in enumerate(entries)]
    problems = [p for entry in read for p in entry.problems]
    names = [
        str(raw["name"]).strip() for raw in entries if isinstance(raw, Mapping) and "name" in raw
    ]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        problems.append(f"names must be unique, repeated: {dupes}")
    if problems:
        listed = "\n".join(f"  - {p}" for p in problems)
        raise VariantsFileError(f"variants file {file}: {len(problems)} problem(s):\n{listed}")
    for warning in (w for entry in read for w in entry.warnings):
        logger.warning("variants file %s: %s", file, warning)
    return [entry.spec for entry in read if entry.spec is not None]


def variant_specs(variants: str | Path | Sequence[Variant | VariantSpec]) -> list[VariantSpec]:
    """Variants given as a file, :class:`~evalkit.Variant` objects or specs, as specs."""
    if isinstance(variants, str | Path):
        return load_variants(variants)
    specs = [v if isinstance(v, VariantSpec) else VariantSpec(v) for v in variants]
    for i, spec in enumerate(specs):
        if not isinstance(spec.variant, Variant):
            raise TypeError(f"variants[{i}]: expected a Variant, got {type(spec.variant).__name__}")
    if not specs:
        raise ValueError("variants: give at least one variant")
    names = [s.variant.name for s in specs]
    if len(set(names)) != len(names):
        raise ValueError(f"variants: names must be unique, got {names}")
    return specs
