"""The comparison's breakdown tables: by rule, by persona, by cell, and unpaired cells.

Per-rule and per-persona differences are many tests at once. Their intervals are
Bonferroni-adjusted (confidence ``1 - (1 - confidence) / m`` for ``m`` rules or personas), so
the chance that any of them shows a direction that is not there stays below
``1 - confidence``; the ``adjusted_confidence`` column says the level used.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from ..stats import CellMoments, paired_difference, pass_hat_k, wilson_interval
from ._options import CompareOptions
from ._sides import ERROR, FAIL, NA, PASS, Side, codes_for, first_values, moments_by, unique_values
from ._verdict import decide

__all__ = ["by_cell", "by_persona", "by_rule", "unpaired"]


def _adjusted(confidence: float, tests: int) -> float:
    return 1.0 - (1.0 - confidence) / max(tests, 1)


def _first_text(sides: Sequence[Side], key: str, column: str, keys: Sequence[str]) -> list[str]:
    """For each of ``keys`` (values of ``key``), the first ``column`` value on either side."""
    first = first_values([s.rows for s in sides], key, column)
    return [first.get(k, "") for k in keys]


def by_rule(
    base: Side, cand: Side, cells: Sequence[str], confidence: float, min_effect: float
) -> pd.DataFrame:
    """Pass rates with Wilson intervals per side, and the adjusted paired difference per rule."""
    rules = unique_values(base.rows["rule_id"], cand.rows["rule_id"])
    level = _adjusted(confidence, len(rules))
    table: dict[str, object] = {
        "rule_id": rules,
        "title": _first_text((base, cand), "rule_id", "title", rules),
    }
    moments: list[CellMoments] = []
    for label, side in (("baseline", base), ("candidate", cand)):
        rule = codes_for(side.rows["rule_id"], rules)
        ok = rule >= 0
        rule, verdict, row_cell = rule[ok], side.row_verdict[ok], side.row_cell[ok]
        passed = np.bincount(rule, weights=verdict == PASS, minlength=len(rules))
        applicable = passed + np.bincount(rule, weights=verdict == FAIL, minlength=len(rules))
        low, high = wilson_interval(passed, applicable, confidence)
        with np.errstate(invalid="ignore", divide="ignore"):
            table[f"pass_rate_{label}"] = passed / applicable
        table[f"pass_rate_{label}_low"] = low
        table[f"pass_rate_{label}_high"] = high
        table[f"applicable_{label}"] = applicable.astype(np.int64)
        for status, code in (("na", NA), ("error", ERROR)):
            table[f"{status}_{label}"] = np.bincount(
                rule, weights=verdict == code, minlength=len(rules)
            ).astype(np.int64)
        value = np.where(verdict == PASS, 100.0, np.where(verdict == FAIL, 0.0, np.nan))
        moments.append(moments_by(rule, len(rules), row_cell, len(cells), value))
    diff = paired_difference(moments[0], moments[1], level)
    table["difference"] = diff.estimate
    table["difference_low"] = diff.low
    table["difference_high"] = diff.high
    table["direction"] = [str(v) for v in np.atleast_1d(decide(diff.low, diff.high, min_effect))]
    table["adjusted_confidence"] = level
    table["adjustment"] = "bonferroni"
    return pd.DataFrame(table)


def _cell_personas(base: Side, cand: Side, cells: Sequence[str]) -> list[str]:
    return _first_text((base, cand), "cell_id", "persona_label", cells)


def by_persona(
    moments: tuple[CellMoments, CellMoments],
    personas_of_cells: Sequence[str],
    confidence: float,
    min_effect: float,
) -> pd.DataFrame:
    """Mean scores per side and the adjusted paired difference over each persona's cells."""
    personas = sorted(set(personas_of_cells))
    level = _adjusted(confidence, len(personas))
    of_cell = np.asarray(personas_of_cells, dtype=object)
    masks = (
        np.stack([of_cell == p for p in personas])
        if personas
        else np.zeros((0, len(of_cell)), bool)
    )
    base, cand = (m.mask(masks) for m in moments)
    keep = (base.n > 0) & (cand.n > 0)
    diff = paired_difference(base, cand, level)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_b = np.where(keep, base.mean, 0.0).sum(axis=-1) / keep.sum(axis=-1)
        mean_c = np.where(keep, cand.mean, 0.0).sum(axis=-1) / keep.sum(axis=-1)
    return pd.DataFrame(
        {
            "persona_label": personas,
            "cells_paired": keep.sum(axis=-1).astype(np.int64),
            "score_baseline": mean_b,
            "score_candidate": mean_c,
            "difference": diff.estimate,
            "difference_low": diff.low,
            "difference_high": diff.high,
            "direction": [str(v) for v in np.atleast_1d(decide(diff.low, diff.high, min_effect))],
            "adjusted_confidence": level,
            "adjustment": "bonferroni",
        }
    )


def _pass_k(
    side: Side, n_cells: int, options: CompareOptions
) -> tuple[np.ndarray, np.ndarray, int]:
    passed = np.nan_to_num(side.scores, nan=-1.0) >= options.pass_threshold
    ok = side.conversation_cell >= 0
    n = np.bincount(side.conversation_cell[ok], minlength=n_cells)
    c = np.bincount(side.conversation_cell[ok], weights=passed[ok], minlength=n_cells)
    k = options.pass_k or (int(n[n > 0].min()) if (n > 0).any() else 1)
    return pass_hat_k(c, n, k), c, k


def by_cell(
    base: Side,
    cand: Side,
    cells: Sequence[str],
    moments: tuple[CellMoments, CellMoments],
    options: CompareOptions,
) -> pd.DataFrame:
    """Per-cell repeats, mean scores, difference and pass^k per side."""
    table: dict[str, object] = {
        "cell_id": list(cells),
        "persona_label": _cell_personas(base, cand, cells),
    }
    for label, side, m in (("baseline", base, moments[0]), ("candidate", cand, moments[1])):
        pk, c, k = _pass_k(side, len(cells), options)
        table[f"n_{label}"] = m.n.astype(np.int64)
        table[f"score_{label}"] = m.mean
        table[f"sd_{label}"] = np.sqrt(m.var)
        table[f"passed_{label}"] = c.astype(np.int64)
        table[f"pass_hat_k_{label}"] = pk
        table[f"k_{label}"] = k
    table["difference"] = moments[1].mean - moments[0].mean
    table["paired"] = (moments[0].n > 0) & (moments[1].n > 0)
    table["pass_threshold"] = options.pass_threshold
    return pd.DataFrame(table)


def unpaired(cells_table: pd.DataFrame) -> pd.DataFrame:
    """Cells not scored on both sides, with the side that has them (``neither``: no rule
    applied to any of the cell's conversations on either side)."""
    lone = cells_table.loc[
        ~cells_table["paired"], ["cell_id", "persona_label", "n_baseline", "n_candidate"]
    ]
    side = np.select(
        [lone["n_baseline"] > 0, lone["n_candidate"] > 0], ["baseline", "candidate"], "neither"
    )
    return lone.assign(only_in=side).reset_index(drop=True)


def personas_of_cells(base: Side, cand: Side, cells: Sequence[str]) -> list[str]:
    """Each cell's persona label (empty when the grades have none)."""
    return _cell_personas(base, cand, cells)
