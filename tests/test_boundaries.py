"""Private boundaries that are real (TEAM.md "How packages import each other").

Code in one package never imports another package's underscored module: it imports from the
package itself, and only names the package offers, in its public ``__all__`` or in the tuple
``_SIBLING_API`` (what its siblings need and users should not). Within a package,
``from ._module import`` is fine. Every ``import`` under ``evalkit/`` is checked (module level,
inside functions and under ``TYPE_CHECKING`` alike), parsed, not imported.

Exempt, and why:

- ``evalkit/_exceptions.py`` and ``evalkit/_version.py`` are modules of the root package, not
  of a sibling: the one root of the error tree and the version string, leaves that every
  package imports (DESIGN.md "Layers" puts ``_exceptions`` below everything). Reaching them
  through ``evalkit/__init__`` would be backwards: the top level re-exports from every package.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

import evalkit

ROOT = Path(evalkit.__file__).parent
MODULES = sorted(p for p in ROOT.rglob("*.py") if "__pycache__" not in p.parts)
#: root modules any package may import (module docstring)
ROOT_LEAVES = frozenset({"_exceptions", "_version"})
#: importers whose cross-package imports are not checked (module docstring)
EXEMPT_IMPORTERS: frozenset[str] = frozenset()


def ruff_order(name: str) -> tuple[int, str]:
    """The order of ``__all__`` (ruff's RUF022): CONSTANTS, then Classes, then functions."""
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


@dataclass(frozen=True)
class Imported:
    """One name (or module) an import statement takes from ``target`` (dotted, under evalkit)."""

    line: int
    target: tuple[str, ...]
    name: str | None  # None: ``import evalkit.x.y`` (the module itself)

    def __str__(self) -> str:
        where = ".".join(("evalkit", *self.target))
        return f"line {self.line}: {where}" + (f" import {self.name}" if self.name else "")


def containing_package(path: Path) -> tuple[str, ...]:
    """The package a module's relative imports start from."""
    return path.relative_to(ROOT).with_suffix("").parts[:-1]


def imports_of(path: Path, source: str | None = None) -> Iterator[Imported]:
    """Every evalkit name or module ``path`` (or ``source`` as if it were there) imports,
    relative imports resolved."""
    tree = ast.parse(source if source is not None else path.read_text(encoding="utf-8"))
    base = containing_package(path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                dotted = alias.name.split(".")
                if dotted[0] == "evalkit" and len(dotted) > 1:
                    yield Imported(node.lineno, tuple(dotted[1:]), None)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                dotted = (node.module or "").split(".")
                if dotted[0] != "evalkit":
                    continue
                target = tuple(dotted[1:])
            else:
                up = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                target = (*up, *(node.module.split(".") if node.module else ()))
            for alias in node.names:
                yield Imported(node.lineno, target, alias.name)


def is_package(parts: tuple[str, ...]) -> bool:
    return (ROOT.joinpath(*parts) / "__init__.py").is_file()


def is_module(parts: tuple[str, ...]) -> bool:
    return bool(parts) and ROOT.joinpath(*parts).with_suffix(".py").is_file()


def top_package(parts: tuple[str, ...]) -> str:
    """The top-level package (or root module) a module belongs to; ``""``: evalkit's root."""
    return parts[0] if parts and (is_package(parts[:1]) or is_module(parts[:1])) else ""


@cache
def offered(dotted: str) -> frozenset[str]:
    """What a package offers its siblings: ``__all__`` and ``_SIBLING_API``."""
    module = importlib.import_module(dotted)
    return frozenset(getattr(module, "__all__", ())) | frozenset(
        getattr(module, "_SIBLING_API", ())
    )


def boundary_problems(path: Path, source: str | None = None) -> list[str]:
    """Each import of ``path`` (or of ``source`` as if it were there) that crosses into
    another package's private side."""
    own = top_package(path.relative_to(ROOT).with_suffix("").parts)
    if own in EXEMPT_IMPORTERS:
        return []
    problems = []
    for imp in imports_of(path, source):
        target = imp.target
        # ``from evalkit import grading`` / ``from .. import x``: the name is a module or a
        # name of the root package
        if imp.name is not None and (
            is_package((*target, imp.name)) or is_module((*target, imp.name))
        ):
            target, name = (*target, imp.name), None
        else:
            name = imp.name
        if not target:  # a name of evalkit itself: the top level, not a sibling's inside
            continue
        theirs = target[0]
        if theirs == own and own:  # within one package
            continue
        if theirs in ROOT_LEAVES and len(target) == 1:
            continue
        private = [part for part in target[1:] if part.startswith("_")]
        if theirs.startswith("_") and is_module(target[:1]):
            private.insert(0, theirs)  # a private root module (not a package like _util)
        if private:
            problems.append(f"{imp}: reaches into the private module {'.'.join(target)}")
            continue
        if name is None or name == "*":
            continue
        package = ".".join(("evalkit", *target))
        if is_package(target) and name not in offered(package):
            problems.append(f"{imp}: {name!r} is in neither {package}.__all__ nor its _SIBLING_API")
    return problems


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_import_reaches_into_another_packages_private_modules(path: Path) -> None:
    problems = boundary_problems(path)
    assert not problems, f"{path.relative_to(ROOT)}:\n  " + "\n  ".join(problems)


def sibling_packages() -> list[str]:
    return sorted(
        p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file() and p.name != "__pycache__"
    )


@pytest.mark.parametrize("package", sibling_packages())
def test_a_sibling_surface_is_private_resolves_and_is_used(package: str) -> None:
    """``_SIBLING_API`` holds no public name, every name resolves, and each is imported by
    some other package (a surface nobody uses is not kept)."""
    module = importlib.import_module(f"evalkit.{package}")
    surface = tuple(getattr(module, "_SIBLING_API", ()))
    assert len(set(surface)) == len(surface), f"{package}._SIBLING_API repeats a name"
    assert list(surface) == sorted(surface, key=ruff_order), f"{package}._SIBLING_API order"
    public = set(getattr(module, "__all__", ()))
    assert not public & set(surface), f"public names in {package}._SIBLING_API"
    for name in surface:
        assert hasattr(module, name), f"evalkit.{package}._SIBLING_API names {name!r}"
    used = {
        imp.name
        for path in MODULES
        if top_package(path.relative_to(ROOT).with_suffix("").parts) != package
        for imp in imports_of(path)
        if imp.target == (package,)
    }
    unused = sorted(set(surface) - used)
    assert not unused, f"evalkit.{package}._SIBLING_API names nobody imports: {unused}"


def test_the_checker_refuses_what_it_should_and_lets_pass_what_it_should() -> None:
    """The checker on sources it has never seen (parsed from strings, as if in flows/)."""

    def problems(source: str) -> list[str]:
        return boundary_problems(ROOT / "flows" / "_checked.py", source)

    assert problems("from ..compare._alarms import AlarmWatch")  # a private module
    assert problems("from evalkit.compare._options import check_levels")  # absolute spelling
    assert problems("import evalkit.grading._judge")
    assert problems("from ..api import _limits")  # a private module as a name
    assert problems("def f():\n    from .._util._html import render_html\n")  # lazy import
    assert problems("from ..compare import not_a_name_it_offers")
    assert problems("from ..compare import _compare")
    assert not problems("from ._history import history")  # within flows
    assert not problems("from ..compare import compare_grades")  # public
    assert not problems("from .._util import render_html")  # a private package's surface
    assert not problems("from .._exceptions import EvalkitError")  # a root leaf
    assert not problems("from .._version import __version__")
    assert not problems("from ..emulator.dialogue import DialogueBackend")
