"""Families: one recorded run pair (or one grading) split into parts, every part's test
computed at once and Holm-adjusted, so that twenty parametrised tests over personas or rules
hold the chance of any false failure to ``1 - confidence`` together.

:func:`family` compares baseline and candidate part by part (each part its own
``compare_grades`` on that part's grades: its paired cells, its variance method, its
judge-error bounds); :func:`pass_rates` reads each rule's pass rate (the Wilson interval of
``Grades.by_rule``) against a bar. The parts are read through :mod:`._holm`: a part whose
interval decides at ``1 - alpha / m`` is rejected, the rest are read again at ``1 - alpha /
(m - k)``, and so on. Each part keeps the comparison (or pass-rate row) at the level its
decision was read at; ``assert_not_worse(fam[part])`` and ``assert_pass_rate(rates, rule)``
read it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Literal

import numpy as np
import pandas as pd

from .._results import Result
from ..compare import CompareOptions, Comparison, Verdict, compare_grades
from ..grading import JudgeArg, ScorecardLike
from ._check import FamilyPlace
from ._holm import holm_step_down
from ._inputs import as_grades, grades_pair
from ._options import AssertOptions

__all__ = ["COLUMNS", "Family", "FamilyKind", "Part", "family", "pass_rates"]

#: ``by`` words and the grades column each splits on (any other column is taken as named).
COLUMNS: Final = {"persona": "persona_label", "rule": "rule_id", "cell": "cell_id"}

FamilyKind = Literal["comparison", "pass_rate"]
"""What a family's parts are: comparisons of two runs, or rules' pass rates against a bar."""


@dataclass(frozen=True)
class Part:
    """One part of a :class:`Family`: its ``name``, its ``place`` (size, Holm divisor), and
    what was read at its level: the ``comparison`` (a comparison family) or the pass-rate
    ``row`` of ``Grades.by_rule`` with the family's bar ``at_least`` (a pass-rate family)."""

    name: str
    place: FamilyPlace
    comparison: Comparison | None = None
    row: dict[str, Any] | None = None
    at_least: float | None = None

    @property
    def rejected(self) -> bool:
        """Whether Holm's procedure rejected this part's null (its interval decides)."""
        if self.comparison is not None:
            return self.comparison.verdict in (Verdict.IMPROVED, Verdict.REGRESSED)
        assert self.row is not None
        assert self.at_least is not None
        return _bar_decided(self.row, self.at_least)


def _bar_decided(row: dict[str, Any], at_least: float) -> bool:
    low, high = row["pass_rate_low"], row["pass_rate_high"]
    return bool(low >= at_least or high < at_least)


@dataclass(frozen=True, repr=False)
class Family(Result):
    """A Holm family of parts (``family`` or ``pass_rates``): ``fam[name]`` is a :class:`Part`
    for an assertion; ``summary`` has one row per part (its verdict, difference or pass rate,
    interval, the level it was read at and whether it was rejected)."""

    kind: FamilyKind
    by: str
    confidence: float
    parts: dict[str, Part]
    margin: float | None = None
    at_least: float | None = None

    _markdown_columns: ClassVar[tuple[str, ...] | None] = (
        "part",
        "verdict",
        "estimate",
        "low",
        "high",
        "level",
        "rejected",
    )

    def __getitem__(self, name: str) -> Part:
        try:
            return self.parts[name]
        except KeyError:
            close = difflib.get_close_matches(str(name), list(self.parts), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise KeyError(
                f"no part {name!r} in this family by {self.by} (parts: "
                f"{', '.join(self.parts)}){hint}"
            ) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self.parts)

    def __len__(self) -> int:
        return len(self.parts)

    @property
    def n(self) -> int:
        """Parts in the family."""
        return len(self.parts)

    def headline(self) -> str:
        rejected = sum(p.rejected for p in self.parts.values())
        what = (
            f"pass rates against {self.at_least:g}"
            if self.kind == "pass_rate"
            else f"candidate vs baseline (margin {self.margin:g} points)"
        )
        return (
            f"{len(self.parts)} parts by {self.by}, {what}, held to {self.confidence:.0%} "
            f"together (Holm): {rejected} decided at their adjusted level"
        )

    @property
    def summary(self) -> pd.DataFrame:
        rows = []
        for part in self.parts.values():
            if part.comparison is not None:
                c = part.comparison
                low, high = c.interval
                row = {"verdict": c.verdict.value, "estimate": c.difference, "n": c.n}
                row.update({"low": low, "high": high})
            else:
                assert part.row is not None
                r = part.row
                row = {
                    "verdict": _rate_verdict(r, self.at_least or 0.0),
                    "estimate": r["pass_rate"],
                    "low": r["pass_rate_low"],
                    "high": r["pass_rate_high"],
                    "n": int(r["pass"] + r["fail"]),
                }
            rows.append(
                {
                    "part": part.name,
                    **row,
                    "level": part.place.level,
                    "divisor": part.place.divisor,
                    "rejected": part.rejected,
                }
            )
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        from .._results import json_records

        return {
            "kind": self.kind,
            "by": self.by,
            "confidence": self.confidence,
            "margin": self.margin,
            "at_least": self.at_least,
            "parts": json_records(self.summary),
        }


def _rate_verdict(row: dict[str, Any], at_least: float) -> str:
    if row["pass_rate_low"] >= at_least:
        return "above"
    if row["pass_rate_high"] < at_least:
        return "below"
    return "undecided"


