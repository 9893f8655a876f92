"""The docs' example collector: every fenced block of README.md and docs/**/*.md is a test.

Collecting tests/docs also collects the pages: each page is a test file of its own (its node
id is its path, so under ``--dist loadfile`` pages run in parallel, each page's blocks in order
on one worker), each runnable block a test (``README.md::line-42-python``). See
:mod:`tests.docs.blocks` for what each kind of block means. At the end, the run says how many
examples ran and lists every skipped one with its reason (:mod:`tests.docs.tally`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .blocks import Block, read_blocks
from .runner import Emulator, ExampleFailed, Page
from .tally import KIND

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def pages() -> list[Path]:
    """README.md and every page under docs/ (not its ``_build`` folder)."""
    found = [ROOT / "README.md"]
    for path in sorted(DOCS.rglob("*.md")):
        if not any(part.startswith("_") for part in path.relative_to(DOCS).parts):
            found.append(path)
    return found


class DocsDir(pytest.Dir):
    """tests/docs: its own test modules, then a test file per documentation page."""

    def collect(self) -> Iterator[Any]:
        yield from super().collect()
        for path in pages():
            yield MarkdownPage.from_parent(self, path=path)


def docs_directory(path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """The collector of ``tests/docs`` (``tests/conftest.py``'s ``pytest_collect_directory``:
    a folder's own conftest cannot choose the folder's collector)."""
    if path == Path(__file__).parent:
        return DocsDir.from_parent(parent, path=path)
    return None


_EMULATOR = pytest.StashKey[Emulator]()


def _emulator(config: pytest.Config) -> Emulator:
    if _EMULATOR not in config.stash:
        emulator = Emulator()
        config.stash[_EMULATOR] = emulator
        config.add_cleanup(emulator.close)
    return config.stash[_EMULATOR]


class MarkdownPage(pytest.File):
    """A page: its runnable blocks, in order, sharing one :class:`Page`."""

    def collect(self) -> Iterator[Any]:
        blocks = [b for b in read_blocks(self.path) if b.runs]
        self.page: Page | None = None
        for block in blocks:
            yield Example.from_parent(self, name=f"line-{block.line}-{block.kind}", block=block)

    def world(self) -> Page:
        if self.page is None:
            self.page = Page(self.path, _emulator(self.config))
            self.session.config.add_cleanup(self.page.close)
        return self.page


class Example(pytest.Item):
    """One runnable block of a page."""

    def __init__(self, *, block: Block, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.block = block
        self.user_properties.append((KIND, block.kind))
        if block.lang in ("python", "console", "bash", "sh"):
            self.add_marker(pytest.mark.slow)

    def runtest(self) -> None:
        if self.block.skip is not None:
            raise pytest.skip.Exception(f"docs-test: {self.block.skip}", _use_item_location=True)
        assert isinstance(self.parent, MarkdownPage)
        page = self.parent.world()
        if page.failed is not None:
            pytest.fail(f"not run: {page.failed} failed first", pytrace=False)
        try:
            page.run(self.block)
        except ExampleFailed:
            page.failed = f"the block at line {self.block.line}"
            raise

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, ExampleFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.block.line - 1, f"{self.block.kind} block at line {self.block.line}"
