"""The over-fitting guard's split: a seeded share of a grid's cells held out by ``cell_id``."""

from __future__ import annotations

import random
from collections.abc import Iterable

__all__ = ["split_holdout"]


def split_holdout(
    cell_ids: Iterable[str], share: float, seed: int
) -> tuple[frozenset[str], frozenset[str]]:
    """(training, held-out) cell ids: ``round(share x n)`` cells held out, at least one on each
    side. The choice depends on the set of ids and ``seed`` only, never on grid order."""
    ids = sorted(set(cell_ids))
    if not 0 < share < 1:
        raise ValueError(f"holdout share must be between 0 and 1 (exclusive), got {share}")
    if len(ids) < 2:
        raise ValueError(f"a holdout needs at least 2 cells, the grid has {len(ids)}")
    k = min(max(round(share * len(ids)), 1), len(ids) - 1)
    held = frozenset(random.Random(seed).sample(ids, k))
    return frozenset(ids) - held, held
