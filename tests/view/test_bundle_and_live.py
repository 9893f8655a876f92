"""The static bundle opens from file:// and filters in the page with nothing fetched from
anywhere else; a run still being written refreshes in the live viewer; the token path when
binding beyond loopback; bad requests get clear pages."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from evalkit.cli import app
from evalkit.store import ConversationRecord, RunWriter, TurnRecord, identity_hash
from evalkit.view import ViewerOptions, ViewerServer

from .browser import launched, screenshot, watched_page


@pytest.mark.slow
def test_the_bundle_opens_from_disk_and_filters_with_nothing_fetched_elsewhere(
    store: Path, tmp_path: Path, chromium: str
) -> None:
    out = tmp_path / "site"
    result = CliRunner().invoke(app, ["view", "bundle", "--store", str(store), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "2 run(s), 36 transcript(s), 1 comparison(s)" in result.output
    assert (out / "static" / "nastaliq.ttf").is_file()  # Urdu renders in Nastaliq anywhere
    for page in out.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert "http://" not in text.replace("http://www.w3.org", "")
        assert "https://" not in text
    with launched(chromium) as browser:
        w = watched_page(browser, out.resolve().as_uri())
        page = w.page
        page.goto((out / "index.html").resolve().as_uri())
        assert "static copy" in page.inner_text("header")
        page.locator("a.vw-run-link", has_text="prod").click()
        rows = page.locator("tr.vw-conv")
        assert rows.count() == 18
        page.select_option("select[name=persona]", "do-not-call")
        page.click("form.vw-filters button[type=submit]")
        assert page.locator("tr.vw-conv:not(.vw-hidden)").count() == 3
        assert "3 of 18 conversations" in page.inner_text("#vw-count")
        page.select_option("select[name=persona]", "")
        page.fill("input[name=text]", "FATIMA")
        page.click("form.vw-filters button[type=submit]")
        assert page.locator("tr.vw-conv:not(.vw-hidden)").count() == 6
        page.locator("tr.vw-conv:not(.vw-hidden) a.vw-conv-link").first.click()
        assert page.locator("form.vw-label-form").count() == 0  # labels need the live viewer
        assert page.locator("audio").count() == 0
        assert page.locator('.ek-text[lang="ur"]').count() >= 1
        page.goto((out / "index.html").resolve().as_uri())
        page.locator("a", has_text="→").first.click()
        assert "Verdict:" in page.inner_text(".evalkit-verdict")
        screenshot(page, "viewer-bundle-compare.png")
        assert any(u.endswith("static/evalkit.css") for u in w.requests)
        assert w.outside == [], w.outside


def _record(cid: str, i: int) -> tuple[ConversationRecord, list[TurnRecord]]:
    now = datetime(2026, 11, 1, tzinfo=UTC)
    turns = [TurnRecord(1, "agent", f"Salam {cid}"), TurnRecord(2, "caller", "ji")]
    record = ConversationRecord(
        run_id="live", conversation_id=cid, cell_id=f"cell{i}", repeat=0,
        persona_label="nice", variables=json.dumps({"name": "x"}), status="done",
        n_turns=len(turns), started_at=now, finished_at=now, target="draft",
    )  # fmt: skip
    return record, turns


@pytest.mark.slow
def test_a_run_still_being_written_refreshes_in_the_page(tmp_path: Path, chromium: str) -> None:
    store = tmp_path / "runs"
    manifest = {"identity": identity_hash({"t": 1}), "assistant_id": "a"}
    writer = RunWriter.create(store, "live", manifest, fsync=False)
    try:
        writer.append(*_record("c0", 0))
        options = ViewerOptions(store=store, port=0, refresh_s=1.0)
        with ViewerServer(options) as viewer, launched(chromium) as browser:
            w = watched_page(browser, viewer.base)
            page = w.page
            page.goto(viewer.url)
            assert "running" in page.inner_text("table.vw-runs")
            page.goto(viewer.base + "runs/live/index.html")
            page.wait_for_function(
                "() => document.querySelectorAll('tr.vw-conv').length === 1", timeout=15_000
            )
            assert "refreshes every 1 s" in page.inner_text("header")
            writer.append(*_record("c1", 1))
            writer.append(*_record("c2", 2))
            page.wait_for_function(
                "() => document.querySelectorAll('tr.vw-conv').length === 3", timeout=15_000
            )
            writer.finalize(close=False)
            page.wait_for_function("() => !document.body.dataset.refresh", timeout=15_000)
            page.goto(viewer.base + "runs/live/c/c0.html")
            assert page.locator("body[data-refresh]").count() == 0  # a transcript never moves
            assert w.outside == [], w.outside
    finally:
        writer.close()


def test_beyond_loopback_pages_need_the_token_and_labels_need_the_form_token(
    store: Path,
) -> None:
    anywhere = ViewerOptions(store=store, host="0.0.0.0", port=0).resolved()
    assert anywhere.token  # bound beyond loopback: a token is made up
    assert ViewerOptions(store=store, port=0).resolved().token is None
    options = ViewerOptions(store=store, port=0, token="a-long-random-token")
    with ViewerServer(options) as viewer:
        root = f"http://127.0.0.1:{viewer.port}"
        assert viewer.url == f"{root}/a-long-random-token/index.html"
        assert httpx.get(f"{root}/index.html").status_code == 403
        assert httpx.get(f"{root}/a-long-random-tokex/index.html").status_code == 403
        page = httpx.get(viewer.url)
        assert page.status_code == 200
        assert "prod" in page.text
        conv = httpx.get(viewer.base + "runs/prod/index.html").text
        cid = conv.split('href="c/', 1)[1].split(".html", 1)[0]
        forged = httpx.post(
            viewer.base + f"runs/prod/c/{cid}/label",
            data={"form_token": "guess", "rule_id": "urdu-script", "label": "fail"},
        )
        assert forged.status_code == 403
        # DNS rebinding: a page reached under a foreign host name is refused
        rebound = httpx.get(viewer.url, headers={"host": "attacker.example"})
        assert rebound.status_code == 400
    assert not (store / "prod" / "labels").exists()


def test_bad_requests_get_clear_pages(store: Path) -> None:
    with ViewerServer(ViewerOptions(store=store, port=0)) as viewer:
        base = viewer.base
        missing = httpx.get(base + "runs/nope/index.html")
        assert missing.status_code == 404
        assert "no run &#39;nope&#39;" in missing.text
        assert httpx.get(base + "runs/prod/c/ghost.html").status_code == 404
        assert httpx.get(base + "runs/prod/index.html?offset=x").status_code == 400
        page = httpx.get(base + "runs/prod/index.html").text
        cid = page.split('href="c/', 1)[1].split(".html", 1)[0]
        token = (
            httpx.get(base + f"runs/prod/c/{cid}.html")
            .text.split('name="form_token" value="', 1)[1]
            .split('"', 1)[0]
        )
        refused = httpx.post(
            base + f"runs/prod/c/{cid}/label",
            data={"form_token": token, "rule_id": "urdu-script", "label": "maybe"},
        )
        assert refused.status_code == 400
        assert "label must be one of pass, fail, na" in refused.text
        hostile = "<script>alert(1)</script> \u202e"
        stored = httpx.post(
            base + f"runs/prod/c/{cid}/label",
            data={"form_token": token, "rule_id": "urdu-script", "label": "na", "note": hostile,
                  "labelled_by": "<b>me</b>"},
            follow_redirects=True,
        )  # fmt: skip
        assert stored.status_code == 200
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in stored.text
        assert "<script>alert" not in stored.text
        assert "&lt;b&gt;me&lt;/b&gt;" in stored.text
        too_big = httpx.post(base + f"runs/prod/c/{cid}/label", content=b"x" * 20_000)
        assert too_big.status_code == 413
        no_service = httpx.get(base + f"runs/prod/audio/{cid}/1.mp3", timeout=30)
        assert no_service.status_code in (502, 503)
        start = time.monotonic()
        assert httpx.get(base + "static/../../etc/passwd").status_code == 404
        assert time.monotonic() - start < 10


def test_the_comparison_shows_the_judges_measured_accuracy_beside_judged_rules(
    store: Path,
) -> None:
    from evalkit.store import Label, load_run
    from evalkit.view._compare_pages import compare_page
    from evalkit.view._pages import Pages
    from evalkit.view._site import Site

    for run_id in ("prod", "draft"):
        run = load_run(run_id, store)
        grades = run.grades().set_index(["conversation_id", "rule_id"])["verdict"]
        cid = str(run.conversations["conversation_id"].iloc[0])
        judged = grades.loc[(cid, "asks-confirmation")]
        run.add_labels([Label(cid, "asks-confirmation", judged, labelled_by="t")])
    page = compare_page(Pages(Site(store), live=False), "prod", "draft")
    assert "judge accuracy on hand labels" in page
    assert "1.00 [0.34, 1.00] on 2 labels" in page  # Wilson interval of 2 of 2
    assert "judged; no labels yet" in page  # the other judged rules
    assert "check (deterministic)" in page
