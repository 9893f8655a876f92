"""Per-turn timing derived from ``at_s``: an agent turn's ``latency_s``.

``at_s`` is when a turn event arrived, seconds from the simulate request (monotonic clock);
``latency_s`` of an agent turn is its ``at_s`` minus the previous turn's in the same
conversation: the time the agent took to answer. A conversation's first turn (which also carries
the connection set-up) has none: that is the conversation's ``first_turn_s``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

import pyarrow as pa
import pyarrow.compute as pc

if TYPE_CHECKING:
    pass

__all__ = ["LATENCY_COLUMN", "has_turn_timing", "with_turn_latency"]

LATENCY_COLUMN: Final = "latency_s"


def has_turn_timing(turns: pa.Table) -> bool:
    """True when some turn carries ``at_s`` (False for runs recorded before turn timing)."""
    if "at_s" not in turns.column_names or turns.num_rows == 0:
        return False
    return bool(turns.column("at_s").null_count < turns.num_rows)


def with_turn_latency(turns: pa.Table) -> pa.Table:
    """``turns`` (ordered by conversation, then index) with a ``latency_s`` column appended:
    NaN for caller turns, first turns, and turns without ``at_s``."""
    import numpy as np

    n = turns.num_rows
    latency = np.full(n, np.nan)
    if n > 1 and "at_s" in turns.column_names:
        at = turns.column("at_s").to_numpy()
        cid = turns.column("conversation_id")
        index = turns.column("index")
        follows = pc.and_(
            pc.equal(cid.slice(1), cid.slice(0, n - 1)),
            pc.greater(index.slice(1), index.slice(0, n - 1)),
        ).to_numpy()
        agent = pc.equal(turns.column("role").slice(1), "agent").to_numpy()
        latency[1:] = np.where(follows & agent, at[1:] - at[:-1], np.nan)
    return turns.append_column(pa.field(LATENCY_COLUMN, pa.float64()), pa.array(latency))
