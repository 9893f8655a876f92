"""OptimizeResult: the confirmed winner of a prompt search (or None), every round's candidates,
the lineage of prompts, and what promoting the winner would change."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import pandas as pd

from .._results import Result
from ..targets import Variant, config_diff, merge_patch, redact_config
from ._gain import ReportedGain
from ._result import winner_fields

if TYPE_CHECKING:
    from ..api import AsyncClient, Client
    from ._promote import Promotion

__all__ = ["OptimizeResult"]


def _json(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    if value is None or value is pd.NA:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "item"):
        return _json(value.item())
    return value


#: The rounds table's column headers as the HTML shows them: which cells each number reads.
_SHOWN_AS = {
    "difference": "difference (selection cells)",
    "difference_low": "low",
    "difference_high": "high",
    "holdout_difference": "held-out difference",
    "holdout_low": "held-out low",
    "holdout_high": "held-out high",
}


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [{str(k): _json(v) for k, v in row.items()} for row in frame.to_dict("records")]


@dataclass(frozen=True, repr=False)
class OptimizeResult(Result):
    """What :func:`evalkit.optimize` found (DESIGN.md "Optimising a prompt").

    ``winner``: the confirmed :class:`~evalkit.Variant` (None when the held-out cells do not
    confirm one); ``difference`` / ``interval`` / ``gain``: its gain against the draft, from
    fresh repeats of every cell (else its held-out difference adjusted for being selected and
    confirmed; ``gain.method`` says which). ``rounds``: one row per candidate proposed
    (``round``, ``candidate``, ``parent``, ``status`` (``raced``, or ``refused: <why>``,
    ``duplicate: <why>``, ``not raced: <why>``), ``conversations``, ``difference`` against
    the draft on the **selection cells** with ``difference_low`` / ``difference_high``, the
    held-out difference ``holdout_difference`` / ``holdout_low`` / ``holdout_high``,
    ``dropped_at``, ``verdict`` (the final decision's; ``refused``, ``duplicate`` or ``not
    raced`` for a candidate that ran no conversation), ``kept`` (the best after its round),
    ``rationale``).
    ``progress``: one row per round (proposer calls, proposed, malformed, refused, raced,
    conversations, the best so far and its selection-cell difference with its interval).
    ``lineage``: each candidate's parent, rationale and prompt. ``leaderboard``: the final
    decision over every candidate raced (as :class:`~evalkit.tuning.TuneResult`'s).
    ``decision``: its method, p-values and counts.
    """

    ROUND_COLUMNS: ClassVar[tuple[str, ...]] = (
        "round",
        "candidate",
        "parent",
        "status",
        "conversations",
        "difference",
        "difference_low",
        "difference_high",
        "holdout_difference",
        "holdout_low",
        "holdout_high",
        "dropped_at",
        "verdict",
        "kept",
        "rationale",
    )
    PROGRESS_COLUMNS: ClassVar[tuple[str, ...]] = (
        "round",
        "parent",
        "proposer_calls",
        "proposed",
        "malformed",
        "refused",
        "raced",
        "conversations",
        "best",
        "best_difference",
        "best_low",
        "best_high",
    )
    template: ClassVar[str] = "optimize.html"

    winner: Variant | None
    rounds: pd.DataFrame
    progress: pd.DataFrame
    lineage: list[dict[str, Any]]
    leaderboard: pd.DataFrame
    decision: Mapping[str, Any]
    variants: Mapping[str, Variant] = field(default_factory=dict)
    control_config: Mapping[str, Any] | None = None
    assistant_id: str | None = None
    draft_version: int | None = None
    warnings: tuple[str, ...] = ()

    @property
    def n(self) -> int:
        """Conversations spent, the draft's included."""
        return int(self.decision.get("conversations", 0))

    @property
    def gain(self) -> ReportedGain:
        """The winner's gain and how it was measured (``method`` None without a winner)."""
        return ReportedGain.of(self._winner_row(), self.decision.get("gain_method"))

    @property
    def difference(self) -> float | None:
        """The winner's gain against the draft in points (None without a measured one)."""
        gain = self.gain
        return gain.estimate if gain.measured else None

    @property
    def interval(self) -> tuple[float, float] | None:
        """Its interval (None without a measured gain)."""
        gain = self.gain
        return (gain.low, gain.high) if gain.measured else None

    @property
    def verdict(self) -> str:
        """``improved`` with a confirmed winner, else ``insufficient_evidence``."""
        return "improved" if self.winner is not None else "insufficient_evidence"

    def _winner_row(self) -> Mapping[str, Any] | None:
        if self.winner is None or self.leaderboard.empty:
            return None
        board = self.leaderboard.set_index("variant")
        if self.winner.name not in board.index:
            return None
        return {str(k): v for k, v in board.loc[self.winner.name].to_dict().items()}

    @property
    def winner_config(self) -> dict[str, Any] | None:
        """The draft's config with the winner's prompt (credentials redacted)."""
        if self.winner is None or self.control_config is None:
            return None
        merged: dict[str, Any] = merge_patch(dict(self.control_config), dict(self.winner.patch))
        redacted: dict[str, Any] = redact_config(merged)
        return redacted

    @property
    def diff(self) -> str:
        """The winner's change against the draft (its prompt line by line); empty without one."""
        after = self.winner_config
        if after is None or self.control_config is None or self.winner is None:
            return ""
        return config_diff(self.control_config, after, self.winner.name)

    def headline(self) -> str:
        d = self.decision
        tried = int(d.get("candidates_tried", 0))
        rounds = int(d.get("rounds_run", 0))
        where = f"{tried} candidate(s) over {rounds} round(s), {self.n} conversations"
        row = self._winner_row()
        if self.winner is not None and row is not None:
            said = self.gain.words(
                self.winner.name, "the draft", float(d.get("confidence", 0.95)), row
            )
            return (
                f"improved: {said}; confirmed on {d.get('holdout_cells')} held-out cells among "
                f"{tried} candidates, combined p = {float(d.get('combined_p', math.nan)):.3g}; "
                f"{where}"
            )
        if tried == 0:
            return f"no winner: no candidate could be raced ({int(d.get('refused', 0))} refused; {where})"
        leader = d.get("selected") or "the best candidate"
        return (
            f"no confirmed winner: {leader} led on the selection cells but the held-out cells "
            f"do not confirm it (combined p = {float(d.get('combined_p', math.nan)):.3g}, needs "
            f"<= {float(d.get('alpha_one_sided', math.nan)):.3g}; {where})"
        )

    @property
    def summary(self) -> pd.DataFrame:
        """One row per round: what was proposed, refused, raced, and the best so far."""
        return self.progress

    def html_context(self) -> dict[str, Any]:
        shown = [c for c in self.ROUND_COLUMNS if c != "rationale"]
        table = self.rounds[shown].rename(columns=_SHOWN_AS) if len(self.rounds) else None
        return {
            "rounds_table": table,
            "warnings": self.warnings,
            "diff": self.diff,
            "method": self.decision.get("method", ""),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "headline": self.headline(),
            "winner": None if self.winner is None else self.winner.name,
            "verdict": self.verdict,
            **winner_fields(self.gain, self._winner_row()),
            "conversations": self.n,
            "decision": _json(dict(self.decision)),
            "rounds": _records(self.rounds),
            "progress": _records(self.progress),
            "lineage": _json(self.lineage),
            "leaderboard": _records(self.leaderboard),
            "diff": self.diff,
            "assistant_id": self.assistant_id,
            "draft_version": self.draft_version,
            "warnings": list(self.warnings),
        }

    def _as_tune(self) -> Any:
        from ._result import TuneResult

        summary = dict(self.decision)
        summary["winner"] = None if self.winner is None else self.winner.name
        return TuneResult(
            leaderboard=self.leaderboard,
            details=summary,
            variants=dict(self.variants),
            control_config=self.control_config,
            assistant_id=self.assistant_id,
            draft_version=self.draft_version,
        )

    def promote(
        self, client: Client | AsyncClient | None = None, *, dry_run: bool = False
    ) -> Promotion:
        """Write the winner's prompt to the draft (E3), never publishing; refused without a
        confirmed winner or when the draft moved since the search began."""
        from ._promote import promote

        return promote(self._as_tune(), client, dry_run=dry_run)
