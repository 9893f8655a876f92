"""Issue 33, item 8: in a notebook, a bar whose work ended by plan (the first waves of a tune
arm or of a sequential comparison, a wave cancelled because a look stopped) ended red, as a
failure does. It ends as finished, saying why; a real failure still ends red."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest

from evalkit._util._progress import PlannedEnd, Progress, planned_stop
from evalkit.api import AsyncClient, Client
from evalkit.emulator import EmulatorServer
from evalkit.runner import RunOptions, arun_grid, run_grid

from .runner_fixtures import emulator_fixture
from .runner_support import build_assistant, load_grid

emu = emulator_fixture(time_scale=0.002, seed=33)


def bar_style(progress: Progress) -> str:
    """The style of the ipywidgets bar tqdm.notebook drew (``danger`` is red)."""
    bars = [c for c in progress.widget.children if hasattr(c, "bar_style")]
    assert len(bars) == 1
    return str(bars[0].bar_style)


@pytest.fixture
def widgets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALKIT_PROGRESS", "widget")


@pytest.mark.usefixtures("widgets")
def test_a_planned_end_short_of_the_total_ends_finished() -> None:
    with Progress(54, 0, "prod", planned=PlannedEnd(36, "first 2 of 3 repeats")) as bar:
        for _ in range(36):
            bar.update("done")
    assert bar.mode == "widget"
    assert bar_style(bar) == "success"
    assert bar.ended == "finished"
    assert bar.note == "first 2 of 3 repeats: 36 of 54"
    shown = bar.widget.children[0].value.replace("\u2007", " ")  # tqdm pads with figure spaces
    assert "prod (first 2 of 3 repeats: 36 of 54)" in shown


@pytest.mark.usefixtures("widgets")
def test_a_failure_or_a_shortfall_still_ends_red() -> None:
    failed = Progress(54, 0, "prod")

    def fail() -> None:
        with failed:
            failed.update("done")
            raise RuntimeError("the service is down")

    with pytest.raises(RuntimeError):
        fail()
    assert bar_style(failed) == "danger"
    assert failed.ended == "stopped"
    # a plan not reached (a time budget cut it) is no planned end
    with Progress(54, 0, "prod", planned=PlannedEnd(36, "first 2 of 3 repeats")) as short:
        short.update("done")
    assert bar_style(short) == "danger"
    with Progress(3, 0, "prod") as whole:
        for _ in range(3):
            whole.update("done")
    assert bar_style(whole) == "success"


async def _cancelled(message: str | None) -> Progress:
    progress: list[Progress] = []
    started = asyncio.Event()

    async def work() -> None:
        with Progress(54, 18, "draft") as bar:
            progress.append(bar)
            bar.update("done")
            started.set()
            await asyncio.sleep(60)

    task = asyncio.create_task(work())
    await started.wait()
    task.cancel(message)
    with pytest.raises(asyncio.CancelledError):
        await task
    return progress[0]


@pytest.mark.usefixtures("widgets")
def test_a_wave_cancelled_by_a_stopping_look_ends_finished() -> None:
    stopped = asyncio.run(_cancelled(planned_stop("stopped early at look 2")))
    assert bar_style(stopped) == "success"
    assert stopped.note == "stopped early at look 2: 19 of 54"
    interrupted = asyncio.run(_cancelled(None))  # Ctrl-C, a sibling's error: red
    assert bar_style(interrupted) == "danger"


@pytest.fixture(scope="module")
def assistant_id(emu: EmulatorServer) -> str:
    return build_assistant(emu)


def test_a_run_of_the_first_repeats_ends_finished(
    emu: EmulatorServer, assistant_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runner tells its bar where the first waves end (here as lines, which say it)."""
    monkeypatch.setenv("EVALKIT_PROGRESS", "lines")
    stream = io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    grid = load_grid(2, 3)
    with Client(emu.base_url, emu.api_key) as client:
        run_grid(
            grid,
            assistant_id,
            client=client,
            store=tmp_path,
            run_id="r",
            options=RunOptions(repeats=2),
        )
    last = stream.getvalue().splitlines()[-1]
    n = 2 * grid.n_cells
    assert last.startswith(f"draft r: finished (first 2 of 3 repeats: {n} of {len(grid)}) after")


