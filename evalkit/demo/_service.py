"""The embedded emulator holding the demo's assistant (prod = v1 published, draft = v2), and
running grids on it into the demo's store."""

from __future__ import annotations

import contextlib
import logging
import shutil
from collections.abc import Iterator
from pathlib import Path

from ..api import Client
from ..compare import SequentialPlan
from ..emulator import EmulatorAdmin, EmulatorServer, EmulatorSettings, serve
from ..flows import DraftVsProd, DraftVsProdOptions, draft_vs_prod
from ..grading import Judge
from ..grid import Grid
from ..runner import RunOptions, run_grid
from ..store import Run
from ..targets import ConfigSnapshot, SnapshotStore, Target
from ._story import (
    CEILING_FLOOR_S,
    CONTACTS,
    CONTEXT,
    DRAFT_INSTRUCTIONS,
    GREETING,
    PROD_INSTRUCTIONS,
    TIME_SCALE,
    TURN_DELAY,
    demo_scorecard,
)

__all__ = ["DemoService", "build_demo_assistant", "fresh_store"]

logger = logging.getLogger("evalkit.demo")


def build_demo_assistant(emulator: EmulatorAdmin, store: str | Path = "runs") -> str:
    """The demo's Urdu clinic reminder on ``emulator``, as ``evalkit demo`` has it: prod = v1
    published (its config snapshot recorded under ``store``, so prod runs on a clone), the
    "simplified" draft saved as v2. Returns its id (what ``evalkit emulator --demo-assistant``
    prints as ``EVALKIT_ASSISTANT_ID``), in the project of ``emulator``'s key (a server, or an
    :class:`~evalkit.emulator.EmulatorAdmin` holding another project's key).

    The config is the build's whole default (its stt, llm and tts blocks: the bundled variants'
    LLM-knob patch and the viewer's play control need them) with the greeting's instructions.
    """
    from ..emulator import default_config

    config = default_config(PROD_INSTRUCTIONS, True)
    config["agent"]["greetingInstructions"] = GREETING
    built = emulator.build(
        "Clinic appointment reminder",
        {"context": CONTEXT, "sampleRows": CONTACTS[:1]},
        PROD_INSTRUCTIONS,
        initial_greeting=True,
        config=config,
    )
    assistant_id = str(built["realtimeAssistantId"])
    with Client(emulator.base_url, emulator.api_key) as client:
        assistant = next(a for a in client.list_assistants() if a.id == assistant_id)
        SnapshotStore(store).save(ConfigSnapshot.from_assistant(assistant))
        emulator.publish(assistant_id)
        draft = assistant.config.to_json()
        draft["agent"]["instructions"] = DRAFT_INSTRUCTIONS
        client.update_assistant(assistant_id, config=draft)
    return assistant_id


class DemoService:
    """The embedded emulator with the demo's assistant: prod = v1 (published), draft = v2.

    A context manager; ``client``, ``assistant_id`` and ``judge`` (the emulated judge) are
    ready inside it. A snapshot of v1 is recorded under ``store`` so prod can run on a clone.
    ``planted_weaknesses``: the emulator's agent gives way for certain callers (what a search
    for failing callers is measured against; see ``EmulatorSettings``).
    """

    def __init__(
        self,
        store: str | Path,
        *,
        seed: int = 7,
        time_scale: float = TIME_SCALE,
        turn_delay: float = TURN_DELAY,
        planted_weaknesses: bool = False,
    ):
        self.store = Path(store)
        self.seed = seed
        self.time_scale = time_scale
        self.turn_delay = turn_delay
        self.planted_weaknesses = planted_weaknesses
        self._stack = contextlib.ExitStack()
        self.emulator: EmulatorServer
        self.client: Client
        self.assistant_id: str
        self.judge: Judge

    def __enter__(self) -> DemoService:
        try:
            settings = EmulatorSettings(
                time_scale=self.time_scale,
                seed=self.seed,
                turn_delay=self.turn_delay,
                min_ceiling_s=CEILING_FLOOR_S,
                planted_weaknesses=self.planted_weaknesses,
            )
            self.emulator = self._stack.enter_context(serve(settings=settings))
            self.client = self._stack.enter_context(
                Client(self.emulator.base_url, self.emulator.api_key)
            )
            self.judge = Judge(
                model="emulator-judge",
                base_url=self.emulator.judge_base_url,
                cache_dir=self.store / ".judge-cache",
            )
            self.assistant_id = self._set_up_assistant()
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stack.close()

    def _set_up_assistant(self) -> str:
        built = self.emulator.build(
            "Clinic appointment reminder",
            {"context": CONTEXT, "sampleRows": CONTACTS[:1]},
            PROD_INSTRUCTIONS,
            initial_greeting=True,
        )
        assistant_id = str(built["realtimeAssistantId"])
        assistant = next(a for a in self.client.list_assistants() if a.id == assistant_id)
        SnapshotStore(self.store).save(ConfigSnapshot.from_assistant(assistant))  # v1, for prod
        self.emulator.publish(assistant_id)
        config = assistant.config.to_json()
        config["agent"]["instructions"] = DRAFT_INSTRUCTIONS
        config["agent"]["greetingInstructions"] = GREETING
        self.client.update_assistant(assistant_id, config=config)
        logger.info("demo assistant %s: prod v1 published, draft v2 saved", assistant_id)
        return assistant_id

    def set_draft_prompt(self, instructions: str) -> None:
        """Save ``instructions`` as the draft's prompt (a new draft version if they changed)."""
        assistant = next(a for a in self.client.list_assistants() if a.id == self.assistant_id)
        config = assistant.config.to_json()
        if config["agent"].get("instructions") == instructions:
            return
        config["agent"]["instructions"] = instructions
        self.client.update_assistant(self.assistant_id, config=config)

    def run(
        self,
        grid: Grid,
        *,
        target: Target = "draft",
        run_id: str | None = None,
        options: RunOptions | None = None,
    ) -> Run:
        """Run ``grid`` on the demo assistant's ``target`` into the demo's store (``options``:
        None is 16 conversations at once, no progress bar)."""
        return run_grid(
            grid,
            self.assistant_id,
            client=self.client,
            target=target,
            store=self.store,
            run_id=run_id,
            options=options or RunOptions(concurrency=16, progress=False),
        )

    def draft_vs_prod(
        self,
        grid: Grid,
        *,
        progress: bool | None = None,
        sequential: bool = False,
    ) -> DraftVsProd:
        """Run ``grid`` on prod and on the draft, grade and compare (``sequential``: in waves
        of one repeat per cell, the grid's repeats at most, stopping at the deciding look)."""
        plan = SequentialPlan(grid.repeats) if sequential else None
        return draft_vs_prod(
            grid,
            self.assistant_id,
            demo_scorecard(),
            client=self.client,
            judge=self.judge,
            store=self.store,
            options=DraftVsProdOptions(
                run=RunOptions(concurrency=16, progress=progress), sequential=plan
            ),
        )


@contextlib.contextmanager
def fresh_store(store: Path) -> Iterator[Path]:
    """A demo store emptied first, so a second demo in the same folder starts clean."""
    if store.exists():
        shutil.rmtree(store)
    store.mkdir(parents=True)
    yield store
