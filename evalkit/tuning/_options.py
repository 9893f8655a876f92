"""TuneOptions: what a sweep compares against, how far it goes, and how it runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..compare import check_levels
from ..runner import RunOptions
from ..targets import Variant

__all__ = ["TuneOptions", "VariantsOptions"]


@dataclass(frozen=True)
class VariantsOptions:
    """How :func:`evalkit.compare_variants` decides many arms against one control.

    ``holdout``: the share of cells held out to confirm the winner (0: the closed test on
    every cell alone, and no selection-adjusted gain). ``seed``: which cells. ``confidence``:
    the intervals' two-sided level (the winner's claim is one-sided at ``(1 - confidence) /
    2``). ``min_effect``: the difference (points) below which an arm is ``no_difference``.
    """

    holdout: float = 0.3
    confidence: float = 0.95
    min_effect: float = 5.0
    seed: int = 0

    def __post_init__(self) -> None:
        if not 0.0 <= self.holdout < 1.0:
            raise ValueError(f"VariantsOptions.holdout must be in [0, 1), got {self.holdout!r}")
        check_levels(self.confidence, self.min_effect, "VariantsOptions")


@dataclass(frozen=True)
class TuneOptions:
    """How :func:`evalkit.tune` sweeps.

    ``control``: what the arms are compared with (``"draft"``, ``"prod"`` or a
    :class:`~evalkit.Variant`). ``max_repeats``: waves of one repeat per cell, at most this
    many (every arm still in gets them all). ``holdout``: the share of cells held out to
    confirm the winner. ``adaptive``: drop arms clearly worse than the current best after each
    wave (False: every arm runs every wave). ``seed``: the held-out cells. ``run_options``:
    the runner's knobs; ``concurrency`` is the sweep's total, shared out among the arms a wave
    runs at once, and each wave's conversation budget is set by the sweep. ``run_prefix``: run
    ids are ``<prefix>-<arm>`` (None: a fresh stamp; give the same prefix to resume a sweep).
    ``drop_alpha``: the error of dropping the truly best arm. ``latency_min_effect_s``: the
    agent latency difference (seconds) below which an arm is not called slower or faster than
    the control (``compare_latency``'s ``min_effect_s``). ``confirm_repeats``: once a winner
    is confirmed, it and the control run this many fresh repeats of every cell, and the
    winner's gain is their difference (conversations that played no part in choosing or
    confirming it); 0 runs none and reports the selection-adjusted held-out difference.
    """

    control: Literal["draft", "prod"] | Variant = "draft"
    max_repeats: int = 4
    holdout: float = 0.3
    adaptive: bool = True
    seed: int = 0
    run_options: RunOptions = field(default_factory=RunOptions)
    confidence: float = 0.95
    min_effect: float = 5.0
    drop_alpha: float = 0.05
    run_prefix: str | None = None
    judge_samples: int = 1
    latency_min_effect_s: float = 0.25
    confirm_repeats: int = 2

    def __post_init__(self) -> None:
        check_confirm_repeats(self.confirm_repeats, "TuneOptions")
        if not self.latency_min_effect_s >= 0:
            raise ValueError(
                "TuneOptions.latency_min_effect_s must be >= 0 seconds, got "
                f"{self.latency_min_effect_s!r}"
            )
        if not isinstance(self.max_repeats, int) or self.max_repeats < 1:
            raise ValueError(
                f"TuneOptions.max_repeats must be an integer >= 1, got {self.max_repeats!r}"
            )
        if not 0.0 <= self.holdout < 1.0:
            raise ValueError(f"TuneOptions.holdout must be in [0, 1), got {self.holdout!r}")
        check_levels(self.confidence, self.min_effect, "TuneOptions")
        if not 0.0 < self.drop_alpha < 1.0:
            raise ValueError(f"TuneOptions.drop_alpha must be in (0, 1), got {self.drop_alpha!r}")
        if not (isinstance(self.control, Variant) or self.control in ("draft", "prod")):
            raise ValueError(
                f"TuneOptions.control must be 'draft', 'prod' or a Variant, got {self.control!r}"
            )

    @property
    def control_name(self) -> str:
        return self.control.name if isinstance(self.control, Variant) else str(self.control)

    @property
    def decision(self) -> VariantsOptions:
        """The final decision's options."""
        return VariantsOptions(self.holdout, self.confidence, self.min_effect, self.seed)

    def fresh_cost(self, cells: int) -> int:
        """The conversations of the fresh repeats after a win (the winner's and the control's)."""
        return 2 * cells * self.confirm_repeats

    def most_conversations(self, cells: int, arms: int) -> int:
        """The most a sweep spends: every arm and the control to the end, then the fresh
        repeats of a winner."""
        return (arms + 1) * cells * self.max_repeats + self.fresh_cost(cells)


def check_confirm_repeats(value: object, owner: str) -> None:
    """Refuse a ``confirm_repeats`` that is not an integer >= 0, naming ``owner``'s field."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{owner}.confirm_repeats must be an integer >= 0, got {value!r}")
