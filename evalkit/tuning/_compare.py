"""compare_variants: many arms against one control, from grades gathered anywhere."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..compare import (
    Scenarios,
    Verdict,
    decide_grid,
)
from ..grading import GradesLike
from ..stats import CellMoments, grid_mean, paired_grid
from ._arms_arrays import arms_arrays
from ._gain import ADJUSTED, BIASED, adjusted_gain
from ._options import VariantsOptions
from ._result import TuneResult
from ._selection import Selection, one_sided_p, select_and_confirm
from ._split import holdout_mask

__all__ = ["ArmsInfo", "compare_variants", "decide_arms"]


METHOD = (
    "closed test with inverse-normal combination of the selection cells (Bonferroni over "
    "arms) and the held-out cells (the selected arm only): Bretz et al. 2006; differences "
    "are paired by cell with Bonferroni-adjusted (simultaneous) intervals over the arms; "
    "the winner's gain from fresh repeats, or its held-out difference adjusted for the "
    "selection and the confirmation (conditional inference: Andrews, Kitagawa & McCloskey "
    "2024)"
)

#: Columns of the winner's gain (NaN on other rows): adjusted on the held-out cells, and on
#: fresh repeats (filled by a sweep that ran them).
GAIN_COLUMNS = (
    "adjusted_difference",
    "adjusted_low",
    "adjusted_high",
    "fresh_difference",
    "fresh_low",
    "fresh_high",
    "fresh_conversations",
)
CHANCE = "best by chance is likely"


@dataclass(frozen=True)
class ArmsInfo:
    """What a sweep knows beyond the grades: when arms were dropped, how many conversations
    each spent (all recorded ones, scored or not), what ran."""

    dropped_at: Mapping[str, int] = field(default_factory=dict)
    conversations: Mapping[str, int] = field(default_factory=dict)
    holdout_cells: frozenset[str] | None = None  # None: drawn from the graded cells


def _pass_rates(frame: pd.DataFrame) -> dict[str, float]:
    decided = frame[frame["verdict"].isin(["pass", "fail"])]
    if decided.empty:
        return {}
    rates = decided.assign(ok=decided["verdict"] == "pass").groupby("rule_id")["ok"].mean()
    return {f"pass_rate:{rule}": 100.0 * float(v) for rule, v in rates.items()}


def _holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (Holm 1979)."""
    order = np.argsort(p)
    k = len(p)
    adjusted = np.maximum.accumulate((k - np.arange(k)) * p[order])
    out = np.empty(k)
    out[order] = np.minimum(adjusted, 1.0)
    return out


def _control_row(name: str, conversations: int, score: Any, frame: pd.DataFrame) -> dict[str, Any]:
    """The leaderboard's first row: the control's score, no difference, no verdict."""
    return {
        "variant": name,
        "role": "control",
        "conversations": conversations,
        "score": score.estimate,
        "score_low": score.low,
        "score_high": score.high,
        "difference": 0.0,
        "difference_low": np.nan,
        "difference_high": np.nan,
        "verdict": "control",
        "dropped_at": pd.NA,
        "selected": False,
        "confirmed": False,
        "p_adjusted": np.nan,
        "holdout_difference": np.nan,
        "holdout_low": np.nan,
        "holdout_high": np.nan,
        **dict.fromkeys(GAIN_COLUMNS, np.nan),
        "note": "",
        **_pass_rates(frame),
    }


def _verdict_and_note(
    verdict: Verdict, *, winner: bool, chance: bool, arms: int, dropped_at: int | None
) -> tuple[Verdict, str]:
    """An arm's verdict (only the confirmed winner is ``improved``) and its note."""
    note = ""
    if winner:
        verdict, note = Verdict.IMPROVED, "confirmed on held-out cells"
    elif verdict == Verdict.IMPROVED:
        verdict = Verdict.INSUFFICIENT_EVIDENCE
        note = "above the control, but not the arm confirmed on held-out cells"
    if chance:
        words = CHANCE if arms > 1 else "not confirmed"
        note = f"{words} ({note})" if note else words
    if dropped_at is not None:
        drop = f"dropped after wave {dropped_at}"
        note = f"{drop}; {note}" if note else drop
    return verdict, note


