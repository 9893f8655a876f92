"""The "Why did it fail" section's library side on the demo's story (a small grid): clusters
for the rules that moved with examples and counts per side, the lint finding new in the
draft, no simulation flag on the demo's personas, and the RunBrowser's cluster filter."""

from __future__ import annotations

import pytest

from evalkit.demo import DemoService, demo_grid
from evalkit.diagnose import WhyItFailed, cluster_members, why_it_failed
from evalkit.flows import DraftVsProd
from evalkit.report import RunBrowser

from ..result_face import assert_result_face


@pytest.fixture(scope="module")
def outcome(tmp_path_factory: pytest.TempPathFactory) -> DraftVsProd:
    store = tmp_path_factory.mktemp("runs")
    with DemoService(store, seed=7) as service:
        return service.draft_vs_prod(demo_grid(2), progress=False)


@pytest.fixture(scope="module")
def why(outcome: DraftVsProd) -> WhyItFailed:
    return why_it_failed(
        outcome.comparison,
        outcome.baseline,
        outcome.candidate,
        outcome.baseline_grades,
        outcome.candidate_grades,
    )


@pytest.mark.slow
def test_the_regressed_rules_come_first_with_their_clusters(why: WhyItFailed) -> None:
    assert set(why.rules[:2]) == {"urdu-script", "asks-confirmation"}
    table = why.cluster_table()
    for rule in ("urdu-script", "asks-confirmation"):
        mine = table[table["rule"] == rule]
        assert mine["failing in candidate"].sum() > mine["failing in baseline"].sum()
        assert mine["new in candidate"].sum() > 0
        assert (mine["example"].str.len() > 20).all()
        assert (mine["example ids"].str.split(", ").str.len() == 2).all()
    roman = table[(table["rule"] == "urdu-script") & (table["failing in candidate"] > 0)].iloc[0]
    assert roman["script"] == "Latin script"  # the draft answers in Roman Urdu
    assert_result_face(why)
    sentences = why.findings
    assert sentences[0].startswith("urdu-script: ")
    assert "Latin script" in sentences[0]


@pytest.mark.slow
def test_lint_changes_and_no_flags(why: WhyItFailed) -> None:
    assert why.lint[["change", "rule_id", "path"]].values.tolist() == [
        ["new in draft", "urdu-without-nastaliq", "agent.instructions"]
    ]
    assert why.flags.empty
    assert why.without_flagged is None
    assert "No simulation flag" in " ".join(why.findings)


@pytest.mark.slow
def test_the_browser_filters_by_cluster(outcome: DraftVsProd, why: WhyItFailed) -> None:
    browser = RunBrowser(
        outcome.candidate, outcome.candidate_grades.frame, clusters=why.clusters, page_size=5
    )
    options = [value for _, value in browser.cluster.options]
    assert "urdu-script#0" in options
    browser.cluster.value = "urdu-script#0"
    expected = set(
        cluster_members(why.clusters, "urdu-script", 0, side="candidate")["conversation_id"]
    )
    assert set(browser.matches) == expected
    assert len(expected) > 10
    browser.cluster.value = ""
    assert len(browser.matches) == len(outcome.candidate.conversations)
