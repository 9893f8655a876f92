"""``simulation_flags``: conversations where the simulation, not the assistant, is suspect.

tau-bench found the simulated user behind up to 30% of failed trajectories. Each rule of
:data:`FLAG_RULES` is one row (flag, what it means, how it is found); a flagged conversation
says little about the assistant, so a comparison can leave it out (counted, never silently:
``CompareOptions(exclude_flagged=flags)``).

Flags are computed from the stored transcripts when asked (``simulation_flags(run)``), not
written at finalize: the same run always gives the same flags, and a run recorded before a
rule was improved is judged by the improved rule.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any, Final, Protocol

import pandas as pd

from ._traits import CallFacts, declared

__all__ = ["FLAG_COLUMNS", "FLAG_RULES", "FlagRule", "flag_rules", "simulation_flags"]

FLAG_COLUMNS: Final = ("conversation_id", "flag", "reason", "run_id")
ECHO_SIMILARITY: Final = 0.9
ECHO_MIN_CHARS: Final = 20
LOOP_MIN_WORDS: Final = 4
LOOP_TIMES: Final = 3
#: Short utterances (``min_words`` up to ``LOOP_MIN_WORDS``) loop when one is said at least
#: ``times`` times and makes up at least ``share`` of the caller's turns ("Who is this?" in
#: four turns of five); a one-word answer ("Jee.") repeats naturally.
SHORT_LOOP: Final = {"min_words": 2, "times": 3, "share": 0.5}

_AS_AGENT_RE: Final = re.compile(
    r"how (?:can|may) i (?:help|assist) you|i(?: am|'m) calling (?:from|on behalf)|"
    r"thank you for calling|thanks for your time|is this a good time to talk|"
    r"main .{1,40} se bol rah[ai] h|aap ki kya madad|آپ کی کیا مدد|سے بول رہ[ای]",
    re.IGNORECASE,
)
_PUNCT_RE: Final = re.compile(r"[^\w\s]", re.UNICODE)
_CEILING_RE: Final = re.compile(r"ceiling|five.minute", re.IGNORECASE)


class _RunLike(Protocol):
    @property
    def turns(self) -> pd.DataFrame: ...
    @property
    def conversations(self) -> pd.DataFrame: ...


def normalise(text: str) -> str:
    """Case-folded, NFKC, punctuation dropped, spaces collapsed: what "the same words" means."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(_PUNCT_RE.sub(" ", text).split())


@dataclass(frozen=True, slots=True)
class Call:
    """One conversation as the rules read it."""

    conversation_id: str
    turns: tuple[tuple[str, str], ...]  # (role, text) in speaking order
    status: str
    ended_by: str | None
    error_message: str
    tags: tuple[str, ...]
    cell_id: str
    run_id: str | None = None

    def said(self, role: str) -> list[str]:
        return [text for who, text in self.turns if who == role]


Finder = Callable[[Call], str | None]  # the reason, or None


@dataclass(frozen=True, slots=True)
class FlagRule:
    """A row: ``flag`` id, what it means, and ``find`` (per conversation; ``None`` for the
    rules that compare conversations, which :func:`simulation_flags` runs itself)."""

    flag: str
    means: str
    find: Finder | None


def _echo(call: Call) -> str | None:
    previous_agent: list[str] = []
    for i, (role, text) in enumerate(call.turns, start=1):
        said = normalise(text)
        if role == "agent":
            previous_agent.append(said)
            continue
        if _AS_AGENT_RE.search(text):
            return f"the caller speaks as the agent at turn {i}: {text[:80]!r}"
        if len(said) < ECHO_MIN_CHARS:
            continue
        for agent in previous_agent:
            matcher = SequenceMatcher(None, said, agent, autojunk=False)
            if matcher.quick_ratio() >= ECHO_SIMILARITY and matcher.ratio() >= ECHO_SIMILARITY:
                return f"the caller repeats the agent at turn {i}: {text[:80]!r}"
    return None


