"""The checks a generated persona passes before it joins a grid, each refusal with its reason.

Before anything runs (:func:`check_entry`): the fields make a valid persona (a label, a
behaviour, text that can be sent), the behaviour is under the length limit, it holds no
secret (anything evalkit's one redactor would mask: a project key, a bearer token, a URL's
password) and no ``{{token}}`` the grid's records cannot fill, and it says every trait value
asked for that has words to say it (each value's ``said`` patterns in the trait table,
:data:`~evalkit.personas.TRAIT_AXES`: language and script, hostility, goal): a behaviour that
leaves one out is refused (``not-said``), since its caller, told nothing of it, would not
show it, and the pilot's flags check only the traits a transcript can show. Then
(:func:`near_duplicates`) it is not a near copy of a persona already there: the cosine similarity of character n-gram
TF-IDF vectors of the behaviour texts (3 to 5 characters within word bounds, so Nastaliq,
Roman Urdu and English alike; scikit-learn) at least ``max_similarity``.

After a pilot conversation or two (:func:`pilot_drops`): a persona whose caller does not
behave as described is dropped: :func:`evalkit.simulation_flags` raised one of
:data:`PILOT_FLAGS` (the declared trait never shown, the caller echoing the agent or looping,
an empty call) in more than ``max_flagged_share`` of its pilot conversations.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from .._util import redact_text
from ..api import missing_variables, prompt_tokens
from ..grid import Persona, PersonaError
from ._axes import TraitSpace
from ._prompt import PersonaAsk

__all__ = [
    "PILOT_FLAGS",
    "CheckLimits",
    "Refused",
    "check_entry",
    "near_duplicates",
    "pilot_drops",
]

RefusalKind = Literal[
    "missing", "invalid", "too-long", "secret", "token", "not-said", "duplicate", "not-shown"
]

#: The simulation flags that say a caller did not behave as a persona describes.
PILOT_FLAGS: Final = frozenset(
    {"persona-not-shown", "caller-echoes-agent", "caller-loops", "empty-or-one-turn"}
)
_CONTROL_RE: Final = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_LABEL_SPACE_RE: Final = re.compile(r"\s+")
MAX_LABEL_CHARS: Final = 60


@dataclass(frozen=True, slots=True)
class Refused:
    """Why a generated persona does not join: its ``kind`` (``missing``: the generator wrote
    none for the request; ``invalid``, ``too-long``, ``secret``, ``token``, ``not-said``: its
    behaviour leaves out a trait value asked for, ``duplicate``, ``not-shown``: its caller
    did not behave as described in the pilot) and the reason, in words."""

    kind: RefusalKind
    reason: str

    def __str__(self) -> str:
        return f"{self.kind}: {self.reason}"


@dataclass(frozen=True, slots=True)
class CheckLimits:
    """What :func:`check_entry` holds a persona to: the behaviour's length limit and the
    records its tokens must be filled by."""

    max_behavior_chars: int
    records: Sequence[Mapping[str, Any] | None] = ()


def _bad_text(text: str) -> str | None:
    if any(unicodedata.category(ch) == "Cs" for ch in text):
        return "holds a lone surrogate, not text"
    match = _CONTROL_RE.search(text)
    if match is not None:
        return f"holds the control character U+{ord(match.group()):04X}"
    return None


def _unique(label: str, taken: Iterable[str]) -> str:
    used = set(taken)
    if label not in used:
        return label
    n = 2
    while f"{label}-{n}" in used:
        n += 1
    return f"{label}-{n}"


def check_entry(
    entry: Mapping[str, Any],
    ask: PersonaAsk,
    *,
    space: TraitSpace,
    limits: CheckLimits,
    provenance: Mapping[str, Any],
    taken: Iterable[str] = (),
) -> Persona | Refused:
    """The persona an entry makes (its traits, the tags they declare, its provenance; a
    label already ``taken`` gets a ``-2`` suffix), or why it cannot join (module docstring).
    The near-duplicate check is :func:`near_duplicates`, over a whole batch."""
    label, behavior = entry.get("label"), entry.get("behavior")
    description = entry.get("description")
    for name, value in (("label", label), ("behavior", behavior), ("description", description)):
        if value is not None and not isinstance(value, str):
            return Refused("invalid", f"{name}: must be text, got {type(value).__name__}")
        bad = _bad_text(value) if isinstance(value, str) else None
        if bad is not None:
            return Refused("invalid", f"{name}: {bad}")
    if not isinstance(label, str) or not label.strip():
        return Refused("invalid", "label: must not be empty")
    if not isinstance(behavior, str) or not behavior.strip():
        return Refused("invalid", "behavior: must not be empty")
    behavior = behavior.strip()
    if len(behavior) > limits.max_behavior_chars:
        return Refused(
            "too-long",
            f"behavior is {len(behavior):,} characters, over the limit of "
            f"{limits.max_behavior_chars:,}",
        )
    for name, value in (("label", label), ("behavior", behavior), ("description", description)):
        if isinstance(value, str) and redact_text(value) != value:
            return Refused("secret", f"{name} holds something shaped like a secret")
    tokens = prompt_tokens(behavior, label, description)
    if tokens:
        missing = missing_variables(tokens, limits.records or [None])
        if missing:
            return Refused("token", f"holds tokens the records do not fill: {missing.describe()}")
    unsaid = space.unsaid(ask.traits, behavior)
    if unsaid:
        named = ", ".join(f"{axis}={value}" for axis, value in unsaid)
        return Refused(
            "not-said",
            f"the behaviour never says {named} (asked for: its caller would not show it)",
        )
    name = _LABEL_SPACE_RE.sub("-", label.strip())[:MAX_LABEL_CHARS].strip("-") or "persona"
    try:
        return Persona(
            label=_unique(name, taken),
            behavior=behavior,
            tags=("generated", *space.tags(ask.traits)),
            description=description.strip() if isinstance(description, str) else None,
            traits=dict(ask.traits),
            provenance=dict(provenance),
        )
    except PersonaError as exc:
        return Refused("invalid", str(exc))


def near_duplicates(
    existing: Sequence[tuple[str, str]],
    candidates: Sequence[str],
    max_similarity: float,
) -> list[tuple[str, float] | None]:
    """For each candidate behaviour in order, ``(label, similarity)`` of the persona it nearly
    copies (an ``existing`` one, or an earlier candidate that was not itself a copy, named
    ``#i``), or None. ``existing``: (label, behaviour) pairs already in the grid."""
    if not candidates:
        return []
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics.pairwise import cosine_similarity

    texts = [text for _, text in existing] + list(candidates)
    vectorizer = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), sublinear_tf=True)
    try:
        matrix = vectorizer.fit_transform(texts)
    except ValueError:  # no n-gram at all (empty texts): nothing to compare
        return [None] * len(candidates)
    similarity = cosine_similarity(matrix[len(existing) :], matrix)
    names = [label for label, _ in existing] + [f"#{i}" for i in range(len(candidates))]
    kept = list(range(len(existing)))
    out: list[tuple[str, float] | None] = []
    for i in range(len(candidates)):
        if kept:
            row = similarity[i, kept]
            best = int(row.argmax())
            if float(row[best]) >= max_similarity:
                out.append((names[kept[best]], float(row[best])))
                continue
        out.append(None)
        kept.append(len(existing) + i)
    return out


