"""Pure pieces: config edits and their re-application, the holdout split, the in-flight ledger."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from evalkit.refine import BuildInFlightError, InFlightBuild, InFlightLedger, split_holdout
from evalkit.refine._refine import _claim
from evalkit.targets._diff import apply_edits, config_edits, prompt_diff

BEFORE = {
    "agent": {"instructions": "old prompt", "greetingInstructions": "Say hello."},
    "llm": {"default": {"provider": "other", "model": "m1", "apiKey": "sk-live-abcdefghijkl"}},
    "backgroundNoise": {"enabled": True},
}
AFTER = {
    "agent": {"instructions": "new prompt", "initialGreeting": True},
    "llm": {"default": {"provider": "other", "model": "m2", "apiKey": "sk-live-abcdefghijkl"}},
}


def test_edits_list_every_changed_path_but_the_prompt_with_secrets_masked() -> None:
    edits = config_edits(BEFORE, AFTER, names=("Renamed by hand", "Built name"))
    by_path = {e.path: e for e in edits}
    assert list(by_path) == [
        "name",
        "agent.greetingInstructions",
        "agent.initialGreeting",
        "backgroundNoise.enabled",
        "llm.default.model",
    ]
    assert by_path["agent.greetingInstructions"].after_present is False
    assert by_path["agent.initialGreeting"].before_present is False
    assert (by_path["llm.default.model"].before, by_path["llm.default.model"].after) == ("m1", "m2")


def test_a_changed_secret_is_listed_masked() -> None:
    after = {
        **AFTER,
        "llm": {"default": {**AFTER["llm"]["default"], "apiKey": "sk-live-zzzzzzzz9999"}},
    }
    (edit,) = [e for e in config_edits(BEFORE, after) if e.path == "llm.default.apiKey"]
    assert "abcdefgh" not in repr(edit)
    assert "zzzzzzzz" not in repr(edit)
    assert edit.after.endswith("9999")


def test_apply_edits_puts_chosen_values_back_and_removes_added_keys() -> None:
    out = apply_edits(AFTER, BEFORE, ["agent.greetingInstructions", "agent.initialGreeting"])
    assert out["agent"] == {"instructions": "new prompt", "greetingInstructions": "Say hello."}
    out = apply_edits(AFTER, BEFORE, ["backgroundNoise.enabled", "llm.default.apiKey"])
    assert out["backgroundNoise"] == {"enabled": True}
    assert out["llm"]["default"]["apiKey"] == "sk-live-abcdefghijkl"  # the raw value, not a mask
    assert AFTER["agent"] == {"instructions": "new prompt", "initialGreeting": True}  # untouched


def test_prompt_diff_is_unified_and_empty_when_equal() -> None:
    diff = prompt_diff("a\nb\n", "a\nc\n", version_before=2, version_after=3)
    assert diff.splitlines()[:2] == ["--- agent.instructions@v2", "+++ agent.instructions@v3"]
    assert "-b" in diff.splitlines()
    assert "+c" in diff.splitlines()
    assert prompt_diff("same", "same", version_before=1, version_after=2) == ""


@pytest.mark.parametrize("share", [0.1, 0.3, 0.5, 0.9])
def test_holdout_is_seeded_disjoint_and_order_free(share: float) -> None:
    ids = [f"{i:04x}" for i in range(20)]
    train, held = split_holdout(ids, share, seed=5)
    assert train.isdisjoint(held)
    assert train | held == set(ids)
    assert len(held) == round(share * 20)
    assert split_holdout(reversed(ids), share, seed=5) == (train, held)
    other = {split_holdout(ids, share, seed=s)[1] for s in range(6)}
    assert len(other) > 1


def test_holdout_keeps_a_cell_on_each_side_and_rejects_bad_shares() -> None:
    train, held = split_holdout(["a", "b"], 0.05, seed=0)
    assert len(train) == len(held) == 1
    for bad in (0.0, 1.0, -0.2):
        with pytest.raises(ValueError, match="between 0 and 1"):
            split_holdout(["a", "b"], bad, seed=0)
    with pytest.raises(ValueError, match="at least 2 cells"):
        split_holdout(["a"], 0.3, seed=0)


def test_ledger_round_trip_and_clear_only_its_own_build(tmp_path: Path) -> None:
    ledger = InFlightLedger(tmp_path)
    record = InFlightBuild("asst-1", "b-1", "2026-01-01T00:00:00+00:00", 4, 123)
    with ledger.locked("asst-1"):
        ledger.write(record)
    assert ledger.read("asst-1") == record
    ledger.clear("asst-1", "another-build")
    assert ledger.read("asst-1") == record
    ledger.clear("asst-1", "b-1")
    assert ledger.read("asst-1") is None
    assert ledger.path("asst-1") == tmp_path / ".refine" / "asst-1.json"


def test_concurrent_claims_let_exactly_one_through(tmp_path: Path) -> None:
    ledger = InFlightLedger(tmp_path)
    outcomes: list[str] = []
    barrier = threading.Barrier(6)

    def claim(i: int) -> None:
        barrier.wait()
        try:
            _claim(ledger, InFlightBuild("asst-2", "", f"t{i}", 1, i))
            outcomes.append("claimed")
        except BuildInFlightError:
            outcomes.append("refused")

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["claimed"] + ["refused"] * 5
