"""The viewer's "label next" mode in a real browser: the run's label queue one pair at a time,
one keystroke per verdict, the evidence turn highlighted, progress "i of n", each label stored
with its inclusion probability."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.store import load_run
from evalkit.view import ViewerOptions, ViewerServer

from .browser import launched, screenshot, watched_page

pytestmark = pytest.mark.slow


def test_label_next_walks_the_queue_one_keystroke_per_verdict(store: Path) -> None:
    with ViewerServer(ViewerOptions(store=store, port=0)) as viewer, launched() as browser:
        w = watched_page(browser, viewer.base)
        page = w.page
        page.goto(viewer.base + "runs/prod/index.html")
        page.locator("a.vw-label-next").click()
        assert "of" in page.inner_text("p.vw-progress")
        page.goto(viewer.base + "runs/prod/queue.html?n=4&seed=3")
        assert page.inner_text("p.vw-progress").startswith("1 of 4")
        first = page.locator("p.vw-progress a").inner_text()
        if page.locator("a[href*='#q-turn-']").count():
            assert page.locator(".ek-turn.ek-evidence").count() >= 1  # the cited turn
        screenshot(page, "viewer-label-next.png", full_page=True)
        page.keyboard.press("f")
        page.wait_for_url("**i=1")
        assert page.inner_text("p.vw-progress").startswith("2 of 4")
        page.keyboard.press("s")  # skip: nothing stored
        page.wait_for_url("**i=2")
        assert page.inner_text("p.vw-progress").startswith("3 of 4")
        page.keyboard.press("p")
        page.wait_for_url("**i=3")
        page.keyboard.press("n")
        page.wait_for_url("**i=4")
        assert "All 4 pairs" in page.inner_text("p.vw-queue-done")
        assert w.outside == [], w.outside
    labels = load_run(store / "prod").labels()
    assert len(labels) == 3
    assert sorted(labels["label"]) == ["fail", "na", "pass"]
    assert labels["inclusion_probability"].notna().all()
    assert first in set(labels["conversation_id"])
