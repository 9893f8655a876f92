"""Asking the generator for the personas of a list of trait combinations and checking each one:
what both flows (:func:`generate_personas`, :func:`find_failures`) do before anything runs.

Every combination asked for gets one row (:data:`ROW_KEYS`): its request id, the label of the
persona it became, ``status`` (``kept``, ``refused`` or, after a pilot, ``dropped``), the
refusal's ``kind`` and ``reason``, and its traits. The assistant's instructions go to the
generator with anything shaped like a secret masked.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from .._util import redact_text
from ..api import AsyncClient
from ..grading import Scorecard
from ..grid import Persona
from ._axes import TraitSpace
from ._checks import CheckLimits, Refused, check_entry, near_duplicates
from ._generator import PersonaSource
from ._prompt import GENERATOR_PROMPT_VERSION, GenerationRequest, PersonaAsk

__all__ = ["ROW_KEYS", "Generation", "assistant_instructions", "scorecard_rules"]

logger = logging.getLogger("evalkit.personas")

ROW_KEYS: Final = ("round", "request", "label", "status", "kind", "reason", "traits")


def scorecard_rules(card: Scorecard, rules: Sequence[str] | None = None) -> list[dict[str, str]]:
    """The rules the generator is shown (id and title), those in ``rules`` when given."""
    wanted = None if rules is None else set(rules)
    return [
        {"rule_id": r.rule_id, "title": r.title}
        for r in card.rules
        if wanted is None or r.rule_id in wanted
    ]


def instructions_of(config: Mapping[str, Any]) -> str:
    """The agent's instructions and greeting in a config (secrets masked)."""
    agent = config.get("agent")
    agent = agent if isinstance(agent, Mapping) else {}
    parts = [agent.get("instructions"), agent.get("greetingInstructions")]
    return redact_text("\n\n".join(p for p in parts if isinstance(p, str) and p.strip()))


async def assistant_instructions(client: AsyncClient, assistant_id: str) -> str:
    """The draft's instructions (secrets masked), read from the service."""
    found = next((a for a in await client.list_assistants() if a.id == assistant_id), None)
    if found is None:
        raise ValueError(f"assistant_id: {assistant_id} is not in this API key's project")
    return instructions_of(found.config.to_json())


def provenance_of(source: PersonaSource, seed: int, round_: int) -> dict[str, Any]:
    """What a generated persona records about what made it."""
    said = source.describe()
    return {
        "generator": str(said.get("model") or said.get("kind") or type(source).__name__),
        "prompt_version": str(said.get("prompt_version") or GENERATOR_PROMPT_VERSION),
        "seed": seed,
        "round": round_,
    }


@dataclass
class Generation:
    """One flow's generator, checks and what is already there (grown as personas join)."""

    source: PersonaSource
    space: TraitSpace
    instructions: str
    rules: list[dict[str, str]]
    limits: CheckLimits
    max_similarity: float
    per_call: int
    seed: int
    existing: list[tuple[str, str]] = field(default_factory=list)
    calls: int = 0
    malformed: int = 0

    def _row(
        self, round_: int, ask: PersonaAsk, label: str = "", refused: Refused | None = None
    ) -> dict[str, Any]:
        return {
            "round": round_,
            "request": ask.id,
            "label": label,
            "status": "refused" if refused is not None else "kept",
            "kind": refused.kind if refused is not None else "",
            "reason": refused.reason if refused is not None else "",
            "traits": dict(ask.traits),
        }

    async def make(
        self, combos: Sequence[Mapping[str, str]], round_: int
    ) -> tuple[list[Persona], list[dict[str, Any]]]:
        """The personas of ``combos`` that pass every check, and one row per combination."""
        asks = [
            PersonaAsk(f"r{round_:02d}-{i:02d}", dict(t), self.space.describe(t))
            for i, t in enumerate(combos, start=1)
        ]
        checked: list[tuple[PersonaAsk, Persona | Refused]] = []
        taken = {label for label, _ in self.existing}
        provenance = provenance_of(self.source, self.seed, round_)
        for start in range(0, len(asks), self.per_call):
            batch = asks[start : start + self.per_call]
            request = GenerationRequest(
                self.instructions, self.rules, batch, self.limits.max_behavior_chars, round_
            )
            got = await self.source.agenerate(request)
            self.calls += got.calls
            self.malformed += got.malformed
            entries = {str(e.get("id")): e for e in got.entries}
            why = got.reasons[-1] if got.reasons else "no persona for this request"
            for ask in batch:
                entry = entries.get(ask.id)
                if entry is None:
                    checked.append((ask, Refused("missing", f"the generator wrote none ({why})")))
                    continue
                result = check_entry(
                    entry,
                    ask,
                    space=self.space,
                    limits=self.limits,
                    provenance=provenance,
                    taken=taken,
                )
                if isinstance(result, Persona):
                    taken.add(result.label)
                checked.append((ask, result))
        candidates = [r for _, r in checked if isinstance(r, Persona)]
        copies = iter(
            near_duplicates(self.existing, [p.behavior for p in candidates], self.max_similarity)
        )
        names = {f"#{i}": p.label for i, p in enumerate(candidates)}
        kept: list[Persona] = []
        rows: list[dict[str, Any]] = []
        for ask, result in checked:
            if isinstance(result, Refused):
                rows.append(self._row(round_, ask, refused=result))
                continue
            copy = next(copies)
            if copy is not None:
                other, similarity = copy
                refusal = Refused(
                    "duplicate",
                    f"a near copy of {names.get(other, other)} (similarity {similarity:.2f})",
                )
                rows.append(self._row(round_, ask, result.label, refusal))
                continue
            kept.append(result)
            rows.append(self._row(round_, ask, result.label))
        self.existing += [(p.label, p.behavior) for p in kept]
        logger.info(
            "round %d: %d of %d generated persona(s) passed the checks",
            round_,
            len(kept),
            len(asks),
        )
        return kept, rows
