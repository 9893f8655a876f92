"""generate_personas / agenerate_personas: personas along the trait axes, checked, piloted.

The trait combinations are drawn from the axes (:mod:`._sampling`: pairwise coverage, or
uniformly), the generator writes one persona per combination (:mod:`._generator`), every
persona is checked before it joins (:mod:`._checks`: fields, length, secrets, tokens the
grid's records cannot fill, near-duplicates of the grid's personas and of each other), and,
with an assistant to run against, each runs ``pilot_conversations`` conversations on the draft
(the grid's first record and context; run ``<prefix>-pilot``): a persona whose caller does not
behave as described (:func:`evalkit.simulation_flags`) is dropped and counted.
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from .._util import now, run_sync
from ..api import AssistantConfig, AsyncClient, Client, as_async_client
from ..diagnose import simulation_flags
from ..grading import Scorecard, ScorecardLike
from ..grid import Grid, Persona
from ..runner import Budget, arun_grid
from ..store import StoreLike, open_store
from ._checks import CheckLimits, Refused, pilot_drops
from ._generation import Generation, assistant_instructions, instructions_of, scorecard_rules
from ._generator import PersonaGenerator, PersonaSource
from ._options import GenerateOptions
from ._result import GeneratedPersonas, _traits_frame
from ._sampling import TraitSampler

__all__ = ["agenerate_personas", "generate_personas", "grid_records", "personas_run_prefix"]

logger = logging.getLogger("evalkit.personas")

AssistantLike = str | Mapping[str, Any] | AssistantConfig
RECORDS_FOLDER = ".personas"


def personas_run_prefix() -> str:
    """``personas-YYYYmmdd-HHMMSS-<4 hex>``: a fresh flow's run-id prefix."""
    return f"personas-{now().strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


def grid_records(grid: Grid | None) -> tuple[list[Mapping[str, Any] | None], list[str | None]]:
    """A grid's variables records and contexts (``[None]`` each without a grid)."""
    if grid is None:
        return [None], [None]
    definition = grid.definition()
    records = list(definition["variables"]) or [None]
    contexts = list(definition["contexts"]) or [None]
    return records, contexts


def as_source(generator: PersonaSource | None) -> PersonaSource:
    """``generator``, or a :class:`PersonaGenerator` configured from the environment."""
    if generator is None:
        return PersonaGenerator()
    if not hasattr(generator, "agenerate"):
        raise TypeError(
            f"generator: expected a PersonaGenerator (or an object with agenerate), got "
            f"{generator!r}"
        )
    return generator


def record_folder(store: StoreLike, prefix: str) -> Any:
    """Where a flow's records go: ``<store>/.personas/<prefix>/``."""
    return open_store(store) / RECORDS_FOLDER / prefix


def read_record(folder: Any, name: str) -> dict[str, Any] | None:
    path = folder / name
    try:
        if not path.exists():
            return None
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def write_record(folder: Any, name: str, data: Mapping[str, Any]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, ensure_ascii=False, indent=1, default=str)
    (folder / name).write_bytes(text.encode("utf-8", "backslashreplace"))


def personas_from(items: Any) -> list[Persona]:
    return [Persona.from_mapping(p) for p in items or []]


async def _instructions(assistant: AssistantLike, client: AsyncClient | None) -> str:
    if isinstance(assistant, str):
        assert client is not None
        return await assistant_instructions(client, assistant)
    config = assistant.to_json() if isinstance(assistant, AssistantConfig) else dict(assistant)
    return instructions_of(config)


def mark_dropped(rows: list[dict[str, Any]], drops: Mapping[str, tuple[int, int, str]]) -> None:
    """Rows of personas the pilot dropped get ``status`` ``dropped`` and the reason."""
    for row in rows:
        if row["status"] == "kept" and row["label"] in drops:
            flagged, pilots, why = drops[row["label"]]
            refusal = Refused("not-shown", f"flagged in {flagged} of {pilots} pilot(s): {why}")
            row.update(status="dropped", kind=refusal.kind, reason=refusal.reason)