def _loops(call: Call) -> str | None:
    counts: dict[str, int] = {}
    previous: tuple[str, str] = ("", "")
    for role, text in call.turns:
        said = normalise(text)
        back_to_back = role == "caller" and previous == (role, said)
        previous = (role, said)
        if role != "caller" or len(said.split()) < LOOP_MIN_WORDS:
            continue
        counts[said] = counts.get(said, 0) + 1
        if counts[said] >= LOOP_TIMES or back_to_back:
            how = f"{counts[said]} times" if counts[said] >= LOOP_TIMES else "twice in a row"
            return f"the caller says the same thing {how}: {text[:80]!r}"
    return _short_loop(call)


def _short_loop(call: Call) -> str | None:
    """A short utterance repeated so often it is most of what the caller says."""
    said = [(normalise(text), text) for role, text in call.turns if role == "caller"]
    counts: dict[str, int] = {}
    for norm, _ in said:
        if SHORT_LOOP["min_words"] <= len(norm.split()) < LOOP_MIN_WORDS:
            counts[norm] = counts.get(norm, 0) + 1
    for norm, n in counts.items():
        if n >= SHORT_LOOP["times"] and n >= SHORT_LOOP["share"] * len(said):
            text = next(t for s, t in said if s == norm)
            return (
                f"the caller says the same short thing in {n} of {len(said)} turns: {text[:80]!r}"
            )
    return None


def _too_short(call: Call) -> str | None:
    if call.status != "done" or len(call.turns) > 1:
        return None
    return "an empty transcript" if not call.turns else "a one-turn transcript"


def _ceiling(call: Call) -> str | None:
    if _CEILING_RE.search(call.error_message):
        return f"the call ran into the five-minute ceiling ({call.error_message[:80]})"
    return None


def _persona(call: Call) -> str | None:
    if call.status != "done" or len(call.turns) < 2:
        return None
    facts = CallFacts(tuple(call.said("caller")), call.ended_by)
    missing = [rule for rule in declared(call.tags) if not rule.shown(facts)]
    if not missing:
        return None
    return "; ".join(
        f"the persona declares {rule.trait!r} but the caller never {rule.expect}"
        for rule in missing
    )


FLAG_RULES: Final[tuple[FlagRule, ...]] = (
    FlagRule(
        "caller-echoes-agent",
        "the caller repeats an agent line, or speaks as the agent (the simulator swapped roles)",
        _echo,
    ),
    FlagRule(
        "caller-loops",
        f"the caller says the same thing (at least {LOOP_MIN_WORDS} words) {LOOP_TIMES} times, "
        "or twice in a row with no agent turn between, or a shorter thing in most of its turns",
        _loops,
    ),
    FlagRule(
        "empty-or-one-turn",
        "a finished conversation with no turn or one: nothing to grade an assistant on",
        _too_short,
    ),
    FlagRule(
        "ended-by-ceiling",
        "the conversation ran into the five-minute ceiling: the simulation did not end itself",
        _ceiling,
    ),
    FlagRule(
        "persona-not-shown",
        "the persona declares a trait by a tag (busy, hostile, confused, ...) that the caller "
        "never shows in the conversation",
        _persona,
    ),
    FlagRule(
        "identical-repeats",
        "repeats of one cell with identical transcripts: the repeats add no information",
        None,
    ),
)
"""Every flag, one row each."""


def flag_rules() -> pd.DataFrame:
    """The flag table: ``flag`` and what it means."""
    return pd.DataFrame([(r.flag, r.means) for r in FLAG_RULES], columns=["flag", "means"])


# --------------------------------------------------------------------------- reading input