def decide_arms(
    control: tuple[str, GradesLike],
    arms: Mapping[str, GradesLike],
    *,
    options: VariantsOptions | None = None,
    info: ArmsInfo | None = None,
) -> tuple[pd.DataFrame, Selection, dict[str, Any]]:
    """The leaderboard, the selection and a summary from grades (see :func:`compare_variants`)."""
    if not arms:
        raise ValueError("variants: give at least one arm to compare with the control")
    opts = options or VariantsOptions()
    holdout, confidence, min_effect, seed = (
        opts.holdout,
        opts.confidence,
        opts.min_effect,
        opts.seed,
    )
    info = info or ArmsInfo()
    control_name = control[0]
    names = list(arms)
    if control_name in names:
        raise ValueError(f"variants: an arm is named like the control ({control_name!r})")
    unknown = sorted(set(info.dropped_at) - set(names))
    if unknown:
        raise ValueError(f"dropped_at names arms that are not in variants: {unknown}")
    frames, cells, sides, scen, data = arms_arrays(control, arms)
    arm_scen, bounded = data.arms, data.bounded
    if info.holdout_cells is None:
        hold = holdout_mask(cells, holdout, seed)
    else:
        hold = np.asarray([c in info.holdout_cells for c in cells], dtype=bool)
    active = np.asarray([n not in info.dropped_at for n in names])
    sel = select_and_confirm(data, hold, confidence=confidence, active=active)
    k = len(names)
    adjusted = 1.0 - (1.0 - confidence) / k

    def expand(m: CellMoments) -> CellMoments:
        return CellMoments(m.n[None, :], m.mean[None, :], m.var[None, :])

    control_k = Scenarios(
        expand(scen[0].left_out), expand(scen[0].as_fail), expand(scen[0].as_pass)
    )
    full = decide_grid(
        control_k, arm_scen, confidence=adjusted, min_effect=min_effect, bounded=bounded
    )
    p_full = one_sided_p(paired_grid(expand(scen[0].left_out), arm_scen.left_out))
    p_holm = _holm(np.where(np.isnan(p_full), 1.0, p_full))
    held = paired_grid(expand(scen[0].left_out.mask(hold)), arm_scen.left_out.mask(hold))
    held_iv = held.interval(confidence)
    scores = [grid_mean(s.left_out, confidence, scale=100.0) for s in scen]
    selected = int(sel.selected)
    confirmed = bool(sel.confirmed)
    gain = [float(v) for v in adjusted_gain(sel, confidence)]
    ranked = [i for i in np.argsort(-np.nan_to_num(full.interval.estimate, nan=-np.inf))]
    top = ranked[0] if ranked else -1
    control_conv = info.conversations.get(control_name, sides[0].n_conversations)
    rows = [_control_row(control_name, control_conv, scores[0], frames[0])]
    for i, name in enumerate(names):
        is_winner = i == selected and confirmed
        verdict, note = _verdict_and_note(
            Verdict(full.verdict[i]),
            winner=is_winner,
            chance=i == top and not is_winner and full.interval.estimate[i] > 0,
            arms=k,
            dropped_at=info.dropped_at.get(name),
        )
        rows.append(
            {
                "variant": name,
                "role": "arm",
                "conversations": info.conversations.get(name, sides[i + 1].n_conversations),
                "score": scores[i + 1].estimate,
                "score_low": scores[i + 1].low,
                "score_high": scores[i + 1].high,
                "difference": float(full.interval.estimate[i]),
                "difference_low": float(full.interval.low[i]),
                "difference_high": float(full.interval.high[i]),
                "verdict": verdict.value,
                "dropped_at": info.dropped_at.get(name, pd.NA),
                "selected": i == selected,
                "confirmed": is_winner,
                "p_adjusted": float(p_holm[i]),
                "holdout_difference": float(held_iv.estimate[i]),
                "holdout_low": float(held_iv.low[i]),
                "holdout_high": float(held_iv.high[i]),
                **dict(zip(GAIN_COLUMNS[:3], gain if is_winner else [np.nan] * 3, strict=True)),
                **dict.fromkeys(GAIN_COLUMNS[3:], np.nan),
                "note": note,
                **_pass_rates(frames[i + 1]),
            }
        )
    board = pd.DataFrame(rows)
    board["dropped_at"] = board["dropped_at"].astype("Int64")
    order = [0, *[1 + i for i in ranked]]
    board = board.iloc[order].reset_index(drop=True)
    summary = {
        "control": control_name,
        "arms": k,
        "cells": len(cells),
        "holdout_cells": int(hold.sum()),
        "holdout": holdout,
        "confidence": confidence,
        "adjusted_confidence": adjusted,
        "alpha_one_sided": sel.alpha,
        "min_effect": float(min_effect),
        "seed": seed,
        "selected": names[selected] if selected >= 0 else None,
        "winner": names[selected] if confirmed else None,
        "closed_p": float(sel.closed_p),
        "holdout_p": float(sel.holdout_p),
        "combined_p": float(sel.combined_p),
        "leader": names[top] if top >= 0 else None,
        "chance_best": bool(top >= 0 and not confirmed and full.interval.estimate[top] > 0),
        "method": METHOD,
        "gain_method": (ADJUSTED if np.isfinite(gain[0]) else BIASED) if confirmed else None,
        "holdout_cell_ids": [c for c, h in zip(cells, hold, strict=True) if h],
    }
    return board, sel, summary


def compare_variants(
    control: GradesLike,
    variants: Mapping[str, GradesLike],
    *,
    options: VariantsOptions | None = None,
) -> TuneResult:
    """Many variants against one control, decided from grades gathered anywhere.

    ``control`` and each of ``variants`` (name -> grades) is a :class:`~evalkit.Grades` or
    its DataFrame, graded with one scorecard on one grid (cells paired by ``cell_id``). A
    seeded ``options.holdout`` share of the cells is held out: the arm to confirm is the best
    on the other cells, and it is called ``improved`` only when a closed combination test
    over the arms rejects on both (family-wise error at most ``(1 - confidence) / 2``,
    one-sided; see :mod:`evalkit.tuning._selection`) and its held-out difference is positive.

    The winner's gain (``difference``, ``interval``, the headline) is its held-out difference
    adjusted for having been selected and confirmed (a conditional, median-unbiased estimate
    with its conditional interval: Andrews, Kitagawa & McCloskey 2024; see
    :mod:`evalkit.tuning._gain`): grades cannot be re-run, and the plain held-out difference
    of a confirmed arm (``holdout_difference``, kept in the leaderboard) is biased upward by
    the confirmation. The leaderboard's ``difference`` uses every cell, the selection cells
    included, with intervals adjusted for the number of arms (Bonferroni): ``regressed`` and
    ``no_difference`` read it, and it is not the winner's gain. An arm above the control that
    was not confirmed stays ``insufficient_evidence``. The method is analytic; ``seed`` fixes
    the held-out cells.
    """
    board, _, summary = decide_arms(("control", control), variants, options=options)
    return TuneResult(leaderboard=board, details=summary)