async def agenerate_personas(
    assistant: AssistantLike,
    scorecard: ScorecardLike,
    grid: Grid | None = None,
    *,
    generator: PersonaSource | None = None,
    client: Client | AsyncClient | None = None,
    store: StoreLike = "runs",
    options: GenerateOptions | None = None,
) -> GeneratedPersonas:
    """The async twin of :func:`generate_personas`."""
    opts = options or GenerateOptions()
    card = Scorecard.validate(scorecard)
    source = as_source(generator)
    space = opts.space
    records, contexts = grid_records(grid)
    prefix = opts.run_prefix or personas_run_prefix()
    pilot = opts.pilot_conversations if isinstance(assistant, str) else 0
    aclient, owned = as_async_client(client) if isinstance(assistant, str) else (None, False)
    try:
        folder = record_folder(store, prefix)
        saved = read_record(folder, "generate.json")
        generation = Generation(
            source,
            space,
            await _instructions(assistant, aclient),
            scorecard_rules(card),
            CheckLimits(opts.max_behavior_chars, records),
            opts.max_similarity,
            opts.per_call,
            opts.seed,
            existing=[(p.label, p.behavior) for p in (grid.personas if grid else ())],
        )
        if saved is not None and isinstance(saved.get("personas"), list):
            kept = personas_from(saved["personas"])
            rows = list(saved.get("rows") or [])
            generation.calls = int(saved.get("generator_calls", 0))
            generation.malformed = int(saved.get("malformed", 0))
        else:
            combos = TraitSampler(space, opts.seed, opts.strategy).draw(opts.n)
            kept, rows = await generation.make(combos, 1)
            write_record(
                folder,
                "generate.json",
                {
                    "personas": [p.to_mapping() for p in kept],
                    "rows": rows,
                    "generator_calls": generation.calls,
                    "malformed": generation.malformed,
                },
            )
        spent = 0
        run_id = None
        if pilot and kept:
            assert aclient is not None
            assert isinstance(assistant, str)
            run_id = f"{prefix}-pilot"
            pilot_grid = Grid(
                kept,
                variables=records[:1] if records[0] is not None else None,
                contexts=contexts[:1],
                repeats=pilot,
            )
            run = await arun_grid(
                pilot_grid,
                assistant,
                "draft",
                run_id,
                client=aclient,
                store=store,
                options=replace(
                    opts.run_options,
                    budget=Budget(len(pilot_grid), opts.run_options.budget.max_seconds),
                    allow_missing_variables=grid is None,
                ),
            )
            spent = len(run.conversations)
            drops = pilot_drops(
                simulation_flags(run, personas=kept), run.conversations, opts.max_flagged_share
            )
            mark_dropped(rows, drops)
            kept = [p for p in kept if p.label not in drops]
        table = _traits_frame(rows, space.names)
        details = {
            "generator": source.describe(),
            "seed": opts.seed,
            "strategy": opts.strategy,
            "generator_calls": generation.calls,
            "malformed": generation.malformed,
            "run_prefix": prefix,
            "pilot_run_id": run_id,
            "pilot_conversations": spent,
        }
        return GeneratedPersonas(tuple(kept), table, details)
    finally:
        if owned and aclient is not None:
            await aclient.aclose()


def generate_personas(
    assistant: AssistantLike,
    scorecard: ScorecardLike,
    grid: Grid | None = None,
    *,
    generator: PersonaSource | None = None,
    client: Client | AsyncClient | None = None,
    store: StoreLike = "runs",
    options: GenerateOptions | None = None,
) -> GeneratedPersonas:
    """Generate caller personas for ``assistant`` (an assistant id, or a config) along the
    trait axes, check them and pilot them (module docstring).

    ``scorecard``: the rules the generator aims the callers at; ``grid``: the grid they will
    join (its personas are what a near-duplicate is measured against, its records what a
    ``{{token}}`` must be filled by, its first record and context what the pilot runs on).
    ``generator``: a :class:`~evalkit.personas.PersonaGenerator` (None: one from
    ``EVALKIT_GENERATOR_*``). A config instead of an assistant id skips the pilot. Returns a
    :class:`~evalkit.personas.GeneratedPersonas` (``personas``, ``table``, ``write(folder)``).
    Works in scripts and notebooks (:func:`agenerate_personas` is the async twin).
    """
    return run_sync(
        lambda: agenerate_personas(
            assistant,
            scorecard,
            grid,
            generator=generator,
            client=client,
            store=store,
            options=options,
        )
    )
