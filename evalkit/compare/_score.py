"""The score formula, from its one home in :mod:`evalkit.grading` (kept for the decision code)."""

from __future__ import annotations

from ..grading import score_from_points

__all__ = ["score_from_points"]
