"""The trait axes generated personas are drawn along: one table, one row per value.

An axis is one way callers differ (age, language and script, how cooperative, ...); each of
its values says, in words the generator is asked for, what that caller is like, and which
declared traits (persona ``tags``) a simulated caller of that kind must show in a pilot
conversation: the tags :func:`evalkit.simulation_flags` checks (``hostile``: the caller objects
or complains; ``urdu-script``: it speaks in Nastaliq; ...). Only what a caller shows from its
first lines is declared: the script it speaks and its hostility. A goal is not (the agent may
end the call on an objection, as its prompt tells it to, before the caller gets to ask for
another time or the cost: a short call, not a caller who was not played as described), nor is
a value whose caller shows nothing a transcript can check.

What a caller must show is checked in its behaviour text too, before anything runs: a value's
``said`` patterns (case-insensitive regular expressions, English, Roman Urdu or Nastaliq) are
the words that say it, and a behaviour that matches none of them leaves the value out (its
caller, told nothing of it, will not show it). The axes that decide how a call goes have them:
language and script, hostility and goal; the others are not checked by words.

A :class:`TraitSpace` is the axes in play: all of :data:`TRAIT_AXES`, or the values a user
picks (``{"age": ["elderly"], "language": ["roman-urdu", "code-switching"]}``); an axis not
named keeps all its values.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TRAIT_AXES", "TraitAxis", "TraitSpace", "TraitValue", "trait_axes"]

Traits = Mapping[str, str]
Pair = tuple[tuple[str, str], tuple[str, str]]


@dataclass(frozen=True, slots=True)
class TraitValue:
    """One value of an axis: its id, what it asks of the caller (the generator's words), the
    tags a persona with it declares (what its caller must show), and the patterns of the words
    that say it in a behaviour text (``said``; none: not checked by words)."""

    value: str
    describes: str
    tags: tuple[str, ...] = ()
    said: tuple[str, ...] = ()

    def is_said(self, text: str) -> bool:
        """Whether ``text`` says this value (always, when it has no ``said`` patterns)."""
        return not self.said or any(re.search(p, text, re.IGNORECASE) for p in self.said)


@dataclass(frozen=True, slots=True)
class TraitAxis:
    """One way callers differ: its ``name``, what it ``means``, and its values."""

    name: str
    means: str
    values: tuple[TraitValue, ...]

    def __post_init__(self) -> None:
        names = [v.value for v in self.values]
        if not names or len(set(names)) != len(names):
            raise ValueError(f"axis {self.name!r}: values must be unique and at least one")

    @property
    def value_names(self) -> tuple[str, ...]:
        return tuple(v.value for v in self.values)

    def value(self, name: str) -> TraitValue:
        """The value called ``name``; ``ValueError`` naming the known ones."""
        for v in self.values:
            if v.value == name:
                return v
        known = ", ".join(self.value_names)
        raise ValueError(f"axis {self.name!r} has no value {name!r} (known: {known})")


def _v(value: str, describes: str, *tags: str, said: tuple[str, ...] = ()) -> TraitValue:
    return TraitValue(value, describes, tags, said)


TRAIT_AXES: Final[tuple[TraitAxis, ...]] = (
    TraitAxis(
        "cooperation",
        "how willingly the caller takes part",
        (
            _v("cooperative", "willing and friendly; answers and confirms what matches"),
            _v("reluctant", "reluctant; answers slowly and only what is asked"),
            _v("uncooperative", "gives one- or two-word answers and never volunteers anything"),
        ),
    ),
    TraitAxis(
        "knowledge",
        "what the caller knows about the reason for the call",
        (
            _v("expects", "expects the call and knows what it is about"),
            _v("vague", "vaguely remembers something about it, not the details"),
            _v("unaware", "has no idea why anyone would call and asks who is calling"),
        ),
    ),
    TraitAxis(
        "language",
        "the language and script the caller speaks in",
        (
            _v(
                "urdu-nastaliq",
                "speaks Urdu and writes every line in Urdu (Nastaliq) script",
                "urdu-script",
                said=(r"nasta.?l.q", r"urdu script", r"[\u0600-\u06ff]"),
            ),
            _v(
                "roman-urdu",
                "speaks Urdu written in Roman (Latin) letters",
                said=(r"\broman\b", r"latin (?:letters|script|alphabet)", r"translit", r"رومن"),
            ),
            _v(
                "english",
                "speaks English only",
                "english",
                said=(r"\benglish\b", r"angrezi", r"انگریزی"),
            ),
            _v(
                "code-switching",
                "switches between Urdu and English inside sentences",
                said=(r"code.?switch", r"switch\w* between", r"\bmix\w*", r"english words"),
            ),
        ),
    ),
    TraitAxis(
        "patience",
        "how long the caller lets the agent talk",
        (
            _v("patient", "patient; lets the agent finish"),
            _v("impatient", "impatient; wants the point at once and cuts long explanations"),
        ),
    ),
    TraitAxis(
        "hostility",
        "how the caller feels about being called",
        (
            _v(
                "calm",
                "calm and courteous",
                said=(
                    r"\bcalm",
                    r"courteous",
                    r"\bpolite",
                    r"friendly",
                    r"pleasant",
                    r"relaxed",
                    r"tameez",
                    r"تمیز",
                    r"نرمی",
                    r"پرسکون",
                ),
            ),
            _v(
                "annoyed",
                "annoyed at being called",
                "angry",
                said=(
                    r"annoy",
                    r"irritat",
                    r"fed up",
                    r"bother",
                    r"grumpy",
                    r"upset",
                    r"naraz",
                    r"ناراض",
                    r"تنگ",
                ),
            ),
            _v(
                "hostile",
                "hostile and rude; objects to the call",
                "hostile",
                said=(
                    r"hostil",
                    r"\brude",
                    r"aggress",
                    r"angry",
                    r"\bobject",
                    r"abus",
                    r"shout",
                    r"gussa",
                    r"badtameez",
                    r"غصہ",
                    r"غصے",
                    r"بدتمیز",
                ),
            ),
        ),
    ),
    TraitAxis(
        "goal",
        "what the caller wants from the call",
        (
            _v(
                "confirm",
                "wants to confirm and get on with the day",
                said=(r"confirm", r"tasdeeq", r"تصدیق", r"کنفرم"),
            ),
            _v(
                "reschedule",
                "cannot make the time and wants another slot",
                said=(
                    r"reschedul",
                    r"(?:another|other|different|new) (?:day|time|slot|date)",
                    r"can(?:no|')t make",
                    r"call (?:me )?back",
                    r"kisi aur din",
                    r"کسی اور دن",
                    r"دوسرا دن",
                    r"وقت بدل",
                ),
            ),
            _v(
                "ask-cost",
                "asks what it will cost and whether there is a discount",
                said=(
                    r"\bcost",
                    r"\bprice",
                    r"discount",
                    r"\bfees?\b",
                    r"how much",
                    r"kitna",
                    r"qeemat",
                    r"قیمت",
                    r"کتنا",
                    r"رعایت",
                ),
            ),
            _v(
                "opt-out",
                "wants to be removed from the calling list",
                said=(
                    r"stop calling",
                    r"\bremov",
                    r"calling list",
                    r"off (?:their|the|your|its) list",
                    r"do.not.call",
                    r"don'?t call",
                    r"opt.?out",
                    r"call mat",
                    r"list se",
                    r"کال نہ",
                    r"فہرست سے",
                ),
            ),
            _v(
                "end-quickly",
                "is busy and wants to end the call fast",
                said=(
                    r"\bbusy",
                    r"\bhurry",
                    r"\brush",
                    r"no time",
                    r"\bquick",
                    r"\bfast\b",
                    r"jaldi",
                    r"masroof",
                    r"جلدی",
                    r"مصروف",
                ),
            ),
        ),
    ),
    TraitAxis(
        "noise",
        "where the caller takes the call",
        (
            _v("quiet", "in a quiet room"),
            _v("noisy", "in a noisy place (traffic, a market, children) and mishears things"),
        ),
    ),
    TraitAxis(
        "age",
        "the caller's age",
        (
            _v("young", "a young adult"),
            _v("middle-aged", "middle-aged"),
            _v("elderly", "elderly and a little hard of hearing"),
        ),
    ),
)
"""Every axis and value, one row each (:func:`trait_axes` as a table)."""


def trait_axes() -> pd.DataFrame:
    """The axes table: ``axis``, ``means``, ``value``, ``describes``, ``tags``, ``said`` (the
    patterns of the words that say the value, ``|``-joined; empty: not checked by words)."""
    import pandas as pd

    rows = [
        (axis.name, axis.means, v.value, v.describes, ", ".join(v.tags), " | ".join(v.said))
        for axis in TRAIT_AXES
        for v in axis.values
    ]
    return pd.DataFrame(rows, columns=["axis", "means", "value", "describes", "tags", "said"])


@dataclass(frozen=True)
class TraitSpace:
    """The axes (and values) in play; :meth:`of` picks them from :data:`TRAIT_AXES`."""

    axes: tuple[TraitAxis, ...] = TRAIT_AXES

    @classmethod
    def of(cls, selection: Mapping[str, Sequence[str]] | None, field: str = "axes") -> TraitSpace:
        """The space of ``selection`` (axis -> the values to use; None: every value of every
        axis). An unknown axis or value is a ``ValueError`` naming ``field``."""
        if not selection:
            return cls()
        known = {a.name: a for a in TRAIT_AXES}
        unknown = sorted(set(selection) - set(known))
        if unknown:
            raise ValueError(
                f"{field}: unknown axis {', '.join(map(repr, unknown))} (known: {', '.join(known)})"
            )
        axes = []
        for axis in TRAIT_AXES:
            wanted = selection.get(axis.name)
            if wanted is None:
                axes.append(axis)
                continue
            if isinstance(wanted, str) or not wanted:
                raise ValueError(f"{field}[{axis.name!r}]: a non-empty list of values")
            try:
                values = tuple(axis.value(str(w)) for w in dict.fromkeys(wanted))
            except ValueError as exc:
                raise ValueError(f"{field}: {exc}") from None
            axes.append(TraitAxis(axis.name, axis.means, values))
        return cls(tuple(axes))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.axes)

    def axis(self, name: str) -> TraitAxis:
        for axis in self.axes:
            if axis.name == name:
                return axis
        raise ValueError(f"no axis {name!r} in play (axes: {', '.join(self.names)})")

    @property
    def size(self) -> int:
        """How many trait combinations there are."""
        total = 1
        for axis in self.axes:
            total *= len(axis.values)
        return total

    def describe(self, traits: Traits) -> dict[str, str]:
        """axis -> the words that ask for the value (for the generator)."""
        return {a: self.axis(a).value(v).describes for a, v in traits.items()}

    def tags(self, traits: Traits) -> tuple[str, ...]:
        """The tags a persona with ``traits`` declares, in axis order, each once."""
        found: dict[str, None] = {}
        for axis in self.axes:
            if axis.name in traits:
                for tag in axis.value(traits[axis.name]).tags:
                    found.setdefault(tag, None)
        return tuple(found)

    def unsaid(self, traits: Traits, text: str) -> list[tuple[str, str]]:
        """The (axis, value) pairs of ``traits`` that ``text`` does not say (the values'
        ``said`` patterns; axes not in play are not checked)."""
        known = set(self.names)
        return [
            (axis, value)
            for axis, value in traits.items()
            if axis in known and not self.axis(axis).value(value).is_said(text)
        ]

    def check(self, traits: Traits) -> None:
        """``ValueError`` unless ``traits`` gives one value in play for every axis."""
        missing = [a for a in self.names if a not in traits]
        extra = sorted(set(traits) - set(self.names))
        if missing or extra:
            raise ValueError(f"traits must name every axis once: missing {missing}, extra {extra}")
        for name, value in traits.items():
            self.axis(name).value(value)

    def pairs(self) -> list[Pair]:
        """Every pair of values of two different axes (what pairwise coverage counts)."""
        out: list[Pair] = []
        for a, b in itertools.combinations(self.axes, 2):
            for va, vb in itertools.product(a.value_names, b.value_names):
                out.append(((a.name, va), (b.name, vb)))
        return out


def pairs_of(traits: Traits, order: Iterable[str]) -> set[Pair]:
    """The value pairs one combination covers (axes in ``order``)."""
    axes = [a for a in order if a in traits]
    return {((a, traits[a]), (b, traits[b])) for a, b in itertools.combinations(axes, 2)}


def traits_text(traits: Traits) -> str:
    """``age=elderly, noise=noisy``: a combination as one line of text."""
    return ", ".join(f"{axis}={value}" for axis, value in traits.items())
