"""Simulation flags recorded in a run: counted into its manifest when the run is graded, so a
catalog, the viewer and the next reader see them without reading transcripts again."""

from __future__ import annotations

from typing import Any

import pandas as pd

from ..store import Run, record_in_manifest
from ._flags import simulation_flags

__all__ = ["FLAGS_KEY", "record_flags", "recorded_flags"]

#: The manifest key of a run's recorded simulation flags.
FLAGS_KEY = "simulation_flags"


def record_flags(run: Run) -> pd.DataFrame:
    """Raise :func:`simulation_flags` on ``run``'s transcripts and record them in its manifest
    (``checked``, ``flagged`` conversations, and per flag the conversation ids); returns the
    flags. Call it when no writer has the run open (after the run, as the pipeline does)."""
    flags = simulation_flags(run)
    by_flag = {
        str(flag): sorted(str(c) for c in group["conversation_id"].unique())
        for flag, group in flags.groupby("flag", sort=True)
    }
    summary: dict[str, Any] = {
        "checked": int(flags.attrs.get("checked", len(run.conversations))),
        "flagged": int(flags["conversation_id"].nunique()) if len(flags) else 0,
        "by_flag": by_flag,
    }
    run.manifest = record_in_manifest(run.path, FLAGS_KEY, summary)
    return flags


def recorded_flags(run: Run) -> dict[str, Any] | None:
    """What :func:`record_flags` recorded in ``run`` (None when it never ran)."""
    value = run.manifest.get(FLAGS_KEY)
    return value if isinstance(value, dict) else None
