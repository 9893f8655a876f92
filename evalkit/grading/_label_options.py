"""The knobs of the label queue and the label plan, in one options object
(:func:`~evalkit.grading.label_queue`, :func:`~evalkit.grading.planned_n`,
:func:`~evalkit.grading.plan_labels`): the plan says how many labels a judge-corrected interval
needs, the queue draws them, and both allocate labels across the judge's verdicts the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

    from ..store import Run
    from ._grades import GradesLike

__all__ = ["ALLOCATIONS", "DEFAULT_HALFWIDTH", "Allocation", "LabelOptions"]

Allocation = Literal["proportional", "neyman"]
#: How the queue spreads a rule's labels over the judge's verdicts.
ALLOCATIONS: tuple[Allocation, ...] = ("proportional", "neyman")
#: Without ``n``, the queue holds the labels a corrected interval this wide (points) needs.
DEFAULT_HALFWIDTH = 10.0


@dataclass(frozen=True)
class LabelOptions:
    """Options of the label queue and the label plan.

    ``n``: labels to draw (None: what the plan says is still needed; queue only);
    ``rules``: only these judged rules (None: every judged rule); ``seed``: the draw's seed
    (queue only); ``allocation``: how a rule's labels are spread over the judge's verdicts,
    ``"proportional"`` (every judged verdict of a rule equally likely to be labelled) or
    ``"neyman"`` (Neyman 1934: labels in proportion to a verdict's count times the spread of
    the truth behind it, so more where the judge errs more; the spreads come from ``pilot``,
    else from the labels so far, Jeffreys-smoothed; with neither it is proportional);
    ``pilot``: an earlier run judged the same way, with its labels (a
    :class:`~evalkit.store.Run`, or its ``(grades, labels)``), whose per-verdict label rates
    set the Neyman spreads; ``halfwidth``: the half-width (points) of the judge-corrected
    interval the plan aims at; ``confidence``: that interval's level; ``rubric_version_id``:
    which scorecard's grades of a run.
    """

    n: int | None = None
    rules: Sequence[str] | None = None
    seed: int = 0
    allocation: Allocation = "proportional"
    pilot: Run | tuple[GradesLike, pd.DataFrame] | None = field(default=None, compare=False)
    halfwidth: float = DEFAULT_HALFWIDTH
    confidence: float = 0.95
    rubric_version_id: str | None = None

    def __post_init__(self) -> None:
        if self.n is not None and (
            isinstance(self.n, bool) or not isinstance(self.n, int | np.integer) or self.n < 1
        ):
            raise ValueError(f"LabelOptions.n must be a positive number of labels, got {self.n!r}")
        if self.allocation not in ALLOCATIONS:
            raise ValueError(
                f"LabelOptions.allocation must be one of {', '.join(ALLOCATIONS)}, "
                f"got {self.allocation!r}"
            )
        if isinstance(self.rules, str):
            raise TypeError("LabelOptions.rules must be a list of rule ids, not one string")
        if self.rules is not None:
            object.__setattr__(self, "rules", tuple(str(r) for r in self.rules))
        if isinstance(self.halfwidth, bool) or not (
            isinstance(self.halfwidth, int | float) and self.halfwidth > 0
        ):
            raise ValueError(
                f"LabelOptions.halfwidth must be a positive number of points, got "
                f"{self.halfwidth!r}"
            )
        if not 0.5 < self.confidence < 1:
            raise ValueError(f"LabelOptions.confidence must be in (0.5, 1), got {self.confidence}")
        if self.pilot is not None and not _is_pilot(self.pilot):
            raise TypeError(
                "LabelOptions.pilot must be a Run or a (grades, labels) pair, got "
                f"{type(self.pilot).__name__}"
            )


def _is_pilot(value: object) -> bool:
    from ..store import Run

    return isinstance(value, Run) or (isinstance(value, tuple) and len(value) == 2)
