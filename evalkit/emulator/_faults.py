"""Fault injection for simulate requests, per project, drawn from a seeded generator.

A plan is drawn per simulate request, always consuming the same number of draws, so a
fault sequence replays for a given seed and arrival order:

* ``http429Rate`` / ``http503Rate``: the request is refused before streaming (429 carries
  ``Retry-After``);
* ``dropRate``: the stream ends mid-conversation with no terminal event;
* ``errorEventRate``: a terminal ``error`` event arrives mid-conversation.
"""

from __future__ import annotations

import math
import random
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..api import Problem
from ._ids import derive_seed

_RATE_FIELDS = {
    "dropRate": "drop_rate",
    "errorEventRate": "error_event_rate",
    "http429Rate": "http429_rate",
    "http503Rate": "http503_rate",
}


@dataclass(frozen=True, slots=True)
class FaultConfig:
    """Fault rates in 0..1 and the seed of their generator (None: derived from the emulator's)."""

    drop_rate: float = 0.0
    error_event_rate: float = 0.0
    http429_rate: float = 0.0
    http503_rate: float = 0.0
    seed: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {camel: getattr(self, snake) for camel, snake in _RATE_FIELDS.items()}
        out["seed"] = self.seed
        return out


@dataclass(frozen=True, slots=True)
class FaultPlan:
    """What happens to one simulate request."""

    http_status: int | None = None
    drop_after: int | None = None
    error_after: int | None = None


NO_FAULTS = FaultPlan()


def check_faults_body(body: Any) -> list[Problem]:
    """Problems of a PUT /_emulator/faults body."""
    if not isinstance(body, Mapping):
        return [Problem("body", "must be an object")]
    problems: list[Problem] = []
    for key, value in body.items():
        if key in _RATE_FIELDS:
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            if not ok or not math.isfinite(value) or not 0 <= value <= 1:
                problems.append(Problem(key, f"must be a number from 0 to 1, got {value!r}"))
        elif key == "seed":
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                problems.append(Problem("seed", f"must be an integer or null, got {value!r}"))
        else:
            problems.append(Problem(key, "is not a fault setting"))
    return problems


def faults_from_body(body: Mapping[str, Any]) -> FaultConfig:
    """A checked body as a config (a later PUT replaces the earlier one entirely)."""
    kwargs: dict[str, Any] = {
        snake: float(body.get(camel, 0.0)) for camel, snake in _RATE_FIELDS.items()
    }
    return FaultConfig(seed=body.get("seed"), **kwargs)


class Faults:
    """The fault configuration of every project, each with its own seeded generator."""

    def __init__(self, base_seed: int) -> None:
        self._base_seed = base_seed
        self._lock = threading.Lock()
        self._configs: dict[str, tuple[FaultConfig, random.Random]] = {}

    def set(self, project_id: str, config: FaultConfig) -> None:
        seed = config.seed if config.seed is not None else derive_seed(self._base_seed, project_id)
        with self._lock:
            self._configs[project_id] = (config, random.Random(seed))

    def get(self, project_id: str) -> FaultConfig:
        with self._lock:
            entry = self._configs.get(project_id)
            return entry[0] if entry else FaultConfig()

    def draw(self, project_id: str) -> FaultPlan:
        """The plan for the next simulate request of the project."""
        with self._lock:
            entry = self._configs.get(project_id)
            if entry is None:
                return NO_FAULTS
            config, rng = entry
            r429, r503, rdrop, rerr = rng.random(), rng.random(), rng.random(), rng.random()
            after = rng.randint(1, 3)
        if r429 < config.http429_rate:
            return FaultPlan(http_status=429)
        if r503 < config.http503_rate:
            return FaultPlan(http_status=503)
        if rdrop < config.drop_rate:
            return FaultPlan(drop_after=after)
        if rerr < config.error_event_rate:
            return FaultPlan(error_after=after)
        return NO_FAULTS
