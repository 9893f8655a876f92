"""generate_personas on the loopback emulator's emulated generator: personas along the trait
axes with their traits and provenance, every flawed one refused before it joins a grid and
counted, the pilot's simulation flags dropping callers that do not behave as described."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from evalkit.demo._story import demo_scorecard
from evalkit.grid import load_personas
from evalkit.personas import (
    GENERATOR_PROMPT_VERSION,
    GeneratedPersonas,
    GenerateOptions,
    PersonaGenerator,
    generate_personas,
)

from .conftest import World


def _generator_noise(world: World, **body: float) -> None:
    emu = world.service.emulator
    answer = httpx.put(
        f"{emu.admin_url}/generator",
        json=body,
        headers={"Authorization": f"Bearer {emu.api_key}"},
    )
    answer.raise_for_status()


def _generate(world: World, prefix: str, **knobs: object) -> GeneratedPersonas:
    return generate_personas(
        world.service.assistant_id,
        demo_scorecard(),
        world.grid,
        generator=world.generator,
        client=world.service.client,
        store=world.store,
        options=GenerateOptions(run_prefix=prefix, seed=5, **knobs),  # type: ignore[arg-type]
    )


def test_personas_carry_their_traits_and_provenance(world: World, tmp_path: Path) -> None:
    _generator_noise(world, flawRate=0.0, malformedRate=0.0)
    made = _generate(world, "gen-a", n=6, pilot_conversations=1)
    assert made.personas
    kept = made.table[made.table["status"] == "kept"]
    assert len(kept) == len(made.personas)
    for persona in made.personas:
        assert set(persona.traits or {}) >= {"language", "age", "hostility", "noise"}
        assert persona.provenance == {
            "generator": "emulator-generator",
            "prompt_version": GENERATOR_PROMPT_VERSION,
            "seed": 5,
            "round": 1,
        }
        assert "{{" not in persona.behavior
    # the trait combinations asked for are all different
    combos = {tuple(sorted((p.traits or {}).items())) for p in made.personas}
    assert len(combos) == len(made.personas)
    written = made.write(tmp_path / "generated")
    loaded = load_personas(tmp_path / "generated")
    assert len(written) == len(loaded) == len(made.personas)
    assert [p.traits for p in sorted(loaded, key=lambda p: p.label)] == [
        p.traits for p in sorted(made.personas, key=lambda p: p.label)
    ]
    assert "kept" in made.headline()


def test_every_flawed_persona_is_refused_and_counted(world: World) -> None:
    _generator_noise(world, flawRate=1.0, malformedRate=0.0)
    try:
        made = _generate(world, "gen-b", n=12, pilot_conversations=0)
    finally:
        _generator_noise(world, flawRate=0.0, malformedRate=0.0)
    refused = made.table[made.table["status"] != "kept"]
    # each generator mistake (too long, a token, a secret, a near copy, the asked-for behaviour
    # left out, no label) is caught before a conversation runs
    assert len(refused) >= 8, made.table[["status", "kind", "reason"]]
    assert set(refused["kind"]) >= {"secret", "token", "too-long"}
    for persona in made.personas:
        assert "sk_" not in persona.behavior
        assert len(persona.behavior) <= 1500
    assert str(len(refused)) in made.headline() or "refused" in made.headline()


def test_a_malformed_answer_is_asked_again_then_counted(world: World) -> None:
    _generator_noise(world, flawRate=0.0, malformedRate=1.0)
    try:
        made = _generate(world, "gen-c", n=4, pilot_conversations=0)
    finally:
        _generator_noise(world, flawRate=0.0, malformedRate=0.0)
    assert not made.personas
    assert set(made.table["kind"]) == {"missing"}
    assert made.details["malformed"] >= 3


def test_the_generator_key_is_never_written(world: World) -> None:
    secret = "sk_generator_do_not_leak_0123456789"
    keyed = PersonaGenerator(
        model="emulator-generator",
        base_url=world.service.emulator.generator_base_url,
        api_key=secret,
    )
    assert secret not in repr(keyed)
    made = generate_personas(
        world.service.assistant_id,
        demo_scorecard(),
        world.grid,
        generator=keyed,
        client=world.service.client,
        store=world.store,
        options=GenerateOptions(run_prefix="gen-d", n=2, pilot_conversations=0),
    )
    assert made.personas
    for path in Path(world.store).rglob("*"):
        if path.is_file() and path.suffix in {".json", ".yaml", ".parquet", ".jsonl"}:
            assert secret.encode() not in path.read_bytes(), path
    assert secret not in repr(made.to_dict())


@pytest.mark.parametrize("bad", [{"n": 0}, {"max_similarity": 1.0}, {"strategy": "greedy"}])
def test_options_name_the_field(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError, match=next(iter(bad))):
        GenerateOptions(**bad)  # type: ignore[arg-type]
