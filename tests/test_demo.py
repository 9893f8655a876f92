"""The demo end to end: draft vs prod on the embedded emulator, graded, compared, reported.

One demo run (module fixture) is checked as data (runs, grades, verdict, summary.json), as a
page (the HTML), and as a person sees it (headless Chromium, a screenshot kept under
``test-artifacts/``).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from typer.testing import CliRunner

from evalkit.cli import app
from evalkit.demo import DemoResult, demo_scorecard, run_demo

if TYPE_CHECKING:
    from playwright.sync_api import Page

ARABIC = re.compile(r"[\u0600-\u06FF]")
LATIN = re.compile(r"[A-Za-z]")
ARTIFACTS = Path(os.environ.get("EVALKIT_TEST_ARTIFACTS", "test-artifacts"))


def _arabic_share(texts: list[str]) -> float:
    joined = "".join(texts)
    arabic, latin = len(ARABIC.findall(joined)), len(LATIN.findall(joined))
    return arabic / max(arabic + latin, 1)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoResult:
    return run_demo(tmp_path_factory.mktemp("demo") / "out", repeats=3, seed=7, progress=False)


@pytest.mark.slow
def test_prod_runs_on_a_clone_and_the_draft_lost_its_script(demo: DemoResult) -> None:
    prod, draft = demo.result.baseline, demo.result.candidate
    assert prod.manifest["target"] == "prod"
    assert prod.manifest["on_clone"] is True
    assert prod.manifest["assistant_version"] == 1
    assert draft.manifest["assistant_version"] == 2
    assert len(prod.conversations) == len(draft.conversations) == 54
    assert set(prod.conversations["conversation_id"]) == set(draft.conversations["conversation_id"])
    prod_agent = prod.turns[prod.turns["role"] == "agent"]["text"].tolist()
    draft_agent = draft.turns[draft.turns["role"] == "agent"]["text"].tolist()
    assert _arabic_share(prod_agent) > 0.6
    assert _arabic_share(draft_agent) < 0.2


@pytest.mark.slow
def test_the_draft_regresses_with_the_urdu_script_rule_named(demo: DemoResult) -> None:
    comparison = demo.comparison
    assert comparison.verdict == "regressed"
    summary = comparison.summary.iloc[0]
    assert summary["difference_high"] < 0  # the whole interval is below zero
    rules = comparison.by_rule.set_index("rule_id")["direction"]
    assert rules["urdu-script"] == "regressed"
    assert rules["asks-confirmation"] == "regressed"
    assert rules["polite-close"] == "improved"  # the draft gained a polite close
    assert "urdu-script" in str(comparison)
    # judged rules went through the emulated judge, labelled as such
    grades = demo.result.candidate_grades.frame
    judged = grades[grades["grader"].str.startswith("emulated-judge:")]
    assert set(judged["rule_id"]) >= {"asks-confirmation", "states-date-time"}
    assert (judged["prompt_version"].notna()).all()


@pytest.mark.slow
def test_summary_json_and_tables_are_written(demo: DemoResult) -> None:
    out = demo.report.parent / "output"
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["verdict"] == "regressed"
    assert summary["summary"]["difference_low"] < summary["summary"]["difference_high"] < 0
    assert {"by_rule.parquet", "by_cell.parquet", "grades.parquet"} <= {
        p.name for p in out.iterdir()
    }
    assert demo.notebook.ok, demo.notebook.error


@pytest.mark.slow
def test_report_states_the_verdict_and_loads_nothing_from_elsewhere(demo: DemoResult) -> None:
    page = demo.report.read_text(encoding="utf-8")
    assert "Verdict:" in page
    assert "regressed" in page
    assert re.search(r"95% CI -\d+\.\d to -\d+\.\d", page)
    assert "urdu-script" in page
    assert page.count("<img") >= 4  # plots as PNG
    assert re.search(r'lang="ur"[^>]*dir="rtl"|dir="rtl"[^>]*lang="ur"', page)
    assert "sk_api_" not in page
    assert not re.search(r'(?:src|href)="https?://', page), "a resource from the network"
    assert "emulated" in page  # the judge's grades are labelled as emulated


@pytest.mark.slow
def test_report_in_chromium_shows_plots_verdict_and_right_to_left_urdu(
    demo: DemoResult, chromium: str
) -> None:
    from playwright.sync_api import sync_playwright

    args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
    args += ["--disable-component-update", "--disable-sync", "--no-first-run"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=args)
        page = browser.new_page(viewport={"width": 1100, "height": 1400})
        page.goto(demo.report.resolve().as_uri())
        verdict = page.locator(".evalkit-verdict")
        assert verdict.is_visible()
        assert "regressed" in verdict.inner_text()
        images = page.locator("img")
        assert images.count() >= 4
        widths = [images.nth(i).evaluate("e => e.naturalWidth") for i in range(images.count())]
        assert all(w > 300 for w in widths), widths  # the PNGs decoded
        urdu = page.locator('[lang="ur"]').first
        assert urdu.evaluate("e => getComputedStyle(e).direction") == "rtl"
        box = urdu.bounding_box()
        assert box is not None
        assert box["width"] > 50
        font = urdu.evaluate("e => getComputedStyle(e).fontFamily")
        assert "Nastaliq" in font
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / "demo-report.png"
        page.screenshot(path=str(shot), full_page=False)
        browser.close()
    assert shot.stat().st_size > 10_000


#: Text of the notebook's instructions, which belong in JupyterLab, never in the report.
INSTRUCTIONS = ("Run it as it is", "This notebook", "EVALKIT_API_KEY")
NASTALIQ = "Noto Nastaliq Urdu"


def _platform_fonts(page: Page, selector: str) -> list[set[str]]:
    """For each element matching ``selector``: the fonts Chromium actually drew it with."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
    nodes = cdp.send("DOM.querySelectorAll", {"nodeId": root, "selector": selector})["nodeIds"]
    return [
        {f["familyName"] for f in cdp.send("CSS.getPlatformFontsForNode", {"nodeId": n})["fonts"]}
        for n in nodes
    ]


