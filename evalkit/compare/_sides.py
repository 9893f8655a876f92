"""One side's grades reduced to arrays: conversation scores and per-cell moments.

Works on integer codes and ``numpy.bincount`` rather than pandas groupby, so 1M grade rows
reduce in a fraction of a second.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..grading import RuleLeftOut, left_out_mask, score_from_points
from ..stats import CellMoments
from ._decision import Scenarios

__all__ = [
    "ERROR",
    "FAIL",
    "NA",
    "PASS",
    "REQUIRED_COLUMNS",
    "VERDICTS",
    "Side",
    "Sides",
    "check_columns",
    "codes_for",
    "first_values",
    "moments_by",
    "unique_values",
]

REQUIRED_COLUMNS: tuple[str, ...] = (
    "conversation_id",
    "cell_id",
    "rule_id",
    "points",
    "points_awarded",
    "verdict",
)
IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]


#: Verdict codes of :attr:`Side.row_verdict` (-1: anything else).
VERDICTS: tuple[str, ...] = ("fail", "pass", "na", "error")
FAIL, PASS, NA, ERROR = range(4)


def check_columns(grades: pd.DataFrame, name: str) -> None:
    """Refuse a grades frame that lacks a column a comparison reads, naming the side."""
    missing = [c for c in REQUIRED_COLUMNS if c not in grades.columns]
    if missing:
        raise ValueError(f"{name} grades lack columns {missing}")


def codes_for(values: pd.Series, categories: Sequence[str]) -> IntArray:
    """Positions of ``values`` in ``categories`` (-1 when missing or null).

    Factorizes first, so only the distinct values are looked up (fast on Arrow strings).
    """
    codes, uniques = pd.factorize(values, sort=False)
    where = {str(c): i for i, c in enumerate(categories)}
    lookup = np.asarray([where.get(str(u), -1) for u in uniques] + [-1], dtype=np.int64)
    return lookup[np.asarray(codes, dtype=np.int64)]  # code -1 (null) picks the trailing -1


def unique_values(*columns: pd.Series) -> list[str]:
    """Sorted distinct non-null values of the columns."""
    found: set[str] = set()
    for column in columns:
        found.update(str(v) for v in pd.unique(column.dropna()))
    return sorted(found)


def first_values(
    frames: Sequence[pd.DataFrame], key: str, *columns: str
) -> dict[str, tuple[str, ...]]:
    """For each value of ``key``, the ``columns`` values of its first row (frames in order;
    ``""`` where a value is missing), from one pass over ``key`` per frame."""
    out: dict[str, list[str]] = {}
    for frame in reversed(frames):
        present = [j for j, c in enumerate(columns) if c in frame.columns]
        if not present:
            continue
        codes, uniques = pd.factorize(frame[key], sort=False)
        keep = np.asarray(codes) >= 0
        _, first = np.unique(np.asarray(codes)[keep], return_index=True)
        rows = np.flatnonzero(keep)[first]
        for j in present:
            values = frame[columns[j]].iloc[rows].tolist()
            for k, v in zip(uniques, values, strict=True):
                out.setdefault(str(k), [""] * len(columns))[j] = "" if pd.isna(v) else str(v)
    return {k: tuple(v) for k, v in out.items()}


def moments_by(
    groups: IntArray, n_groups: int, cells: IntArray, n_cells: int, values: FloatArray
) -> CellMoments:
    """Per (group, cell) moments of ``values`` (NaN ignored), arrays shaped ``(n_groups, n_cells)``."""
    ok = ~np.isnan(values) & (cells >= 0) & (groups >= 0)
    index = groups[ok] * n_cells + cells[ok]
    x = values[ok]
    size = n_groups * n_cells
    n = np.bincount(index, minlength=size).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(index, weights=x, minlength=size) / n
        dev = x - mean[index]
        var = np.bincount(index, weights=dev * dev, minlength=size) / (n - 1.0)
    shape = (n_groups, n_cells)
    return CellMoments(
        n=n.reshape(shape),
        mean=np.where(n > 0, mean, np.nan).reshape(shape),
        var=np.where(n > 1, var, np.nan).reshape(shape),
    )


@dataclass(frozen=True)
class Side:
    """A grades frame as arrays: rows (rule x conversation) and conversations.

    ``scores`` leave judge errors out (the estimate); ``scores_errors_failed`` and
    ``scores_errors_passed`` score them as fail and as pass (the bounds of
    :mod:`evalkit.compare._decision`). ``row_rule`` are the rows' positions in the rules the
    side was built with, and ``rule_counts`` the rows per rule by verdict (rows
    :data:`VERDICTS` in order, then every graded row).
    """

    rows: pd.DataFrame
    row_cell: IntArray
    row_verdict: IntArray
    row_conversation: IntArray
    row_rule: IntArray
    conversation_cell: IntArray
    scores: FloatArray  # per conversation, NaN when no rule applied
    scores_errors_failed: FloatArray
    scores_errors_passed: FloatArray
    conversation_errors: IntArray  # judged rules in error, per conversation
    rule_counts: IntArray  # (len(VERDICTS) + 1, rules)

    @classmethod
    def build(
        cls,
        grades: pd.DataFrame,
        cells: Sequence[str],
        name: str,
        rules: Sequence[str] | None = None,
    ) -> Side:
        """``grades`` as arrays over ``cells`` and ``rules`` (None: the side's own rules)."""
        check_columns(grades, name)
        if rules is None:
            rules = unique_values(grades["rule_id"])
        row_cell = codes_for(grades["cell_id"], cells)
        row_conv, uniques = pd.factorize(grades["conversation_id"], sort=False)
        row_conv = np.asarray(row_conv, dtype=np.int64)
        n_conv = len(uniques)
        verdict = codes_for(grades["verdict"], VERDICTS)
        row_rule = codes_for(grades["rule_id"], rules)
        applicable = (verdict == PASS) | (verdict == FAIL)
        erred = verdict == ERROR
        points = grades["points"].to_numpy(dtype=np.float64)
        awarded = np.nan_to_num(grades["points_awarded"].to_numpy(dtype=np.float64))

        def total(weights: FloatArray) -> FloatArray:
            return np.bincount(row_conv, weights=weights, minlength=n_conv).astype(np.float64)

        got = total(np.where(applicable, awarded, 0.0))
        possible = total(np.where(applicable, points, 0.0))
        error_points = total(np.where(erred, points, 0.0))
        conv_cell = np.full(n_conv, -1, dtype=np.int64)
        conv_cell[row_conv[::-1]] = row_cell[::-1]
        graded = row_rule >= 0
        per_rule = row_rule[graded] * (len(VERDICTS) + 1) + np.where(
            verdict[graded] >= 0, verdict[graded], len(VERDICTS)
        )
        counts = np.bincount(per_rule, minlength=len(rules) * (len(VERDICTS) + 1))
        counts = counts.reshape(len(rules), len(VERDICTS) + 1).T.copy()
        counts[len(VERDICTS)] = counts.sum(axis=0)  # every graded row, whatever its verdict
        return cls(
            rows=grades,
            row_cell=row_cell,
            row_verdict=verdict,
            row_conversation=row_conv,
            row_rule=row_rule,
            conversation_cell=conv_cell,
            scores=score_from_points(got, possible),
            scores_errors_failed=score_from_points(got, possible + error_points),
            scores_errors_passed=score_from_points(got + error_points, possible + error_points),
            conversation_errors=np.bincount(row_conv, weights=erred, minlength=n_conv).astype(
                np.int64
            ),
            rule_counts=counts.astype(np.int64),
        )

    @property
    def n_conversations(self) -> int:
        return len(self.scores)

    @property
    def n_scored(self) -> int:
        """Conversations with at least one applicable rule (the ones a score exists for)."""
        return int((~np.isnan(self.scores)).sum())

    def _moments(self, values: FloatArray, n_cells: int) -> CellMoments:
        m = moments_by(
            np.zeros(self.n_conversations, dtype=np.int64),
            1,
            self.conversation_cell,
            n_cells,
            values,
        )
        return CellMoments(n=m.n[0], mean=m.mean[0], var=m.var[0])

    def cell_moments(self, n_cells: int) -> CellMoments:
        """Score moments per cell (errors left out), arrays shaped ``(n_cells,)``."""
        return self._moments(self.scores, n_cells)

    def scenarios(self, n_cells: int) -> Scenarios:
        """Per-cell score moments with errors left out, failed and passed."""
        if not self.conversation_errors.any():
            return Scenarios.same(self.cell_moments(n_cells))
        return Scenarios(
            self.cell_moments(n_cells),
            self._moments(self.scores_errors_failed, n_cells),
            self._moments(self.scores_errors_passed, n_cells),
        )

    def verdict_count(self, verdict: str) -> int:
        return int((self.row_verdict == VERDICTS.index(verdict)).sum())


@dataclass(frozen=True)
class Sides:
    """Both sides of a comparison, built once over the same cells and rules: everything the
    headline, the breakdowns and the warnings read (:func:`evalkit.compare.compare_grades`).

    ``cell_personas``, ``rule_titles`` and ``rule_points``: each cell's persona label, each
    rule's title and points, the first seen on either side (empty titles when the grades have
    none).
    """

    baseline: Side
    candidate: Side
    cells: list[str]
    rules: list[str]
    cell_personas: list[str]
    rule_titles: list[str]
    rule_points: list[float]

    @classmethod
    def build(cls, baseline: pd.DataFrame, candidate: pd.DataFrame) -> Sides:
        frames = (baseline, candidate)
        cells = unique_values(baseline["cell_id"], candidate["cell_id"])
        rules = unique_values(baseline["rule_id"], candidate["rule_id"])
        personas = first_values(frames, "cell_id", "persona_label")
        rule_facts = first_values(frames, "rule_id", "title", "points")
        return cls(
            baseline=Side.build(baseline, cells, "baseline", rules),
            candidate=Side.build(candidate, cells, "candidate", rules),
            cells=cells,
            rules=rules,
            cell_personas=[personas.get(c, ("",))[0] for c in cells],
            rule_titles=[rule_facts.get(r, ("", ""))[0] for r in rules],
            rule_points=[float(rule_facts.get(r, ("", ""))[1] or "nan") for r in rules],
        )

    @property
    def pair(self) -> tuple[Side, Side]:
        return self.baseline, self.candidate

    def rules_left_out(self, side: Side) -> tuple[RuleLeftOut, ...]:
        """The rules ``side``'s scores leave out whole: errors and not one pass or fail
        (:func:`evalkit.grading.rules_left_out`'s rule, on this side's counts)."""
        counts = side.rule_counts
        mask = left_out_mask(counts[PASS] + counts[FAIL], counts[ERROR])
        return tuple(
            RuleLeftOut(self.rules[i], self.rule_points[i], int(counts[ERROR][i]))
            for i in np.flatnonzero(mask)
        )

    @property
    def labelled(self) -> tuple[tuple[str, Side], tuple[str, Side]]:
        """``(("baseline", side), ("candidate", side))``, for tables with a column per side."""
        return ("baseline", self.baseline), ("candidate", self.candidate)
