"""The public surface of evalkit as text, one line per name, and the check that it is the
committed snapshot.

The surface is every name in ``evalkit.__all__``, in each public package's ``__all__`` and in
``evalkit.aio``: functions with their signatures, classes with their bases, constructor, fields,
properties, methods and class attributes (members evalkit defines, inherited ones included),
enums with their members, constants with their type (and value when a scalar). A name is
described once, at its public home (the package its ``__module__`` names); every other place
that exports it gets one ``alias`` line. Annotations are kept as written (``from __future__
import annotations``), with dotted module paths cut to the last name, so a module moving inside
the package changes nothing here.

Regenerate the committed snapshot (after a deliberate change, announced under
``## [Unreleased]`` in CHANGELOG.md) with one command from the repository root::

    python -m tests.api_snapshot

``python -m tests.api_snapshot --check`` prints the difference and exits 1 when the surface is
not the snapshot (what ``tests/test_api_snapshot.py`` asserts). The changes the Unreleased
section must name are counted from ``tests/api_released.txt``, the surface of the last release;
cutting a release (the Unreleased section becomes the release's) rewrites both files::

    python -m tests.api_snapshot --release
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import enum
import hashlib
import importlib
import inspect
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOT = Path(__file__).resolve().parent / "api_snapshot.txt"
RELEASED = Path(__file__).resolve().parent / "api_released.txt"
CHANGELOG = ROOT / "CHANGELOG.md"
UPDATE_COMMAND = "python -m tests.api_snapshot"

#: a default or a value whose repr is longer than this is shown by its type and a short hash
_LONG_REPR = 100
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_DOTTED = re.compile(r"\b(?:[A-Za-z_]\w*\.)+(?=[A-Za-z_]\w*)")
_SCALARS = (str, int, float, bool, bytes, type(None))


def public_modules() -> list[str]:
    """``evalkit``, ``evalkit.aio`` and every public package, sorted."""
    import evalkit

    packages = sorted(evalkit._PACKAGES)
    return ["evalkit", *(f"evalkit.{name}" for name in packages)]


def _short(text: str) -> str:
    """``text`` with addresses dropped and dotted paths cut to their last name."""
    return _DOTTED.sub("", _ADDRESS.sub("", text))


def _value_repr(value: Any) -> str:
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    text = repr(value) if isinstance(value, _SCALARS) else _short(repr(value))
    if len(text) <= _LONG_REPR:
        return text
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    return f"<{type(value).__name__} sha256:{digest}>"


def _annotation(annotation: Any) -> str:
    if annotation is inspect.Parameter.empty:
        return ""
    if isinstance(annotation, str):
        return _short(annotation)
    return _short(inspect.formatannotation(annotation))


class _Text:
    """Shown as its text, unquoted (an annotation or a default in a signature)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def signature_text(func: Callable[..., Any]) -> str:
    """``(a: int, *, b: str = 'x') -> R``, annotations as written, defaults shortened."""
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return "(...)"
    empty = inspect.Parameter.empty
    params = [
        p.replace(
            annotation=_Text(_annotation(p.annotation)) if p.annotation is not empty else empty,
            default=_Text(_value_repr(p.default)) if p.default is not empty else empty,
        )
        for p in sig.parameters.values()
    ]
    returned = sig.return_annotation
    shown = sig.replace(
        parameters=params,
        return_annotation=_Text(_annotation(returned)) if returned is not empty else empty,
    )
    return str(shown)


def _own_members(cls: type) -> Iterator[tuple[str, Any, type]]:
    """Public members evalkit defines on ``cls`` or a base of it: (name, raw value, owner)."""
    seen: set[str] = set()
    for klass in cls.__mro__:
        if not klass.__module__.startswith("evalkit"):
            continue
        for name, value in vars(klass).items():
            if name.startswith("_") or name in seen:
                continue
            seen.add(name)
            yield name, value, klass


def _field_lines(cls: type, prefix: str) -> list[str]:
    fields: list[str] = []
    if dataclasses.is_dataclass(cls):
        for f in dataclasses.fields(cls):
            if f.name.startswith("_"):
                continue
            fields.append(f"{prefix}.{f.name}: field {_annotation(f.type)}")
    model_fields = getattr(cls, "model_fields", None)
    if isinstance(model_fields, dict) and model_fields:
        for name, info in model_fields.items():
            alias = f" (alias {info.alias})" if getattr(info, "alias", None) else ""
            fields.append(f"{prefix}.{name}: field {_annotation(info.annotation)}{alias}")
    return fields


