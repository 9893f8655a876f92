"""The emulator's knobs and the emulated durations they scale."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from ..api import KEEPALIVE_INTERVAL_S, SIMULATION_CEILING_S
from ._latency import JITTER_SIGMA

BUILD_DURATION_S = 120.0
"""How long a refine build takes at time scale 1 (the spec: minutes)."""
BUILD_RUNNING_FRACTION = 0.05
"""A build reports `started` for this share of its duration, then `running`."""
SYNTHESIS_WINDOW_S = 60.0
"""The synthesis rate limit counts requests per this many emulated seconds."""
MIN_PING_INTERVAL_S = 0.005
"""Pings never come faster than this, however small the time scale."""
MIN_LIVEKIT_SECRET_CHARS = 32
"""LiveKit servers refuse shorter secrets (and HS256 wants at least 32 bytes)."""
_PRINTABLE = re.compile(r"[!-~]+")


@dataclass(frozen=True, slots=True)
class EmulatorSettings:
    """How the emulator behaves; every emulated duration is multiplied by ``time_scale``.

    ``turn_delay`` is emulated seconds of latency before each utterance: the base that the
    agent's config scales (model, reasoning and verbosity knobs, prompt length, tools; see
    ``evalkit.emulator._latency``), with a seeded log-normal jitter of spread ``turn_jitter``
    (mean 1; 0 makes every wait exact). ``seed`` None draws
    a random seed at start (conversations then differ between emulator runs).
    ``synthesis_requests_per_minute`` caps E11/E12 per project (None: no cap).
    ``min_ceiling_s`` is a floor, in real seconds, under the scaled five-minute ceiling: a
    strongly scaled emulator (the demo's 0.002 makes the ceiling 0.6 s) on a busy machine would
    otherwise end slow conversations with the ceiling's error.
    ``livekit_api_key``/``livekit_api_secret`` sign session tokens (None: generated once and
    kept with the state); both are printable ASCII, the secret at least 32 characters, so a
    real LiveKit server's key list can hold them. The secret never shows in a repr.
    """

    time_scale: float = 1.0
    seed: int | None = None
    turn_delay: float = 0.0
    turn_jitter: float = JITTER_SIGMA
    synthesis_requests_per_minute: int | None = 300
    max_body_bytes: int = 2 * 1024 * 1024
    send_timeout_s: float = 30.0
    livekit_api_key: str | None = None
    livekit_api_secret: str | None = field(default=None, repr=False)
    min_ceiling_s: float = 0.0

    def __post_init__(self) -> None:
        if not (isinstance(self.time_scale, int | float) and math.isfinite(self.time_scale)):
            raise ValueError(f"time_scale must be a finite number, got {self.time_scale!r}")
        if self.time_scale <= 0:
            raise ValueError(f"time_scale must be > 0, got {self.time_scale}")
        if not (math.isfinite(self.turn_delay) and self.turn_delay >= 0):
            raise ValueError(f"turn_delay must be >= 0 seconds, got {self.turn_delay}")
        if not (math.isfinite(self.turn_jitter) and 0 <= self.turn_jitter <= 2):
            raise ValueError(f"turn_jitter must be in [0, 2], got {self.turn_jitter}")
        key, secret = self.livekit_api_key, self.livekit_api_secret
        if key is not None and not _PRINTABLE.fullmatch(key):
            raise ValueError("livekit_api_key must be printable ASCII without spaces")
        if secret is not None and not (
            _PRINTABLE.fullmatch(secret) and len(secret) >= MIN_LIVEKIT_SECRET_CHARS
        ):
            raise ValueError(
                "livekit_api_secret must be printable ASCII without spaces, at least "
                f"{MIN_LIVEKIT_SECRET_CHARS} characters"
            )
        rpm = self.synthesis_requests_per_minute
        if rpm is not None and rpm < 1:
            raise ValueError(f"synthesis_requests_per_minute must be >= 1 or None, got {rpm}")

    def scaled(self, seconds: float) -> float:
        """Emulated seconds to real seconds."""
        return seconds * self.time_scale

    @property
    def ping_interval(self) -> float:
        return max(self.scaled(KEEPALIVE_INTERVAL_S), MIN_PING_INTERVAL_S)

    @property
    def ceiling(self) -> float:
        return max(self.scaled(SIMULATION_CEILING_S), self.min_ceiling_s)

    @property
    def turn_latency(self) -> float:
        return self.scaled(self.turn_delay)

    @property
    def build_duration(self) -> float:
        return self.scaled(BUILD_DURATION_S)

    @property
    def synthesis_window(self) -> float:
        return self.scaled(SYNTHESIS_WINDOW_S)
