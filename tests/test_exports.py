"""The public surface (in the manner of httpx's tests/test_exported_members.py).

Every package has a sorted ``__all__`` whose names resolve; every exported class and function
names its public home as ``__module__`` (``evalkit.grid``, never ``evalkit.grid._personas``);
the top level is curated (``tests/test_exported_members.py`` pins it) and keeps the wire
sub-models out.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

import evalkit
import evalkit.api


def ruff_order(name: str) -> tuple[int, str]:
    """The order ruff's RUF022 keeps: CONSTANTS, then Classes, then functions."""
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


PACKAGES = [
    "evalkit.api",
    "evalkit.grid",
    "evalkit.targets",
    "evalkit.runner",
    "evalkit.store",
    "evalkit.grading",
    "evalkit.compare",
    "evalkit.stats",
    "evalkit.refine",
    "evalkit.flows",
    "evalkit.tuning",
    "evalkit.diagnose",
    "evalkit.report",
    "evalkit.audio",
    "evalkit.view",
    "evalkit.data",
    "evalkit.emulator",
]


@pytest.mark.parametrize("package", PACKAGES)
def test_package_all_is_sorted_unique_and_resolves(package: str) -> None:
    module = importlib.import_module(package)
    names = list(module.__all__)
    assert names == sorted(names, key=ruff_order), f"{package}.__all__ is not sorted"
    assert len(set(names)) == len(names)
    for name in names:
        value = getattr(module, name)
        home = getattr(value, "__module__", None)
        if isinstance(value, type) or inspect.isfunction(value):
            assert isinstance(home, str), (package, name)
            assert "._" not in home, (package, name, home)
            assert getattr(importlib.import_module(home), name) is value, (package, name, home)


def test_no_name_is_exported_by_two_packages() -> None:
    """Each data-flow name has one public home (the wire models of api excepted: grading's
    ``Scorecard`` is the user's, api's is the wire model)."""
    seen: dict[str, str] = {}
    for package in (
        "grid",
        "targets",
        "runner",
        "store",
        "grading",
        "compare",
        "refine",
        "flows",
        "tuning",
    ):
        for name in importlib.import_module(f"evalkit.{package}").__all__:
            assert name not in seen, f"{name} is exported by {seen.get(name)} and {package}"
            seen[name] = package


def test_wire_sub_models_stay_in_api() -> None:
    for name in ("VendorASttConfig", "LlmBlock", "ExcludedCounts", "ErrorEnvelope", "Grading"):
        assert name in evalkit.api.__all__
        assert name not in evalkit.__all__
    assert evalkit.api.Scorecard.__module__ == "evalkit.api"


def test_type_checking_imports_match_the_top_level_table() -> None:
    """The top level's TYPE_CHECKING imports (what a type checker sees) are the names of
    ``evalkit._HOMES`` (what resolves at run time), each from the package it names."""
    tree = ast.parse(Path(evalkit.__file__).read_text(encoding="utf-8"))
    imported: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module != "_version":
            imported |= {alias.name: str(node.module) for alias in node.names}
    assert imported == evalkit._HOMES


def test_exceptions_share_one_root_and_pickle() -> None:
    from evalkit.grid import PersonaError
    from evalkit.runner import RunAborted
    from evalkit.store import CorruptRunError, StoreError
    from evalkit.targets import TargetError

    for error in (PersonaError, RunAborted, StoreError, CorruptRunError, TargetError):
        assert issubclass(error, evalkit.EvalkitError), error
    error = RunAborted("stopped")
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is RunAborted
    assert str(again) == "stopped"


def test_unknown_attribute_raises() -> None:
    with pytest.raises(AttributeError, match="not_a_name"):
        evalkit.not_a_name  # noqa: B018


def test_import_has_no_side_effects_and_stays_light() -> None:
    """Importing evalkit configures no logging handlers and loads nothing heavy."""
    code = (
        "import logging, sys, evalkit\n"
        "assert not logging.getLogger().handlers, 'root logger configured'\n"
        "assert not logging.getLogger('evalkit').handlers\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('pandas', 'pyarrow', 'httpx', 'pydantic', 'starlette')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