@pytest.mark.slow
def test_report_reads_like_a_report_in_chromium(demo: DemoResult, chromium: str) -> None:
    """What a reader sees: no instructions, no ``¶``, one title, every rule's title beside its
    id with its Urdu in Nastaliq right to left, and words in every cell of the rule table."""
    from playwright.sync_api import sync_playwright

    from evalkit.grading import Scorecard

    card = Scorecard.load(demo_scorecard())
    args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=args)
        page = browser.new_page(viewport={"width": 1100, "height": 1400})
        page.goto(demo.report.resolve().as_uri())
        text = page.locator("body").inner_text()
        assert "¶" not in text
        for instruction in INSTRUCTIONS:
            assert instruction not in text, f"the notebook's instructions: {instruction!r}"
        assert text.count("Draft vs prod") == 1
        table = page.locator("table:has(th:text-is('baseline pass rate'))")
        assert table.count() == 1
        rows = table.locator("tbody tr")
        assert rows.count() == len(card.rules)
        shown = {}
        for i in range(rows.count()):
            cells = [c.strip() for c in rows.nth(i).locator("td").all_inner_texts()]
            assert all(c and c != "–" for c in cells), f"an empty cell in {cells}"
            shown[cells[0]] = " ".join(cells[1].split())
        assert shown == {rule.rule_id: " ".join(rule.title.split()) for rule in card.rules}
        never = rows.filter(has_text="wrong-person-privacy").inner_text()
        assert "applies to no conversation" in never
        urdu = table.locator("bdi[lang='ur']")
        assert urdu.count() >= 1  # polite-close: (اللہ حافظ / خدا حافظ, in either script)
        for i in range(urdu.count()):
            assert urdu.nth(i).evaluate("e => getComputedStyle(e).direction") == "rtl"
        drawn = _platform_fonts(page, "table bdi[lang='ur']")
        assert drawn
        assert all(fonts == {NASTALIQ} for fonts in drawn), drawn
        forest = page.locator("img[alt^='Per-rule differences']")
        assert forest.count() == 1
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        forest.screenshot(path=str(ARTIFACTS / "demo-report-forest.png"))
        table.screenshot(path=str(ARTIFACTS / "demo-report-rule-table.png"))
        browser.close()


@pytest.mark.slow
def test_demo_command_twice_in_the_same_folder(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    runner = CliRunner()
    for _ in range(2):
        caplog.clear()
        result = runner.invoke(app, ["demo", "-o", str(tmp_path / "demo"), "--repeats", "2"])
        assert result.exit_code == 0, result.output
        assert "regressed" in result.output
        assert "report:" in result.output
        # the story says its seed, and tells the draft's lint finding as one of its lines
        assert "seed 7 (the same --seed gives the same numbers)" in result.output.splitlines()[0]
        told = [line for line in result.output.splitlines() if line.startswith("lint of ")]
        assert told == [
            "lint of the draft (v2) before it runs: [warning] urdu-without-nastaliq at "
            "agent.instructions: is about Urdu but does not ask for Nastaliq (Urdu) script: "
            "expect answers in Roman Urdu (`evalkit lint` shows why)"
        ]
        assert not [r for r in caplog.records if hasattr(r, "lint")]  # no log record of it


@pytest.mark.slow
def test_report_says_why_it_failed_in_chromium(demo: DemoResult, chromium: str) -> None:
    """The "Why did it fail" section: clusters of urdu-script and asks-confirmation with
    counts per side and an example each, the flag count, the lint finding new in the draft."""
    from playwright.sync_api import sync_playwright

    args = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=args)
        page = browser.new_page(viewport={"width": 1100, "height": 1400})
        page.goto(demo.report.resolve().as_uri())
        heading = page.locator("h2", has_text="Why did it fail")
        assert heading.count() == 1
        assert heading.is_visible()
        text = page.locator("body").inner_text()
        assert "No simulation flag" in text  # the demo's personas are well behaved
        table = page.locator("table:has(th:text-is('what the failures share'))")
        assert table.count() == 1
        headers = table.locator("thead th").all_inner_texts()
        for name in ("failing in baseline", "failing in candidate", "new in candidate", "example"):
            assert name in headers, headers
        column = {name: i for i, name in enumerate(headers)}
        seen: dict[str, int] = {}
        rows = table.locator("tbody tr")
        for i in range(rows.count()):
            cells = rows.nth(i).locator("td").all_inner_texts()
            rule = cells[column["rule"]].strip()
            seen[rule] = seen.get(rule, 0) + int(cells[column["failing in candidate"]])
            assert len(cells[column["example"]].strip()) > 20
        assert seen["urdu-script"] > 40
        assert seen["asks-confirmation"] > 20
        lint = page.locator("table:has(th:text-is('change'))")
        assert "urdu-without-nastaliq" in lint.inner_text()
        assert "new in draft" in lint.inner_text()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        table.screenshot(path=str(ARTIFACTS / "demo-report-why.png"))
        browser.close()
