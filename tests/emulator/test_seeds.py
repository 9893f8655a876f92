"""Reproducible by seed: the same seed and the same requests give the same transcripts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalkit import demo
from evalkit.demo import _story
from evalkit.emulator import serve
from evalkit.emulator._simulate import conversation_seed, persona_id

from .helpers import client_for, create_assistant, make_config, simulate

BODIES = [
    {"persona": {"label": "c", "behavior": "cooperative"}, "variables": {"name": "Ayesha"}},
    {"persona": {"label": "h", "behavior": "hostile and angry"}, "context": "Expects a call"},
    {"persona": {"label": "b", "behavior": "busy, driving"}},
]


def _transcripts(seed: int) -> list[Any]:
    """Create an assistant and simulate every body twice, in order, on a fresh emulator."""
    out: list[Any] = []
    with serve(time_scale=0.001, seed=seed) as emu, client_for(emu) as client:
        aid = create_assistant(client)["realtimeAssistantId"]
        for body in BODIES + BODIES:
            sse = simulate(client, aid, body)
            assert sse.status == 200
            out.append(sse.events)
    return out


def test_two_emulators_with_the_same_seed_write_the_same_transcripts() -> None:
    first, second = _transcripts(11), _transcripts(11)
    assert first == second  # turns and the done event, personaId included
    assert first[0] != first[len(BODIES)]  # a repeat of a cell is another conversation


def test_a_clone_of_the_same_config_goes_on_from_the_repeats_before_it() -> None:
    """A sweep runs each wave on a fresh clone of one config: the clone's first call of a
    cell is the config's next repeat, not a copy of the first clone's (identical repeats);
    another project counts apart, so its first call is the first again."""
    body = BODIES[0]
    with serve(time_scale=0.001, seed=3) as emu, client_for(emu) as client:
        first, second = (create_assistant(client)["realtimeAssistantId"] for _ in range(2))
        one, two = simulate(client, first, body).events, simulate(client, second, body).events
        assert one != two
        other_key = emu.new_project()["apiKey"]
        with client_for(emu, other_key) as other:
            third = create_assistant(other)["realtimeAssistantId"]
            assert simulate(other, third, body).events == one


def test_another_seed_gives_other_transcripts() -> None:
    assert _transcripts(11) != _transcripts(12)


def test_the_seed_follows_the_config_not_the_assistant_id() -> None:
    config = make_config()
    same = conversation_seed(1, config, "body", 0)
    assert conversation_seed(1, dict(config), "body", 0) == same
    assert conversation_seed(1, make_config("Another prompt."), "body", 0) != same
    assert conversation_seed(1, config, "body", 1) != same
    assert conversation_seed(2, config, "body", 0) != same


def test_persona_id_is_a_uuid4_derived_from_the_seed() -> None:
    assert persona_id(5) == persona_id(5) != persona_id(6)
    assert persona_id(5)[14] == "4"


def _by_cell(turns: pd.DataFrame) -> dict[str, list[tuple[tuple[str, str], ...]]]:
    """Each grid cell's transcripts, sorted: repeats of a cell run concurrently, so which
    repeat index gets which (seeded) conversation follows arrival order."""
    cells: dict[str, list[tuple[tuple[str, str], ...]]] = {}
    ordered = turns.sort_values(["conversation_id", "index"])
    for cid, group in ordered.groupby("conversation_id"):
        cell = str(cid).rsplit("-", 1)[0]
        cells.setdefault(cell, []).append(tuple(zip(group["role"], group["text"], strict=True)))
    return {cell: sorted(transcripts) for cell, transcripts in cells.items()}


@pytest.mark.slow
def test_demo_twice_with_the_same_seed_shares_its_transcripts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the demo's grid reads its story's module: a smaller grid for this test
    monkeypatch.setattr(_story, "CONTACTS", demo.CONTACTS[:1])
    monkeypatch.setattr(_story, "DEMO_PERSONAS", ("cooperative", "hostile", "busy-hangs-up"))
    first = demo.run_demo(tmp_path / "a", repeats=2, seed=5)
    second = demo.run_demo(tmp_path / "b", repeats=2, seed=5)
    pairs = (
        (first.result.baseline, second.result.baseline),
        (first.result.candidate, second.result.candidate),
    )
    for a, b in pairs:
        transcripts = _by_cell(a.turns)
        assert sum(map(len, transcripts.values())) == 6
        assert transcripts == _by_cell(b.turns)
    # the same seed, the same report: verdict, figures and per-rule table
    assert first.comparison.to_dict() == second.comparison.to_dict()
    report_a = (tmp_path / "a" / "output" / "summary.json").read_text(encoding="utf-8")
    report_b = (tmp_path / "b" / "output" / "summary.json").read_text(encoding="utf-8")
    assert report_a.replace(str(tmp_path / "a"), "") == report_b.replace(str(tmp_path / "b"), "")
