"""``evalkit view bundle``: the viewer's pages as a static site (plain HTML files linking to
each other with relative hrefs), to publish as a CI artifact or in a bucket and open from
disk. Labels and audio need the live viewer; filters run in the page."""

from __future__ import annotations

import itertools
import logging
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._util import atomic_write_bytes
from ._app import STATIC, nastaliq_font, static_bytes
from ._compare_pages import changes_page, compare_page, flagged_runs, history_page
from ._pages import Pages
from ._paths import file_name
from ._site import Site

__all__ = ["BundleResult", "write_bundle"]

logger = logging.getLogger("evalkit.view")

#: At most this many runs get every pair compared; beyond, consecutive comparable runs only.
ALL_PAIRS_UP_TO = 4


@dataclass(frozen=True)
class BundleResult:
    """What a bundle holds: its folder, index page and counts of pages written."""

    output: Path
    index: Path
    runs: int
    conversations: int
    comparisons: int


def _write(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, text.encode("utf-8") if isinstance(text, str) else text, durable=False)


def _pairs(rows: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    graded = [r for r in rows if r["rubrics"]]
    if len(graded) <= ALL_PAIRS_UP_TO:
        return [
            Pages.orient(a, b)
            for i, a in enumerate(graded)
            for b in graded[i + 1 :]
            if a["rubrics"] == b["rubrics"]
        ]
    return [Pages.orient(a, b) for a, b in itertools.pairwise(graded) if Pages._comparable(a, b)]


def _static(out: Path) -> None:
    for name in STATIC:
        _write(out / "static" / name, static_bytes(name))
    font = nastaliq_font()
    if font is not None:
        _write(out / "static" / "nastaliq.ttf", font.read_bytes())


def _run_pages(pages: Pages, out: Path, run_id: str) -> int:
    folder = out / "runs" / file_name(run_id)
    _write(folder / "index.html", pages.run(run_id))
    data = pages.site.run(run_id)
    for cid in data.conversations.index:
        _write(folder / "c" / f"{file_name(str(cid))}.html", pages.conversation(run_id, str(cid)))
    return len(data.conversations)


def write_bundle(
    store: Any,
    output: str | os.PathLike[str],
    *,
    storage_options: Mapping[str, Any] | None = None,
    runs: Iterable[str] | None = None,
) -> BundleResult:
    """Write the viewer's pages for ``store`` (or only ``runs``) under ``output``."""
    out = Path(output)
    pages = Pages(Site(store, storage_options), live=False)
    catalog = pages.site.catalog()
    wanted = set(runs) if runs is not None else None
    unknown = sorted(wanted - set(catalog["run_id"].astype(str))) if wanted else []
    if unknown:
        raise ValueError(f"runs: no run {', '.join(map(repr, unknown))} in {store}")
    rows = [
        Pages._run_row(r)
        for r in catalog.to_dict("records")
        if wanted is None or r["run_id"] in wanted
    ]
    pairs = _pairs(rows)
    conversations = sum(_run_pages(pages, out, r["run_id"]) for r in rows)
    for a, b in pairs:
        _write(out / "compare" / file_name(a) / f"{file_name(b)}.html", compare_page(pages, a, b))
    for assistant in pages.history_assistants(catalog):
        _write(out / "history" / f"{file_name(assistant)}.html", history_page(pages, assistant))
        for run_id in flagged_runs(pages, assistant):
            _write(out / "changes" / f"{file_name(run_id)}.html", changes_page(pages, run_id))
    _static(out)
    _write(out / "index.html", pages.index(comparisons=pairs))
    logger.info("bundle of %d runs written to %s", len(rows), out)
    return BundleResult(out, out / "index.html", len(rows), conversations, len(pairs))
