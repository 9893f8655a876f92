"""generate_personas on the loopback emulator's emulated generator: personas along the trait
axes with their traits and provenance, every flawed one refused before it joins a grid and
counted, the pilot's simulation flags dropping callers that do not behave as described."""

from __future__ import annotations

import logging
from pathlib import Path

import httpx
import pandas as pd
import pytest

from evalkit.demo._story import demo_scorecard
from evalkit.emulator._generator_rules import FLAWS
from evalkit.grid import load_personas
from evalkit.personas import (
    GENERATOR_PROMPT_VERSION,
    GeneratedPersonas,
    GenerateOptions,
    PersonaGenerator,
    generate_personas,
)
from evalkit.stats import wilson_interval

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
    # six a call: each call's personas carry each of the generator's mistakes once, in turn
    # (too long, a token, a secret, a near copy, the asked-for traits left out, no label)
    _generator_noise(world, flawRate=1.0, malformedRate=0.0)
    try:
        made = _generate(world, "gen-b", n=12, per_call=6, pilot_conversations=0)
    finally:
        _generator_noise(world, flawRate=0.0, malformedRate=0.0)
    # every mistake is caught before a conversation runs
    assert not made.personas, made.table[["request", "status", "kind", "reason"]]
    assert set(made.table["status"]) == {"refused"}
    assert set(made.table["kind"]) >= {"secret", "token", "too-long", "not-said", "invalid"}
    kind = dict(zip(made.table["request"], made.table["kind"], strict=True))
    assert kind["r01-05"] == kind["r01-11"] == "not-said"  # the fifth of each call: "mute"
    assert kind["r01-06"] == kind["r01-12"] == "invalid"  # the sixth: no label
    assert "12 of 12" not in made.headline()
    assert "leaving out a trait asked for" in made.headline()


def _mute_requests(table: pd.DataFrame, per_call: int) -> set[str]:
    """The requests the emulated generator left mute at a flaw rate of 1: the fifth of each
    call of ``per_call`` (its mistakes come in turn, :data:`FLAWS`)."""
    fifth = FLAWS.index("mute")
    return {r for i, r in enumerate(table["request"]) if i % per_call == fifth}


def test_a_caller_asked_for_hostile_roman_urdu_rescheduling_but_told_none_is_refused(
    world: World,
) -> None:
    """The generator asked for hostile Roman-Urdu callers who want another slot writes some
    that say none of it (its "mute" mistake): each is refused before it runs, with the values
    it left out named, and counted; the others say what was asked and are kept."""
    asked = {"language": ["roman-urdu"], "hostility": ["hostile"], "goal": ["reschedule"]}
    _generator_noise(world, flawRate=1.0, malformedRate=0.0)
    try:
        flawed = _generate(world, "gen-mute", n=12, per_call=6, axes=asked, pilot_conversations=0)
    finally:
        _generator_noise(world, flawRate=0.0, malformedRate=0.0)
    mute = flawed.table[flawed.table["request"].isin(_mute_requests(flawed.table, 6))]
    assert len(mute) == 2
    assert set(mute["kind"]) == {"not-said"}
    for reason in mute["reason"]:
        assert "language=roman-urdu" in reason
        assert "hostility=hostile" in reason
        assert "goal=reschedule" in reason
    clean = _generate(world, "gen-mute-clean", n=12, per_call=6, axes=asked, pilot_conversations=1)
    assert "not-said" not in set(clean.table["kind"])
    for persona in clean.personas:
        assert "Roman letters" in persona.behavior
        assert "hostile" in persona.behavior
    # the pilot ran what the checks kept, and its flags dropped whoever did not show hostility
    shown = clean.table[clean.table["status"] != "refused"]
    assert clean.details["pilot_conversations"] == len(shown)
    assert set(shown["kind"]) <= {"", "not-shown"}


def test_no_well_formed_persona_is_refused_as_not_saying_its_traits(world: World) -> None:
    """200 well-formed personas from the whole trait space: none refused as leaving a trait
    out (the false refusals); 200 with every mistake in turn: every mute one is refused."""
    _generator_noise(world, flawRate=0.0, malformedRate=0.0)
    clean = _generate(world, "gen-200", n=200, per_call=6, pilot_conversations=0)
    false = int((clean.table["kind"] == "not-said").sum())
    low, high = wilson_interval(false, len(clean.table))
    logging.getLogger(__name__).warning(
        "not-said refusals of well-formed personas: %d of %d [%.1f%%, %.1f%%]",
        false,
        len(clean.table),
        100 * float(low),
        100 * float(high),
    )
    assert len(clean.table) == 200
    assert false == 0, clean.table[clean.table["kind"] == "not-said"]["reason"].tolist()
    _generator_noise(world, flawRate=1.0, malformedRate=0.0)
    try:
        flawed = _generate(world, "gen-200-flawed", n=200, per_call=6, pilot_conversations=0)
    finally:
        _generator_noise(world, flawRate=0.0, malformedRate=0.0)
    mute = flawed.table[flawed.table["request"].isin(_mute_requests(flawed.table, 6))]
    assert len(mute) == len(range(FLAWS.index("mute"), 200, 6))
    assert set(mute["kind"]) == {"not-said"}, mute[["kind", "reason"]]
    assert (flawed.table["kind"] == "not-said").sum() == len(mute)  # and no other one


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
