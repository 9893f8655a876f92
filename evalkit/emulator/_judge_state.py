"""The emulated judge's state: its noise settings, the seeded noise source and its counters.

One :class:`JudgeState` lives on each :class:`~evalkit.emulator.Emulator`; the judge's routes
(:mod:`._judge`) read and change it. It sits apart from the routes so the emulator object can
hold it without importing them (no import cycle).
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
from dataclasses import dataclass
from typing import Any

__all__ = ["JudgeSettings", "JudgeState"]


@dataclass(frozen=True, slots=True)
class JudgeSettings:
    """The judge's noise: flip and malformed-output rates, latency (emulated s), seed; and
    its known errors: a true ``fail`` called ``pass`` with ``false_pass_rate``, a true
    ``pass`` called ``fail`` with ``false_fail_rate``, on ``rules`` (None: every rule)."""

    flip_rate: float = 0.0
    malformed_rate: float = 0.0
    latency: float = 0.0
    seed: int | None = None
    false_pass_rate: float = 0.0
    false_fail_rate: float = 0.0
    rules: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "flipRate": self.flip_rate,
            "malformedRate": self.malformed_rate,
            "latency": self.latency,
            "seed": self.seed,
            "falsePassRate": self.false_pass_rate,
            "falseFailRate": self.false_fail_rate,
            "rules": None if self.rules is None else list(self.rules),
        }

    def errs(self, transcript: Any, rule_id: Any, verdict: str, default_seed: int) -> bool:
        """Whether the judge errs on this (transcript, rule) with a true ``verdict``: a draw
        fixed by the seed, the transcript and the rule (not by call order), so the same
        settings give the same wrong verdicts in any order and on every re-grade."""
        rate = {"fail": self.false_pass_rate, "pass": self.false_fail_rate}.get(verdict, 0.0)
        if rate <= 0 or (self.rules is not None and str(rule_id) not in self.rules):
            return False
        seed = self.seed if self.seed is not None else default_seed
        key = json.dumps([seed, transcript, str(rule_id), verdict], sort_keys=True, default=str)
        draw = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") / 2.0**64
        return draw < rate


class JudgeState:
    """The judge's settings, its seeded noise source and its counters (one per emulator)."""

    def __init__(self, seed: int) -> None:
        self._default_seed = seed
        self._lock = threading.Lock()
        self.settings = JudgeSettings()
        self._rng = random.Random(seed)
        self.calls = 0
        self.malformed = 0

    def configure(self, settings: JudgeSettings) -> None:
        """Replace the settings and restart the noise from their seed."""
        with self._lock:
            self.settings = settings
            seed = settings.seed if settings.seed is not None else self._default_seed
            self._rng = random.Random(seed)

    def draws(self, n: int) -> tuple[bool, list[bool]]:
        """Count a call; whether it is malformed and, per rule, whether its verdict flips."""
        with self._lock:
            self.calls += 1
            malformed = self._rng.random() < self.settings.malformed_rate
            flips = [self._rng.random() < self.settings.flip_rate for _ in range(n)]
            self.malformed += malformed
            return malformed, flips

    @property
    def default_seed(self) -> int:
        return self._default_seed

    def stats(self) -> dict[str, int]:
        return {"judgeCalls": self.calls, "judgeMalformed": self.malformed}
