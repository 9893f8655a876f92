"""The viewer over a store in S3 (moto's server on loopback, through s3fs): it lists the runs,
opens a transcript, stores a label in the run at the URL, plays a turn whose audio is cached
in the bucket, and compares two runs; no request leaves the viewer's address."""

from __future__ import annotations

import pytest
import s3fs

from evalkit import Client
from evalkit.emulator import EmulatorServer
from evalkit.grading import judge_agreement
from evalkit.store import load_run
from evalkit.view import ViewerOptions, ViewerServer

from ..runner_fixtures import emulator_fixture
from ..view.browser import launched, screenshot, watched_page
from .nights import run_nights

emu = emulator_fixture(time_scale=0.01, seed=21)


@pytest.mark.slow
def test_the_viewer_works_on_an_s3_store(emu: EmulatorServer, bucket: str, chromium: str) -> None:
    run_nights(emu, bucket, 2)
    with (
        Client(emu.base_url, emu.api_key) as client,
        ViewerServer(ViewerOptions(store=bucket, port=0, client=client)) as viewer,
        launched(chromium) as browser,
    ):
        w = watched_page(browser, viewer.base)
        page = w.page
        page.goto(viewer.url)
        assert bucket in page.inner_text("header")
        links = page.locator("a.vw-run-link").all_inner_texts()
        assert links == ["night-00", "night-01"]
        page.locator("a.vw-run-link", has_text="night-01").click()
        assert page.locator("tr.vw-conv").count() == 12
        page.locator("a.vw-conv-link").first.click()
        row = page.locator("tr[data-rule='urdu-script']")
        judged = row.locator(".ek-chip").first.inner_text()
        wrong = next(v for v in ("pass", "fail", "na") if v != judged)
        row.locator("select[name=label]").select_option(wrong)
        row.locator("button[type=submit]").click()
        page.wait_for_load_state()
        assert "check wrong" in page.locator("tr[data-rule='urdu-script']").inner_text()
        audio = page.locator("audio.vw-play").first
        audio.evaluate("a => a.play().catch(() => null)")
        page.wait_for_function(
            "() => document.querySelector('audio.vw-play').readyState >= 2", timeout=30_000
        )
        assert audio.evaluate("a => a.duration") > 0.3
        screenshot(page, "viewer-s3-transcript.png")
        page.goto(viewer.base + "compare/night-00/night-01.html")
        assert "Verdict:" in page.inner_text(".evalkit-verdict")
        assert w.outside == [], w.outside
    run = load_run("night-01", bucket)
    assert run.labels()["label"].tolist() == [wrong]
    assert judge_agreement(run).set_index("rule_id").loc["urdu-script", "agree"] == 0
    fs = s3fs.S3FileSystem(use_listings_cache=False)
    prefix = bucket.removeprefix("s3://")
    assert len(fs.ls(f"{prefix}/night-01/labels", refresh=True)) == 1
    assert [p.endswith(".mp3") for p in fs.ls(f"{prefix}/.audio", refresh=True)] == [True]
