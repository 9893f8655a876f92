"""MkDocs hooks (``hooks:`` in mkdocs.yml): the pages and pictures made from the code when the
site is built, and the checks that keep the site offline and outside the repository.

- ``reference/cli.md`` is generated from the typer app (:mod:`cli_reference`);
- a line ``<!-- generated: NAME -->`` in a page becomes the table :data:`generated.TABLES`
  makes (exit codes, the emulator's admin API, the file formats' keys);
- the shipped notebooks are executed on the embedded emulator and the screenshots of the report
  and the viewer are taken (:mod:`assets`), all in a temporary folder; with
  ``EVALKIT_DOCS_QUICK=1`` (for ``mkdocs serve`` while writing) the notebooks are shown
  unexecuted and the screenshots are placeholders;
- a site directory inside the repository is moved to a temporary folder;
- a built page that would load anything from another address fails the build.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

sys.path.insert(0, str(Path(__file__).parent))

import assets
import cli_reference
import generated

logger = logging.getLogger("mkdocs.hooks.evalkit")

REPO = Path(__file__).resolve().parents[2]
_MARKER = re.compile(r"^<!-- generated: ([a-z0-9-]+) -->$", re.MULTILINE)
# a tag that makes the browser fetch: script/img/iframe/source src, stylesheet or icon links
_FETCHES = re.compile(
    r"<(?:script|img|iframe|source|audio|video|embed)\b[^>]*\bsrc=[\"'](?:https?:)?//"
    r"|<link\b[^>]*\bhref=[\"'](?:https?:)?//",
    re.IGNORECASE,
)

_state: dict[str, Any] = {}


def _inside_repo(path: Path) -> bool:
    return path.resolve().is_relative_to(REPO)


def on_config(config: Any) -> Any:
    site = Path(config.site_dir)
    if _inside_repo(site):
        moved = Path(tempfile.mkdtemp(prefix="evalkit-site-"))
        logger.info("the site goes outside the repository: %s (pass --site-dir to choose)", moved)
        config.site_dir = str(moved)
    return config


def _work_dir() -> Path:
    if "work" not in _state:
        _state["work"] = Path(tempfile.mkdtemp(prefix="evalkit-docs-build-"))
    return Path(_state["work"])


@event_priority(100)  # before mkdocs-jupyter wraps the notebooks
def on_files(files: Files, config: Any) -> Files:
    files.append(File.generated(config, "reference/cli.md", content=cli_reference.page()))
    quick = os.environ.get("EVALKIT_DOCS_QUICK", "").strip() not in ("", "0")
    root = _work_dir() / "site"
    for src_uri in assets.make(root, quick=quick):
        # a file of its own folder (not File.generated: mkdocs-jupyter's wrapper finds a
        # notebook's path from its src_dir)
        files.append(File(src_uri, str(root), config.site_dir, config.use_directory_urls))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    def expand(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in generated.TABLES:
            raise PluginError(
                f"{page.file.src_uri}: unknown generated table {name!r}; known: "
                + ", ".join(sorted(generated.TABLES))
            )
        return generated.TABLES[name]()

    return _MARKER.sub(expand, markdown)


def on_post_page(output: str, page: Any, config: Any) -> str:
    found = _FETCHES.search(output)
    if found:
        raise PluginError(
            f"{page.file.src_uri}: the page would load from another address: {found.group(0)}"
        )
    return output


def on_shutdown() -> None:
    work = _state.pop("work", None)
    if work is not None:
        shutil.rmtree(work, ignore_errors=True)
