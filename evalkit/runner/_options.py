"""A run's runtime knobs: concurrency, budget, attempts, progress, re-runs (not its identity)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..store import STATUSES
from ._pricing import Pricing

__all__ = ["Budget", "RunOptions"]


@dataclass(frozen=True)
class Budget:
    """Limits on one invocation: conversations started, wall-clock seconds, and spend.

    When ``max_seconds`` passes, open conversations are cancelled (not recorded) and the run
    is finalised as partial; resume it later with the same ``run_id``. ``max_cost`` (in the
    price table's currency; needs ``RunOptions(pricing=...)``) stops starting conversations
    once the finished ones cost that much: open ones finish and are recorded, the run is
    finalised as partial, and a resume runs the rest.
    """

    max_conversations: int | None = None
    max_seconds: float | None = None
    max_cost: float | None = None

    def __post_init__(self) -> None:
        if self.max_cost is not None and not (self.max_cost >= 0):
            raise ValueError(f"Budget.max_cost must be >= 0, got {self.max_cost}")
        if self.max_conversations is not None and self.max_conversations < 0:
            raise ValueError(f"Budget.max_conversations must be >= 0, got {self.max_conversations}")
        if self.max_seconds is not None and self.max_seconds <= 0:
            raise ValueError(f"Budget.max_seconds must be > 0, got {self.max_seconds}")


@dataclass(frozen=True)
class RunOptions:
    """How a run goes, never what it is: none of these is part of a run's identity, so a run
    resumes with other options.

    ``concurrency`` streams at once; ``budget`` stops early (a partial run you can resume);
    ``max_attempts`` runs of a conversation whose stream dropped (each a new conversation,
    waiting as the client's :class:`~evalkit.RetryPolicy` says); ``progress`` shows a bar
    (None: in a terminal or notebook only); ``rerun`` runs recorded conversations with these
    statuses again. ``stop_after_unreachable``: the circuit breaker; when that many
    conversations in a row could not connect to the service (after the client's retries), or
    every worker's latest one could not, the run stops with
    :class:`~evalkit.runner.ServiceUnreachable` and leaves them unrecorded, so a resume runs
    them; 0 records them ``failed`` and goes on. ``repeats``: run only the first this many
    repeats of every cell (a sequential comparison's waves; None: all the grid's); the run
    stays ``partial`` until the rest are run. ``allow_missing_variables``: run even when a
    ``{{token}}`` of the prompt has no value in some variables records (by default the run is
    refused with :class:`~evalkit.runner.MissingVariablesError` before any conversation).
    ``pricing``: a :class:`~evalkit.runner.Pricing` table; the run's cost is then recorded in
    its manifest (``cost``), and ``budget.max_cost`` can stop it at a spend.
    """

    concurrency: int = 8
    budget: Budget = Budget()
    max_attempts: int = 3
    progress: bool | None = None
    rerun: tuple[str, ...] = ()
    stop_after_unreachable: int = 5
    repeats: int | None = None
    allow_missing_variables: bool = False
    pricing: Pricing | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.budget.max_cost is not None and self.pricing is None:
            raise ValueError(
                "Budget.max_cost needs a price table: RunOptions(pricing=Pricing.load(FILE)) "
                "(CLI: --pricing FILE)"
            )
        if self.repeats is not None and self.repeats < 1:
            raise ValueError(f"repeats must be at least 1 (or None: all), got {self.repeats}")
        if self.concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {self.concurrency}")
        if self.max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {self.max_attempts}")
        if self.stop_after_unreachable < 0:
            raise ValueError(
                f"stop_after_unreachable must be >= 0 (0: never stop), got "
                f"{self.stop_after_unreachable}"
            )
        if isinstance(self.rerun, str):
            object.__setattr__(self, "rerun", (self.rerun,))
        unknown = set(self.rerun) - set(STATUSES)
        if unknown:
            raise ValueError(f"rerun takes statuses {'/'.join(STATUSES)}, got {sorted(unknown)}")
