"""Imports point one way, down the data flow (DESIGN.md "Layers").

Every ``import`` in ``evalkit/`` (module level or inside a function) is checked against the
packages its package may use. ``store`` never imports ``runner``; ``grading`` imports ``store``
and not ``runner``; nothing below the command line imports ``cli``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import evalkit

ROOT = Path(evalkit.__file__).parent
BASE = {"_exceptions", "_util", "_version"}

#: package -> the evalkit packages it may import (besides itself)
ALLOWED: dict[str, set[str]] = {
    "_util": set(),
    "_version": set(),
    "_exceptions": {"_util"},
    # the one face of every result (headline, summary, to_dict, HTML); pandas, so not in _util
    "_results": {"_util"},
    "api": BASE,
    # OpenAI-compatible chat endpoints of the user's own (the judge's, the proposer's)
    "_chat": BASE | {"api"},
    "emulator": BASE | {"api"},
    "data": BASE,
    "grid": BASE | {"api", "data"},
    "store": BASE | {"api"},
    # store: config snapshots live in the store (a folder or a URL) through its protocol
    "targets": BASE | {"api", "store"},
    # data: a price table may be the bundled example, named
    "runner": BASE | {"api", "data", "grid", "targets", "store"},
    "stats": BASE,
    "grading": BASE
    | {"api", "_chat", "_results", "data", "store", "stats"},  # data: bundled scorecards by name
    # comparisons are pure functions of grades and tables: no store (compare_runs, history and
    # the peeking records live in flows)
    "compare": BASE | {"api", "_results", "stats", "grading"},
    "diagnose": BASE | {"api", "_results", "grid", "store", "grading", "compare"},
    "flows": BASE
    | {"api", "_results", "data", "grid", "targets", "runner", "store", "stats", "grading"}
    | {"compare", "diagnose"},  # a graded run records its simulation flags
    # refine runs its rounds through flows' run -> grade -> compare pipeline
    "refine": BASE
    | {"api", "_results", "grid", "targets", "runner", "store", "stats", "grading", "compare"}
    | {"flows"},
    "audio": BASE | {"api", "store"},
    # tuning sits beside flows: it runs arms through flows' run -> grade pipeline; optimize
    # reads failure clusters (diagnose) and makes refine builds its candidates (refine)
    "tuning": BASE
    | {"api", "_chat", "_results", "data", "grid", "targets", "runner", "store", "stats"}
    | {"grading", "compare", "flows", "diagnose", "refine"},
    # generated personas: asked of a chat endpoint (_chat), checked, piloted and searched
    # through flows' run -> grade pipeline, with simulation flags (diagnose)
    "personas": BASE
    | {"api", "_chat", "_results", "data", "grid", "targets", "runner", "store", "stats"}
    | {"grading", "compare", "flows", "diagnose"},
    "report": BASE
    | {
        "api",
        "grid",
        "store",
        "stats",
        "grading",
        "compare",
        "data",
        "audio",
        "tuning",
        "diagnose",
    },
    # the viewer's history page reads flows' history (series, alarms)
    "view": BASE
    | {"api", "data", "grid", "store", "stats", "grading", "compare", "report", "audio", "flows"}
    | {"personas"},  # the persona searches' pages read their records
    "demo": BASE
    | {"api", "data", "emulator", "grid", "targets", "runner", "store"}
    | {"stats", "grading", "compare", "flows", "tuning", "report", "diagnose", "personas"},
    # a pytest session's shared state (the check's context, the folder xdist workers share):
    # the standard library only, so the plugin's start imports nothing heavy
    "_test_session": set(),
    # evals as tests: assertions over runs and grades, runs recorded for a test session
    "testing": BASE
    | {"_results", "_test_session", "api", "emulator", "grid", "targets", "runner", "store"}
    | {"stats", "grading", "compare", "flows"},
    # the pytest11 entry point: its heavy imports are inside the hooks and fixtures
    "pytest_plugin": BASE | {"_test_session", "api", "grading", "store", "testing"},
    "cli": set(),  # the top of the flow: anything (checked below)
    "__init__": set(),
    "__main__": {"cli"},
}
TOP = {"cli", "__init__", "aio"}  # aio: every async twin, under its sync name


def package_of(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return parts[0]


def imported_packages(path: Path) -> set[str]:
    """The evalkit top-level packages ``path`` imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = path.relative_to(ROOT).with_suffix("").parts
    package_parts = here[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "evalkit" and "." in alias.name:
                    found.add(alias.name.split(".")[1])
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                module = node.module or ""
                if module == "evalkit":
                    found |= {alias.name for alias in node.names}
                elif module.startswith("evalkit."):
                    found.add(module.split(".")[1])
            else:
                base = list(package_parts)
                if here[-1] == "__init__":
                    base = list(here[:-1])
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                target = [*base, *(node.module.split(".") if node.module else [])]
                if target:
                    found.add(target[0])
                else:  # "from . import x" at the top level
                    found |= {alias.name for alias in node.names}
    return found


MODULES = sorted(p for p in ROOT.rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_point_down_the_flow(path: Path) -> None:
    package = package_of(path)
    if package in TOP:
        return
    assert package in ALLOWED, f"{package} is a new package: give it a place in ALLOWED"
    used = imported_packages(path) - {package}
    wrong = sorted(used - ALLOWED[package])
    assert not wrong, f"{path.relative_to(ROOT)} ({package}) imports {wrong}"


def test_the_rules_the_issue_names() -> None:
    assert "store" not in ALLOWED["compare"]  # issue 32: compare reads and writes nothing
    assert "runner" not in ALLOWED["store"]
    assert "refine" not in ALLOWED["flows"]  # the pipeline sits below refine
    assert "store" in ALLOWED["grading"]
    assert "runner" not in ALLOWED["grading"]
    for package, allowed in ALLOWED.items():
        assert "cli" not in allowed or package == "__main__", package


def test_the_checker_sees_relative_and_lazy_imports() -> None:
    module = ROOT / "store" / "_writer.py"
    assert "_util" in imported_packages(module)
    runner = ROOT / "runner" / "_runner.py"
    assert {"grid", "store", "targets", "api"} <= imported_packages(runner)
