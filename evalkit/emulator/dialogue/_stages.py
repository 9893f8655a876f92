"""When a trait's flow is asked, and what it did: the vocabulary every flow shares."""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

from ._talk import Talk

__all__ = ["Flow", "Stage", "Step"]


class Stage(Enum):
    """When a flow is asked: after the agent's opening line, or after it stated the purpose."""

    OPEN = "open"
    PURPOSE = "purpose"


class Step(Enum):
    """What a flow did: nothing, gave the caller's reply (the call goes on), or ended it."""

    PASS = "pass"
    HANDLED = "handled"
    ENDED = "ended"


Flow = Callable[[Talk, Stage, bool], Step]
"""``flow(talk, stage, purpose_said)``."""
