"""Small truths a reader checks first (issue 32, item 6): the top level lists what a user
types, the exception tree's docstring names every exception, no import needs a type-ignore,
and the dead helpers stay gone."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import evalkit
from evalkit._exceptions import EvalkitError

ROOT = Path(evalkit.__file__).parent


def test_dir_is_all_plus_dunders() -> None:
    names = dir(evalkit)
    assert set(evalkit.__all__) <= set(names)
    extra = set(names) - set(evalkit.__all__)
    assert all(n.startswith("__") and n.endswith("__") for n in extra), sorted(extra)
    for leaked in ("Any", "TYPE_CHECKING", "importlib", "warnings", "annotations"):
        assert leaked not in names


def _exported_errors() -> dict[str, type[EvalkitError]]:
    found: dict[str, type[EvalkitError]] = {"EvalkitError": EvalkitError}
    for package in sorted(evalkit._PACKAGES):
        module = importlib.import_module(f"evalkit.{package}")
        for name in module.__all__:
            value = getattr(module, name)
            if isinstance(value, type) and issubclass(value, EvalkitError):
                found[name] = value
    return found


def test_the_exception_tree_names_every_exported_error_under_its_parent() -> None:
    doc = importlib.import_module("evalkit._exceptions").__doc__ or ""
    lines = doc.splitlines()
    errors = _exported_errors()
    assert len(errors) > 40  # every package's errors were found
    for name, error in errors.items():
        at = [i for i, line in enumerate(lines) if re.search(rf"[─ ]{name}\b", line)]
        if name == "EvalkitError":
            continue
        assert at, f"{name} is missing from the tree in evalkit/_exceptions.py"
        parent = next(b for b in error.__mro__[1:] if issubclass(b, EvalkitError))
        column = lines[at[0]].index(name)
        above = [
            i
            for i, line in enumerate(lines[: at[0]])
            if re.search(rf"\b{parent.__name__}\b", line)
            and line.index(parent.__name__) == column - 4
        ]
        assert above, f"{name} is not drawn under {parent.__name__}"


def test_no_import_needs_a_type_ignore_for_missing_stubs() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in ROOT.rglob("*.py")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.match(r"\s*(import|from) (pandas|scipy|numpy)\b", line) and "type: ignore" in line
    ]
    assert offenders == []


def test_dead_helpers_stay_gone() -> None:
    for module, name in (
        ("compare/_comparison.py", "_pts"),
        ("report/plots/_rules.py", "_applicable"),
    ):
        tree = ast.parse((ROOT / module).read_text(encoding="utf-8"))
        defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert name not in defined, f"{module}: {name} is back"
