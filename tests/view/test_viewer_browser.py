"""The viewer in a real browser (Playwright driving Debian's chromium) over the demo's store:
it lists the runs, filters, opens a transcript (Urdu right to left in Nastaliq), keeps a label
across a server restart, plays a turn (real E11 audio), compares two runs, and no request
leaves the viewer's address. Screenshots go to ``test-artifacts/``."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit import Client
from evalkit.grading import judge_agreement
from evalkit.store import load_run
from evalkit.view import ViewerOptions, ViewerServer

from .browser import launched, screenshot, watched_page

pytestmark = pytest.mark.slow


def _viewer(store: Path, client: Client | None = None) -> ViewerServer:
    return ViewerServer(ViewerOptions(store=store, port=0, client=client))


def test_lists_runs_filters_and_opens_a_right_to_left_transcript(
    store: Path, chromium: str
) -> None:
    with _viewer(store) as viewer, launched(chromium) as browser:
        w = watched_page(browser, viewer.base)
        page = w.page
        page.goto(viewer.url)
        runs = page.locator("table.vw-runs tbody tr")
        assert sorted(runs.locator("a.vw-run-link").all_inner_texts()) == ["draft", "prod"]
        screenshot(page, "viewer-index.png")
        page.locator("a.vw-run-link", has_text="prod").click()
        assert page.locator("tr.vw-conv").count() == 18
        page.select_option("select[name=persona]", "hostile")
        page.click("form.vw-filters button[type=submit]")
        personas = page.locator("tr.vw-conv td:nth-child(2)").all_inner_texts()
        assert personas == ["hostile"] * 3
        assert "3 of 18 conversations" in page.inner_text("#vw-count")
        page.select_option("select[name=persona]", "")
        page.select_option("select[name=rule]", "urdu-script")
        page.select_option("select[name=verdict]", "pass")
        page.fill("input[name=text]", "bilal")
        page.click("form.vw-filters button[type=submit]")
        assert 0 < page.locator("tr.vw-conv").count() < 18
        assert all("Bilal" in t for t in page.locator("tr.vw-conv").all_inner_texts())
        page.locator("a.vw-conv-link").first.click()
        assert page.locator("table.vw-rules tbody tr").count() >= 10
        urdu = page.locator('.ek-text[lang="ur"]').first
        assert urdu.evaluate("e => getComputedStyle(e).direction") == "rtl"
        assert "Nastaliq" in urdu.evaluate("e => getComputedStyle(e).fontFamily")
        assert page.locator("audio.vw-play").count() >= 2  # one per agent turn
        screenshot(page, "viewer-transcript.png", full_page=True)
        assert w.outside == [], w.outside


def test_a_label_marked_in_the_page_survives_a_restart_and_changes_agreement(
    store: Path, chromium: str
) -> None:
    with launched(chromium) as browser:
        with _viewer(store) as viewer:
            w = watched_page(browser, viewer.base)
            page = w.page
            page.goto(viewer.base + "runs/draft/index.html")
            page.locator("a.vw-conv-link").first.click()
            transcript = page.url
            row = page.locator("tr[data-rule='asks-confirmation']")
            judged = row.locator(".ek-chip").first.inner_text()
            wrong = next(v for v in ("pass", "fail", "na") if v != judged)
            row.locator("select[name=label]").select_option(wrong)
            row.locator("input[name=note]").fill("the agent did ask, in Roman Urdu")
            row.locator("input[name=labelled_by]").fill("analyst-1")
            row.locator("button[type=submit]").click()
            page.wait_for_load_state()
            assert "judge wrong" in page.locator("tr[data-rule='asks-confirmation']").inner_text()
            assert w.outside == [], w.outside
        with _viewer(store) as again:  # a new server process state, same store
            w = watched_page(browser, again.base)
            page = w.page
            page.goto(again.base + transcript.split("/", 3)[3])
            cell = page.locator("tr[data-rule='asks-confirmation'] .vw-labelled")
            assert "judge wrong" in cell.inner_text()
            assert "analyst-1" in cell.inner_text()
            assert "the agent did ask" in cell.inner_text()
            page.goto(again.base + "runs/draft/index.html")
            assert "Judge agreement with hand labels" in page.content()
            screenshot(page, "viewer-run-labelled.png")
            assert w.outside == [], w.outside
    labels = load_run("draft", store).labels()
    assert labels[["rule_id", "label", "labelled_by"]].values.tolist() == [
        ["asks-confirmation", wrong, "analyst-1"]
    ]
    agreement = judge_agreement(load_run("draft", store)).set_index("rule_id")
    assert agreement.loc["asks-confirmation", "n"] == 1
    assert agreement.loc["asks-confirmation", "agree"] == 0


def test_a_played_turn_loads_real_audio_from_e11_once(
    store: Path, client: Client, chromium: str
) -> None:
    with _viewer(store, client) as viewer, launched(chromium) as browser:
        w = watched_page(browser, viewer.base)
        page = w.page
        page.goto(viewer.base + "runs/prod/index.html")
        page.locator("a.vw-conv-link").first.click()
        audio = page.locator("audio.vw-play").first
        with page.expect_response(lambda r: "/audio/" in r.url) as info:
            audio.evaluate("a => a.play().catch(() => null)")
        response = info.value
        assert response.status in (200, 206)
        assert response.headers["content-type"] == "audio/mpeg"
        page.wait_for_function(
            "() => document.querySelector('audio.vw-play').readyState >= 2", timeout=20_000
        )
        duration = audio.evaluate("a => a.duration")
        assert duration > 0.3, duration
        assert w.outside == [], w.outside
    cached = list((store / ".audio").glob("*.mp3"))
    assert len(cached) == 1  # synthesized once, kept in the store
    assert cached[0].stat().st_size > 1000


def test_compares_two_runs_with_the_reports_card_and_forest_plot(
    store: Path, chromium: str
) -> None:
    with _viewer(store) as viewer, launched(chromium) as browser:
        w = watched_page(browser, viewer.base)
        page = w.page
        page.goto(viewer.url)
        page.select_option("select[name=baseline]", "prod")
        page.select_option("select[name=candidate]", "draft")
        page.click("form.vw-compare button[type=submit]")
        assert page.url.endswith("compare/prod/draft.html")
        card = page.locator(".evalkit-verdict")
        assert "Verdict:" in card.inner_text()
        assert "regressed" in card.inner_text() or "insufficient" in card.inner_text()
        plot = page.locator("img.ek-plot").first
        assert plot.evaluate("e => e.naturalWidth") > 300
        assert page.locator(".ek-pair").count() >= 1  # transcripts side by side
        screenshot(page, "viewer-compare.png")
        page.goto(viewer.url)
        page.locator("a", has_text="graded runs").click()
        every = page.locator("img.ek-plot[alt='Score by run, with intervals']")
        assert every.evaluate("e => e.naturalWidth") > 300  # one line per series
        sections = page.locator("section.vw-series")
        assert sections.count() == 2  # prod and draft: two series, never one line
        picker = page.locator("nav.vw-series-picker a")
        assert picker.count() == 2
        picker.last.click()
        assert page.url.endswith("#series-" + sections.last.get_attribute("id").split("-", 1)[1])
        assert w.outside == [], w.outside
