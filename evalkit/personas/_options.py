"""GenerateOptions and FindOptions: how personas are generated and checked, and how a search for
the callers that break a draft runs, confirms and spends."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..compare import check_levels
from ..runner import RunOptions
from ._axes import TraitSpace
from ._sampling import Strategy

__all__ = ["FindOptions", "GenerateOptions"]


def _positive_int(owner: str, name: str, value: Any, least: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"{owner}.{name} must be an integer >= {least}, got {value!r}")


def _share(owner: str, name: str, value: Any, *, closed: bool = True) -> None:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if not ok or not (0.0 <= value <= 1.0 if closed else 0.0 < value < 1.0):
        bounds = "[0, 1]" if closed else "(0, 1)"
        raise ValueError(f"{owner}.{name} must be in {bounds}, got {value!r}")


@dataclass(frozen=True, kw_only=True)
class _Checks:
    """The knobs generation and the search share: which traits, and how personas are checked.

    ``axes``: the trait values in play (axis -> values; an axis not named keeps all of
    :data:`~evalkit.personas.TRAIT_AXES`' values; None: every value). ``strategy``:
    ``coverage`` (each new combination covers the most value pairs not covered yet) or
    ``random``. ``per_call``: personas asked of the generator per call.
    ``max_behavior_chars``: a longer behaviour is refused (the spec shows no limit; this is
    evalkit's, about twice the longest bundled persona). ``max_similarity``: a behaviour whose
    character n-gram TF-IDF cosine with one already there reaches this is a near-duplicate.
    ``max_flagged_share``: a persona flagged by the pilot's simulation flags in more than this
    share of its pilot conversations is dropped. ``seed``: the trait draws (a persona's
    provenance records it). ``run_options``: the runner's knobs (concurrency, pricing, ...;
    its budget is set by the flow). ``run_prefix``: run ids start with it (give the same
    prefix to resume).
    """

    axes: Mapping[str, Sequence[str]] | None = None
    strategy: Strategy = "coverage"
    per_call: int = 4
    max_behavior_chars: int = 1500
    max_similarity: float = 0.9
    max_flagged_share: float = 0.5
    seed: int = 0
    run_options: RunOptions = field(default_factory=RunOptions)
    run_prefix: str | None = None

    def _check_shared(self) -> None:
        owner = type(self).__name__
        TraitSpace.of(self.axes, f"{owner}.axes")
        if self.strategy not in ("coverage", "random"):
            raise ValueError(
                f"{owner}.strategy must be 'coverage' or 'random', got {self.strategy!r}"
            )
        _positive_int(owner, "per_call", self.per_call)
        _positive_int(owner, "max_behavior_chars", self.max_behavior_chars)
        _share(owner, "max_similarity", self.max_similarity, closed=False)
        _share(owner, "max_flagged_share", self.max_flagged_share)
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ValueError(f"{owner}.seed must be an integer, got {self.seed!r}")

    @property
    def space(self) -> TraitSpace:
        """The trait space in play."""
        return TraitSpace.of(self.axes, f"{type(self).__name__}.axes")


@dataclass(frozen=True, kw_only=True)
class GenerateOptions(_Checks):
    """How :func:`evalkit.generate_personas` generates and checks.

    ``n``: personas asked for (each a trait combination not asked before). ``pilot
    conversations``: conversations each persona that passed the checks runs on the draft (on
    the grid's first record and context) before it is kept; its simulation flags decide
    (``max_flagged_share``); 0: no pilot. The rest as in the shared knobs: ``axes``,
    ``strategy``, ``per_call``, ``max_behavior_chars``, ``max_similarity``, ``seed``,
    ``run_options``, ``run_prefix`` (the pilot run is ``<prefix>-pilot``).
    """

    n: int = 12
    pilot_conversations: int = 2

    def __post_init__(self) -> None:
        self._check_shared()
        _positive_int("GenerateOptions", "n", self.n)
        _positive_int("GenerateOptions", "pilot_conversations", self.pilot_conversations, 0)


@dataclass(frozen=True, kw_only=True)
class FindOptions(_Checks):
    """How :func:`evalkit.find_failures` searches, confirms and spends.

    ``rounds``: rounds of generated personas at most; ``per_round``: personas asked for per
    round. ``records_per_persona``: the grid's records each persona is run with (a seeded
    choice, the same for every persona; None: all), crossed with the grid's contexts: a
    persona's *cells*. ``screen_repeats``: repeats of each cell in screening (the pilot that
    also checks the persona); ``keep_failures``: failures of a rule in screening that keep the
    (persona, rule) pair. ``max_confirmed``: personas confirmed at most, the most specific
    failures first; ``confirm_repeats``: fresh repeats of each cell they run. ``threshold``: a
    failure rate a reported pair must be shown to exceed (one-sided exact binomial tests, Holm
    over the search, at ``1 - confidence``). ``exploit``: the share of a round's personas that
    are neighbours of failing ones (one trait drawn again). ``rules``: the rules searched
    (None: every rule of the scorecard). ``max_conversations``: the whole search's budget,
    confirmation included: a round starts only when its worst case fits beside what the
    confirmation needs, and a budget below one round and the confirmation is refused up front.
    ``on_round``: called with each round's row (the ``rounds`` table's) when it ends.
    Run ids: ``<prefix>-r01``... for the rounds, ``<prefix>-confirm`` for the fresh repeats.
    """

    rounds: int = 3
    per_round: int = 8
    records_per_persona: int | None = 3
    screen_repeats: int = 1
    keep_failures: int = 1
    max_confirmed: int = 6
    confirm_repeats: int = 3
    threshold: float = 0.25
    confidence: float = 0.95
    exploit: float = 0.25
    rules: tuple[str, ...] | None = None
    max_conversations: int | None = None
    on_round: Callable[[Mapping[str, Any]], None] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        self._check_shared()
        owner = "FindOptions"
        for name in ("rounds", "per_round", "screen_repeats", "keep_failures"):
            _positive_int(owner, name, getattr(self, name))
        for name in ("max_confirmed", "confirm_repeats"):
            _positive_int(owner, name, getattr(self, name))
        if self.records_per_persona is not None:
            _positive_int(owner, "records_per_persona", self.records_per_persona)
        _share(owner, "threshold", self.threshold, closed=False)
        _share(owner, "exploit", self.exploit)
        check_levels(self.confidence, 0.0, owner)
        if self.max_conversations is not None:
            _positive_int(owner, "max_conversations", self.max_conversations)
        if isinstance(self.rules, str):
            object.__setattr__(self, "rules", (self.rules,))
        if self.rules is not None and not self.rules:
            raise ValueError(f"{owner}.rules must name at least one rule, or be None")

    def round_cost(self, cells: int) -> int:
        """The most conversations one round's screening spends: every persona asked for
        passes the checks and runs ``screen_repeats`` of each of its ``cells``."""
        return self.per_round * cells * self.screen_repeats

    def confirm_cost(self, cells: int) -> int:
        """The most the confirmation spends: ``max_confirmed`` personas, fresh repeats."""
        return self.max_confirmed * cells * self.confirm_repeats

    def minimum(self, cells: int) -> int:
        """The least budget that lets one round and the confirmation run."""
        return self.round_cost(cells) + self.confirm_cost(cells)

    def expected(self, cells: int) -> int:
        """The most the whole search spends (every round, every persona, the confirmation)."""
        return self.rounds * self.round_cost(cells) + self.confirm_cost(cells)
