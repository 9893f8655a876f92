"""No import cycles among evalkit's modules, inside a package or across packages.

tests/test_layers.py keeps packages pointing one way; this test looks one level finer, at
modules: ``emulator/_core -> _judge -> _auth -> _core`` was a cycle inside one package that a
function-level import papered over. Every ``import`` counts, at module level or inside a
function, except those under ``if TYPE_CHECKING:`` (they never run). ``from pkg import name``
is an import of ``pkg.name`` when that is a module, else of ``pkg`` itself (its
``__init__``); a module's parent package is not counted, since Python imports it first
whatever the module does.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import evalkit

ROOT = Path(evalkit.__file__).parent


def module_name(path: Path) -> str:
    """``evalkit/emulator/_core.py`` -> ``evalkit.emulator._core`` (a package: its name)."""
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES: dict[str, Path] = {
    module_name(p): p for p in sorted(ROOT.rglob("*.py")) if "__pycache__" not in p.parts
}


def _runtime_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement of ``tree`` except those under ``if TYPE_CHECKING:``."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
            continue
        children = list(ast.iter_child_nodes(node))
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            children = list(node.orelse)  # the guarded body never runs
        stack.extend(children)


def imported_modules(name: str, modules: Mapping[str, Path] = MODULES) -> set[str]:
    """The evalkit modules that module ``name`` imports when it runs."""
    path = modules[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _runtime_imports(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
            continue
        if node.level:
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            target = ".".join([*base, *([node.module] if node.module else [])])
        else:
            target = node.module or ""
        submodules = {f"{target}.{a.name}" for a in node.names} & modules.keys()
        found |= submodules
        if len(submodules) < len(node.names):
            found.add(target)
    return {m for m in found if m in modules and m != name}


def import_cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative),
    each sorted: every module of a group reaches every other by imports."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def test_no_module_imports_itself_back() -> None:
    graph = {name: imported_modules(name) for name in MODULES}
    cycles = import_cycles(graph)
    described = [
        "; ".join(f"{m} imports {sorted(graph[m] & set(group))}" for m in group) for group in cycles
    ]
    assert cycles == [], "\n".join(described)


def test_the_finder_sees_function_level_imports_and_skips_type_checking(tmp_path: Path) -> None:
    pkg = tmp_path / "evalkit" / "p"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("from ._a import A\n")
    (pkg / "_a.py").write_text("def f():\n    from ._b import B\n")
    (pkg / "_b.py").write_text("from . import _c\n")
    (pkg / "_c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ._a import A\n"
        "def g():\n    from . import _a\n"
    )
    (pkg / "_d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ._a import A\n"
    )
    modules = {
        f"evalkit.p{'' if p.stem == '__init__' else '.' + p.stem}": p for p in pkg.glob("*.py")
    }
    graph = {name: imported_modules(name, modules) for name in modules}
    assert graph["evalkit.p"] == {"evalkit.p._a"}
    assert graph["evalkit.p._a"] == {"evalkit.p._b"}
    assert graph["evalkit.p._b"] == {"evalkit.p._c"}
    assert graph["evalkit.p._d"] == set()
    assert import_cycles(graph) == [["evalkit.p._a", "evalkit.p._b", "evalkit.p._c"]]


def test_the_finder_sees_the_cycle_the_issue_named() -> None:
    """What the emulator had: a function-level import closing a three-module loop."""
    graph = {
        "evalkit.emulator._core": {"evalkit.emulator._judge"},
        "evalkit.emulator._judge": {"evalkit.emulator._auth", "evalkit.emulator._core"},
        "evalkit.emulator._auth": {"evalkit.emulator._core"},
    }
    assert import_cycles(graph) == [sorted(graph)]
    assert import_cycles({**graph, "evalkit.emulator._core": set()}) == []
