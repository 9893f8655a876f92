"""Transcript HTML: escaped, right-to-left only on Arabic-script turns, evidence anchored."""

from __future__ import annotations

from html.parser import HTMLParser

import pandas as pd

from evalkit._util._html import stylesheet
from evalkit.report import (
    NASTALIQ_FONT_STACK,
    TranscriptOptions,
    html_page,
    table_html,
    transcript_html,
)

URDU = "السلام علیکم، کل صبح دس بجے آپ کی اپائنٹمنٹ ہے۔"
TURNS = pd.DataFrame(
    {
        "index": [1, 2, 3, 4],
        "role": ["agent", "caller", "agent", "caller"],
        "text": [URDU, "<script>alert('x')</script> no thanks", "شکریہ", "ok, ٹھیک but later"],
    }
)
GRADES = pd.DataFrame(
    {
        "rule_id": ["urdu-script", "confirm", "close"],
        "title": ["Answers in <Urdu>", "Asks to confirm", "Polite close"],
        "verdict": ["pass", "fail", "na"],
        "rationale": ["all agent turns Urdu", "no question & no <b>yes</b>", None],
        "evidence_turn": pd.array([1, 3, None], dtype="Int64"),
    }
)


class Collect(HTMLParser):
    """Every start tag with its attributes, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def tags(page: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Collect()
    parser.feed(page)
    return parser.tags


def test_text_is_escaped() -> None:
    page = transcript_html(TURNS, GRADES)
    assert "<script>" not in page
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in page
    assert "<b>yes</b>" not in page
    assert "&lt;b&gt;yes&lt;/b&gt;" in page
    assert "Answers in &lt;Urdu&gt;" in page
    assert not [t for t, _ in tags(page) if t in {"script", "b"}]


def test_rtl_and_urdu_lang_only_on_arabic_script_turns() -> None:
    texts = [a for t, a in tags(transcript_html(TURNS)) if "ek-text" in str(a.get("class"))]
    assert len(texts) == 4
    assert [a.get("dir") for a in texts] == ["rtl", None, "rtl", None]
    assert [a.get("lang") for a in texts] == ["ur", None, "ur", None]


def test_threshold_decides_mixed_turns() -> None:
    opts = TranscriptOptions(arabic_threshold=0.2)
    texts = [
        a for t, a in tags(transcript_html(TURNS, None, opts)) if "ek-text" in str(a.get("class"))
    ]
    assert texts[3].get("dir") == "rtl"


def test_evidence_turns_are_marked_and_linked() -> None:
    page = transcript_html(TURNS, GRADES, TranscriptOptions(title="c1", anchor="draft c/1"))
    parsed = tags(page)
    turns = [a for t, a in parsed if "ek-turn" in str(a.get("class"))]
    evidence = [a["id"] for a in turns if "ek-evidence" in str(a.get("class"))]
    assert evidence == ["draft-c-1-t1", "draft-c-1-t3"]
    links = [a["href"] for t, a in parsed if t == "a"]
    assert links == ["#draft-c-1-t1", "#draft-c-1-t3"]
    assert len({a["id"] for a in turns}) == 4
    marks = [a["class"] for t, a in parsed if t == "mark"]
    assert marks == ["ek-mark ek-v-pass", "ek-mark ek-v-fail"]
    assert "urdu-script: pass" in page
    assert "confirm: fail" in page
    chips = [a["class"] for t, a in parsed if "ek-chip" in str(a.get("class"))]
    assert chips == ["ek-chip ek-v-pass", "ek-chip ek-v-fail", "ek-chip ek-v-na"]


def test_css_is_self_contained_with_a_nastaliq_stack() -> None:
    assert NASTALIQ_FONT_STACK.startswith('"Noto Nastaliq Urdu", "Jameel Noori Nastaleeq"')
    css = stylesheet()  # the one stylesheet: evalkit/templates/evalkit.css
    assert NASTALIQ_FONT_STACK in css
    assert "direction: rtl" in css
    assert "text-align: right" in css
    page = html_page("<T>", transcript_html(TURNS, GRADES))
    for outside in ("http://", "https://", "@import", "url(", "@font-face"):
        assert outside not in page
    assert "<title>&lt;T&gt;</title>" in page


def test_table_html_escapes_and_cuts() -> None:
    frame = pd.DataFrame({"rule": [f"<r{i}>" for i in range(8)], "rate": [i / 3 for i in range(8)]})
    out = table_html(frame, max_rows=5)
    assert out.count("<tr>") == 5  # body rows (the header row has a style)
    assert out.count("<th>") == 2
    assert "&lt;r0&gt;" in out
    assert "<r0>" not in out
    assert "3 more rows not shown" in out
    assert "0.3" in out
    assert "0.333" not in out


def test_no_turns_and_no_grades() -> None:
    page = transcript_html(TURNS.iloc[:0], GRADES.iloc[:0])
    assert "No turns." in page
    assert "No grades" in page


# --------------------------------------------------------------------------- Urdu in tables
MIXED = "The agent closes with a farewell (اللہ حافظ / خدا حافظ, in either script)"
ALL_URDU = "ایجنٹ کال کے آخر میں شکریہ اور اللہ حافظ کہتا ہے"


def test_urdu_inside_latin_text_is_an_isolated_right_to_left_run() -> None:
    from evalkit.report import urdu_html

    out = urdu_html(MIXED + " <b>")
    (marked,) = [a for t, a in tags(out) if t == "bdi"]
    assert marked["lang"] == "ur"
    assert marked["dir"] == "rtl"
    assert ">اللہ حافظ / خدا حافظ</bdi>" in out  # the whole phrase, slash included
    assert out.startswith("The agent closes with a farewell (")
    assert "&lt;b&gt;" in out
    assert "<b>" not in out


def test_mostly_urdu_text_is_one_right_to_left_block() -> None:
    from evalkit.report import urdu_html

    out = urdu_html(ALL_URDU)
    assert tags(out) == [("div", {"class": "ek-ur", "lang": "ur", "dir": "rtl"})]
    assert urdu_html("Ji, theek hai") == "Ji, theek hai"


def test_table_cells_and_rule_titles_mark_their_urdu() -> None:
    frame = pd.DataFrame({"title": [MIXED, ALL_URDU, "plain"], "n": [1.0, None, 3.0]})
    out = table_html(frame)
    urdu = [a for _, a in tags(out) if a.get("lang") == "ur"]
    assert len(urdu) == 2
    assert all(a["dir"] == "rtl" for a in urdu)
    assert "<td>–</td>" in out  # a missing value
    grades = GRADES.assign(title=[MIXED, ALL_URDU, "Polite close"])
    page = transcript_html(TURNS, grades)
    assert ">اللہ حافظ / خدا حافظ</bdi>" in page
    assert f'<div class="ek-ur" lang="ur" dir="rtl">{ALL_URDU}</div>' in page
