"""A demo emulator on loopback with planted weaknesses, a draft that asks for every behaviour
the scorecard checks (so what fails is what was planted), and the emulated persona generator."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from evalkit.data import bundled_path
from evalkit.demo import DemoService
from evalkit.demo._story import CONTACTS, CONTEXT, FULL_INSTRUCTIONS
from evalkit.grid import Grid, load_personas
from evalkit.personas import PersonaGenerator


@dataclass
class World:
    service: DemoService
    generator: PersonaGenerator
    grid: Grid
    store: Path


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    store = tmp_path_factory.mktemp("personas-store")
    with DemoService(store, seed=11, planted_weaknesses=True) as svc:
        svc.set_draft_prompt(FULL_INSTRUCTIONS)
        generator = PersonaGenerator(
            model="emulator-generator", base_url=svc.emulator.generator_base_url
        )
        grid = Grid(load_personas(bundled_path("personas")), variables=CONTACTS, contexts=[CONTEXT])
        yield World(svc, generator, grid, store)