def class_lines(cls: type, qualname: str) -> list[str]:
    """The lines of one class: itself, its fields, then its members, sorted."""
    bases = ", ".join(b.__name__ for b in cls.__bases__ if b is not object)
    kind = "enum" if issubclass(cls, enum.Enum) else "class"
    head = f"{qualname}: {kind}" + (f"({bases})" if bases else "")
    if kind == "enum":
        members = [f"{qualname}.{m.name} = {_value_repr(m.value)}" for m in cls]
        return [head, *members]
    lines = [head + " " + signature_text(cls)]
    body = _field_lines(cls, qualname)
    named_fields = {line.split(":")[0] for line in body}
    for name, value, _owner in _own_members(cls):
        where = f"{qualname}.{name}"
        if where in named_fields:
            continue
        if isinstance(value, property):
            returned = (
                _annotation(inspect.signature(value.fget).return_annotation) if value.fget else ""
            )
            body.append(f"{where}: property" + (f" -> {returned}" if returned else ""))
        elif isinstance(value, classmethod | staticmethod):
            tag = "classmethod" if isinstance(value, classmethod) else "staticmethod"
            body.append(f"{where}: {tag} {signature_text(value.__func__)}")
        elif inspect.isfunction(value):
            body.append(f"{where}: method {signature_text(value)}")
        elif isinstance(value, type):
            body.append(f"{where}: class {value.__name__}")
        elif callable(getattr(value, "__get__", None)) and not isinstance(value, _SCALARS):
            body.append(f"{where}: attribute {type(value).__name__}")
        else:
            body.append(f"{where}: attribute {_constant(value)}")
    return [lines[0], *sorted(body)]


def _constant(value: Any) -> str:
    if isinstance(value, _SCALARS):
        return f"{type(value).__name__} = {_value_repr(value)}"
    return type(value).__name__


def homes() -> dict[int, str]:
    """Each exported class and function (by identity) -> the qualified name it is described
    under: the public module its ``__module__`` names when that module exports it, else the
    first place that exports it (``evalkit.aio``'s twins are their packages' ``a<name>``)."""
    out: dict[int, str] = {}
    places: list[tuple[str, str, Any]] = []
    for module_name in public_modules():
        module = importlib.import_module(module_name)
        for name in getattr(module, "__all__", ()):
            value = getattr(module, name)
            if isinstance(value, type) or inspect.isroutine(value):
                places.append((module_name, name, value))
    for module_name, name, value in places:
        if getattr(value, "__module__", None) == module_name:
            out.setdefault(id(value), f"{module_name}.{name}")
    for module_name, name, value in places:
        if module_name != "evalkit.aio":
            out.setdefault(id(value), f"{module_name}.{name}")
    for module_name, name, value in places:
        out.setdefault(id(value), f"{module_name}.{name}")
    return out


def describe(module: ModuleType, name: str, home: dict[int, str]) -> list[str]:
    """The lines of ``module.name``."""
    value = getattr(module, name)
    qualname = f"{module.__name__}.{name}"
    if name == "__version__":
        return [f"{qualname}: constant str"]
    if isinstance(value, type) or inspect.isroutine(value):
        described = home.get(id(value), qualname)
        if described != qualname:
            return [f"{qualname}: alias {described}"]
    if isinstance(value, type):
        return class_lines(value, qualname)
    if inspect.isroutine(value):
        tag = "async function" if inspect.iscoroutinefunction(value) else "function"
        return [f"{qualname}: {tag} {signature_text(value)}"]
    if isinstance(value, ModuleType):
        return [f"{qualname}: module"]
    if callable(value) or type(value).__module__ in ("typing", "types", "typing_extensions"):
        return [f"{qualname}: type alias {_short(repr(value))}"]
    return [f"{qualname}: constant {_constant(value)}"]


