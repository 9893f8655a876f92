"""Issue 33, item 11: the compare page's rule table reads in words and percentages; a
deterministic check is labelled as a check, never as "judge right"."""

from __future__ import annotations

import re
from pathlib import Path

from evalkit.store import load_run
from evalkit.view._compare_pages import compare_page
from evalkit.view._pages import Pages
from evalkit.view._site import Site


def test_the_compare_rule_table_has_readable_headers_and_percentages(demo_store: Path) -> None:
    whole = compare_page(Pages(Site(demo_store), live=False), "prod", "draft")
    page = whole.split("<h2>Rules</h2>", 1)[1].split("<h2>The same conversations", 1)[0]
    for raw in ("pass_rate_baseline", "pass_rate_candidate", "difference_low", "no_difference"):
        assert raw not in page
    assert "baseline pass rate" in page
    assert "difference (points)" in page
    assert re.search(r"<td>\d+% \[\d+, \d+\]</td>", page), page[:2000]


def test_a_deterministic_check_offers_check_right_not_judge_right(demo_store: Path) -> None:
    run = load_run("prod", demo_store)
    cid = str(run.conversations["conversation_id"].iloc[0])
    page = Pages(Site(demo_store), live=True).conversation("prod", cid)
    rows = re.findall(r'<tr id="rule-.*?</tr>', page, flags=re.S)
    checks = [r for r in rows if "check:" in r]
    judged = [r for r in rows if "check:" not in r]
    assert checks
    assert judged
    assert all("judge right" not in r and "check right" in r for r in checks)
    assert all("judge right" in r for r in judged if "wrong: should be" in r)
