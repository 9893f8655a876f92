"""find_failures end to end on the emulator (loopback, planted weaknesses, emulated generator):
what it reports is a planted weakness, confirmed on fresh conversations that played no part
in choosing it; budget, resume and the persona folder."""

from __future__ import annotations

import httpx
import pandas as pd
import pytest

from evalkit.demo._story import CONTACTS, CONTEXT, demo_scorecard
from evalkit.emulator.dialogue import WEAKNESSES, persona_traits
from evalkit.flows import PipelineOptions, RunSpec, run_and_grade
from evalkit.grid import Grid, load_personas
from evalkit.personas import FailureSearch, FindOptions, find_failures
from evalkit.runner import RunOptions
from evalkit.store import load_run

from .conftest import World

RULES_OF = {
    "confirm": {"asks-confirmation"},
    "script": {"urdu-script"},
    "close": {"polite-close"},
    "callback": {"handles-reschedule"},
    "objections": {"polite-close", "short-call"},
}


def _options(prefix: str, **knobs: object) -> FindOptions:
    base: dict[str, object] = {
        "rounds": 2,
        "per_round": 8,
        "records_per_persona": 2,
        "max_confirmed": 4,
        "confirm_repeats": 4,
        "seed": 3,
        "run_options": RunOptions(concurrency=16, progress=False),
        "run_prefix": prefix,
    }
    base.update(knobs)
    return FindOptions(**base)  # type: ignore[arg-type]


def _search(world: World, prefix: str, **knobs: object) -> FailureSearch:
    return find_failures(
        world.grid,
        world.service.assistant_id,
        demo_scorecard(),
        generator=world.generator,
        client=world.service.client,
        judge=world.service.judge,
        store=world.store,
        options=_options(prefix, **knobs),
    )


def _started(world: World) -> int:
    emu = world.service.emulator
    answer = httpx.get(f"{emu.admin_url}/stats", headers={"Authorization": f"Bearer {emu.api_key}"})
    return int(answer.json()["started"])


@pytest.fixture(scope="module")
def search(world: World) -> FailureSearch:
    return _search(world, "find-a")


def test_what_is_reported_fails_on_a_large_fresh_rerun(world: World, search: FailureSearch) -> None:
    """Every reported pair's true rate (24 more conversations of the persona) is above the
    threshold, and at least one reported pair is a planted weakness (the others are real
    failures of the scripted agent, e.g. no farewell to a caller who hangs up at once)."""
    reported = search.findings[search.findings["reported"]]
    assert len(reported) >= 1, search.headline()
    assert (reported["p_adjusted"] <= 0.05).all()
    behaviours = {p.label: p.behavior for p in search.found}
    planted = [
        any(
            w.traits <= persona_traits({"behavior": behaviours[persona]})
            and rule in RULES_OF[w.feature]
            for w in WEAKNESSES
        )
        for persona, rule in zip(reported["persona"], reported["rule_id"], strict=True)
    ]
    assert any(planted), list(zip(reported["persona"], reported["rule_id"], strict=True))
    rerun = run_and_grade(
        Grid(list(search.found), variables=CONTACTS, contexts=[CONTEXT], repeats=8),
        world.service.assistant_id,
        demo_scorecard(),
        RunSpec("draft", "find-a-truth"),
        client=world.service.client,
        judge=world.service.judge,
        store=world.store,
        options=PipelineOptions(run=RunOptions(concurrency=16, progress=False)),
    ).grades.frame
    decided = rerun[rerun["verdict"].isin(["pass", "fail"])]
    rates = (
        (decided["verdict"] == "fail")
        .groupby([decided["persona_label"], decided["rule_id"]])
        .mean()
    )
    for persona, rule in zip(reported["persona"], reported["rule_id"], strict=True):
        assert rates[(persona, rule)] > 0.25, (persona, rule, rates[(persona, rule)])


