"""``assert_pass_rate``: one rule's pass rate against a bar, on its Wilson interval.

Passes when the interval's lower bound is at least the bar, fails when its upper bound is
below it, and is insufficient when the interval holds the bar. The rate and interval are
``Grades.by_rule``'s (pass / (pass + fail); ``na`` and ``error`` left out and counted).
"""

from __future__ import annotations

import math
from typing import Any

from ..grading import JudgeArg, ScorecardLike
from ._check import Check, FamilyPlace, Outcome, settle
from ._family import Family, Part, _check_bar
from ._inputs import as_grades
from ._needed import pass_rate_needs
from ._options import AssertOptions

__all__ = ["assert_pass_rate"]


def _rate_check(
    row: dict[str, Any],
    at_least: float,
    confidence: float,
    place: FamilyPlace | None,
    left_out: dict[str, int],
) -> Check:
    rate, low, high = (float(row[k]) for k in ("pass_rate", "pass_rate_low", "pass_rate_high"))
    scored = int(row["pass"] + row["fail"])
    outcome: Outcome = (
        "passed" if low >= at_least else "failed" if high < at_least else "insufficient"
    )
    verdict = {"passed": "above", "failed": "below", "insufficient": "undecided"}[outcome]
    level = round(100 * confidence, 4)
    shown = "n/a" if math.isnan(rate) else f"{rate:.3f}"
    interval = "no interval" if math.isnan(low) else f"{level:g}% CI {low:.3f} to {high:.3f}"
    evidence = (
        f"{verdict} the bar: pass rate {shown} ({interval}, Wilson), {int(row['pass'])} of "
        f"{scored} graded conversations passed"
    )
    outs = ", ".join(f"{n} {s}" for s, n in sorted(left_out.items()) if n) or "none"
    details = (
        f"left out: rule grades n/a (the rule did not apply) {int(row['na'])}, judge errors "
        f"{int(row['error'])}; conversations not done {outs}",
    )
    return Check(
        kind="pass_rate",
        claim=f"rule {row['rule_id']!r} passes at least {at_least:.0%} of the time",
        outcome=outcome,
        verdict=verdict,
        evidence=evidence,
        difference=rate - at_least,
        interval=(low - at_least, high - at_least),
        n=scored,
        confidence=confidence,
        unit="pass rate - bar",
        details=details,
        family=place,
        needed=None
        if outcome != "insufficient"
        else pass_rate_needs(rate, at_least, scored, confidence),
    )


def assert_pass_rate(
    grades: Any,
    rule: str,
    *,
    at_least: float | None = None,
    scorecard: ScorecardLike | None = None,
    judge: JudgeArg = None,
    options: AssertOptions | None = None,
) -> Check:
    """Assert that ``rule`` passes at least ``at_least`` of the time (a share, 0-1), on the
    lower bound of its pass rate's Wilson interval.

    ``grades``: a run (graded with ``scorecard``), a ``Grades``, a grades frame, or a
    :func:`~evalkit.testing.pass_rates` family (its bar and Holm level; ``at_least`` then
    left out or equal). Fails when the interval's upper bound is below the bar; insufficient
    evidence when the interval holds it.
    """
    __tracebackhide__ = True
    opts = options or AssertOptions()
    if isinstance(grades, Family | Part):
        part = grades[rule] if isinstance(grades, Family) else grades
        if part.row is None or part.at_least is None:
            raise TypeError(f"{part.name!r} is a part of a comparison family: use assert_not_worse")
        if at_least is not None and not math.isclose(at_least, part.at_least):
            raise ValueError(
                f"at_least: the family was made with a bar of {part.at_least:g}, not {at_least:g}"
            )
        check = _rate_check(part.row, part.at_least, part.place.level, part.place, {})
        return settle(check, opts)
    if at_least is None:
        raise TypeError("at_least: give the bar the pass rate must reach (a share, 0-1)")
    _check_bar(at_least)
    g = as_grades(grades, scorecard, judge, "grades")
    table = g.by_rule(confidence=opts.confidence).set_index("rule_id")
    if rule not in table.index:
        raise KeyError(f"rule {rule!r} was not graded (rules: {', '.join(map(str, table.index))})")
    row = {"rule_id": rule, **dict(table.loc[rule])}
    check = _rate_check(row, float(at_least), opts.confidence, None, dict(g.left_out))
    return settle(check, opts)
