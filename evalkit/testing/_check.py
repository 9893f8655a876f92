"""One assertion's answer (:class:`Check`), the two ways it does not pass, and how it ends.

A check has three outcomes: ``passed`` (the evidence shows the claim), ``failed`` (the
evidence shows the opposite: :class:`CheckFailed`, an ``AssertionError``) and ``insufficient``
(neither: the interval holds both). Insufficient evidence is never a silent pass: it becomes
what the session chose (``--evalkit-insufficient``: ``fail``, ``xfail`` or ``skip``, with the
reason and the conversations a decision would need), or, outside the plugin, an
:class:`InsufficientEvidence` error.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import pandas as pd

from .._exceptions import EvalkitError
from .._results import Result
from .._test_session import current_context
from .._util import content_hash, markdown_text
from ..compare import level_words

if TYPE_CHECKING:
    from ._options import AssertOptions

__all__ = [
    "Check",
    "CheckFailed",
    "FamilyPlace",
    "InsufficientEvidence",
    "Outcome",
    "settle",
]

Outcome = Literal["passed", "failed", "insufficient"]
"""How a check ended: the claim shown, the opposite shown, or neither (insufficient evidence)."""

_OUTCOME_WORDS: dict[str, str] = {
    "passed": "shown",
    "failed": "the evidence says otherwise",
    "insufficient": "insufficient evidence (neither shown nor ruled out)",
}


@dataclass(frozen=True)
class FamilyPlace:
    """A check's place in a family: the column the family is split ``by``, the ``part``, the
    family's ``size``, its ``confidence`` and the Holm ``divisor`` the part was read at."""

    by: str
    part: str
    size: int
    confidence: float
    divisor: int

    @property
    def level(self) -> float:
        """The confidence this part's interval is read at: ``1 - (1 - confidence) / divisor``."""
        return 1.0 - (1.0 - self.confidence) / self.divisor

    def line(self) -> str:
        alpha = 1.0 - self.confidence
        return (
            f"family: {self.by} {self.part!r}, one of {self.size} parts held to "
            f"{self.confidence:.0%} together (Holm): this part is read at {_percent(self.level)} "
            f"(1 - {alpha:g} / {self.divisor})"
        )


def _percent(level: float) -> str:
    return f"{level_words(level)}%"


def _number(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x:+.4g}"