def test_the_rate_comes_from_fresh_conversations_alone(world: World, search: FailureSearch) -> None:
    screening = pd.concat(
        load_run(f"find-a-r{n:02d}", store=world.store).conversations for n in (1, 2)
    )
    confirm = load_run("find-a-confirm", store=world.store).conversations
    assert len(confirm)
    # the confirmation's conversations began after screening had chosen its personas
    assert confirm["started_at"].min() >= screening["finished_at"].max()
    assert set(confirm["persona_label"]) <= set(screening["persona_label"])
    fresh = set(confirm["conversation_id"])
    cells = search.decision["cells_per_persona"]
    for row in search.findings.itertuples():
        # every tested pair's verdicts are its fresh repeats: cells x confirm_repeats at most
        assert 0 < row.decided <= cells * 4
        assert row.failures == 0 or row.example_conversation_id in fresh
    by_label = confirm.groupby("persona_label").size()
    assert set(search.findings["persona"]) == set(by_label.index)


def test_coverage_and_untried_say_what_was_tried(search: FailureSearch) -> None:
    assert set(search.coverage["axis"]) >= {"language", "age", "noise"}
    assert isinstance(search.untried, pd.DataFrame)
    assert search.decision["pairs_covered"] + len(search.untried) == search.decision["pairs"]
    assert "caller" in search.headline()
    assert "<table" in search._repr_html_()
    assert search.to_dict()["decision"]["reported"] == int(search.findings["reported"].sum())


def test_the_found_personas_are_a_folder_for_the_regression_grid(
    search: FailureSearch, tmp_path: object
) -> None:
    from pathlib import Path

    folder = Path(str(tmp_path)) / "found"
    written = search.write(folder)
    loaded = load_personas(folder)
    assert len(written) == len(search.found) == len(loaded)
    assert {p.label for p in loaded} == {p.label for p in search.found}
    for persona in loaded:
        assert persona.traits
        assert persona.provenance is not None
        assert persona.provenance["generator"] == "emulator-generator"
        assert persona.provenance["prompt_version"]
        assert persona.provenance["seed"] == 3


def test_a_resumed_search_runs_nothing_again(world: World, search: FailureSearch) -> None:
    before = _started(world)
    again = _search(world, "find-a")
    assert _started(world) == before
    pd.testing.assert_frame_equal(again.findings, search.findings)


def test_a_budget_below_one_round_and_the_confirmation_is_refused_up_front(world: World) -> None:
    before = _started(world)
    with pytest.raises(ValueError, match="max_conversations"):
        _search(world, "find-b", max_conversations=10)
    assert _started(world) == before


def test_the_budget_caps_what_the_search_spends(world: World) -> None:
    cells = 2
    opts = _options("find-c", max_conversations=8 * cells + 4 * cells * 4 + 5, rounds=3)
    result = _search(world, "find-c", max_conversations=opts.max_conversations, rounds=3)
    assert result.decision["conversations"] <= opts.max_conversations
    assert result.decision["rounds_run"] == 1
    assert any("budget" in w for w in result.warnings)


def test_the_viewer_lists_the_search_and_links_its_examples(
    world: World, search: FailureSearch
) -> None:
    from evalkit.view import ViewerOptions, ViewerServer

    with ViewerServer(ViewerOptions(store=world.store, port=0)) as viewer:
        index = httpx.get(viewer.base + "index.html").text
        assert 'href="personas/find-a.html"' in index
        page = httpx.get(viewer.base + "personas/find-a.html")
        assert page.status_code == 200
        reported = search.findings[search.findings["reported"]].iloc[0]
        assert str(reported["persona"]) in page.text
        cid = str(reported["example_conversation_id"])
        assert f'href="../runs/find-a-confirm/c/{cid}.html"' in page.text
        assert "Coverage by trait value" in page.text
        assert httpx.get(viewer.base + "personas/ghost.html").status_code == 404
