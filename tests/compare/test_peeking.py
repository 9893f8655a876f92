"""Peeking: comparing runs that extend a pair compared before is named, on real stored runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalkit.api import Client
from evalkit.compare import CompareOptions
from evalkit.data import bundled_path
from evalkit.demo import CONTACTS, CONTEXT, PROD_INSTRUCTIONS
from evalkit.emulator import serve
from evalkit.flows import compare_runs
from evalkit.flows._peeking import PEEKING_DIR
from evalkit.grading import Scorecard
from evalkit.grid import Grid, load_personas
from evalkit.runner import RunOptions, run_grid

pytestmark = pytest.mark.slow


def test_adding_repeats_and_comparing_again_is_called_peeking(tmp_path: Path) -> None:
    personas = [
        p for p in load_personas(bundled_path("personas")) if p.label in {"cooperative", "busy"}
    ]
    card = Scorecard.load(bundled_path("scorecards") / "appointment-reminder-ur.yaml")
    runs = {}
    with serve(time_scale=0.002, seed=7) as emu, Client(emu.base_url, emu.api_key) as client:
        built = emu.build(
            "Clinic reminder",
            {"context": CONTEXT, "sampleRows": CONTACTS[:1]},
            PROD_INSTRUCTIONS,
            initial_greeting=True,
        )
        assistant = built["realtimeAssistantId"]
        for repeats in (1, 2):
            grid = Grid(personas, variables=CONTACTS[:2], contexts=[CONTEXT], repeats=repeats)
            for side in ("a", "b"):
                runs[side, repeats] = run_grid(
                    grid,
                    assistant,
                    client=client,
                    store=tmp_path,
                    run_id=f"{side}{repeats}",
                    options=RunOptions(progress=False),
                )
    first = compare_runs(runs["a", 1], runs["b", 1], card, judge=False)
    assert not any("peeking" in w for w in first.warnings)
    assert len(list((tmp_path / PEEKING_DIR).glob("*.json"))) == 1
    again = compare_runs(runs["a", 1], runs["b", 1], card, judge=False)
    assert not any("peeking" in w for w in again.warnings)  # the same size is not a new look
    more = compare_runs(runs["a", 2], runs["b", 2], card, judge=False)
    warning = next(w for w in more.warnings if "peeking" in w)
    done = [int((runs[s, 1].conversations["status"] == "done").sum()) for s in ("a", "b")]
    assert f"a1 vs b1 with {done[0]} vs {done[1]} conversations" in warning
    assert "SequentialPlan" in warning
    assert f"warning: {warning}" in str(more)
    quiet = compare_runs(
        runs["a", 2], runs["b", 2], card, judge=False, options=CompareOptions(record_looks=False)
    )
    assert not any("peeking" in w for w in quiet.warnings)
