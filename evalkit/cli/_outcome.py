"""How a run ended, in a sentence, with its exit code and the command that resumes it."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ._errors import ExitCode

__all__ = ["RunReport", "parse_statuses", "resume_command"]

#: Options dropped from the resume line: a budget would stop the resumed run again.
_DROPPED_OPTIONS: Final = frozenset({"--max-conversations", "--max-seconds", "--run-id"})


def parse_statuses(value: str | None, option: str) -> tuple[str, ...]:
    """``"error,dropped"`` as a tuple of statuses; ValueError naming ``option`` otherwise."""
    from ..store import STATUSES

    if not value:
        return ()
    items = tuple(dict.fromkeys(part.strip() for part in value.split(",") if part.strip()))
    unknown = [item for item in items if item not in STATUSES]
    if unknown:
        raise ValueError(
            f"{option} takes statuses from {','.join(STATUSES)} (comma-separated), "
            f"got {','.join(unknown)}"
        )
    return items


def resume_command(argv: Sequence[str], run_id: str) -> str:
    """``evalkit <argv>`` without budget options, with ``--run-id run_id``."""
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in _DROPPED_OPTIONS:
            skip = "=" not in arg
            continue
        kept.append(arg)
    return shlex.join(["evalkit", *kept, "--run-id", run_id])


def _cost_words(cost: Any) -> str | None:
    """``USD 0.42`` from a manifest's ``cost`` (None when the run had no price table)."""
    if not isinstance(cost, Mapping) or not isinstance(cost.get("total"), int | float):
        return None
    return f"{cost.get('currency') or ''} {cost['total']:,.2f}".strip()


@dataclass(frozen=True)
class RunReport:
    """What a stored run holds: its id, folder, counts by status and grid size."""

    run_id: str
    path: str
    counts: Mapping[str, int]
    grid_size: int
    label: str
    cost: str | None = None

    @classmethod
    def of(cls, manifest: Mapping[str, Any], path: str) -> RunReport:
        """The report of a run from its manifest."""
        counts = manifest.get("counts") or {}
        return cls(
            run_id=str(manifest.get("run_id")),
            path=path,
            counts={k: int(v) for k, v in counts.items()},
            grid_size=int(manifest.get("n_conversations") or 0),
            label=f"{manifest.get('target')} v{manifest.get('assistant_version')}",
            cost=_cost_words(manifest.get("cost")),
        )

    @property
    def recorded(self) -> int:
        """Conversations recorded."""
        return int(self.counts.get("total", 0))

    def breakdown(self) -> str:
        """``30 done, 2 error`` (statuses with a count only)."""
        from ..store import STATUSES

        parts = [f"{self.counts[s]} {s}" for s in STATUSES if self.counts.get(s)]
        return ", ".join(parts) or "none yet"

    def sentence(self) -> str:
        """``Run X (draft v3): 34 of 34 conversations recorded (30 done, 4 error) in PATH.``"""
        spent = f"; cost {self.cost}" if self.cost else ""
        return (
            f"Run {self.run_id} ({self.label}): {self.recorded} of {self.grid_size} "
            f"conversations recorded ({self.breakdown()}{spent}) in {self.path}."
        )

    def matched(self, fail_on: Sequence[str]) -> list[str]:
        """The statuses of ``fail_on`` this run recorded at least once."""
        return [s for s in fail_on if self.counts.get(s)]

    def exit_code(self, fail_on: Sequence[str]) -> ExitCode:
        """PARTIAL when conversations are missing, FAIL_ON when --fail-on matched, else OK."""
        if self.recorded < self.grid_size:
            return ExitCode.PARTIAL
        return ExitCode.FAIL_ON if self.matched(fail_on) else ExitCode.OK