def test_a_run_cancelled_by_a_stopping_look_ends_finished(
    emu: EmulatorServer, assistant_id: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EVALKIT_PROGRESS", "lines")

    class Lines(io.StringIO):
        """stderr that says when the first progress line after the start arrived."""

        def __init__(self) -> None:
            super().__init__()
            self.counted = asyncio.Event()

        def write(self, text: str) -> int:
            if "(" in text:
                self.counted.set()
            return super().write(text)

    async def cancel_after_first(message: str | None) -> str:
        stream = Lines()
        monkeypatch.setattr("sys.stderr", stream)
        async with AsyncClient(emu.base_url, emu.api_key) as client:
            task = asyncio.create_task(
                arun_grid(
                    load_grid(2, 40),
                    assistant_id,
                    client=client,
                    store=tmp_path,
                    run_id="cut" if message is None else "planned",
                    options=RunOptions(concurrency=2),
                )
            )
            await stream.counted.wait()
            task.cancel(message)
            with pytest.raises(asyncio.CancelledError):
                await task
        return stream.getvalue().splitlines()[-1]

    said = asyncio.run(cancel_after_first(planned_stop("stopped early at look 1")))
    assert said.startswith("draft planned: finished (stopped early at look 1: "), said
    said = asyncio.run(cancel_after_first(None))  # Ctrl-C or a sibling's error: a stop
    assert said.startswith("draft cut: stopped after"), said


steady_emu = emulator_fixture(time_scale=0.02, seed=33)


def test_a_sequential_stop_ends_the_cancelled_wave_finished(
    steady_emu: EmulatorServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The draft regresses by design: a look stops before the last, the wave started ahead of
    it is cancelled, and every bar of the comparison ends as finished."""
    from evalkit.compare import SequentialPlan
    from evalkit.demo import demo_grid, demo_scorecard
    from evalkit.flows import DraftVsProdOptions, _sequential, draft_vs_prod

    from .test_sequential_flow import _reminder_with_a_draft

    class Lines(io.StringIO):
        """stderr that says when both sides of the wave after the first have started."""

        def __init__(self) -> None:
            super().__init__()
            self.ahead = asyncio.Event()

        def write(self, text: str) -> int:
            written = super().write(text)
            if self.getvalue().count(" recorded, ") >= 4:
                self.ahead.set()
            return written

    stream = Lines()
    look = _sequential.agrade_run

    async def look_once_the_next_wave_runs(*args: object, **kwargs: object) -> object:
        if getattr(kwargs.get("options"), "save", True) is False:  # a look: the wave is ahead
            await stream.ahead.wait()
        return await look(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_sequential, "agrade_run", look_once_the_next_wave_runs)
    monkeypatch.setenv("EVALKIT_PROGRESS", "lines")
    monkeypatch.setattr("sys.stderr", stream)
    assistant_id = _reminder_with_a_draft(steady_emu, tmp_path)
    with Client(steady_emu.base_url, steady_emu.api_key) as client:
        result = draft_vs_prod(
            demo_grid(6),
            assistant_id,
            demo_scorecard(),
            client=client,
            judge=False,
            store=tmp_path,
            options=DraftVsProdOptions(sequential=SequentialPlan(6)),
        )
    record = result.sequential
    assert record is not None
    assert record.stopped_at < 6  # the demo's draft regresses: an early stop
    assert record.cancelled > 0
    lines = stream.getvalue().splitlines()
    ends = [line for line in lines if " after " in line]
    assert len(ends) == sum(" recorded, " in line for line in lines)  # every bar ended
    assert not [line for line in ends if ": stopped after" in line], ends  # none red
    stopped = f"finished (stopped early at look {record.stopped_at}: "
    assert sum(stopped in line for line in ends) == 2, ends  # prod and draft, cancelled
