"""RunBrowser driven through its widgets, with no kernel: filters, paging, small state,
comparison pairs, a static version, and no printing."""

from __future__ import annotations

import functools
import operator
from pathlib import Path

import ipywidgets
import pytest

from evalkit.report import RunBrowser
from evalkit.store import Run

from .fixtures import PERSONAS, RunSpec, write_graded_run


def shown_ids(browser: RunBrowser) -> list[str]:
    return [value for _, value in browser.conversation.options]


def test_persona_filter_changes_the_page_and_transcript(prod_run: Run) -> None:
    browser = RunBrowser(prod_run, page_size=4)
    first = browser.transcript_html.value
    browser.persona.value = "hostile"
    conv = prod_run.conversations.set_index("conversation_id")
    assert shown_ids(browser)
    assert {conv.loc[c, "persona_label"] for c in shown_ids(browser)} == {"hostile"}
    assert browser.transcript_html.value != first
    assert " · hostile · " in browser.transcript_html.value
    assert "of 18 conversations" in browser.page_label.value
    assert browser.page_label.value.startswith("page 1 of 2 · 6 of 18")


def test_paging_moves_through_matches(prod_run: Run) -> None:
    browser = RunBrowser(prod_run, page_size=5)
    assert browser.n_pages == 4
    assert browser.prev_button.disabled
    pages = []
    for _ in range(browser.n_pages):
        pages.append(shown_ids(browser))
        browser.next_button.click()
    assert browser.next_button.disabled
    assert browser.page == 3
    assert [len(p) for p in pages] == [5, 5, 5, 3]
    assert functools.reduce(operator.iadd, pages, []) == browser.matches
    browser.prev_button.click()
    assert shown_ids(browser) == pages[2]
    browser.status.value = "done"  # a filter change goes back to the first page
    assert browser.page == 0


def test_rule_verdict_status_and_text_filters(prod_run: Run) -> None:
    browser = RunBrowser(prod_run, page_size=50)
    conv = prod_run.conversations.set_index("conversation_id")
    browser.rule.value = "polite-close"
    browser.verdict.value = "na"
    assert {conv.loc[c, "persona_label"] for c in browser.matches} == {"hostile"}
    assert all(conv.loc[c, "status"] == "done" for c in browser.matches)
    browser.rule.value = ""
    browser.verdict.value = ""
    browser.status.value = "error"
    assert len(browser.matches) == 1
    assert "No turns." in browser.transcript_html.value
    browser.status.value = ""
    browser.search.value = "ALERT("  # case-insensitive, inside turn text
    hostile_done = [
        c
        for c in conv.index
        if conv.loc[c, "persona_label"] == "hostile" and conv.loc[c, "status"] == "done"
    ]
    assert browser.matches == sorted(hostile_done)
    browser.search.value = "bilal"  # in the variables
    bilal = {c for c in conv.index if "Bilal" in conv.loc[c, "variables"]}
    assert set(browser.matches) == bilal
    assert len(bilal) == len(PERSONAS) * 2
    browser.search.value = "no such words"
    assert browser.matches == []
    assert browser.transcript_html.value == ""
    assert "No conversation matches" in browser.page_html.value


def test_transcript_highlights_rules_and_escapes(prod_run: Run) -> None:
    browser = RunBrowser(prod_run)
    browser.persona.value = "hostile"
    page = browser.transcript_html.value
    assert "<script>" not in page
    assert "&lt;script&gt;" in page
    assert 'lang="ur" dir="rtl"' in page
    assert "ek-evidence" in page
    assert "ek-chip ek-v-" in page
    cid = browser.conversation.value
    browser.conversation.value = shown_ids(browser)[1]
    assert browser.transcript_html.value != page
    assert cid != browser.conversation.value


def test_widget_state_stays_small_whatever_the_run_size(tmp_path: Path) -> None:
    small = write_graded_run(tmp_path, RunSpec("small", "draft", repeats=2))
    big = write_graded_run(tmp_path, RunSpec("big", "draft", repeats=12))
    sizes = {}
    for run in (small, big):
        browser = RunBrowser(run, page_size=3)
        assert len(browser.conversation.options) == 3
        assert browser.page_html.value.count("<tr>") == 3
        sizes[run.run_id] = (len(browser.page_html.value), len(browser.transcript_html.value))
    assert len(big.conversations) == 6 * len(small.conversations)
    for small_size, big_size in zip(sizes["small"], sizes["big"], strict=True):
        assert big_size < small_size * 1.2
    page_sizes = [len(RunBrowser(big, page_size=n).page_html.value) for n in (2, 4, 8)]
    assert page_sizes[0] < page_sizes[1] < page_sizes[2]


def test_comparison_shows_the_same_cell_side_by_side(prod_run: Run, draft_run: Run) -> None:
    browser = RunBrowser(draft_run, comparison_run=prod_run, page_size=3)
    page = browser.transcript_html.value
    cid = browser.conversation.value
    assert "ek-pair" in page
    assert f"draft · {cid} · " in page
    assert f"prod · {cid} · " in page
    assert "score (prod)" in browser.page_html.value
    assert page.count('class="ek ek-conv"') == 2


def test_comparison_pairs_by_cell_when_ids_differ(tmp_path: Path, prod_run: Run) -> None:
    other = write_graded_run(tmp_path / "other", RunSpec("renamed", "prod", seed=5))
    conv = other.conversations
    browser = RunBrowser(prod_run, comparison_run=other)
    key = browser._main.key("c000")
    assert browser._other is not None
    assert browser._other.partner(key) == "c000"
    assert browser._other.partner(("zz", str(conv["cell_id"].iloc[2]), 1)) == "c003"
    assert browser._other.partner(("zz", "no-cell", 0)) is None


def test_to_html_is_static_and_limited(prod_run: Run) -> None:
    browser = RunBrowser(prod_run)
    browser.persona.value = "busy"  # the static version shows every persona
    browser.status.value = "done"
    page = browser.to_html(limit=2)
    for persona in PERSONAS:
        assert f"persona_label: {persona} " in page
    assert page.count('class="ek ek-conv"') == 2 * len(PERSONAS)
    assert "<script" not in page
    assert "application/vnd.jupyter.widget" not in page
    assert " · error" not in page  # the status filter still applies


def test_callbacks_never_print(
    prod_run: Run, draft_run: Run, capsys: pytest.CaptureFixture[str]
) -> None:
    browser = RunBrowser(draft_run, comparison_run=prod_run, page_size=2)
    browser.persona.value = "busy"
    browser.next_button.click()
    browser.search.value = "ji"
    browser.to_html()
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == ""
    assert isinstance(browser.widget, ipywidgets.VBox)
    assert callable(browser._ipython_display_)


def test_page_size_must_be_positive(prod_run: Run) -> None:
    with pytest.raises(ValueError, match="page_size"):
        RunBrowser(prod_run, page_size=0)
