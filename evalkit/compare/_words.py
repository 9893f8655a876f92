"""What a comparison says in words: the variance method and why, the verdict's reason."""

from __future__ import annotations

from collections.abc import Sequence

from ..grading import RuleLeftOut, left_out_words
from ..stats import VarianceMethod
from ._decision import Reason

__all__ = ["left_out_reason", "method_sentence", "reason_sentence"]


def _df(x: float) -> str:
    return f"{x:g}"


def method_sentence(method: VarianceMethod, cells: int, within_df: tuple[float, float]) -> str:
    """Which variance the interval rests on, and why the design chose it."""
    b, c = within_df
    if method is VarianceMethod.WITHIN_CELLS:
        return (
            "repeats within cells: each side's spread between repeats of a cell, pooled over "
            f"its cells ({_df(b)} and {_df(c)} degrees of freedom), Welch t; the repeats give "
            f"at least the {cells - 1} degrees of freedom the {cells} cell differences would"
        )
    if method is VarianceMethod.PAIRED_CELLS:
        why = (
            "one repeat per cell"
            if b == 0 and c == 0
            else f"the repeats give too few degrees of freedom to pool ({_df(b)} and {_df(c)}, "
            f"under {cells - 1})"
        )
        return (
            f"paired cells: a t interval on the {cells} cell differences ({cells - 1} degrees of "
            f"freedom; conservative for a fixed grid), because {why}"
        )
    if cells == 0:
        return "no interval: no cell was scored on both sides"
    return "no interval: one cell is paired and a side has no repeat of it; add cells or repeats"


def reason_sentence(reason: Reason, verdict: str, min_effect: float, bounded: bool) -> str:
    """Why the verdict came out as it did, in words."""
    m = f"{min_effect:g}"
    if reason is Reason.RULES_LEFT_OUT:
        return "no verdict: a side's scores leave out whole rules (no pass or fail, only errors)"
    if reason is Reason.NO_INTERVAL:
        return "no interval can be computed for this design"
    if reason is Reason.ERRORS_COULD_EXPLAIN:
        return (
            "the estimate points one way, but the judge errors differ between the sides and, "
            "scored as fail or as pass, they could explain the difference"
        )
    if reason is Reason.INTERVAL_HOLDS_ZERO:
        return f"the interval holds zero and differences beyond the minimum effect ({m} points)"
    if verdict == "no_difference":
        return (
            f"the {'' if not bounded else 'error-bounded '}equivalence interval lies within "
            f"+-{m} points (two one-sided tests)"
        )
    side = "above" if verdict == "improved" else "below"
    extra = ", with judge errors scored either way" if bounded else ""
    return f"the whole interval is {side} zero{extra}"


def left_out_reason(
    left_out: tuple[Sequence[RuleLeftOut], Sequence[RuleLeftOut]], total_points: float
) -> str:
    """Why no verdict rests on scores that leave out whole rules, naming them per side."""
    said = [
        f"{label}: {left_out_words(rules, total_points)}"
        for label, rules in zip(("baseline", "candidate"), left_out, strict=True)
        if rules
    ]
    return (
        "no verdict: the scores leave out whole rules, so they are not the scorecard's score ("
        + "; ".join(said)
        + "); grade again once the judge answers"
    )
