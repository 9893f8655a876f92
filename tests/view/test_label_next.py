"""The viewer's "label next" mode in a real browser: the run's label queue one pair at a time,
one keystroke per verdict, the evidence turn highlighted, progress "i of n", each label stored
with its inclusion probability."""

from __future__ import annotations

import html
import re
from pathlib import Path

import httpx
import pytest

from evalkit.grading import LabelOptions, label_queue, planned_n
from evalkit.store import Label, load_run
from evalkit.view import ViewerOptions, ViewerServer

from .browser import launched, screenshot, watched_page

pytestmark = pytest.mark.slow


def test_label_next_walks_the_queue_one_keystroke_per_verdict(store: Path, chromium: str) -> None:
    with ViewerServer(ViewerOptions(store=store, port=0)) as viewer, launched(chromium) as browser:
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


def test_the_queue_without_n_is_as_long_as_the_plan_says_and_its_links_keep_it(
    store: Path,
) -> None:
    """No fixed 50: the walk is as long as planned_n says a ±10-point corrected interval still
    needs, and each link carries that n, so labels added on the way do not redraw the queue."""
    needed, plan = planned_n(load_run(store / "prod"))
    assert not plan.empty
    assert needed > 0
    with ViewerServer(ViewerOptions(store=store, port=0)) as viewer:
        page = httpx.get(viewer.base + "runs/prod/queue.html", timeout=60).text
        run_page = httpx.get(viewer.base + "runs/prod/index.html", timeout=60).text
    assert re.search(rf'class="vw-progress"><b>1 of {needed}</b>', page), page[:2000]
    links = set(
        re.findall(
            r"queue\.html\?n=(\d+)&amp;seed=0&amp;allocation=proportional&amp;known=0&amp;i=1", page
        )
    )
    assert links == {str(needed)}
    assert "as many as a ±10-point judge-corrected interval still needs" in run_page
    assert 'href="queue.html?allocation=neyman"' in run_page


def _pair(page: str) -> tuple[str, str]:
    cid = re.search(r'conversation <a href="c/[^"]+">([^<]+)</a>', page)
    rule = re.search(r'name="rule_id" value="([^"]+)"', page)
    assert cid, page[:2000]
    assert rule, page[:2000]
    return cid.group(1), rule.group(1)


def test_a_neyman_walk_keeps_its_draw_while_labels_are_added(store: Path) -> None:
    """The walk is drawn with the labels stored when it began (``known``): labelling its
    first pair neither redraws it nor changes the second pair's inclusion probability."""
    run = load_run(store / "prod")
    first = label_queue(run.grades(), options=LabelOptions(n=4, seed=1))
    run.add_labels(
        [Label(r.conversation_id, r.rule_id, "fail", inclusion_probability=r.inclusion_probability)
         for r in first.itertuples()]
    )  # fmt: skip
    known = len(load_run(store / "prod").labels(latest=False))
    expected = label_queue(
        run.grades(), load_run(store / "prod").labels(),
        options=LabelOptions(n=6, seed=2, allocation="neyman"),
    )  # fmt: skip
    query = "queue.html?n=6&seed=2&allocation=neyman"
    with ViewerServer(ViewerOptions(store=store, port=0)) as viewer, httpx.Client() as http:
        base = viewer.base + "runs/prod/"
        page = http.get(base + query + "&i=0", timeout=60).text
        assert "neyman allocation" in page
        assert _pair(page) == tuple(expected.iloc[0][["conversation_id", "rule_id"]])
        token = page.split('name="form_token" value="', 1)[1].split('"', 1)[0]
        following = html.unescape(page.split('name="next" value="', 1)[1].split('"', 1)[0])
        assert f"known={known}" in following
        cid, rule = _pair(page)
        form = {"form_token": token, "rule_id": rule, "label": "pass", "next": following,
                "inclusion_probability": str(expected.iloc[0]["inclusion_probability"])}  # fmt: skip
        posted = http.post(base + f"c/{cid}/label", data=form, timeout=60, follow_redirects=True)
        assert posted.status_code == 200, posted.text[:500]  # followed to pair 2 of the walk
        assert _pair(posted.text) == tuple(expected.iloc[1][["conversation_id", "rule_id"]])
    stored = load_run(store / "prod").labels()
    assert len(stored) == len(first) + 1
    assert not set(zip(first["conversation_id"], first["rule_id"], strict=True)) & set(
        zip(expected["conversation_id"], expected["rule_id"], strict=True)
    )  # pairs labelled before the walk are not drawn again
