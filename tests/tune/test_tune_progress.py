"""Issue 33, item 8: a tune's waves end every arm's progress short of its grid (and an arm
dropped after a wave never reaches it): those bars ended red in a notebook, as failures do.
Each wave's bar ends as finished, saying which repeats it ran; here as lines, which say it."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalkit.demo import DemoService, demo_grid, demo_scorecard
from evalkit.runner import RunOptions
from evalkit.tuning import TuneOptions, load_variants, tune

VARIANTS = Path(__file__).resolve().parents[2] / "examples" / "variants" / "urdu_reminder.yaml"


@pytest.fixture
def service(tmp_path: Path) -> Iterator[DemoService]:
    with DemoService(tmp_path / "store") as svc:
        yield svc


def test_every_wave_of_every_arm_ends_finished(
    service: DemoService, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALKIT_PROGRESS", "lines")
    stream = io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    arms = [s for s in load_variants(VARIANTS) if s.variant.name in ("confirm-slot", "warm-tone")]
    grid = demo_grid(1)
    result = tune(
        grid,
        service.assistant_id,
        demo_scorecard(),
        variants=arms,
        client=service.client,
        judge=False,
        store=service.store,
        # the waves alone (a winner's fresh repeats would run the grid's last repeats)
        options=TuneOptions(
            run_options=RunOptions(concurrency=16), max_repeats=2, confirm_repeats=0
        ),
    )
    lines = stream.getvalue().splitlines()
    ends = [line for line in lines if " after " in line]
    assert len(ends) == sum(" recorded, " in line for line in lines)  # every bar ended
    assert not [line for line in ends if ": stopped after" in line], ends  # none red
    first_wave = f"finished (first 1 of 2 repeats: {grid.n_cells} of {2 * grid.n_cells}) after"
    assert sum(first_wave in line for line in ends) == 3, ends  # the control and both arms
    board = result.leaderboard.set_index("variant")
    in_at_the_end = 1 + int(board.loc[["confirm-slot", "warm-tone"], "dropped_at"].isna().sum())
    assert sum(": finished after" in line for line in ends) == in_at_the_end, ends
