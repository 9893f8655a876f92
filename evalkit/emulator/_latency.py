"""How long the emulated agent takes to answer: the config's model, reasoning and verbosity
knobs, prompt length and tools, from a table of rules; seeded per conversation.

An agent turn waits ``turn_delay x (product of the matching factors) x jitter`` emulated
seconds, a caller turn ``turn_delay x jitter`` (the caller's pace does not follow the config);
every duration is then scaled by ``time_scale`` like the rest of the emulator. ``turn_delay``
0 means no latency at all. The jitter is log-normal with a heavy right tail (an occasional
stall), drawn from the conversation's seed, so the same requests give the same latencies.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "LATENCY_RULES",
    "PER_1000_PROMPT_CHARS",
    "PER_TOOL",
    "TurnLatency",
    "agent_latency_factor",
]

#: (knob of ``config.llm.default``, value, factor): a matching row multiplies the agent's
#: answer time. Unset knobs match nothing (vendor_c's unset reasoningEffort: no reasoning
#: phase), except vendor_f's thinkingLevel, which the spec says behaves as ``low`` when absent.
LATENCY_RULES: Final[tuple[tuple[str, str, float], ...]] = (
    ("model", "llm-5.4-nano", 0.5),
    ("model", "llm-5.4-mini", 1.0),
    ("model", "llm-4o-mini", 0.85),
    ("model", "llm-oss-120b", 1.3),
    ("model", "vendor_c/llm-oss-120b", 1.2),
    ("model", "vendor_c/llm-oss-20b", 0.75),
    ("model", "gem-3.5-flash", 0.9),
    ("model", "gem-3.1-flash-lite", 0.65),
    ("model", "gem-2.5-flash", 1.0),
    ("reasoningEffort", "none", 1.0),
    ("reasoningEffort", "low", 1.25),
    ("reasoningEffort", "medium", 1.6),
    ("reasoningEffort", "high", 2.2),
    ("reasoningEffort", "xhigh", 3.0),
    ("thinkingLevel", "minimal", 1.05),
    ("thinkingLevel", "low", 1.2),
    ("thinkingLevel", "medium", 1.5),
    ("thinkingLevel", "high", 2.0),
    ("verbosity", "low", 0.85),
    ("verbosity", "medium", 1.0),
    ("verbosity", "high", 1.25),
)
#: each 1000 characters of agent instructions adds this share (a longer prompt to read)
PER_1000_PROMPT_CHARS: Final = 0.05
#: each tool the agent may call adds this share (tool definitions to weigh)
PER_TOOL: Final = 0.04
#: the default log-normal spread of every turn's latency, and the share of turns that stall
#: (the jitter's mean is 1, so ``turn_delay`` stays the mean wait of a plain config)
JITTER_SIGMA: Final = 0.25
STALL_RATE: Final = 0.03
STALL_FACTOR: Final = 2.5

#: (knob, provider) -> the value an absent knob behaves as
_ABSENT_MEANS: Final[Mapping[tuple[str, str], str]] = {("thinkingLevel", "vendor_f"): "low"}


def _block(config: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    block = config.get(name)
    if isinstance(block, Mapping):
        inner = block.get("default")
        if isinstance(inner, Mapping):
            return inner
    return {}


def agent_latency_factor(config: Mapping[str, Any]) -> float:
    """The product of the :data:`LATENCY_RULES` rows that ``config`` matches, times the
    prompt-length and tool shares."""
    llm = _block(config, "llm")
    factor = 1.0
    for knob, value, times in LATENCY_RULES:
        given = llm.get(knob)
        if given is None:
            given = _ABSENT_MEANS.get((knob, str(llm.get("provider"))))
        if given == value:
            factor *= times
    agent = config.get("agent") if isinstance(config.get("agent"), Mapping) else {}
    assert isinstance(agent, Mapping)
    instructions = agent.get("instructions")
    chars = len(instructions) if isinstance(instructions, str) else 0
    tools = agent.get("tools")
    n_tools = len(tools) if isinstance(tools, list) else 0
    return factor * (1 + PER_1000_PROMPT_CHARS * chars / 1000 + PER_TOOL * n_tools)


@dataclass
class TurnLatency:
    """Real seconds to wait before each utterance of one conversation (seeded).

    ``sigma`` is the jitter's log-normal spread (0: every wait is exact, no stalls)."""

    base_s: float  # turn_delay already scaled by time_scale
    agent_factor: float
    sigma: float
    rng: random.Random

    @classmethod
    def for_conversation(
        cls, base_s: float, config: Mapping[str, Any], seed: int, sigma: float = JITTER_SIGMA
    ) -> TurnLatency:
        rng = random.Random(f"latency\x1f{seed}")
        return cls(base_s, agent_latency_factor(config), sigma, rng)

    def next(self, role: str) -> float:
        """The wait before the next utterance of ``role``."""
        if self.base_s <= 0:
            return 0.0
        factor = self.agent_factor if role == "agent" else 1.0
        if self.sigma <= 0:
            return self.base_s * factor
        # log-normal with mean 1 once the stalls' share is counted
        stall_mean = 1 + STALL_RATE * (STALL_FACTOR - 1)
        mu = -(self.sigma**2) / 2 - math.log(stall_mean)
        jitter = math.exp(self.rng.gauss(mu, self.sigma))
        if self.rng.random() < STALL_RATE:
            jitter *= STALL_FACTOR
        return self.base_s * factor * jitter
