"""Planning a whole conversation, and the backend that plays it."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Iterable, Mapping

from ._flows import answer_and_close, first_reply, open_call, state_purpose
from ._noise import NoiseModel
from ._scene import build_scene
from ._talk import Talk
from ._traits import TRAITS, Stage, Step, persona_traits
from ._types import ConversationSetup, Role, Utterance
from ._weaknesses import Weakness, active_weaknesses

__all__ = ["ScriptedBackend", "plan_conversation"]


def plan_conversation(
    setup: ConversationSetup,
    max_turns: int = 16,
    noise: NoiseModel | None = None,
    weaknesses: Iterable[Weakness] = (),
) -> list[Utterance]:
    """The whole scripted conversation for ``setup``: 2..``max_turns`` alternating turns
    (``weaknesses``: the planted ones in play, see :data:`WEAKNESSES`)."""
    if max_turns < 2:
        raise ValueError(f"max_turns must be at least 2; got {max_turns}")
    persona = setup.persona if isinstance(setup.persona, Mapping) else {}
    scene = build_scene(setup, persona_traits(persona))
    weak = active_weaknesses(weaknesses, scene.traits)
    talk = Talk(scene, random.Random(setup.seed), noise or NoiseModel(), weak)
    _play(talk)
    lines = talk.lines[:max_turns]
    while len(lines) < 2:  # the flows always give two or more; the contract is kept regardless
        role: Role = "caller" if lines and lines[-1][0] == "agent" else "agent"
        said = talk.caller("bye") if role == "caller" else talk.agent("close")
        lines.append((role, said.text, said.acts))
    return [Utterance(role, text, acts) for role, text, acts in lines]


def _play(talk: Talk) -> None:
    flows = [t.flow for t in TRAITS if t.name in talk.scene.traits]
    purpose_said = open_call(talk)
    for flow in flows:
        step = flow(talk, Stage.OPEN, purpose_said)
        if step is Step.ENDED:
            return
        if step is Step.HANDLED:
            break
    else:
        first_reply(talk)
    if not purpose_said:
        state_purpose(talk)
    for flow in flows:
        if flow(talk, Stage.PURPOSE, purpose_said) is Step.ENDED:
            return
    answer_and_close(talk)


class ScriptedBackend:
    """Deterministic, offline dialogue from phrase banks (see the package docstring);
    ``weaknesses``: the planted weaknesses in play (none by default)."""

    def __init__(
        self,
        max_turns: int = 16,
        noise: NoiseModel | None = None,
        weaknesses: Iterable[Weakness] = (),
    ) -> None:
        if max_turns < 2:
            raise ValueError(f"max_turns must be at least 2; got {max_turns}")
        self._max_turns = max_turns
        self._noise = noise or NoiseModel()
        self._weaknesses = tuple(weaknesses)

    def __repr__(self) -> str:
        return f"ScriptedBackend(max_turns={self._max_turns})"

    async def conversation(self, setup: ConversationSetup) -> AsyncIterator[Utterance]:
        """Yield the planned conversation for ``setup``."""
        for utterance in plan_conversation(setup, self._max_turns, self._noise, self._weaknesses):
            yield utterance
