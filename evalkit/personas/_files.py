"""Writing generated personas as the persona files evalkit loads (one YAML file each)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Final

import yaml

from .._util import atomic_write_bytes
from ..grid import Persona

__all__ = ["write_personas"]

_UNSAFE: Final = re.compile(r"[^A-Za-z0-9._-]+")
_HEADER: Final = (
    "# A generated persona (evalkit.personas): traits and provenance are evalkit's, never sent;\n"
    "# load it with the others: evalkit.load_personas(folder), or --personas FOLDER.\n"
)


def _file_name(label: str, used: set[str]) -> str:
    stem = _UNSAFE.sub("-", label).strip("-.") or "persona"
    name, n = stem, 2
    while name in used:
        name, n = f"{stem}-{n}", n + 1
    used.add(name)
    return f"{name}.yaml"


def write_personas(personas: Iterable[Persona], folder: str | os.PathLike[str]) -> list[Path]:
    """One ``<label>.yaml`` per persona in ``folder`` (made if needed; a file of the same
    name is replaced); the paths written. ``evalkit.load_personas(folder)`` reads them back
    equal."""
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    used: set[str] = set()
    written = []
    for persona in personas:
        text = yaml.safe_dump(persona.to_mapping(), allow_unicode=True, sort_keys=False, width=100)
        path = target / _file_name(persona.label, used)
        atomic_write_bytes(path, (_HEADER + text).encode("utf-8"), durable=False)
        written.append(path)
    return written