@dataclass(frozen=True, repr=False)
class Check(Result):
    """What one assertion found.

    ``kind`` names the assertion (``not_worse``, ``improved``, ``pass_rate``, ``latency``,
    ``no_regression``); ``claim`` says what was asserted, ``outcome`` whether the evidence
    shows it (``passed``), shows the opposite (``failed``) or neither (``insufficient``);
    ``verdict`` is evalkit's verdict behind it and ``evidence`` its line (difference,
    interval, n); ``difference``, ``interval`` (at ``confidence``, the family-adjusted level
    for a family's part), ``n`` and ``unit`` are the numbers; ``details`` the lines that say
    what was left out, which rules and cells moved, and any warning; ``family`` the place in
    a Holm family; ``needed`` the conversations a decision would need; ``report`` where the
    HTML card was written; ``result`` the evalkit result it read (a ``Comparison``, ...).
    """

    template: ClassVar[str] = "check.html"

    kind: str
    claim: str
    outcome: Outcome
    verdict: str
    evidence: str
    difference: float
    interval: tuple[float, float]
    n: int
    confidence: float
    unit: str
    details: tuple[str, ...] = ()
    family: FamilyPlace | None = None
    needed: str | None = None
    report: str | None = None
    result: Result | None = field(default=None, compare=False)

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"

    def headline(self) -> str:
        """The outcome, the claim and the evidence in one line."""
        return f"{self.outcome}: {self.claim}; {self.evidence}"

    def lines(self) -> list[str]:
        """The evidence, the family, the details, what a decision needs and the report."""
        lines = [self.evidence]
        if self.family is not None:
            lines.append(self.family.line())
        lines.extend(self.details)
        if self.needed:
            lines.append(self.needed)
        if self.report:
            lines.append(f"report: {self.report}")
        return lines

    def message(self) -> str:
        """What a failing test prints: the claim and outcome, then :meth:`lines`."""
        head = f"{self.claim}: {_OUTCOME_WORDS[self.outcome]}"
        return "\n".join([head, *(f"  {line}" for line in self.lines())])

    def __str__(self) -> str:
        return self.message()

    @property
    def summary(self) -> pd.DataFrame:
        """One row: kind, outcome, claim, verdict, difference, interval, n, confidence, part."""
        low, high = self.interval
        return pd.DataFrame(
            [
                {
                    "kind": self.kind,
                    "outcome": self.outcome,
                    "claim": self.claim,
                    "verdict": self.verdict,
                    "difference": self.difference,
                    "difference_low": low,
                    "difference_high": high,
                    "unit": self.unit,
                    "n": self.n,
                    "confidence": self.confidence,
                    "part": None if self.family is None else self.family.part,
                }
            ]
        )

    def to_dict(self) -> dict[str, Any]:
        """Everything but the result it read (whose ``to_dict`` has it), JSON-ready."""
        low, high = self.interval

        def num(x: float) -> float | None:
            return None if math.isnan(x) else float(x)

        return {
            "kind": self.kind,
            "claim": self.claim,
            "outcome": self.outcome,
            "verdict": self.verdict,
            "evidence": self.evidence,
            "difference": num(self.difference),
            "interval": [num(low), num(high)],
            "n": self.n,
            "confidence": self.confidence,
            "unit": self.unit,
            "details": list(self.details),
            "family": None
            if self.family is None
            else {
                "by": self.family.by,
                "part": self.family.part,
                "size": self.family.size,
                "divisor": self.family.divisor,
                "level": self.family.level,
            },
            "needed": self.needed,
            "report": self.report,
        }

    def properties(self) -> list[tuple[str, str]]:
        """JUnit XML properties: outcome, verdict, difference, interval, n, confidence."""
        low, high = self.interval
        return [
            ("evalkit.check", self.kind),
            ("evalkit.outcome", self.outcome),
            ("evalkit.verdict", self.verdict),
            ("evalkit.difference", _number(self.difference)),
            ("evalkit.interval", f"[{_number(low)}, {_number(high)}] {self.unit}"),
            ("evalkit.n", str(self.n)),
            ("evalkit.confidence", _percent(self.confidence)),
        ]

    def _markdown_sections(self) -> list[str]:
        return ["\n".join(f"- {markdown_text(line)}" for line in self.lines())]

    def to_markdown(self) -> str:
        """The outcome and claim in bold, then :meth:`lines` as a list."""
        head = f"**{self.outcome}**: {markdown_text(self.claim)}"
        return "\n\n".join([head, *self._markdown_sections()]) + "\n"

    def html_context(self) -> dict[str, Any]:
        inner = None if self.result is None else self.result._repr_html_()
        return {"lines": self.lines(), "inner": inner}


class CheckFailed(EvalkitError, AssertionError):
    """The evidence shows the opposite of what a check asserted (``check`` says how)."""

    def __init__(self, message: str, check: Check | None = None) -> None:
        super().__init__(message)
        self.check = check


class InsufficientEvidence(EvalkitError):
    """A check that can neither pass nor fail, outside a session that says what that becomes
    (the evalkit pytest plugin's ``--evalkit-insufficient``, or ``AssertOptions.insufficient``)."""

    def __init__(self, message: str, check: Check | None = None) -> None:
        super().__init__(message)
        self.check = check


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _write_report(check: Check, folder: Path, test_id: str | None) -> str:
    """The check's HTML card (and the result it read) under ``folder``; its path."""
    stem = _UNSAFE.sub("_", test_id or check.kind).strip("_")[-80:] or check.kind
    name = f"{stem}-{content_hash(check.to_dict())[:8]}.html"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(check._repr_html_(), encoding="utf-8")
    return str(path)


def settle(check: Check, options: AssertOptions) -> Check:
    """End an assertion: write the report of a check that did not pass, record it with the
    running test, and return it (passed) or raise (failed; insufficient as the session says)."""
    __tracebackhide__ = True
    context = current_context()
    folder = options.report_dir
    if folder is None and context is not None and not check.passed:
        folder = context.report_dir()
    if not check.passed and folder is not None and check.report is None:
        test_id = context.test_id if context is not None else None
        check = replace(check, report=_write_report(check, folder, test_id))
    if context is not None:
        context.record(check)
    if check.passed:
        return check
    message = check.message()
    if check.outcome == "failed":
        raise CheckFailed(message, check)
    mode = options.insufficient or (context.insufficient if context is not None else None)
    if mode == "fail":
        raise CheckFailed(message, check)
    if mode in ("xfail", "skip"):
        import pytest  # only when a session asks for pytest's own outcomes

        if mode == "xfail":
            pytest.xfail(message)
        pytest.skip(message)
    raise InsufficientEvidence(message, check)
