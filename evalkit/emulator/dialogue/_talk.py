"""One conversation in the making: seeded phrase choice, slots, acts and alternating turns."""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Final, NamedTuple

from ._acts import recognise_acts
from ._clauses import details, echo
from ._data import load
from ._noise import NoiseModel
from ._scene import Scene
from ._text import TOKEN_RE, transliterate
from ._types import Register, Role

__all__ = ["DEFAULT_ORDER", "Said", "Talk", "plain"]

DEFAULT_ORDER: Final = "0012-4471"
"""The order number an inbound complaint gives when the record has none."""
_FIELD_RE: Final = re.compile(r"\{(\w+)\}")
_SENTENCE_START_RE: Final = re.compile(r"(?:^|(?<=[.!?] ))[a-z]")
_UNRESOLVED: Final = frozenset({"leaves_token_unresolved"})


class Said(NamedTuple):
    """A piece of an utterance and the acts it performs."""

    text: str
    acts: frozenset[str] = frozenset()


NOTHING: Final = Said("")


def plain(register: str) -> Register:
    """The script of a register ("mix", the code-switching caller's, is Roman Urdu)."""
    if register == "en":
        return "en"
    return "ur" if register == "ur" else "ru"


class Talk:
    """Picks phrases for both sides and keeps the turns alternating (one per conversation)."""

    def __init__(
        self,
        scene: Scene,
        rng: random.Random,
        noise: NoiseModel,
        weak: Mapping[str, float] | None = None,
    ) -> None:
        self.scene = scene
        self.rng = rng
        self.noise = noise
        self.weak: Mapping[str, float] = weak or {}
        self.agent_register: Register = scene.register
        self.caller_register: str = "mix" if "code_switch" in scene.traits else scene.register
        if "roman_only" in scene.traits:
            self.caller_register = "ru"
        self.lines: list[tuple[Role, str, frozenset[str]]] = []
        self.agent_turns = 0
        p_name = (
            noise.name_when_referenced if scene.name_referenced else noise.name_when_unreferenced
        )
        self.use_name = scene.name is not None and (scene.greeting_names or self.chance(p_name))
        self.drift = scene.register == "ur" and self.chance(noise.script_drift)
        if "script" in self.weak and scene.register == "ur" and not self.drift:
            self.drift = self.chance(self.weak["script"])  # a planted weakness
        self.when_index = rng.randrange(1000)
        self.ref = ""  # a complaint's reference number, drawn when one is given
        self.details_said = False
        self.asked_confirm = False
        self.asked_identity = False
        self.asked_how = False
        self.softened = False
        self.finished = False

    def chance(self, p: float) -> bool:
        """A seeded draw that is true with probability ``p``."""
        return self.rng.random() < p

    def follows(self, feature: str, p_instructed: float, p_unasked: float) -> bool:
        """Whether a behaviour happens: ``p_instructed`` when the prompt asks for ``feature``
        (a planted weakness on ``feature`` first fails it with its strength)."""
        strength = self.weak.get(feature)
        if strength is not None and self.chance(strength):
            return False
        return self.chance(p_instructed if feature in self.scene.features else p_unasked)

    def slots(self, register: str, side: Role) -> dict[str, str]:
        reg = plain(register)
        scene = self.scene
        slots: dict[str, str] = dict(load("language")["gender"][scene.gender])
        if side == "agent":
            name = scene.name.shown(reg) if scene.name is not None and self.use_name else ""
        else:
            fact = scene.record.get("name")
            name = fact.shown(reg) if fact is not None else ""
        agent, org = scene.agent_name or "", scene.org or ""
        if reg == "ur":
            agent, org = transliterate(agent), transliterate(org)
        amount = scene.record.get("amount")
        order = scene.record.get("order")
        whens: dict[str, list[str]] = load("caller")["when"]
        when = whens.get(register) or whens[reg]
        slots.update(
            name=name,
            agent=agent,
            org=org,
            details=details(scene.details_facts, scene.org, scene.topic, reg),
            echo=echo(scene.record, scene.topic, reg),
            when=when[self.when_index % len(when)],
            amount=amount.shown(reg) if amount is not None else "",
            order=order.shown(reg) if order is not None else DEFAULT_ORDER,
            ref=self.ref,
            label="",
            token="",
            prompt=scene.instructions,
        )
        return slots

    def phrase(self, side: Role, kind: str, **extra: str) -> Said:
        """A variant of bank ``kind`` in the side's register, preferring ones with filled slots."""
        bank = load(side)[kind]
        if side == "agent":
            if self.drift and self.agent_turns >= 2:
                self.agent_register = "ru"
            register: str = self.agent_register
        else:
            register = self.caller_register
        slots = self.slots(register, side)
        slots.update(extra)
        options: list[str] = bank.get(register) or bank[plain(register)]
        filled = [o for o in options if all(slots.get(f) for f in _FIELD_RE.findall(o))]
        text = self.rng.choice(filled or options).format_map(slots)
        return Said(text, frozenset(bank["acts"]))

    def agent_in(self, register: Register, kind: str) -> Said:
        """A variant of the agent's bank ``kind`` in ``register``, whatever the call's is."""
        bank = load("agent")[kind]
        slots = self.slots(register, "agent")
        options: list[str] = bank[register]
        filled = [o for o in options if all(slots.get(f) for f in _FIELD_RE.findall(o))]
        text = self.rng.choice(filled or options).format_map(slots)
        return Said(text, frozenset(bank["acts"]))

    def agent(self, kind: str, **extra: str) -> Said:
        return self.phrase("agent", kind, **extra)

    def caller(self, kind: str, **extra: str) -> Said:
        return self.phrase("caller", kind, **extra)

    def literal(self, text: str) -> Said:
        """Free text the agent says verbatim: its acts are what its words say."""
        return Said(text, recognise_acts(text, "agent"))

    def confirm_question(self) -> Said:
        kind = f"confirm_{self.scene.topic}"
        return self.agent(kind if kind in load("agent") else "confirm_generic")

    def say(self, role: Role, *parts: Said) -> None:
        """Append the parts as one turn (joined to the previous turn of the same side)."""
        text = " ".join(" ".join(p.text for p in parts).split())
        text = _SENTENCE_START_RE.sub(lambda m: m.group(0).upper(), text)
        if not text:
            return
        acts = frozenset().union(*(p.acts for p in parts if p.text.strip()))
        if role == "agent":
            self.agent_turns += 1
            if TOKEN_RE.search(text):
                acts |= _UNRESOLVED
        if self.lines and self.lines[-1][0] == role:
            _, before, before_acts = self.lines[-1]
            self.lines[-1] = (role, before + " " + text, before_acts | acts)
        else:
            self.lines.append((role, text, acts))
