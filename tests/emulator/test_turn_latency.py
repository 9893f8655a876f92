"""The emulator's agent turn latency follows the config (a table of rules), seeded."""

from __future__ import annotations

import statistics

import pytest

from evalkit.emulator import EmulatorSettings
from evalkit.emulator._latency import (
    LATENCY_RULES,
    PER_1000_PROMPT_CHARS,
    PER_TOOL,
    TurnLatency,
    agent_latency_factor,
)


def config(**llm: object) -> dict[str, object]:
    return {"llm": {"default": {"provider": "vendor_c", "model": "llm-5.4-mini", **llm}}}


def test_the_rules_table_decides_the_agent_factor() -> None:
    assert agent_latency_factor(config()) == pytest.approx(1.0)
    assert agent_latency_factor(config(model="llm-5.4-nano")) == pytest.approx(0.5)
    slower = [agent_latency_factor(config(reasoningEffort=e)) for e in ("low", "medium", "high")]
    assert slower == sorted(slower)
    assert slower[0] > 1.0
    assert agent_latency_factor(config(reasoningEffort="none")) == pytest.approx(1.0)
    assert (
        agent_latency_factor(config(verbosity="low"))
        < 1.0
        < agent_latency_factor(config(verbosity="high"))
    )
    # vendor_f's thinkingLevel behaves as low when absent (the spec)
    gem = {"llm": {"default": {"provider": "vendor_f", "model": "gem-3.5-flash"}}}
    rules = {(knob, value): factor for knob, value, factor in LATENCY_RULES}
    expected = rules[("model", "gem-3.5-flash")] * rules[("thinkingLevel", "low")]
    assert agent_latency_factor(gem) == pytest.approx(expected)
    # a longer prompt and more tools take longer
    long = {**config(), "agent": {"instructions": "x" * 4000, "tools": [{}, {}]}}
    assert agent_latency_factor(long) == pytest.approx(1 + 4 * PER_1000_PROMPT_CHARS + 2 * PER_TOOL)
    # unknown values and odd shapes match nothing
    assert agent_latency_factor({"llm": "x", "agent": None}) == pytest.approx(1.0)


def test_latencies_are_seeded_mean_one_and_callers_ignore_the_config() -> None:
    slow = config(reasoningEffort="high")
    one = TurnLatency.for_conversation(0.1, slow, seed=42)
    two = TurnLatency.for_conversation(0.1, slow, seed=42)
    waits = [one.next("agent") for _ in range(50)]
    assert waits == [two.next("agent") for _ in range(50)]
    assert waits != [
        TurnLatency.for_conversation(0.1, slow, seed=43).next("agent") for _ in range(50)
    ]
    many = TurnLatency.for_conversation(1.0, config(), seed=1)
    assert statistics.fmean(many.next("caller") for _ in range(20000)) == pytest.approx(
        1.0, rel=0.03
    )
    exact = TurnLatency.for_conversation(0.1, slow, seed=1, sigma=0)
    assert exact.next("agent") == pytest.approx(0.22)
    assert exact.next("caller") == pytest.approx(0.1)
    assert TurnLatency.for_conversation(0.0, slow, seed=1).next("agent") == 0.0


def test_turn_jitter_is_checked() -> None:
    with pytest.raises(ValueError, match="turn_jitter"):
        EmulatorSettings(turn_jitter=-0.1)
