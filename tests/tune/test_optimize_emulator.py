"""evalkit.optimize on the embedded emulator with the emulated proposer: from the demo's
regressed draft it finds and confirms an edit that helps, refuses a candidate that writes a
token out before running it, resumes without repeating a finished round, refuses a budget
below one round, counts malformed answers, and keeps the proposer's key out of sight."""

from __future__ import annotations

import html
import json
import pickle
from pathlib import Path

import httpx
import pytest

from evalkit.demo import DRAFT_INSTRUCTIONS, DemoService, demo_grid, demo_scorecard
from evalkit.store import load_run
from evalkit.targets import CLONE_PREFIX
from evalkit.tuning import (
    OptimizeOptions,
    OptimizeResult,
    Proposal,
    ProposalBatch,
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
    # seed 3: the emulated proposer's draws include the remedy that writes {{customer_name}}
    # out, in both rounds, so the refusal is exercised
    result = _search(
        service, run_prefix="opt", seed=3, on_round=lambda row: seen.append(row["round"])
    )
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
    assert result.headline().startswith(f"improved: {result.winner.name} beats the draft by")
    assert repr(result).startswith("<OptimizeResult: improved")
    # the page shows the winner's change: the diff's block and its added prompt line
    page = result._repr_html_()
    assert "<summary>the winner's change</summary>" in page
    added = next(line for line in result.diff.splitlines() if line.startswith("+You are Sana"))
    assert html.escape(added, quote=False) in page
    data = result.to_dict()
    assert json.loads(json.dumps(data))["winner"] == result.winner.name  # JSON-ready as it is
    # the gain comes from fresh repeats of every cell, the winner's and the draft's
    assert result.gain.method == "fresh repeats"
    assert data["gain_method"] == "fresh repeats"
    assert data["fresh_conversations"] == 2 * 18 * 2
    assert result.difference == data["difference"] == data["fresh_difference"]
    assert result.interval == (data["fresh_low"], data["fresh_high"])
    assert "on fresh repeats" in result.headline()
    assert data["holdout_difference"] is not None
    assert data["adjusted_difference"] is not None
    repeats = load_run("opt-draft", store=service.store).conversations["repeat"]
    assert sorted(set(repeats)) == [0, 1, 2, 3]  # the draft's 2 waves, then 2 fresh repeats
    loser = next(n for n in rounds["candidate"] if n != result.winner.name and n in result.variants)
    assert set(load_run(f"opt-{loser}", store=service.store).conversations["repeat"]) <= {0, 1}
    assert len(data["lineage"]) == int((rounds["status"] == "raced").sum())
    assert not [a for a in service.client.list_assistants() if a.name.startswith(CLONE_PREFIX)]
    # resumed with the same prefix: no proposer call and no conversation again
    before = _stats(service)
    again = _search(service, run_prefix="opt", seed=3)
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
    with pytest.raises(ValueError, match="below one round's minimum of 252"):
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
    assert (
        "(36 conversations for the draft, up to 144 a round, 72 to measure a winner's gain on "
        "fresh repeats)" in result.output
    )
    assert "expected: at most 396 conversation(s), about USD" in result.output
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
    # what a SIGKILL leaves: a clone of one of the search's runs, its process gone, its lease
    # still good; and a clone of another search's run, which the resume must leave alone
    orphan = _dead_owners_clone(service, "killed-r2-c1")
    foreign = _dead_owners_clone(service, "killed2-r1-c1")
    before = _stats(service)
    resumed = _search(service, run_prefix="killed")
    after = _stats(service)
    ids = {a.id for a in service.client.list_assistants()}
    service.client.delete_assistant(foreign)
    assert orphan not in ids  # reaped by the resume
    assert foreign in ids
    assert after["proposerCalls"] - before["proposerCalls"] == 1  # round 2's call only
    raced_in_2 = int(resumed.progress.set_index("round").loc[2, "raced"])
    round_2 = resumed.rounds[(resumed.rounds["round"] == 2) & (resumed.rounds["status"] == "raced")]
    fresh = int(resumed.decision.get("fresh_conversations") or 0)
    assert fresh == (72 if resumed.winner is not None else 0)
    # only round 2's candidates ran, then a winner's fresh repeats: nothing of round 1 again
    assert after["started"] - before["started"] == int(round_2["conversations"].sum()) + fresh
    assert raced_in_2 == len(round_2)


def _dead_owners_clone(svc: DemoService, run_id: str) -> str:
    """A clone whose owner marker names ``run_id`` and a process of this host that exited."""
    import subprocess
    import sys
    from dataclasses import replace

    from evalkit.targets import CloneLease, CloneOwner

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    owner = replace(CloneOwner.current(run_id, CloneLease()), pid=child.pid)
    config = next(a for a in svc.client.list_assistants() if a.id == svc.assistant_id).config
    return svc.client.create_assistant(
        f"{CLONE_PREFIX} left by a killed search",
        config.to_json(),
        description=owner.description(svc.assistant_id),
    ).id


class _Scripted:
    """A candidate source that answers every round with the same proposals, counting calls."""

    def __init__(self, texts: list[str]) -> None:
        self.texts = texts
        self.calls = 0

    async def apropose(self, request: ProposalRequest) -> ProposalBatch:
        self.calls += 1
        return ProposalBatch(tuple(Proposal(t, "why \ud800") for t in self.texts), calls=1)

    def describe(self) -> dict[str, str]:
        return {"kind": "scripted"}


def test_malformed_and_hidden_characters_are_dropped_not_raised(service: DemoService) -> None:
    """A proposal holding a lone surrogate is counted malformed and dropped (a resume does not
    ask again); control and bidirectional characters are refused; a zero-width or full-width
    disguise does not get prose past the filter; what runs is the normalised prompt."""
    good = DRAFT_INSTRUCTIONS + " Ask the caller to confirm with a yes or no."
    source = _Scripted(
        [
            good + " \ud800",
            good + "\x00",
            "\u202e" + good,
            "\u200b\u200b\uff28ere is the new prompt: " + good,
            "\u200b" + good + "\u2060",
            good + "\u00ad",  # the same prompt once its soft hyphen is gone
        ]
    )

    def search() -> OptimizeResult:
        return optimize(
            demo_grid(1).sample(6, seed=1),
            service.assistant_id,
            demo_scorecard(),
            proposer=source,
            client=service.client,
            judge=service.judge,
            store=service.store,
            options=OptimizeOptions(
                rounds=1, candidates=6, seed=7, run_options=FAST, run_prefix="odd",
                max_repeats=1, confirm_repeats=0,
            ),
        )  # fmt: skip

    result = search()
    (row,) = result.progress.to_dict("records")
    assert (row["proposed"], row["malformed"], row["refused"], row["raced"]) == (5, 1, 4, 1)
    table = result.rounds.set_index("candidate")
    assert list(table["verdict"]) == ["refused"] * 3 + [table.loc["r1-c4", "verdict"], "duplicate"]
    assert table.loc["r1-c5", "status"] == "duplicate: the same as another candidate"
    assert table.loc["r1-c5", "conversations"] == 0
    assert table.loc["r1-c1", "status"] == "refused: holds the control character U+0000"
    assert table.loc["r1-c2", "status"].startswith(
        "refused: holds the bidirectional control U+202E"
    )
    assert table.loc["r1-c3", "status"] == "refused: prose, not a prompt"
    assert table["verdict"].notna().all()
    raced = result.variants["r1-c4"].patch["agent"]["instructions"]
    assert raced == good  # the zero-width characters are gone from what runs
    manifest = load_run("odd-r1-c4", store=service.store).manifest
    assert good in json.dumps(manifest, ensure_ascii=False)
    assert "\\u200b" not in json.dumps(manifest)
    assert source.calls == 1
    again = search()  # the round was recorded: a resume neither asks nor aborts
    assert source.calls == 1
    assert again.rounds.equals(result.rounds)
