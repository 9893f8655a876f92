"""The runs page names each run's assistant (the service's name, from the run's config
snapshot, with its id beside it) and shows agent latency p50 / p95 and, when the run had a
price table, its cost beside the score; nothing else of the snapshot reaches the page."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from evalkit.compare import latency_quantiles
from evalkit.store import load_run
from evalkit.store._manifest import MANIFEST_NAME, read_manifest, write_manifest
from evalkit.view._pages import Pages
from evalkit.view._site import Site

NAME = "Clinic appointment reminder"  # what the demo builds its assistant as


def _edit(store: Path, run_id: str, change: Any) -> None:
    path = store / run_id / MANIFEST_NAME
    manifest = read_manifest(path)
    change(manifest)
    write_manifest(path, manifest)


def _cells(page: str, run_id: str) -> list[str]:
    """The row's cells as text, tags dropped, spaces collapsed."""
    row = re.search(rf'<tr data-run="{run_id}">(.*?)</tr>', page, flags=re.S)
    assert row is not None, run_id
    cells = re.findall(r"<td[^>]*>(.*?)</td>", row.group(1), flags=re.S)
    return [" ".join(re.sub(r"<[^>]+>", " ", c).split()) for c in cells]


def _headers(page: str) -> list[str]:
    head = re.search(r'<table class="ek-table vw-runs">\s*<thead>(.*?)</thead>', page, re.S)
    assert head is not None
    return re.findall(r"<th>(.*?)</th>", head.group(1))


def test_each_run_names_its_assistant_with_the_id_beside_it(store: Path) -> None:
    page = Pages(Site(store), live=False).index()
    column = _headers(page).index("assistant")
    for run_id in ("prod", "draft"):
        assistant = str(load_run(run_id, store=store).manifest["assistant_id"])
        assert _cells(page, run_id)[column] == f"{NAME} {assistant}"
        assert f'<code class="vw-id" title="assistant id {assistant}">{assistant}</code>' in page
    (history,) = re.findall(r'<a href="history/[^"]+">([^<]+)</a>', page)
    assert history.startswith(f"{NAME} (")


def test_agent_latency_sits_beside_the_score(store: Path) -> None:
    page = Pages(Site(store), live=False).index()
    headers = _headers(page)
    score = headers.index("mean score")
    assert headers[score + 1] == "agent latency p50 / p95"
    for run_id in ("prod", "draft"):
        q = latency_quantiles(load_run(run_id, store=store))
        assert _cells(page, run_id)[score + 1] == f"{q['p50']:.3g} / {q['p95']:.3g} s"


def test_cost_shows_only_for_runs_that_had_a_price_table(store: Path) -> None:
    assert "cost" not in _headers(Pages(Site(store), live=False).index())
    priced = {"currency": "PKR", "simulation": 1234.5, "judge": 0.0, "total": 1234.5}
    _edit(store, "draft", lambda m: m.update(cost=priced))
    page = Pages(Site(store), live=False).index()
    headers = _headers(page)
    column = headers.index("cost")
    assert headers[column - 1] == "agent latency p50 / p95"
    assert _cells(page, "draft")[column] == "PKR 1,234.50"
    assert _cells(page, "prod")[column] == "–"


def test_only_the_name_of_the_snapshot_reaches_the_page(store: Path) -> None:
    secret = "sk-live-do-not-show-0123456789"

    def plant(manifest: dict[str, Any]) -> None:
        manifest["config_snapshot"]["config"]["agent"]["instructions"] = f"token {secret}"

    _edit(store, "draft", plant)
    page = Pages(Site(store), live=True).index()
    assert secret not in page
    assert NAME in page


def test_a_run_without_a_snapshot_or_grades_shows_dashes_not_nan(store: Path) -> None:
    def strip(manifest: dict[str, Any]) -> None:
        manifest.pop("config_snapshot")
        manifest.pop("grades")

    _edit(store, "draft", strip)
    page = Pages(Site(store), live=False).index()
    headers = _headers(page)
    cells = _cells(page, "draft")
    assistant = str(load_run("draft", store=store).manifest["assistant_id"])
    assert cells[headers.index("assistant")] == assistant
    assert cells[headers.index("scorecard")] == "–"
    assert "nan" not in " ".join(cells).lower()


def test_latency_is_read_once_per_finalized_run(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []

    def counted(run: Any) -> dict[str, float]:
        calls.append(run.run_id)
        return latency_quantiles(run)

    monkeypatch.setattr("evalkit.compare.latency_quantiles", counted)
    site = Site(store)
    pages = Pages(site, live=False)
    pages.index()
    pages.index()
    assert sorted(calls) == ["draft", "prod"]
    _edit(store, "draft", lambda m: m.update(finalized_at="2027-01-01T00:00:00+00:00"))
    pages.index()  # finalized again (a resumed run): read again
    assert sorted(calls) == ["draft", "draft", "prod"]
