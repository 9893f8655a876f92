"""A sweep's side outputs for notebooks and CI: summary.json and parquet tables."""

from __future__ import annotations

import json
from pathlib import Path

from .._util import atomic_write_bytes, json_default
from ._result import TuneResult

__all__ = ["write_tune_outputs"]


def write_tune_outputs(result: TuneResult, output_dir: str | Path) -> Path:
    """Write ``summary.json`` (:meth:`TuneResult.to_dict`), ``leaderboard.parquet`` and
    ``waves.parquet`` into ``output_dir``; return the summary's path."""
    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    text = json.dumps(result.to_dict(), indent=2, ensure_ascii=False, default=json_default)
    summary = out / "summary.json"
    atomic_write_bytes(summary, (text + "\n").encode("utf-8"), durable=False)
    result.leaderboard.to_parquet(out / "leaderboard.parquet", index=False)
    if not result.waves.empty:
        result.waves.to_parquet(out / "waves.parquet", index=False)
    return summary
