"""Issue 33, item 2: a failing tune arm is reported and left out while the others go on; the
bundled variants work on an assistant created from examples/assistant.yaml; clones are deleted
on every path out (a cancelled run included); a left-over clone is reported once per process."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from evalkit.api import AsyncClient, Client
from evalkit.demo import demo_grid, demo_scorecard
from evalkit.emulator import EmulatorServer, serve
from evalkit.grading import Judge
from evalkit.runner import RunOptions
from evalkit.targets import (
    CLONE_PREFIX,
    CloneOwner,
    SnapshotStore,
    Variant,
    resolve_target,
    simulation_target,
)
from evalkit.tuning import TuneOptions, TuneResult, tune

ROOT = Path(__file__).resolve().parents[2]
VARIANTS = ROOT / "examples" / "variants" / "urdu_reminder.yaml"
EXAMPLE = yaml.safe_load((ROOT / "examples" / "assistant.yaml").read_text(encoding="utf-8"))
FAST = RunOptions(concurrency=16, progress=False)


@pytest.fixture(scope="module")
def emu() -> Iterator[EmulatorServer]:
    with serve(time_scale=0.01, seed=5) as running:
        yield running


@pytest.fixture
def client(emu: EmulatorServer) -> Iterator[Client]:
    with Client(emu.base_url, emu.api_key) as made:
        yield made


@pytest.fixture
def example(client: Client) -> str:
    """An assistant created from examples/assistant.yaml, as README's first steps make one."""
    return client.create_assistant("Clinic reminder", EXAMPLE).id


def clones(client: Client) -> list[str]:
    return [a.name for a in client.list_assistants() if a.name.startswith(CLONE_PREFIX)]


def sweep(
    emu: EmulatorServer, client: Client, assistant: str, variants: object, store: Path
) -> TuneResult:
    judge = Judge(model="emulator-judge", base_url=emu.judge_base_url)
    return tune(
        demo_grid(1),
        assistant,
        demo_scorecard(),
        variants=variants,  # type: ignore[arg-type]
        client=client,
        judge=judge,
        store=store,
        options=TuneOptions(run_options=FAST, max_repeats=2, adaptive=False),
    )


@pytest.mark.slow
def test_the_bundled_variants_run_on_the_example_assistant(
    emu: EmulatorServer, client: Client, example: str, tmp_path: Path
) -> None:
    result = sweep(emu, client, example, VARIANTS, tmp_path)
    assert result.details["failed_arms"] == []
    assert set(result.leaderboard["variant"]) == {
        "draft",
        "confirm-slot",
        "terse-no-greeting",
        "warm-tone",
        "low-reasoning",
    }
    assert clones(client) == []


@pytest.mark.slow
def test_a_failing_arm_is_reported_and_left_out_and_the_others_go_on(
    emu: EmulatorServer,
    client: Client,
    example: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    broken = Variant("no-provider", {"llm": {"default": {"reasoningEffort": "low"}}})
    fine = Variant.with_instructions("short", "You are Sana. Remind {{customer_name}} in Urdu.")
    with caplog.at_level(logging.WARNING, logger="evalkit"):
        result = sweep(emu, client, example, [broken, fine], tmp_path)
    assert result.details["failed_arms"] == ["no-provider"]
    assert list(result.leaderboard["variant"]) == ["draft", "short"]
    (said,) = [w for w in result.warnings if "no-provider" in w]
    assert "failed in wave 1" in said
    assert "config.llm.default.provider" in said
    assert "other arms go on" in caplog.text
    assert clones(client) == []


def slowed(method: Callable[..., Awaitable[Any]], *, before: float, started: asyncio.Event) -> Any:
    """``method`` that sets ``started`` as soon as it is called, then takes ``before`` seconds
    to reach the service (latency on the way out)."""

    async def slow(self: AsyncClient, *args: Any, **kwargs: Any) -> Any:
        started.set()
        await asyncio.sleep(before)
        return await method(self, *args, **kwargs)

    return slow


@pytest.mark.parametrize("when", ["while-creating", "cancelled-twice"])
def test_a_cancelled_run_still_deletes_its_clone(
    emu: EmulatorServer,
    client: Client,
    example: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    when: str,
) -> None:
    """Ctrl-C (or a sibling arm's error) cancels the task holding a clone, while the service
    is making it or (a second Ctrl-C) while it is being deleted; then the client closes and
    the loop ends (``asyncio.run``), so the clone must be gone once the task has finished.
    Each cancellation is ordered by an event the slowed call sets, never by a sleep."""
    before = {a.id for a in client.list_assistants()}
    made = asyncio.Event()  # the service made the clone; its answer is still on its way
    holding = asyncio.Event()  # the run holds the clone
    deleting = asyncio.Event()  # the deletion has been sent for
    real_create = AsyncClient.create_assistant

    async def create(self: AsyncClient, *args: Any, **kwargs: Any) -> Any:
        done = await real_create(self, *args, **kwargs)
        made.set()
        await asyncio.sleep(0.5 if when == "while-creating" else 0)  # the answer's latency
        return done

    monkeypatch.setattr(AsyncClient, "create_assistant", create)
    monkeypatch.setattr(
        AsyncClient,
        "delete_assistant",
        slowed(AsyncClient.delete_assistant, before=0.3, started=deleting),
    )
    left: set[str] = set()

    async def hold(aclient: AsyncClient) -> None:
        resolved = await resolve_target(
            aclient, example, Variant.with_instructions("v", "Hi"), SnapshotStore(tmp_path)
        )
        async with simulation_target(aclient, resolved, "cancelled-run"):
            holding.set()
            await asyncio.sleep(3600)

    async def go() -> None:
        async with AsyncClient(emu.base_url, emu.api_key) as aclient:
            task = asyncio.create_task(hold(aclient))
            if when == "while-creating":
                await made.wait()
                assert not holding.is_set()  # cancelled before the answer came back
            else:
                await holding.wait()
            task.cancel()
            if when == "cancelled-twice":
                await deleting.wait()
                assert not task.done()
                task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert deleting.is_set()
            # nothing else may run on the loop now: what is listed is what the task left
            left.update(a.id for a in client.list_assistants())

    asyncio.run(go())
    assert left - before == set()


def test_a_left_over_clone_is_reported_once_per_client(
    emu: EmulatorServer,
    client: Client,
    example: str,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    expired = CloneOwner("gone", "some-host", 1, datetime.now(UTC) - timedelta(hours=1))
    left = client.create_assistant(
        f"{CLONE_PREFIX} left over", EXAMPLE, description=expired.description(example)
    ).id

    async def resolve_three_times(aclient: AsyncClient) -> None:
        for _ in range(3):
            await resolve_target(aclient, example, "draft", SnapshotStore(tmp_path))

    async def go() -> None:
        async with AsyncClient(emu.base_url, emu.api_key) as aclient:
            await resolve_three_times(aclient)

    try:
        with caplog.at_level(logging.WARNING, logger="evalkit.targets"):
            asyncio.run(go())
    finally:
        client.delete_assistant(left)
    said = [r.getMessage() for r in caplog.records if left in r.getMessage()]
    assert len(said) == 1
    assert "evalkit clones --delete" in said[0]
