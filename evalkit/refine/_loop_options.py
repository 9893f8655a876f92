"""``RefineLoopOptions``: how a refine loop runs, stops and guards against over-fitting."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..compare import check_min_effect
from ._refine_options import RefineOptions

__all__ = ["RefineLoopOptions"]


@dataclass(frozen=True)
class RefineLoopOptions:
    """Options of :func:`refine_loop`.

    Stops: ``rounds`` (refine builds at most), ``target_score`` (held-out score, points),
    ``max_conversations`` (the prod run and round 0 included; a round that would not fit is
    not started), and a ``regressed`` verdict of the held-out cells against the previous round
    (``stop_on_regression``). ``holdout``: share of cells (by ``cell_id``, drawn with ``seed``)
    never used to write feedback; they decide whether a round is progress. ``min_effect``:
    points, for every verdict. ``run_prefix`` names the runs (``<prefix>-prod``,
    ``<prefix>-r0``, ...; default from the assistant and the time). ``concurrency``: streams at
    once in each run. ``refine``: the :class:`RefineOptions` of each
    :func:`refine_and_wait` (its wait, poll and brief).
    """

    rounds: int = 3
    holdout: float = 0.3
    seed: int = 0
    target_score: float | None = None
    max_conversations: int | None = None
    stop_on_regression: bool = True
    min_effect: float = 5.0
    run_prefix: str | None = None
    concurrency: int = 8
    refine: RefineOptions = field(default_factory=RefineOptions)

    def __post_init__(self) -> None:
        if self.rounds < 1:
            raise ValueError(f"rounds must be at least 1, got {self.rounds}")
        if not 0 < self.holdout < 1:
            raise ValueError(f"holdout must be between 0 and 1 (exclusive), got {self.holdout}")
        if self.max_conversations is not None and self.max_conversations < 1:
            raise ValueError(f"max_conversations must be >= 1, got {self.max_conversations}")
        check_min_effect(self.min_effect, "RefineLoopOptions")
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {self.concurrency}")