def pilot_drops(
    flags: Any, conversations: Any, max_flagged_share: float
) -> dict[str, tuple[int, int, str]]:
    """label -> (flagged, pilots, an example reason) for every persona flagged by one of
    :data:`PILOT_FLAGS` in more than ``max_flagged_share`` of its pilot conversations.

    ``flags``: :func:`evalkit.simulation_flags` of the pilot run; ``conversations``: the run's
    conversations table (``conversation_id``, ``persona_label``, ``status``)."""
    done = conversations[conversations["status"] == "done"]
    pilots = done.groupby("persona_label")["conversation_id"].nunique()
    wanted = flags[flags["flag"].isin(PILOT_FLAGS)]
    label_of = dict(zip(done["conversation_id"], done["persona_label"], strict=True))
    flagged: dict[str, set[str]] = {}
    reason: dict[str, str] = {}
    for cid, flag, why in zip(
        wanted["conversation_id"], wanted["flag"], wanted["reason"], strict=True
    ):
        label = label_of.get(cid)
        if label is None:
            continue
        flagged.setdefault(str(label), set()).add(str(cid))
        reason.setdefault(str(label), f"{flag}: {why}")
    out: dict[str, tuple[int, int, str]] = {}
    for label, ids in flagged.items():
        total = int(pilots.get(label, 0))
        if total and len(ids) / total > max_flagged_share:
            out[label] = (len(ids), total, reason[label])
    return out
