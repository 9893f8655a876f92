"""The headline of a comparison from its sides: variance method, interval and verdict.

The second step of :func:`evalkit.compare.compare_grades` (after the sides are built, before
the summary row and the breakdowns): each side's per-cell moments three ways (judge errors
left out, failed, passed), whether the sides' error rates differ (Fisher's exact test), one
:func:`~evalkit.compare._decision.decide_grid` call, and each side's grid mean over the
paired cells.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from ..grading import RuleLeftOut
from ..stats import CellMoments, Interval, VarianceMethod, grid_mean
from ._decision import Decision, Reason, Scenarios, decide_grid, errors_differ
from ._sides import Sides
from ._verdict import Verdict

__all__ = ["Headline", "decide_headline", "refuse"]


@dataclass(frozen=True)
class Headline:
    """What the headline decided and what the summary row and breakdowns reuse.

    ``scenarios``: per side, per-cell moments with errors left out, failed and passed;
    ``paired``: the cells scored on both sides; ``with_errors``: per side, conversations with
    a judged rule in error and all conversations; ``bounded``: whether the error bounds had
    to agree; ``side_scores``: each side's grid mean over the paired cells; ``within_df``:
    each side's within-cell degrees of freedom over the paired cells; ``rules_left_out``:
    per side, the rules its scores leave out whole (no pass or fail, only errors: a judge
    that never answered), on which no verdict rests (:func:`refuse`).
    """

    scenarios: tuple[Scenarios, Scenarios]
    paired: NDArray[np.bool_]
    with_errors: tuple[tuple[int, int], tuple[int, int]]
    bounded: bool
    decision: Decision
    side_scores: tuple[Interval, Interval]
    within_df: tuple[float, float]
    rules_left_out: tuple[tuple[RuleLeftOut, ...], tuple[RuleLeftOut, ...]] = ((), ())

    @property
    def refused(self) -> bool:
        """Whether a side's scores leave out whole rules (then no verdict rests on them)."""
        return bool(self.rules_left_out[0] or self.rules_left_out[1])

    @property
    def moments(self) -> tuple[CellMoments, CellMoments]:
        """Each side's per-cell moments with judge errors left out (the estimate)."""
        return self.scenarios[0].left_out, self.scenarios[1].left_out

    @property
    def method(self) -> VarianceMethod:
        return VarianceMethod(int(self.decision.method))


def decide_headline(sides: Sides, confidence: float, min_effect: float) -> Headline:
    """Candidate minus baseline over the paired cells (:func:`decide_grid`, whose module
    docstring states the rule); refused (:func:`refuse`) when a side's scores leave out whole
    rules."""
    n_cells = len(sides.cells)
    scenarios = (sides.baseline.scenarios(n_cells), sides.candidate.scenarios(n_cells))
    moments = (scenarios[0].left_out, scenarios[1].left_out)
    paired = (moments[0].n > 0) & (moments[1].n > 0)
    errs = tuple((int((s.conversation_errors > 0).sum()), s.n_conversations) for s in sides.pair)
    with_errors = (errs[0], errs[1])
    bounded = bool(errors_differ(with_errors[0], with_errors[1]))
    decision = decide_grid(
        scenarios[0], scenarios[1], confidence=confidence, min_effect=min_effect, bounded=bounded
    )
    within = [float(np.where(paired & (m.n > 1), m.n - 1.0, 0.0).sum()) for m in moments]
    scores = [grid_mean(m.mask(paired), confidence, scale=100.0) for m in moments]
    left_out = (sides.rules_left_out(sides.baseline), sides.rules_left_out(sides.candidate))
    if left_out[0] or left_out[1]:
        decision = refuse(decision)
    return Headline(
        scenarios=scenarios,
        paired=paired,
        with_errors=with_errors,
        bounded=bounded,
        decision=decision,
        side_scores=(scores[0], scores[1]),
        within_df=(within[0], within[1]),
        rules_left_out=left_out,
    )


def refuse(decision: Decision) -> Decision:
    """``decision`` (one or many) turned into ``insufficient_evidence``, not non-inferior,
    for scores that leave out whole rules: they are not the scorecard's score, so neither a
    direction, an equivalence nor a non-inferiority claim rests on them."""
    shape = np.shape(decision.verdict)
    if not shape:
        return replace(
            decision,
            verdict=Verdict.INSUFFICIENT_EVIDENCE,
            reason=Reason.RULES_LEFT_OUT,
            non_inferior=False,
        )
    return replace(
        decision,
        verdict=np.full(shape, Verdict.INSUFFICIENT_EVIDENCE, dtype=object),
        reason=np.full(shape, Reason.RULES_LEFT_OUT),
        non_inferior=np.zeros(shape, dtype=bool),
    )
