"""Issue 33, item 11: the runs index offers each pair the right way round: the run of target
``prod`` is the baseline against any other target, else the older run; the compare form starts
on the newest such pair."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from evalkit.store._manifest import MANIFEST_NAME, read_manifest, write_manifest
from evalkit.view._pages import Pages
from evalkit.view._site import Site


def _restamp(store: Path, run_id: str, created_at: str, *, copy_to: str | None = None) -> None:
    folder = store / run_id
    if copy_to is not None:
        shutil.copytree(folder, store / copy_to)
        folder = store / copy_to
    manifest = read_manifest(folder / MANIFEST_NAME)
    manifest["created_at"] = created_at
    if copy_to is not None:
        manifest["run_id"] = copy_to
    write_manifest(folder / MANIFEST_NAME, manifest)


def _selected(page: str, name: str) -> str:
    select = re.search(rf'<select name="{name}">(.*?)</select>', page, flags=re.S)
    assert select is not None
    (value,) = re.findall(r'<option value="([^"]+)" selected>', select.group(1))
    return value


def test_prod_is_the_baseline_even_when_the_draft_ran_first(store: Path) -> None:
    _restamp(store, "draft", "2026-01-01T09:00:00+00:00")
    _restamp(store, "prod", "2026-01-01T10:00:00+00:00")
    page = Pages(Site(store), live=True).index()
    assert re.findall(r'class="vw-compare-link" href="([^"]+)"', page) == [
        "compare/prod/draft.html"
    ]
    assert "compare prod → draft" in page
    assert (_selected(page, "baseline"), _selected(page, "candidate")) == ("prod", "draft")


def test_between_other_targets_the_older_run_is_the_baseline(store: Path) -> None:
    _restamp(store, "draft", "2026-01-01T09:00:00+00:00")
    _restamp(store, "prod", "2026-01-01T10:00:00+00:00")
    _restamp(store, "draft", "2026-01-01T08:00:00+00:00", copy_to="draft-0")
    _restamp(store, "draft", "2026-01-01T11:00:00+00:00", copy_to="draft-2")
    page = Pages(Site(store), live=True).index()
    links = re.findall(r'class="vw-compare-link" href="([^"]+)"', page)
    assert links == [
        "compare/draft-0/draft.html",
        "compare/prod/draft.html",
        "compare/prod/draft-2.html",
    ]
    assert (_selected(page, "baseline"), _selected(page, "candidate")) == ("prod", "draft-2")


def test_orient_pairs_prod_first_else_older_first() -> None:
    def row(run_id: str, target: str) -> dict[str, str]:
        return {"run_id": run_id, "target": target}

    assert Pages.orient(row("a", "draft"), row("b", "prod")) == ("b", "a")
    assert Pages.orient(row("a", "prod"), row("b", "draft")) == ("a", "b")
    assert Pages.orient(row("a", "prod"), row("b", "prod")) == ("a", "b")
    assert Pages.orient(row("a", "draft"), row("b", "v1")) == ("a", "b")
