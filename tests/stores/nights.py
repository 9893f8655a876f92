"""Nights of runs for the history, catalog and SQL tests: real runs on the emulator, graded
with a bundled scorecard's deterministic rules (no judge), written to any store."""

from __future__ import annotations

from typing import Any

from evalkit.emulator import EmulatorServer
from evalkit.grading import Scorecard, grade_run
from evalkit.runner import RunOptions, run_grid
from evalkit.store import StoreLike

from ..runner_support import build_assistant, load_grid

SCORECARD = "scorecards/appointment-reminder-ur.yaml"


def scorecard() -> Scorecard:
    from evalkit.data import scorecards_path

    return Scorecard.load(scorecards_path() / "appointment-reminder-ur.yaml")


def run_nights(
    emu: EmulatorServer, store: StoreLike, nights: int, *, assistant: str | None = None
) -> dict[str, Any]:
    """``nights`` graded runs of one small grid (3 personas x 2 records x 2 repeats)."""
    assistant = assistant or build_assistant(emu)
    card = scorecard()
    from evalkit.api import Client

    client = Client(emu.base_url, emu.api_key)
    runs = []
    for night in range(nights):
        run = run_grid(
            load_grid(3, 2),
            assistant,
            client=client,
            store=store,
            run_id=f"night-{night:02d}",
            options=RunOptions(concurrency=8, progress=False),
        )
        grade_run(run, card, judge=False)
        runs.append(run)
    return {"assistant": assistant, "runs": runs, "scorecard": card}
