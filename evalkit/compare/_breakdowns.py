"""The comparison's breakdown tables: by rule, by persona, by cell, and unpaired cells.

Per-rule and per-persona differences are many tests at once. Each table is one family: its
intervals are Bonferroni-adjusted (confidence ``1 - (1 - confidence) / m`` for its ``m`` rules,
or its ``m`` personas), so the chance that any row of the table shows a direction that is not
there stays below ``1 - confidence``; the ``adjusted_confidence`` and ``family`` columns say
the level and the family. The headline is a family of its own.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..stats import CellMoments, VarianceMethod, pass_hat_k, wilson_interval
from ._decision import Decision, Scenarios, decide_grid, rule_errors_bounded
from ._headline import Headline, refuse
from ._options import CompareOptions
from ._sides import ERROR, FAIL, NA, PASS, Side, Sides, moments_by

__all__ = ["by_cell", "by_persona", "by_rule", "unpaired"]


def _adjusted(confidence: float, tests: int) -> float:
    return 1.0 - (1.0 - confidence) / max(tests, 1)


def _rule_scenarios(side: Side, n_rules: int, n_cells: int) -> Scenarios:
    """Per (rule, cell) pass moments (0/100) with errors left out, failed, passed."""
    rule = side.row_rule
    ok = rule >= 0
    rule, verdict, row_cell = rule[ok], side.row_verdict[ok], side.row_cell[ok]
    value = _pass_values(side, ok, verdict)
    erred = verdict == ERROR

    def moments(values: np.ndarray) -> CellMoments:
        return moments_by(rule, n_rules, row_cell, n_cells, values)

    main = moments(value)
    if not erred.any():
        return Scenarios.same(main)
    return Scenarios(
        main, moments(np.where(erred, 0.0, value)), moments(np.where(erred, 100.0, value))
    )


def _pass_values(side: Side, ok: np.ndarray, verdict: np.ndarray) -> np.ndarray:
    """Per applicable row, 100 x awarded / points: 100 or 0 from a verdict, or a judge-corrected
    pseudo-value (:mod:`._judge_correction`); NaN for ``na`` and ``error``."""
    points = side.rows["points"].to_numpy(dtype=np.float64)[ok]
    awarded = side.rows["points_awarded"].to_numpy(dtype=np.float64)[ok]
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(points > 0, 100.0 * awarded / points, np.nan)
    plain = np.where(verdict == PASS, 100.0, 0.0)
    value = np.where(np.isnan(share), plain, share)
    return np.where((verdict == PASS) | (verdict == FAIL), value, np.nan)


def _decision_columns(decision: Decision, level: float, family: str) -> dict[str, object]:
    """The columns every breakdown shares: the adjusted interval, its direction, the method."""
    iv = decision.interval
    bounded = np.asarray(decision.bounded, dtype=bool)
    return {
        "difference": iv.estimate,
        "difference_low": iv.low,
        "difference_high": iv.high,
        "direction": [str(v) for v in np.atleast_1d(decision.verdict)],
        "worst_case_low": np.where(bounded, decision.pessimistic.low, np.nan),
        "best_case_high": np.where(bounded, decision.optimistic.high, np.nan),
        "method": [VarianceMethod(int(m)).label for m in np.atleast_1d(decision.method)],
        "adjusted_confidence": level,
        "adjustment": "bonferroni",
        "family": family,
    }


def by_rule(sides: Sides, confidence: float, min_effect: float) -> pd.DataFrame:
    """Pass rates with Wilson intervals per side, and the adjusted paired difference per rule.

    The difference of pass rates comes from :func:`decide_grid` on per-cell pass rates (the
    headline's variance rule, bounded limits within +-100 points), Bonferroni-adjusted over
    the rules of the comparison (one family), with the error bounds where a rule's judge
    errors differ between the sides.
    """
    rules = sides.rules
    level = _adjusted(confidence, len(rules))
    table: dict[str, object] = {"rule_id": rules, "title": sides.rule_titles}
    for label, side in sides.labelled:
        counts = side.rule_counts.astype(np.float64)
        passed, applicable = counts[PASS], counts[PASS] + counts[FAIL]
        low, high = wilson_interval(passed, applicable, confidence)
        with np.errstate(invalid="ignore", divide="ignore"):
            table[f"pass_rate_{label}"] = passed / applicable
        table[f"pass_rate_{label}_low"] = low
        table[f"pass_rate_{label}_high"] = high
        table[f"applicable_{label}"] = applicable.astype(np.int64)
        table[f"na_{label}"] = side.rule_counts[NA]
        table[f"error_{label}"] = side.rule_counts[ERROR]
    base, cand = (s.rule_counts for s in sides.pair)
    bounded = rule_errors_bounded((base[ERROR], base[-1]), (cand[ERROR], cand[-1]))
    decision = decide_grid(
        *(_rule_scenarios(s, len(rules), len(sides.cells)) for s in sides.pair),
        confidence=level,
        min_effect=min_effect,
        bounded=bounded,
    )
    table.update(_decision_columns(decision, level, f"{len(rules)} rules"))
    table["errors_differ"] = np.asarray(bounded, dtype=bool)
    return pd.DataFrame(table)


def _masked(s: Scenarios, masks: np.ndarray) -> Scenarios:
    def one(m: CellMoments) -> CellMoments:
        return CellMoments(
            n=np.where(masks, m.n, 0.0),
            mean=np.where(masks, m.mean, np.nan),
            var=np.where(masks, m.var, np.nan),
        )

    return Scenarios(one(s.left_out), one(s.as_fail), one(s.as_pass))


def by_persona(sides: Sides, head: Headline, confidence: float, min_effect: float) -> pd.DataFrame:
    """Mean scores per side and the adjusted paired difference over each persona's cells.

    The headline's method on each persona's cells (the same design rule and variance),
    Bonferroni-adjusted over the personas (one family); ``bounded``: whether the headline's
    error bounds apply; no direction when the headline is refused (rules left out).
    """
    personas = sorted(set(sides.cell_personas))
    level = _adjusted(confidence, len(personas))
    of_cell = np.asarray(sides.cell_personas, dtype=object)
    masks = (
        np.stack([of_cell == p for p in personas])
        if personas
        else np.zeros((0, len(of_cell)), bool)
    )
    base, cand = (_masked(s, masks) for s in head.scenarios)
    keep = (base.left_out.n > 0) & (cand.left_out.n > 0)
    decision = decide_grid(
        base, cand, confidence=level, min_effect=min_effect, bounded=head.bounded
    )
    if head.refused:  # the persona scores leave out the same rules as the headline's
        decision = refuse(decision)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_b = np.where(keep, base.left_out.mean, 0.0).sum(axis=-1) / keep.sum(axis=-1)
        mean_c = np.where(keep, cand.left_out.mean, 0.0).sum(axis=-1) / keep.sum(axis=-1)
    table: dict[str, object] = {
        "persona_label": personas,
        "cells_paired": keep.sum(axis=-1).astype(np.int64),
        "score_baseline": mean_b,
        "score_candidate": mean_c,
    }
    table.update(_decision_columns(decision, level, f"{len(personas)} personas"))
    return pd.DataFrame(table)


def _pass_k(
    side: Side, n_cells: int, options: CompareOptions
) -> tuple[np.ndarray, np.ndarray, int]:
    passed = np.nan_to_num(side.scores, nan=-1.0) >= options.pass_threshold
    ok = side.conversation_cell >= 0
    n = np.bincount(side.conversation_cell[ok], minlength=n_cells)
    c = np.bincount(side.conversation_cell[ok], weights=passed[ok], minlength=n_cells)
    k = options.pass_k or (int(n[n > 0].min()) if (n > 0).any() else 1)
    return pass_hat_k(c, n, k), c, k


def by_cell(sides: Sides, head: Headline, options: CompareOptions) -> pd.DataFrame:
    """Per-cell repeats, mean scores, difference and pass^k per side."""
    cells, moments = sides.cells, head.moments
    table: dict[str, object] = {"cell_id": list(cells), "persona_label": sides.cell_personas}
    for (label, side), m in zip(sides.labelled, moments, strict=True):
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
