"""The refine loop on the demo's regressed draft, over loopback."""

from __future__ import annotations

import pytest

from evalkit import Client
from evalkit.refine import ROUND_COLUMNS, RefineLoopOptions, RefineOptions, refine_loop
from tests.refine.conftest import FAST_POLL, NASTALIQ_FEEDBACK, SCORECARD, Demo, demo_grid
from tests.result_face import assert_result_face


def _pass_rate(frame, cells, rule: str) -> float:  # type: ignore[no-untyped-def]
    rows = frame[(frame["rule_id"] == rule) & frame["cell_id"].isin(cells)]
    decided = rows[rows["verdict"].isin(["pass", "fail"])]
    return float((decided["verdict"] == "pass").mean())


@pytest.mark.slow
def test_nastaliq_feedback_improves_the_held_out_cells(client: Client, demo: Demo) -> None:
    grid = demo_grid()
    options = RefineLoopOptions(rounds=1, holdout=0.3, seed=3, refine=RefineOptions(poll=FAST_POLL))
    result = refine_loop(
        grid,
        demo.assistant_id,
        SCORECARD,
        feedback=NASTALIQ_FEEDBACK,
        client=client,
        judge=False,
        store=demo.store,
        options=options,
    )
    rounds = result.rounds
    assert list(rounds.columns) == list(ROUND_COLUMNS)
    assert list(rounds["round"]) == [0, 1]
    assert list(rounds["version"]) == [2, 3]
    assert result.stop_reason == "rounds"
    assert rounds["stop_reason"].iloc[-1] == "rounds"
    last = rounds.iloc[-1]
    assert last["vs_previous"] == "improved"
    assert bool(last["progress"])
    assert last["score_holdout_low"] <= last["score_holdout"] <= last["score_holdout_high"]
    assert rounds["vs_prod"].iloc[0] == "regressed"  # the draft we started from
    held = result.holdout_cells
    before = _pass_rate(result.grades[0].frame, held, "urdu-script")
    after = _pass_rate(result.grades[1].frame, held, "urdu-script")
    assert after > before + 0.5
    assert result.comparisons[1]["previous"].verdict == "improved"
    n = len(grid)
    assert list(rounds["conversations_spent"]) == [2 * n, 3 * n]
    assert len(held) == round(0.3 * grid.n_cells)
    assert result.training_cells.isdisjoint(held)
    assert_result_face(result)
    assert result.summary is rounds
    assert (result.n, result.verdict) == (3 * n, rounds["vs_prod"].iloc[-1])
    assert result.to_dict()["build_ids"] == [r.build_id for r in result.refinements]


@pytest.mark.slow
def test_the_budget_stops_the_loop_before_a_round_it_cannot_pay(client: Client, demo: Demo) -> None:
    grid = demo_grid(repeats=1)
    options = RefineLoopOptions(
        rounds=3, max_conversations=3 * len(grid) + 1, refine=RefineOptions(poll=FAST_POLL)
    )
    result = refine_loop(
        grid,
        demo.assistant_id,
        SCORECARD,
        feedback="suggest",
        client=client,
        judge=False,
        store=demo.store,
        options=options,
    )
    assert result.stop_reason == "budget"
    assert len(result.refinements) == 1
    assert result.rounds["conversations_spent"].iloc[-1] == 3 * len(grid)
    feedback = result.refinements[0].after.instructions.split("## Owner feedback", 1)[1]
    assert "Rehearsed calls fell short" in feedback  # the suggestion was sent
    assert "Urdu (Nastaliq) script" in feedback  # naming the failing behaviour


def test_a_budget_that_cannot_pay_one_round_is_refused_up_front(client: Client, demo: Demo) -> None:
    grid = demo_grid(repeats=1)
    options = RefineLoopOptions(max_conversations=len(grid))
    with pytest.raises(ValueError, match="cannot pay"):
        refine_loop(
            grid,
            demo.assistant_id,
            SCORECARD,
            feedback=NASTALIQ_FEEDBACK,
            client=client,
            judge=False,
            store=demo.store,
            options=options,
        )


def test_bad_options_are_refused() -> None:
    bad_options = {
        "rounds": ({"rounds": 0}, "rounds"),
        "holdout": ({"holdout": 1.0}, "holdout"),
        "budget": ({"max_conversations": 0}, "max_conversations"),
        "effect": ({"min_effect": -1}, "min_effect"),
    }
    for bad, name in bad_options.values():
        with pytest.raises(ValueError, match=name):
            RefineLoopOptions(**bad)  # type: ignore[arg-type]
