"""OptimizeOptions: how many rounds and candidates, the conversation budget, the held-out
share, and how each round's race runs."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..runner import RunOptions
from ._options import VariantsOptions, check_confirm_repeats

__all__ = ["OptimizeOptions"]


@dataclass(frozen=True)
class OptimizeOptions:
    """How :func:`evalkit.optimize` searches.

    ``rounds``: proposal rounds at most. ``candidates``: prompts asked of the proposer per
    round. ``max_conversations``: the whole search's budget, draft included; a round starts
    only when its worst case fits (every candidate run to the end), and a budget below one
    round's worst case is refused up front, naming it. ``holdout``: the share of cells held out
    to confirm the winner (never shown to the proposer, never used to race). ``seed``: the
    held-out cells and the failure clusters. ``max_repeats``: waves of one repeat per cell in
    each round's race (tuning's adaptive arms drop the clearly worse after each wave).
    ``run_options``: the runner's knobs (``concurrency`` is shared out among a wave's arms).
    ``run_prefix``: run ids are ``<prefix>-draft`` and ``<prefix>-r<round>-c<i>`` (give the
    same prefix to resume: finished rounds are neither proposed again nor run again).
    ``max_prompt_chars``: a candidate longer than this is refused before it runs (the spec
    shows no prompt limit; set your service's). ``confidence``, ``min_effect``,
    ``drop_alpha``, ``adaptive`` (False: every candidate runs every wave): as in
    :class:`~evalkit.tuning.TuneOptions`. ``confirm_repeats``: once a winner is confirmed, it
    and the draft run this many fresh repeats of every cell and its gain is their difference
    (0: none, the gain is the selection-adjusted held-out difference); counted in the budget
    and in :meth:`expected`. ``on_round``: called with each round's row (the ``progress``
    table's) when the round ends.
    """

    rounds: int = 3
    candidates: int = 4
    max_conversations: int | None = None
    holdout: float = 0.3
    seed: int = 0
    max_repeats: int = 2
    run_options: RunOptions = field(default_factory=RunOptions)
    run_prefix: str | None = None
    max_prompt_chars: int | None = None
    confidence: float = 0.95
    min_effect: float = 5.0
    drop_alpha: float = 0.05
    adaptive: bool = True
    confirm_repeats: int = 2
    on_round: Callable[[Mapping[str, Any]], None] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        for name in ("rounds", "candidates", "max_repeats"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"OptimizeOptions.{name} must be an integer >= 1, got {value!r}")
        if self.max_conversations is not None and (
            isinstance(self.max_conversations, bool)
            or not isinstance(self.max_conversations, int)
            or self.max_conversations < 1
        ):
            raise ValueError(
                "OptimizeOptions.max_conversations must be a positive integer or None, got "
                f"{self.max_conversations!r}"
            )
        if not 0.0 < self.holdout < 1.0:
            raise ValueError(
                f"OptimizeOptions.holdout must be in (0, 1): the winner is confirmed on "
                f"held-out cells; got {self.holdout!r}"
            )
        if not 0.5 < self.confidence < 1.0:
            raise ValueError(
                f"OptimizeOptions.confidence must be in (0.5, 1), got {self.confidence!r}"
            )
        if self.min_effect < 0:
            raise ValueError(f"OptimizeOptions.min_effect must be >= 0, got {self.min_effect!r}")
        if not 0.0 < self.drop_alpha < 1.0:
            raise ValueError(
                f"OptimizeOptions.drop_alpha must be in (0, 1), got {self.drop_alpha!r}"
            )
        if self.max_prompt_chars is not None and self.max_prompt_chars < 1:
            raise ValueError("OptimizeOptions.max_prompt_chars must be >= 1 or None")
        check_confirm_repeats(self.confirm_repeats, "OptimizeOptions")

    @property
    def decision(self) -> VariantsOptions:
        """The final decision's options."""
        return VariantsOptions(self.holdout, self.confidence, self.min_effect, self.seed)

    def round_cost(self, cells: int) -> int:
        """The most conversations one round's race spends: every candidate to the end."""
        return self.candidates * cells * self.max_repeats

    def draft_cost(self, cells: int) -> int:
        """The draft's conversations (run once, in the first round)."""
        return cells * self.max_repeats

    def fresh_cost(self, cells: int) -> int:
        """The fresh repeats that measure a winner's gain: the winner's and the draft's."""
        return 2 * cells * self.confirm_repeats

    def minimum(self, cells: int) -> int:
        """The least budget that lets one round run: the draft, one round's worst case and
        the fresh repeats of a winner."""
        return self.draft_cost(cells) + self.round_cost(cells) + self.fresh_cost(cells)

    def expected(self, cells: int) -> int:
        """The most the whole search spends (every round, every candidate to the end, then
        the fresh repeats of a winner)."""
        return (
            self.draft_cost(cells) + self.rounds * self.round_cost(cells) + self.fresh_cost(cells)
        )
