"""The scene: everything parsed from a call's setup before any chance is involved."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from ._data import load
from ._facts import Fact, kind_of, record_facts, referenced_facts
from ._features import PURPOSE_WORDS, TOPICS, detect_features, topic_of
from ._text import TOKEN_RE, detect_register, mentions, substitute_variables
from ._types import ConversationSetup, Register

__all__ = ["Scene", "build_scene"]


@dataclass(slots=True)
class Scene:
    """A call's setup, parsed: register, features, facts, names, traits, cold or aware."""

    register: Register
    greeting_on: bool
    greeting: str | None
    literal_greeting: str | None
    greeting_purpose: bool
    greeting_names: bool
    features: frozenset[str]
    vague: bool
    topic: str
    facts: list[Fact]
    name: Fact | None
    name_referenced: bool
    agent_name: str | None
    org: str | None
    gender: str
    traits: frozenset[str]
    cold: bool
    aware: bool
    record: dict[str, Fact] = field(default_factory=dict)
    instructions: str = ""
    """The prompt as the agent reads it (tokens substituted)."""

    @property
    def details_facts(self) -> list[Fact]:
        skip = {"name", "agent", "org"}
        return [f for f in self.facts if f.kind not in skip]


_QUOTE_RE: Final = re.compile(
    r"[\"“”«»](.{4,}?)[\"“”«»]|(?:\bsay|\bkahein|\bkahiye|کہیں)\s*:\s*(.+)$", re.I | re.M
)
_AGENT_NAME_RES: Final = (
    re.compile(r"\b(?i:you are|you're|your name is)\s+([A-Z][a-z]+)\b"),
    re.compile(r"\b(?i:aap|ap)\s+([A-Z][a-z]+)\s+(?:hain|ho|hai)\b"),
    re.compile(r"\b(?:aap ka|aapka|apka) naam\s+([A-Z][a-z]+)\b", re.I),
    re.compile(r"آپ کا نام\s+(\S+)\s+ہے"),
)
_ORG_RES: Final = (
    re.compile(
        r"\b(?:from|representing|on behalf of|calling for|at)\s+(?:the\s+)?"
        r"([A-Z][\w&'-]*(?: [A-Z][\w&'-]*){0,3})"
    ),
    re.compile(r"([A-Z][\w&'-]*(?: [A-Z][\w&'-]*){0,3})\s+(?:ki taraf se|ke liye kaam)"),
)
_NOT_NAMES: Final = frozenset(
    {"A", "An", "The", "Urdu", "English", "Roman", "Pakistan", "AM", "PM", "Nastaliq", "You"}
)
_COLD_CONTEXT: Final = (
    r"not expecting",
    r"doesn't know",
    r"does not know",
    r"unaware",
    r"no idea",
    r"cold call",
    r"never heard",
)


def build_scene(setup: ConversationSetup, traits: frozenset[str]) -> Scene:
    """Parse ``setup`` (``traits`` are the persona's, see the trait table)."""
    agent = setup.config.get("agent") if isinstance(setup.config, Mapping) else None
    agent = agent if isinstance(agent, Mapping) else {}
    raw_instructions = agent.get("instructions")
    raw_instructions = raw_instructions if isinstance(raw_instructions, str) else ""
    greeting_on = agent.get("initialGreeting") is True
    raw_greeting = agent.get("greetingInstructions") if greeting_on else None
    raw_greeting = raw_greeting if isinstance(raw_greeting, str) and raw_greeting.strip() else None
    variables = setup.variables if isinstance(setup.variables, Mapping) else None

    instructions = substitute_variables(raw_instructions, variables)
    greeting = substitute_variables(raw_greeting, variables) if raw_greeting else None
    everything = instructions + "\n" + (greeting or "")
    features = detect_features(everything)
    literal = None
    greeting_purpose = False
    if greeting:
        quoted = _QUOTE_RE.search(greeting)
        if quoted:
            literal = (quoted.group(1) or quoted.group(2) or "").strip(" \"'“”«»") or None
        topic_words = tuple(w for _, words in TOPICS for w in words)
        greeting_purpose = mentions(greeting, PURPOSE_WORDS) or mentions(greeting, topic_words)

    raws = [raw_instructions] + ([raw_greeting] if raw_greeting else [])
    facts = referenced_facts(raws, everything, variables)
    record = record_facts(variables)
    name = next((f for f in facts if f.kind == "name"), None)
    name_referenced = name is not None
    if name is None:
        name = record.get("name")

    agent_name = next((f.value for f in facts if f.kind == "agent" and f.value), None)
    agent_name = agent_name or (record["agent"].value if "agent" in record else None)
    if agent_name is None:
        for regex in _AGENT_NAME_RES:
            match = regex.search(instructions)
            if match and match.group(1) not in _NOT_NAMES:
                agent_name = match.group(1)
                break
    org = next((f.value for f in facts if f.kind == "org" and f.value), None)
    org = org or (record["org"].value if "org" in record else None)
    if org is None:
        customer = name.value if name else None
        for regex in _ORG_RES:
            for match in regex.finditer(instructions):
                candidate = match.group(1).strip(" .,'")
                if candidate and candidate != customer and candidate not in _NOT_NAMES:
                    org = candidate
                    break
            if org:
                break
    male = mentions(instructions, (r"male", r"man", r"he/him", r"mard")) and not mentions(
        instructions, (r"female", r"woman", r"she/her", r"aurat", r"larki")
    )
    if agent_name and agent_name.split()[0].lower() in load("language")["male_names"]:
        male = True

    context = setup.context.strip() if isinstance(setup.context, str) else ""
    cold = (not context and not variables) or bool(context and mentions(context, _COLD_CONTEXT))
    aware = bool(context) and not cold
    return Scene(
        register=detect_register(instructions),
        greeting_on=greeting_on,
        greeting=greeting,
        literal_greeting=literal,
        greeting_purpose=greeting_purpose,
        greeting_names=bool(
            raw_greeting
            and (
                mentions(raw_greeting, (r"names?", r"نام", r"naam"))
                or any(kind_of(m.group(1)) == "name" for m in TOKEN_RE.finditer(raw_greeting))
            )
        ),
        features=features,
        vague=len(instructions.split()) < 15,
        topic=topic_of(everything),
        facts=facts,
        name=name,
        name_referenced=name_referenced,
        agent_name=agent_name,
        org=org,
        gender="m" if male else "f",
        traits=traits,
        cold=cold,
        aware=aware,
        record=record,
        instructions=instructions,
    )