def _tags_of(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = [value]
        return tuple(str(t) for t in parsed) if isinstance(parsed, list) else ()
    if isinstance(value, Iterable):
        return tuple(str(t) for t in value)
    return ()


def _persona_tags(personas: Iterable[Any] | None) -> dict[str, tuple[str, ...]]:
    found: dict[str, tuple[str, ...]] = {}
    for persona in personas or ():
        if isinstance(persona, Mapping):
            label, tags = persona.get("label"), persona.get("tags")
        else:
            label, tags = getattr(persona, "label", None), getattr(persona, "tags", ())
        if label is not None:
            found[str(label)] = (*_tags_of(tags or ()), str(label))
    return found


def _text(value: Any) -> str:
    return "" if value is None or (isinstance(value, float) and value != value) else str(value)


def _calls(
    turns: pd.DataFrame, conversations: pd.DataFrame | None, personas: Iterable[Any] | None
) -> list[Call]:
    missing = [c for c in ("conversation_id", "role", "text") if c not in turns.columns]
    if missing:
        raise ValueError(f"turns lack columns {missing} (conversation_id, index, role, text)")
    ordered = turns.sort_values(["conversation_id", "index"]) if "index" in turns else turns
    by_id: dict[str, list[tuple[str, str]]] = {}
    for cid, role, text in zip(
        ordered["conversation_id"], ordered["role"], ordered["text"], strict=True
    ):
        by_id.setdefault(str(cid), []).append((str(role), _text(text)))
    run_ids: list[Any] = []
    if "run_id" in turns.columns:
        run_ids = list(turns["run_id"].dropna().unique())
    turns_run = str(run_ids[0]) if len(run_ids) == 1 else None
    labelled = _persona_tags(personas)
    rows: list[dict[str, Any]]
    if conversations is None:
        rows = [{"conversation_id": cid} for cid in by_id]
    else:
        rows = [{str(k): v for k, v in r.items()} for r in conversations.to_dict(orient="records")]
    calls = []
    for row in rows:
        cid = str(row["conversation_id"])
        said = tuple(by_id.get(cid, ()))
        label = _text(row.get("persona_label"))
        tags = labelled.get(label) or (*_tags_of(row.get("persona_tags")), label)
        ended = row.get("ended_by") if "ended_by" in row else (said[-1][0] if said else None)
        cell = _text(row.get("cell_id")) or cid.rsplit("-", 1)[0]
        calls.append(
            Call(
                cid,
                said,
                _text(row.get("status")) or "done",
                None if ended is None or ended != ended else str(ended),
                _text(row.get("error_message")),
                tuple(t for t in tags if t),
                cell,
                _text(row.get("run_id")) or turns_run,
            )
        )
    return calls


def _identical_repeats(calls: Sequence[Call]) -> list[tuple[Call, str]]:
    groups: dict[tuple[str, tuple[tuple[str, str], ...]], list[Call]] = {}
    for call in calls:
        if call.status == "done" and len(call.turns) > 1:
            key = (f"{call.run_id}/{call.cell_id}", tuple((r, normalise(t)) for r, t in call.turns))
            groups.setdefault(key, []).append(call)
    found = []
    for group in groups.values():
        if len(group) > 1:
            ids = sorted(c.conversation_id for c in group)
            for call in group:
                others = ", ".join(i for i in ids if i != call.conversation_id)
                found.append((call, f"the same transcript as another repeat: {others}"))
    return found


def simulation_flags(
    turns: pd.DataFrame | _RunLike,
    conversations: pd.DataFrame | None = None,
    personas: Iterable[Any] | None = None,
) -> pd.DataFrame:
    """One row per flag raised: ``conversation_id``, ``flag``, ``reason`` (see
    :data:`FLAG_RULES` and :func:`flag_rules`), and ``run_id`` (None when the input has none;
    conversation ids repeat across runs of one grid, so exclusions match on both).

    ``turns``: a turns frame (``conversation_id``, ``index``, ``role``, ``text``) or a run
    (its ``turns`` and ``conversations``). ``conversations`` adds status, who ended the call,
    error messages, cells (for identical repeats) and persona tags; without it every
    transcript counts as ``done`` and the cell is read from the conversation id.
    ``personas`` (:class:`~evalkit.Persona` objects or mappings) give the tags by label when
    the conversations do not carry them. ``attrs["checked"]`` is how many conversations were
    read.
    """
    if not isinstance(turns, pd.DataFrame):
        run = turns
        turns, conversations = (
            run.turns,
            run.conversations if conversations is None else conversations,
        )
    calls = _calls(turns, conversations, personas)
    found: list[tuple[str, str, str, str | None]] = []
    for rule in FLAG_RULES:
        if rule.find is None:
            found += [
                (call.conversation_id, rule.flag, why, call.run_id)
                for call, why in _identical_repeats(calls)
            ]
            continue
        for call in calls:
            reason = rule.find(call)
            if reason is not None:
                found.append((call.conversation_id, rule.flag, reason, call.run_id))
    frame = pd.DataFrame(found, columns=list(FLAG_COLUMNS)).astype("object")
    frame = frame.sort_values(["conversation_id", "flag"], kind="stable").reset_index(drop=True)
    frame.attrs["checked"] = len(calls)
    return frame
