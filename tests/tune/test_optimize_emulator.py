"""evalkit.optimize on the embedded emulator with the emulated proposer: from the demo's
regressed draft it finds and confirms an edit that helps, refuses a candidate that writes a
token out before running it, resumes without repeating a finished round, refuses a budget
below one round, counts malformed answers, and keeps the proposer's key out of sight."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import httpx
import pytest

from evalkit.demo import DRAFT_INSTRUCTIONS, DemoService, demo_grid, demo_scorecard
from evalkit.targets import CLONE_PREFIX
from evalkit.tuning import (
    OptimizeOptions,
    OptimizeResult,
    ProposalRequest,
    Proposer,
    ProposerError,
    ProposerOptions,
    optimize,
)

from .demo_support import FAST, cli_env, grid_files


def _stats(svc: DemoService) -> dict[str, int]:
    headers = {"Authorization": f"Bearer {svc.emulator.api_key}"}
    data: dict[str, int] = httpx.get(f"{svc.emulator.admin_url}/stats", headers=headers).json()
    return data


def _search(svc: DemoService, **options: object) -> OptimizeResult:
    proposer = Proposer("emulator-proposer", svc.emulator.proposer_base_url, "sk-proposer-secret")
    return optimize(
        demo_grid(1),
        svc.assistant_id,
        demo_scorecard(),
        proposer=proposer,
        client=svc.client,
        judge=svc.judge,
        store=svc.store,
        options=OptimizeOptions(
            **{"rounds": 2, "candidates": 4, "seed": 7, "run_options": FAST, **options}  # type: ignore[arg-type]
        ),
    )


def test_optimize_finds_confirms_and_resumes(service: DemoService) -> None:
    seen: list[int] = []
    result = _search(service, run_prefix="opt", on_round=lambda row: seen.append(row["round"]))
    assert seen == [1, 2]
    assert result.winner is not None
    assert result.verdict == "improved"
    assert result.interval is not None
    assert result.interval[0] > 0
    instructions = result.winner.patch["agent"]["instructions"]
    assert "Nastaliq" in instructions or "yes or no" in instructions
    assert DRAFT_INSTRUCTIONS.rstrip(".") in instructions  # an edit of the draft, not a rewrite
    rounds = result.rounds
    assert set(rounds["round"]) == {1, 2}
    refused = rounds[rounds["status"].str.startswith("refused")]
    assert refused["status"].str.contains("drops {{customer_name}}").any()
    assert (refused["conversations"] == 0).all()
    assert int(result.progress["raced"].sum()) == int((rounds["status"] == "raced").sum())
    assert rounds.loc[rounds["candidate"] == result.winner.name, "verdict"].item() == "improved"
    assert result.diff.count("+You are Sana") == 1
    assert result.headline().startswith(f"improved: {result.winner.name}")
    assert repr(result).startswith("<OptimizeResult: improved")
    assert "the winner&#39;s change" in result._repr_html_() or "winner" in result._repr_html_()
    data = result.to_dict()
    assert json.loads(json.dumps(data))["winner"] == result.winner.name  # JSON-ready as it is
    assert len(data["lineage"]) == int((rounds["status"] == "raced").sum())
    assert not [a for a in service.client.list_assistants() if a.name.startswith(CLONE_PREFIX)]
    # resumed with the same prefix: no proposer call and no conversation again
    before = _stats(service)
    again = _search(service, run_prefix="opt")
    after = _stats(service)
    assert after["proposerCalls"] == before["proposerCalls"]
    assert after["started"] == before["started"]
    assert again.winner is not None
    assert again.winner.name == result.winner.name
    assert again.rounds.equals(result.rounds)
    # promoting writes the winner's prompt to the draft (a dry run shows the diff)
    assert "Sana" in result.promote(service.client, dry_run=True).diff
    # the viewer lists the search and shows its rounds, candidates and reasons
    from evalkit.view import ViewerOptions, ViewerServer

    with ViewerServer(ViewerOptions(store=service.store, port=0)) as viewer:
        index = httpx.get(viewer.base + "index.html").text
        assert 'href="optimize/opt.html"' in index
        page = httpx.get(viewer.base + "optimize/opt.html")
        assert page.status_code == 200
        assert "Round 2" in page.text
        assert "refused: drops {{customer_name}}" in page.text
        assert f'href="../runs/opt-{result.winner.name}/index.html"' in page.text
        assert httpx.get(viewer.base + "optimize/ghost.html").status_code == 404


def test_budget_below_one_round_is_refused_up_front(service: DemoService) -> None:
    before = _stats(service)
    with pytest.raises(ValueError, match="below one round's minimum of 180"):
        _search(service, max_conversations=100)
    assert _stats(service)["started"] == before["started"]


def test_prose_answers_are_retried_then_dropped(service: DemoService) -> None:
    headers = {"Authorization": f"Bearer {service.emulator.api_key}"}
    httpx.put(
        f"{service.emulator.admin_url}/proposer", json={"malformedRate": 1.0}, headers=headers
    )
    result = _search(service, rounds=1)
    assert result.winner is None
    row = result.progress.iloc[0]
    assert row["proposer_calls"] == 3  # ProposerOptions.max_attempts
    assert row["malformed"] == 3
    assert row["raced"] == 0
    assert result.headline().startswith("no winner: no candidate could be raced")


def test_the_key_stays_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    proposer = Proposer("m", "http://127.0.0.1:9/v1", "sk-proposer-secret")
    assert "sk-proposer-secret" not in repr(proposer)
    assert "sk-proposer-secret" not in str(pickle.dumps(proposer))
    monkeypatch.delenv("EVALKIT_PROPOSER_MODEL", raising=False)
    monkeypatch.delenv("EVALKIT_PROPOSER_BASE_URL", raising=False)
    with pytest.raises(ProposerError, match="EVALKIT_PROPOSER_MODEL"):
        Proposer()


def test_an_unreachable_proposer_is_counted_not_raised() -> None:
    proposer = Proposer(
        "m", "http://127.0.0.1:9/v1", options=ProposerOptions(max_attempts=2, timeout=5)
    )
    request = ProposalRequest(instructions="x", failing_rules=())
    from evalkit._util import run_sync

    batch = run_sync(lambda: proposer.apropose(request))
    assert batch.proposals == ()
    assert batch.calls == 2
    assert "ConnectError" in batch.reasons[-1]


def test_the_command_prints_the_budget_the_rounds_and_the_diff(
    service: DemoService, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from evalkit.cli import app
    from evalkit.demo import CONTEXT

    personas, contacts = grid_files(tmp_path)
    env = cli_env(service, EVALKIT_PROPOSER_API_KEY="sk-proposer-secret")
    out = tmp_path / "optimize.json"
    pricing = tmp_path / "pricing.yaml"
    pricing.write_text(
        "currency: USD\nsimulation:\n  vendor_c/*: {per_minute: 0.05}\n", encoding="utf-8"
    )
    args = [
        "optimize",
        "--assistant",
        service.assistant_id,
        "--scorecard",
        str(demo_scorecard()),
        "--proposer-model",
        "emulator-proposer",
        "--proposer-base-url",
        service.emulator.proposer_base_url,
        "--personas",
        str(personas),
        "--variables",
        str(contacts),
        "--context",
        CONTEXT,
        "--rounds",
        "2",
        "--seed",
        "7",
        "--store",
        str(tmp_path / "runs"),
        "--judge-model",
        "emulator-judge",
        "--concurrency",
        "16",
        "--output",
        str(out),
        "--pricing",
        str(pricing),
    ]
    result = CliRunner().invoke(app, args, env=env)
    assert result.exit_code == 0, result.output
    assert "(36 conversations for the draft, up to 144 a round)" in result.output
    assert "expected: at most 324 conversation(s), about USD" in result.output
    assert "round 1: 4 proposed (1 proposer call(s), 0 malformed)" in result.output
    assert "round 2: " in result.output
    assert "\nimproved: r" in result.output
    assert "+++ r" in result.output
    text = out.read_text(encoding="utf-8")
    assert json.loads(text)["verdict"] == "improved"
    assert "sk-proposer-secret" not in text
    assert "sk-proposer-secret" not in result.output
    both = CliRunner().invoke(app, [*args, "--refine"], env=env)
    assert both.exit_code != 0
    assert "not both" in both.output


def test_refine_builds_as_candidates(service: DemoService) -> None:
    before = service.client.list_assistants()
    draft = next(a for a in before if a.id == service.assistant_id).config.to_json()
    result = optimize(
        demo_grid(1),
        service.assistant_id,
        demo_scorecard(),
        proposer="refine",
        client=service.client,
        judge=service.judge,
        store=service.store,
        options=OptimizeOptions(rounds=1, candidates=2, seed=7, run_options=FAST),
    )
    raced = result.rounds[result.rounds["status"] == "raced"]
    assert len(raced) == 2
    for item in result.lineage:
        assert "## Owner feedback" in item["instructions"]  # what the emulator's build appends
        assert item["rationale"].startswith("Rehearsed calls fell short")
    feedbacks = [item["rationale"] for item in result.lineage]
    assert len(set(feedbacks)) == 2  # one per failure cluster
    after = next(a for a in service.client.list_assistants() if a.id == service.assistant_id)
    assert after.config.to_json() == draft  # restored from its snapshot
    assert result.decision["proposer"] == {"kind": "refine", "assistant_id": service.assistant_id}


class _Killed(Exception):
    pass


def test_a_killed_search_resumes_without_repeating_a_finished_round(
    service: DemoService,
) -> None:
    def kill(row: object) -> None:
        raise _Killed  # the process dies right after round 1 is recorded

    with pytest.raises(_Killed):
        _search(service, run_prefix="killed", on_round=kill)
    before = _stats(service)
    resumed = _search(service, run_prefix="killed")
    after = _stats(service)
    assert after["proposerCalls"] - before["proposerCalls"] == 1  # round 2's call only
    raced_in_2 = int(resumed.progress.set_index("round").loc[2, "raced"])
    round_2 = resumed.rounds[(resumed.rounds["round"] == 2) & (resumed.rounds["status"] == "raced")]
    # only round 2's candidates ran: nothing of the draft or of round 1 again
    assert after["started"] - before["started"] == int(round_2["conversations"].sum())
    assert raced_in_2 == len(round_2)
