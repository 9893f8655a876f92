"""One storage protocol: a local folder and a URL answer the same operations the same way, and
no module outside ``evalkit.store`` knows which kind of store it holds."""

from __future__ import annotations

import ast
import secrets
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import evalkit
from evalkit.store import LocalPath, RemotePath, StoreLocation, open_store

PACKAGE = Path(evalkit.__file__).parent
STORE = PACKAGE / "store"
#: The store's place types: only evalkit.store may name the two kinds or test for them.
KINDS = frozenset({"RemotePath", "LocalPath"})
PLACE_TYPES = KINDS | {"StoreLocation"}
#: What only the store knows of a run folder's layout.
LAYOUT = ("journal.jsonl",)


def _outside_store() -> Iterator[Path]:
    for path in sorted(PACKAGE.rglob("*.py")):
        if STORE not in path.parents:
            yield path


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)
    }


def _violations(source: str, where: str) -> list[str]:
    """Imports or names of a store kind, isinstance checks against store place types, and
    hard-coded run layout, in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module:
            if any(alias.name in KINDS for alias in node.names):
                found.append(f"{where}:{node.lineno} imports a store kind")
            if node.module.split(".")[-1] in {"_remote", "_local"}:
                found.append(f"{where}:{node.lineno} imports {node.module}")
        elif isinstance(node, ast.Name | ast.Attribute) and (
            getattr(node, "id", None) in KINDS or getattr(node, "attr", None) in KINDS
        ):
            found.append(f"{where}:{node.lineno} names {ast.unparse(node)}")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in {"isinstance", "issubclass"}
            and len(node.args) == 2
            and _names(node.args[1]) & PLACE_TYPES
        ):
            found.append(f"{where}:{node.lineno} {ast.unparse(node)}")
        elif isinstance(node, ast.Constant) and node.value in LAYOUT:
            found.append(f"{where}:{node.lineno} hard-codes {node.value!r}")
    return found


def test_no_module_outside_the_store_names_a_kind_of_store_or_tests_for_one() -> None:
    found = [
        finding
        for path in _outside_store()
        for finding in _violations(
            path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE.parent))
        )
    ]
    assert found == []


def test_the_scan_finds_each_kind_of_leak() -> None:
    leaky = """
from ..store import RemotePath, StoreLocation
from ..store._local import helper
from .. import store
def size(folder: StoreLocation) -> int:
    if isinstance(folder, store.RemotePath):
        return 0
    if isinstance(folder, StoreLocation):
        return (folder / "journal.jsonl").stat().st_size
    return 1
"""
    found = _violations(leaky, "x.py")
    assert sorted(f.split(" ", 1)[0] for f in found) == [
        "x.py:2",
        "x.py:3",
        "x.py:6",
        "x.py:6",
        "x.py:8",
        "x.py:9",
    ]
    assert _violations((STORE / "_urls.py").read_text(encoding="utf-8"), "_urls.py")


@pytest.fixture(params=["local", "memory"])
def place(request: pytest.FixtureRequest, tmp_path: Path) -> StoreLocation:
    if request.param == "local":
        return open_store(tmp_path / "store")
    return open_store(f"memory://evalkit-protocol-{secrets.token_hex(4)}/store")


def test_open_store_gives_one_of_the_two_kinds(place: StoreLocation, tmp_path: Path) -> None:
    assert isinstance(place, LocalPath | RemotePath)
    local = open_store(tmp_path)
    assert isinstance(local, LocalPath)
    assert local == tmp_path  # still a pathlib.Path: equal, and every Path method works
    assert open_store(f"file://{tmp_path}") == tmp_path


def test_writes_reads_and_listings_agree(place: StoreLocation) -> None:
    folder = place / "run"
    assert not folder.exists()
    assert list(folder.files()) == []
    assert folder.sizes() == {}
    (folder / "b.json").replace_bytes(b"bb")
    (folder / "a.json").replace_bytes(b"a", durable=False)
    (folder / "a.json").replace_bytes(b"aaa")  # replaced, not appended
    (folder / "sub" / "c.txt").create_bytes(b"c")
    with pytest.raises(FileExistsError):
        (folder / "sub" / "c.txt").create_bytes(b"other")
    assert (folder / "sub" / "c.txt").read_bytes() == b"c"  # the first creator won
    assert [p.name for p in folder.files("*.json")] == ["a.json", "b.json"]
    assert folder.sizes() == {"a.json": 3, "b.json": 2}
    assert folder.is_dir()
    assert (folder / "a.json").is_file()
    wanted = [folder / "a.json", folder / "missing.json", folder / "b.json"]
    got = place.read_many(wanted)
    assert {p.name: data for p, data in got.items()} == {"a.json": b"aaa", "b.json": b"bb"}
    below = sorted(place.files_below(3))
    assert below == [("run", "a.json"), ("run", "b.json"), ("run", "sub", "c.txt")]
    (folder / "b.json").unlink()
    (folder / "b.json").unlink(missing_ok=True)
    assert [p.name for p in folder.files()] == ["a.json"]


def test_parquet_round_trips_through_the_protocol(place: StoreLocation) -> None:
    table = pa.table({"x": [1, 2, 3]}).replace_schema_metadata({"k": "v"})
    target = place / "t" / "table.parquet"
    target.replace_with(lambda sink: pq.write_table(table, sink))
    assert pq.read_table(target.arrow_source()).equals(table)
    with target.open_input() as handle:
        assert pq.read_schema(handle).metadata == {b"k": b"v"}


def test_a_run_without_a_journal_says_so(place: StoreLocation) -> None:
    run = place / "r1"
    assert run.journal_bytes() is None
    assert run.read_journal().conversations.num_rows == 0
    assert place.indexed_manifests() in (None, [])
    cache = run.local_cache()  # a local folder, whatever the kind of store
    assert isinstance(cache, Path)
    assert cache == run if isinstance(run, LocalPath) else cache.is_absolute()
