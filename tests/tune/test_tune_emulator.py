"""evalkit.tuning and `evalkit tune` on the embedded emulator with the bundled variants file.

By the emulator's dialogue rules, ``confirm-slot`` helps (the agent asks for a yes or no),
``terse-no-greeting`` hurts (no greeting, the customer and clinic unnamed, no closing) and the other two
change nothing the scorecard sees. The sweep must find the helpful one, confirm it on held-out
cells, drop the harmful one early, leave no clone behind, and promote only when asked.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from evalkit.api import EvalkitError
from evalkit.cli import app
from evalkit.compare import Verdict
from evalkit.demo import (
    CONTEXT,
    DemoService,
    demo_grid,
    demo_scorecard,
)
from evalkit.demo._story import LATENCY_MIN_EFFECT_S
from evalkit.store import catalog, load_run
from evalkit.targets import Variant
from evalkit.tuning import PromoteError, TuneError, TuneOptions, TuneResult, load_variants, tune

from .demo_support import FAST, cli_env, clones, grid_files

ROOT = Path(__file__).resolve().parents[2]
VARIANTS = ROOT / "examples" / "variants" / "urdu_reminder.yaml"


def sweep(svc: DemoService, **options: object) -> TuneResult:
    return tune(
        demo_grid(1),
        svc.assistant_id,
        demo_scorecard(),
        variants=VARIANTS,
        client=svc.client,
        judge=svc.judge,
        store=svc.store,
        options=TuneOptions(run_options=FAST, **options),  # type: ignore[arg-type]
    )


def test_the_bundled_variants_say_what_they_do() -> None:
    specs = {s.variant.name: s for s in load_variants(VARIANTS)}
    assert list(specs) == ["confirm-slot", "terse-no-greeting", "warm-tone", "low-reasoning"]
    assert specs["confirm-slot"].note.startswith("Helps, and is slower.")
    assert specs["low-reasoning"].note.startswith("Does nothing to the score, and is faster.")
    assert specs["terse-no-greeting"].note.startswith("Hurts.")
    assert specs["warm-tone"].note.startswith("Does nothing")


def test_the_sweep_finds_confirms_and_drops(service: DemoService) -> None:
    result = sweep(service, max_repeats=4, latency_min_effect_s=LATENCY_MIN_EFFECT_S)
    board = result.leaderboard.set_index("variant")
    # agent latency beside the score: by the emulator's latency rules confirm-slot (medium
    # reasoning) answers about 1.6x as slowly as the draft and low-reasoning (a smaller model)
    # about 0.6x; the verdicts against the control rest on timing this busy machine blurs, so
    # only the order of the two arms (2.7x apart) is checked here
    assert (board[["latency_p50", "latency_p95"]] > 0).all().all()
    assert board.loc["confirm-slot", "latency_p50"] > board.loc["low-reasoning", "latency_p50"]
    assert set(board["latency_verdict"]) <= {"", *(v.value for v in Verdict)}
    assert board.loc["low-reasoning", "verdict"] != "regressed"
    assert board["cost"].isna().all()  # no price table
    assert "agent latency" in str(result)
    assert result.winner == "confirm-slot"
    assert bool(board.loc["confirm-slot", "confirmed"])
    assert board.loc["confirm-slot", "verdict"] == "improved"
    assert board.loc["confirm-slot", "holdout_difference"] > 0
    assert result.details["holdout_cells"] == 5
    # the gain: the winner and the draft on 2 fresh repeats of all 18 cells
    assert result.gain.method == "fresh repeats"
    assert board.loc["confirm-slot", "fresh_conversations"] == 2 * 18 * 2
    assert result.difference == pytest.approx(board.loc["confirm-slot", "fresh_difference"])
    assert result.interval == pytest.approx(
        (board.loc["confirm-slot", "fresh_low"], board.loc["confirm-slot", "fresh_high"])
    )
    assert f"by {result.difference:+.1f} points on fresh repeats" in result.headline()
    assert board.drop("confirm-slot")["fresh_difference"].isna().all()
    # the harmful arm is dropped early and spends fewer conversations
    assert not pd.isna(board.loc["terse-no-greeting", "dropped_at"])
    assert board.loc["terse-no-greeting", "dropped_at"] < 4
    assert (
        board.loc["terse-no-greeting", "conversations"] < board.loc["confirm-slot", "conversations"]
    )
    assert board.loc["terse-no-greeting", "verdict"] == "regressed"
    assert board.loc["confirm-slot", "conversations"] == board.loc["draft", "conversations"] == 72
    assert board.loc["terse-no-greeting", "description"].startswith("Hurts.")
    assert set(result.waves["wave"]) == {1, 2, 3, 4}
    assert clones(service) == []
    # each wave runs an arm on a fresh clone of its config: its repeats are new conversations,
    # not copies of the first wave's (which every simulation flagged as identical repeats)
    for run_id in catalog(service.store)["run_id"]:
        conversations = load_run(run_id, store=service.store).conversations
        copies = int(conversations.duplicated(["cell_id", "transcript_hash"]).sum())
        assert copies <= 0.05 * len(conversations), (run_id, copies, len(conversations))
    # the winner's change, prompt included, and JSON without surprises
    assert "ask the caller to confirm with a yes or no" in result.diff
    assert result.winner_variant is not None
    json.dumps(result.to_dict())


def test_every_arm_to_the_end_when_not_adaptive(service: DemoService) -> None:
    before = service.emulator.stats()["started"]
    result = sweep(service, max_repeats=2, adaptive=False, confirm_repeats=0)
    board = result.leaderboard.set_index("variant")
    assert board["dropped_at"].isna().all()
    assert (board["conversations"] == 36).all()
    assert service.emulator.stats()["started"] - before == 5 * 36  # no fresh repeats
    # without them the gain is the held-out difference adjusted for the selection
    assert result.winner == "confirm-slot"
    assert result.gain.method == "held-out cells, selection-adjusted"
    assert result.difference == pytest.approx(board.loc["confirm-slot", "adjusted_difference"])
    assert "adjusted for being selected and confirmed" in result.headline()
    assert clones(service) == []


def test_promote_moves_the_draft_and_never_publishes(service: DemoService) -> None:
    result = sweep(service, max_repeats=2)
    assert result.winner == "confirm-slot"
    before = service.client.get_assistant_metadata(service.assistant_id).aliases
    preview = result.promote(service.client, dry_run=True)
    assert preview.to_version is None
    assert "+" in preview.diff
    assert service.client.get_assistant_metadata(service.assistant_id).aliases.draft == before.draft
    done = result.promote(service.client)
    after = service.client.get_assistant_metadata(service.assistant_id).aliases
    assert done.from_version == before.draft.version
    assert after.draft.version == done.to_version == before.draft.version + 1
    assert after.prod == before.prod  # never published
    config = next(
        a for a in service.client.list_assistants() if a.id == service.assistant_id
    ).config.to_json()
    assert "confirm with a yes or no" in config["agent"]["instructions"]
    assert config["agent"]["greetingInstructions"]  # the rest of the draft is kept
    # the draft moved since the sweep: a second promote is refused
    with pytest.raises(PromoteError, match="moved from version"):
        result.promote(service.client)


def test_promote_needs_a_winner(service: DemoService) -> None:
    nothing = Variant.with_instructions("same", "You are Sana from {{clinic_name}}.")
    result = tune(
        demo_grid(1).sample(4, seed=1),
        service.assistant_id,
        demo_scorecard(),
        variants=[nothing],
        client=service.client,
        judge=False,
        store=service.store,
        options=TuneOptions(max_repeats=1, run_options=FAST),
    )
    if result.winner is None:
        with pytest.raises(PromoteError, match="no confirmed winner"):
            result.promote(service.client)


def test_the_command_sweeps_and_promotes(service: DemoService, tmp_path: Path) -> None:
    personas, contacts = grid_files(tmp_path)
    env = cli_env(service)
    before = service.client.get_assistant_metadata(service.assistant_id).aliases
    out = tmp_path / "tune.json"
    result = CliRunner().invoke(
        app,
        [
            "tune",
            "--assistant",
            service.assistant_id,
            "--variants",
            str(VARIANTS),
            "--scorecard",
            str(demo_scorecard()),
            "--personas",
            str(personas),
            "--variables",
            str(contacts),
            "--context",
            CONTEXT,
            "--max-repeats",
            "3",
            "--holdout",
            "0.3",
            "--store",
            str(tmp_path / "runs"),
            "--judge-model",
            "emulator-judge",
            "--concurrency",
            "16",
            "--output",
            str(out),
            "--promote",
        ],
        env=env,
    )
    assert result.exit_code == 0, result.output
    assert "\nimproved: confirm-slot beats draft by +" in result.output
    assert "change to write to the draft" in result.output
    assert result.output.index("+++ confirm-slot config") < result.output.index(
        "promoted confirm-slot"
    )
    saved = json.loads(out.read_text(encoding="utf-8"))
    assert saved["winner"] == "confirm-slot"
    assert service.emulator.api_key not in out.read_text(encoding="utf-8")
    after = service.client.get_assistant_metadata(service.assistant_id).aliases
    assert after.draft.version == before.draft.version + 1
    assert after.prod == before.prod
    assert clones(service) == []


def test_a_sweep_run_again_with_its_prefix_spends_nothing_new(service: DemoService) -> None:
    first = sweep(service, max_repeats=2, run_prefix="again")
    started = service.emulator.stats()["started"]
    second = sweep(service, max_repeats=2, run_prefix="again")
    assert service.emulator.stats()["started"] == started
    assert second.winner == first.winner
    pd.testing.assert_frame_equal(second.leaderboard, first.leaderboard)
    pd.testing.assert_frame_equal(second.waves, first.waves)


def test_a_variant_whose_calls_all_fail_is_dropped_and_named(service: DemoService) -> None:
    """The service refuses to simulate an unsupported provider (400 before streaming): every
    call of that variant is recorded failed; the sweep says so and stops spending on it."""
    broken = Variant("broken", {"llm": {"default": {"provider": "no-such-provider"}}})
    fine = Variant.with_instructions("fine", "You are Sana from {{clinic_name}}. Say hello.")
    result = tune(
        demo_grid(1).sample(4, seed=2),
        service.assistant_id,
        demo_scorecard(),
        variants=[fine, broken],
        client=service.client,
        judge=False,
        store=service.store,
        options=TuneOptions(max_repeats=3, run_options=FAST),
    )
    board = result.leaderboard.set_index("variant")
    assert board.loc["broken", "dropped_at"] == 1
    assert board.loc["broken", "conversations"] == 4
    assert pd.isna(board.loc["broken", "score"])
    assert result.winner != "broken"
    assert any(w.startswith("broken: 4 of 4 conversation(s) left out") for w in result.warnings)
    assert "warning: broken: 4 of 4" in str(result)
    assert clones(service) == []


def test_an_arm_that_cannot_run_is_named(service: DemoService, tmp_path: Path) -> None:
    not_a_folder = tmp_path / "store.txt"
    not_a_folder.write_text("a file, not a store", encoding="utf-8")
    with pytest.raises(TuneError, match=r"\(run sweep-.*\) failed in wave 1: ") as caught:
        tune(
            demo_grid(1).sample(2, seed=2),
            service.assistant_id,
            demo_scorecard(),
            variants=[Variant.with_instructions("fine", "You are Sana. Say hello.")],
            client=service.client,
            judge=False,
            store=not_a_folder,
            options=TuneOptions(max_repeats=1, run_options=FAST, run_prefix="sweep"),
        )
    assert isinstance(caught.value.__cause__, EvalkitError)
    assert clones(service) == []
