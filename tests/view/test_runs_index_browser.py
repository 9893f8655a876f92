"""The runs page in a real browser (Playwright driving Debian's chromium): each run's assistant
reads as its name with the id under it, and agent latency and cost stand beside the score,
inside the page's width."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.compare import latency_quantiles
from evalkit.store import load_run
from evalkit.store._manifest import MANIFEST_NAME, read_manifest, write_manifest
from evalkit.view import ViewerOptions, ViewerServer

from .browser import launched, watched_page

pytestmark = pytest.mark.slow


def test_the_runs_page_names_assistants_and_shows_latency_and_cost(
    store: Path, chromium: str
) -> None:
    path = store / "draft" / MANIFEST_NAME
    manifest = read_manifest(path)
    manifest["cost"] = {"currency": "USD", "simulation": 0.42, "judge": 0.0, "total": 0.42}
    write_manifest(path, manifest)
    with ViewerServer(ViewerOptions(store=store, port=0)) as viewer, launched(chromium) as browser:
        w = watched_page(browser, viewer.base)
        page = w.page
        page.goto(viewer.url)
        headers = page.locator("table.vw-runs thead th").all_inner_texts()
        score = headers.index("mean score")
        assert headers[score + 1 : score + 3] == ["agent latency p50 / p95", "cost"]
        for run_id in ("prod", "draft"):
            row = page.locator(f'table.vw-runs tr[data-run="{run_id}"]')
            cells = row.locator("td")
            assistant = str(load_run(run_id, store=store).manifest["assistant_id"])
            name = cells.nth(headers.index("assistant")).locator(".vw-assistant-name")
            ident = cells.nth(headers.index("assistant")).locator("code.vw-id")
            assert name.inner_text() == "Clinic appointment reminder"
            assert ident.inner_text() == assistant
            assert ident.get_attribute("title") == f"assistant id {assistant}"
            name_box, id_box = name.bounding_box(), ident.bounding_box()
            assert name_box is not None
            assert id_box is not None
            assert id_box["y"] >= name_box["y"] + name_box["height"] - 1  # the id under the name
            q = latency_quantiles(load_run(run_id, store=store))
            latency = cells.nth(score + 1)
            assert latency.inner_text() == f"{q['p50']:.3g} / {q['p95']:.3g} s"
            assert latency.is_visible()
        cost = page.locator('tr[data-run="draft"] td.vw-cost')
        assert cost.inner_text() == "USD 0.42"
        assert page.locator('tr[data-run="prod"] td.vw-cost').inner_text() == "–"
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 1280, f"the runs table is {width} px wide in a 1280 px window"
        assert w.outside == [], w.outside
