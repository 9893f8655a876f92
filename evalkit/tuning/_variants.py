"""Variants from a YAML file: a name, a JSON merge patch or a prompt, and a note.

::

    variants:
      - name: nastaliq-confirm
        note: asks for Nastaliq script and a yes-or-no confirmation
        instructions: "You are Sana ..."          # or instructions_file: prompts/v1.txt
      - name: low-reasoning
        patch: {llm: {default: {reasoningEffort: low}}}

A top-level list works too. ``instructions`` (or the file's text, relative to the YAML file)
becomes ``agent.instructions`` on top of ``patch``. Problems name the entry and the field.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .._exceptions import EvalkitError
from .._util import unknown_name
from ..targets import Variant, merge_patch

__all__ = ["VariantSpec", "VariantsFileError", "load_variants", "variant_specs"]

_KEYS = frozenset({"name", "note", "patch", "instructions", "instructions_file", "base"})


class VariantsFileError(EvalkitError, ValueError):
    """A variants file that cannot be read; the message names the entry and the field."""


@dataclass(frozen=True)
class VariantSpec:
    """One arm of a sweep: its :class:`~evalkit.Variant` and the note that explains it."""

    variant: Variant
    note: str = ""


def _entry(raw: Any, where: str, folder: Path) -> VariantSpec:
    if not isinstance(raw, Mapping):
        raise VariantsFileError(f"{where}: expected a mapping with name and patch or instructions")
    unknown = sorted(str(key) for key in set(raw) - _KEYS)
    if unknown:
        named = "; ".join(unknown_name(key, _KEYS, "field") for key in unknown)
        raise VariantsFileError(f"{where}: {named}; fields are {sorted(_KEYS)}")
    name = raw.get("name")
    if not isinstance(name, str) or not name.strip():
        raise VariantsFileError(f"{where}.name: a non-empty string is required")
    patch = raw.get("patch") or {}
    if not isinstance(patch, Mapping):
        raise VariantsFileError(f"{where}.patch: must be a mapping (a JSON merge patch)")
    if "instructions" in raw and "instructions_file" in raw:
        raise VariantsFileError(f"{where}: give instructions or instructions_file, not both")
    text = raw.get("instructions")
    if "instructions_file" in raw:
        path = folder / str(raw["instructions_file"])
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise VariantsFileError(
                f"{where}.instructions_file: cannot read {path}: {exc}"
            ) from exc
    if text is not None:
        if not isinstance(text, str) or not text.strip():
            raise VariantsFileError(f"{where}.instructions: a non-empty string is required")
        patch = merge_patch(patch, {"agent": {"instructions": text.strip()}})
    if not patch:
        raise VariantsFileError(f"{where}: a variant needs a patch or instructions")
    base = raw.get("base", "draft")
    try:
        variant = Variant(name.strip(), dict(patch), base)
    except ValueError as exc:
        raise VariantsFileError(f"{where}: {exc}") from exc
    return VariantSpec(variant, str(raw.get("note") or "").strip())


def load_variants(path: str | Path) -> list[VariantSpec]:
    """The variants of a YAML file (see the module docstring)."""
    file = Path(path)
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except OSError as exc:
        raise VariantsFileError(f"variants file {file}: {exc}") from exc
    except yaml.YAMLError as exc:
        raise VariantsFileError(f"variants file {file}: not valid YAML: {exc}") from exc
    entries = data.get("variants") if isinstance(data, Mapping) else data
    if not isinstance(entries, list) or not entries:
        raise VariantsFileError(f"variants file {file}: expected a non-empty list under 'variants'")
    specs: list[VariantSpec] = []
    problems: list[str] = []
    for i, raw in enumerate(entries):  # every problem at once, as scorecards report them
        try:
            specs.append(_entry(raw, f"variants[{i}]", file.parent))
        except VariantsFileError as exc:
            problems.append(str(exc))
    names = [
        str(raw["name"]).strip() for raw in entries if isinstance(raw, Mapping) and "name" in raw
    ]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        problems.append(f"names must be unique, repeated: {dupes}")
    if problems:
        listed = "\n".join(f"  - {p}" for p in problems)
        raise VariantsFileError(f"variants file {file}: {len(problems)} problem(s):\n{listed}")
    return specs


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