def surface() -> list[str]:
    """Every line of the public surface, in module order then name order."""
    lines: list[str] = []
    home = homes()
    for module_name in public_modules():
        module = importlib.import_module(module_name)
        names = getattr(module, "__all__", None)
        if names is None:
            continue
        lines.append(f"{module_name}: module, {len(names)} names")
        for name in sorted(names):
            lines.extend(describe(module, name, home))
    return lines


def render(lines: list[str]) -> str:
    header = (
        "# The public surface of evalkit, one line per name: generated by "
        f"`{UPDATE_COMMAND}`; do not edit.\n"
        "# A change here is a change of the API: announce each name under "
        "## [Unreleased] in CHANGELOG.md.\n"
    )
    return header + "\n".join(lines) + "\n"


def parse(text: str) -> dict[str, str]:
    """A snapshot's lines by the qualified name they describe."""
    out: dict[str, str] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        key = line.split(":", 1)[0]
        out[key] = line
    return out


def changed_names(before: str, after: str) -> dict[str, str]:
    """Every qualified name added, removed or changed between two snapshots, and which."""
    old, new = parse(before), parse(after)
    out: dict[str, str] = {}
    for key in sorted(old.keys() | new.keys()):
        if key not in new:
            out[key] = "removed"
        elif key not in old:
            out[key] = "added"
        elif old[key] != new[key]:
            out[key] = "changed"
    return {
        k: v
        for k, v in out.items()
        if not _is_module_count(k, old, new) and not _comes_with_its_class(k, v, out)
    }


def _comes_with_its_class(key: str, how: str, out: dict[str, str]) -> bool:
    """A member of a class added (or removed) whole is announced by naming the class."""
    parent = key.rpartition(".")[0]
    return how in ("added", "removed") and out.get(parent) == how


def _is_module_count(key: str, old: dict[str, str], new: dict[str, str]) -> bool:
    """A module's own line (its name count) changes with every name; the names say it."""
    line = new.get(key) or old.get(key) or ""
    return line.endswith(" names") and ": module, " in line


def unreleased(changelog: str) -> str:
    """The text of the ``## [Unreleased]`` section (empty when there is none)."""
    match = re.search(r"^## \[Unreleased\][^\n]*\n(.*?)(?=^## \[|\Z)", changelog, re.M | re.S)
    return match.group(1) if match else ""


def mention_needed(qualname: str) -> tuple[str, ...]:
    """The words the changelog must hold for a change of ``qualname``: the exported name, and
    for a member (a field, method or attribute of a class) the member's name too."""
    import evalkit

    parts = qualname.split(".")
    in_package = len(parts) >= 3 and parts[1] in evalkit._PACKAGES
    return tuple(parts[2:4] if in_package else parts[1:3])


def unannounced(before: str, after: str, changelog: str) -> list[str]:
    """The changes between two snapshots whose names the Unreleased section does not mention."""
    text = unreleased(changelog)
    missing = []
    for key, how in changed_names(before, after).items():
        words = mention_needed(key)
        if not all(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", text) for w in words):
            missing.append(f"{key} ({how}): mention {' and '.join(f'`{w}`' for w in words)}")
    return missing


def released_snapshot() -> str | None:
    """The surface of the last release (``tests/api_released.txt``, copied from the snapshot
    when a release is cut), the one the Unreleased section counts its changes from."""
    return RELEASED.read_text(encoding="utf-8") if RELEASED.exists() else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the surface differs")
    parser.add_argument(
        "--release",
        action="store_true",
        help="cutting a release: the snapshot becomes the released surface too",
    )
    args = parser.parse_args(argv)
    current = render(surface())
    if args.release:
        SNAPSHOT.write_text(current, encoding="utf-8")
        RELEASED.write_text(current, encoding="utf-8")
        print(f"wrote {SNAPSHOT.relative_to(ROOT)} and {RELEASED.relative_to(ROOT)}")
        return 0
    if not args.check:
        SNAPSHOT.write_text(current, encoding="utf-8")
        print(f"wrote {SNAPSHOT.relative_to(ROOT)} ({len(current.splitlines()) - 2} lines)")
        return 0
    committed = SNAPSHOT.read_text(encoding="utf-8") if SNAPSHOT.exists() else ""
    if committed == current:
        return 0
    sys.stdout.writelines(
        difflib.unified_diff(
            committed.splitlines(keepends=True),
            current.splitlines(keepends=True),
            "committed",
            "current",
        )
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
