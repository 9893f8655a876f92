"""evalkit.optimize on the embedded emulator with the emulated proposer: from the demo's
regressed draft it finds and confirms an edit that helps, refuses a candidate that writes a
token out before running it, resumes without repeating a finished round, refuses a budget
below one round, counts malformed answers, and keeps the proposer's key out of sight."""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from evalkit.demo import DRAFT_INSTRUCTIONS, DemoService, demo_grid, demo_scorecard
from evalkit.runner import RunOptions
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

FAST = RunOptions(concurrency=16, progress=False)


@pytest.fixture
def service(tmp_path: Path) -> Iterator[DemoService]:
    with DemoService(tmp_path / "store") as svc:
        yield svc


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
    assert data["winner"] == result.winner.name
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
