"""Grades of a control and its arms reduced to the per-cell arrays the selection reads."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from ..compare import REQUIRED_COLUMNS, Scenarios, Side, errors_differ, unique_values
from ..grading import GradesLike, as_grades_frame
from ..stats import CellMoments
from ._selection import ArmsData

__all__ = ["arms_arrays"]


def _frame(grades: GradesLike, name: str) -> pd.DataFrame:
    frame = as_grades_frame(grades, name)
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"{name} grades lack columns {missing}")
    return frame


def _stack(items: list[CellMoments]) -> CellMoments:
    return CellMoments(
        n=np.stack([m.n for m in items]),
        mean=np.stack([m.mean for m in items]),
        var=np.stack([m.var for m in items]),
    )


def arms_arrays(
    control: tuple[str, GradesLike], arms: Mapping[str, GradesLike]
) -> tuple[list[pd.DataFrame], list[str], list[Side], list[Scenarios], ArmsData]:
    """Grades frames reduced to per-cell arrays: the frames, the cells (sorted ids), each
    side, its scenarios and the :class:`ArmsData` (control first, arms in order)."""
    names = list(arms)
    frames = [_frame(control[1], "control")] + [_frame(arms[n], f"variants[{n!r}]") for n in names]
    cells = unique_values(*(f["cell_id"] for f in frames))
    sides = [Side.build(f, cells, n) for f, n in zip(frames, [control[0], *names], strict=True)]
    scen = [s.scenarios(len(cells)) for s in sides]
    errs = [(int((s.conversation_errors > 0).sum()), s.n_conversations) for s in sides]
    bounded = np.asarray([bool(errors_differ(errs[0], e)) for e in errs[1:]])
    arm_scen = Scenarios(
        _stack([s.left_out for s in scen[1:]]),
        _stack([s.as_fail for s in scen[1:]]),
        _stack([s.as_pass for s in scen[1:]]),
    )
    return frames, cells, sides, scen, ArmsData(scen[0], arm_scen, bounded)