def _column(by: str, frames: Sequence[pd.DataFrame]) -> str:
    column = COLUMNS.get(by, by)
    for frame in frames:
        if column not in frame.columns:
            known = ", ".join(COLUMNS)
            raise ValueError(
                f"by: the grades have no column {column!r} (say one of {known}, or a column)"
            )
    return column


def _names(values: Sequence[pd.Series], parts: Sequence[str] | None, by: str) -> list[str]:
    present = sorted({str(v) for series in values for v in series.dropna().unique()})
    if parts is None:
        if not present:
            raise ValueError(f"by: the grades have no {by} to make parts of")
        return present
    chosen = [str(p) for p in parts]
    missing = [p for p in chosen if p not in present]
    if missing:
        raise ValueError(
            f"parts: no grades for {by} {', '.join(map(repr, missing))} (the grades have "
            f"{', '.join(present) or 'none'})"
        )
    if len(set(chosen)) != len(chosen):
        raise ValueError(f"parts: each {by} once, got {chosen}")
    return chosen


def _level(confidence: float, divisor: int) -> float:
    return 1.0 - (1.0 - confidence) / divisor


def family(
    baseline: Any,
    candidate: Any,
    *,
    by: str = "persona",
    margin: float = 5.0,
    scorecard: ScorecardLike | None = None,
    parts: Sequence[str] | None = None,
    judge: JudgeArg = None,
    options: AssertOptions | None = None,
) -> Family:
    """Compare ``candidate`` with ``baseline`` part by part, Holm-adjusted over the parts.

    ``baseline``/``candidate``: two runs (graded with ``scorecard``, or the one their stored
    grades share), two ``Grades`` or two grades frames. ``by``: ``"persona"``, ``"rule"``,
    ``"cell"`` or any column of the grades; ``parts``: the parts that make the family (None:
    every value either side has; the family's size is what holds the error, so give exactly
    the parts the tests assert on). ``margin``: the minimum effect in points (what
    ``assert_not_worse`` allows and ``assert_improved`` must exceed). ``options.confidence``
    is the whole family's: every part is read at its Holm level, at least
    ``1 - (1 - confidence) / len(parts)``. Each part is its own ``compare_grades`` on that
    part's grades; ``fam[part]`` goes to ``assert_not_worse`` / ``assert_improved``.
    """
    opts = options or AssertOptions()
    base, cand = grades_pair(baseline, candidate, scorecard, judge)
    frames = (base.frame, cand.frame)
    column = _column(by, frames)
    names = _names([f[column] for f in frames], parts, by)
    split = {name: tuple(f[f[column].astype(str) == name] for f in frames) for name in names}
    made: dict[tuple[str, int], Comparison] = {}

    def comparison(name: str, divisor: int) -> Comparison:
        key = (name, divisor)
        if key not in made:
            b, c = split[name]
            compare = CompareOptions(
                confidence=_level(opts.confidence, divisor), min_effect=margin, record_looks=False
            )
            made[key] = compare_grades(b, c, options=compare)
        return made[key]

    def rejects(divisor: int) -> np.ndarray:
        moved = (Verdict.IMPROVED, Verdict.REGRESSED)
        return np.array([comparison(n, divisor).verdict in moved for n in names])

    steps = holm_step_down(len(names), rejects)
    out = {}
    for i, name in enumerate(names):
        divisor = int(steps.divisor[i])
        place = FamilyPlace(by, name, len(names), opts.confidence, divisor)
        out[name] = Part(name, place, comparison=comparison(name, divisor))
    return Family("comparison", by, opts.confidence, out, margin=margin)


def pass_rates(
    grades: Any,
    *,
    at_least: float,
    rules: Sequence[str] | None = None,
    scorecard: ScorecardLike | None = None,
    judge: JudgeArg = None,
    options: AssertOptions | None = None,
) -> Family:
    """Each rule's pass rate against the bar ``at_least`` (a share, 0-1), Holm-adjusted over
    the ``rules`` (None: every rule graded); ``grades``: a run (graded with ``scorecard``),
    a ``Grades`` or a grades frame. The pass rate and its Wilson interval are
    ``Grades.by_rule``'s; ``assert_pass_rate(rates, rule)`` reads a part."""
    opts = options or AssertOptions()
    _check_bar(at_least)
    g = as_grades(grades, scorecard, judge, "grades")
    names = _names([g.frame["rule_id"]], rules, "rule")
    tables: dict[int, pd.DataFrame] = {}

    def table(divisor: int) -> pd.DataFrame:
        if divisor not in tables:
            by_rule = g.by_rule(confidence=_level(opts.confidence, divisor))
            tables[divisor] = by_rule.set_index("rule_id")
        return tables[divisor]

    def rejects(divisor: int) -> np.ndarray:
        t = table(divisor)
        return np.array([_bar_decided(dict(t.loc[n]), at_least) for n in names])

    steps = holm_step_down(len(names), rejects)
    out = {}
    for i, name in enumerate(names):
        divisor = int(steps.divisor[i])
        place = FamilyPlace("rule", name, len(names), opts.confidence, divisor)
        row = {"rule_id": name, **dict(table(divisor).loc[name])}
        out[name] = Part(name, place, row=row, at_least=at_least)
    return Family("pass_rate", "rule", opts.confidence, out, at_least=at_least)


def _check_bar(at_least: float) -> None:
    if isinstance(at_least, bool) or not isinstance(at_least, int | float):
        raise TypeError(f"at_least must be a pass rate (a number in [0, 1]), got {at_least!r}")
    if not 0.0 <= float(at_least) <= 1.0:
        raise ValueError(f"at_least must be a pass rate in [0, 1] (0.9 for 90%), got {at_least}")
