"""Agent response time, candidate against baseline: quantiles of agent turn latency with a
cluster bootstrap interval over the grid's cells (see :func:`compare_latency`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..stats import ClusteredSample, cluster_quantile_difference, expanded_percentile_interval
from ._latency_options import LatencyOptions
from ._latency_result import (
    LATENCY_COLUMNS,
    LatencyComparison,
    LatencyUnavailableError,
    quantile_name,
)
from ._verdict import Verdict, decide

__all__ = ["compare_latency", "latency_quantiles"]

#: Fewer cells than this on a side and the interval is said to rest on a small design.
_FEW_CELLS = 5
#: Runs whose recording spans overlap less than this share of the shorter one ran "apart".
_OVERLAP = 0.5


@dataclass(frozen=True)
class _Side:
    """One side's agent turn latencies, first-turn times and recording span."""

    name: str
    latency: pd.DataFrame  # conversation_id, cell_id, value
    first_turn: pd.DataFrame | None  # the same shape, one row per conversation
    span: tuple[pd.Timestamp, pd.Timestamp] | None
    left_out: int
    cells_given: bool = True


def _label(side: Any, name: str) -> str:
    """``baseline run 'abc'`` for a Run (or a turns table of one run), else ``the baseline
    turns``. A turns table carries ``run_id`` as a column, never as an attribute."""
    if isinstance(side, pd.DataFrame):
        ids = list(side["run_id"].dropna().unique()) if "run_id" in side.columns else []
        run_id = str(ids[0]) if len(ids) == 1 else None
    else:
        found = getattr(side, "run_id", None)
        run_id = found if isinstance(found, str) else None
    return f"{name} run {run_id!r}" if run_id else f"the {name} turns"


def _latency_values(turns: pd.DataFrame, where: str) -> pd.Series:
    if "latency_s" in turns.columns:
        return turns["latency_s"]
    if {"at_s", "role", "index"} <= set(turns.columns):
        ordered = turns.sort_values(["conversation_id", "index"], kind="stable")
        previous = ordered.groupby("conversation_id", sort=False)["at_s"].shift()
        latency = (ordered["at_s"] - previous).where(ordered["role"] == "agent")
        return latency.reindex(turns.index)
    raise LatencyUnavailableError(
        f"{where} has no latency_s or at_s column: give a Run, or its turns table"
    )


def _side(value: Any, name: str) -> _Side:
    """Agent latencies (and first-turn times) of a Run or a turns DataFrame; refuses a side
    without turn timing, with the reason."""
    where = _label(value, name)
    conversations: pd.DataFrame | None = None
    if isinstance(value, pd.DataFrame):
        turns = value
    elif hasattr(value, "turns") and hasattr(value, "conversations"):
        turns, conversations = value.turns, value.conversations
    else:
        raise TypeError(f"{name} must be a Run or a turns DataFrame, not {type(value).__name__}")
    if "conversation_id" not in turns.columns:
        raise LatencyUnavailableError(f"{where} has no conversation_id column")
    if "at_s" in turns.columns and len(turns) and turns["at_s"].isna().all():
        raise LatencyUnavailableError(
            f"{where} was recorded before turn timing: its turns have no at_s (arrival times), "
            "so its latency is unknown, not zero; run it again to compare latency"
        )
    ids = turns["conversation_id"].to_numpy(dtype=object)
    values = _latency_values(turns, where).to_numpy(dtype=np.float64, na_value=np.nan)
    keep = ~np.isnan(values)
    cells = ids
    left_out, first_turn, span = 0, None, None
    if conversations is not None and len(conversations):
        done = conversations[conversations["status"] == "done"]
        left_out = len(conversations) - len(done)
        done_ids = done["conversation_id"].to_numpy(dtype=object)
        done_cells = done["cell_id"].to_numpy(dtype=object)
        position = pd.Index(done_ids).get_indexer(ids)
        keep &= position >= 0
        cells = done_cells[np.maximum(position, 0)]
        first = done["first_turn_s"].to_numpy(dtype=np.float64, na_value=np.nan)
        timed = ~np.isnan(first)
        if timed.any():
            first_turn = _frame(done_ids[timed], done_cells[timed], first[timed])
        span = (conversations["started_at"].min(), conversations["finished_at"].max())
    elif "cell_id" in turns.columns:
        cells = turns["cell_id"].to_numpy(dtype=object)
    if not keep.any():
        raise LatencyUnavailableError(f"{where} has no timed agent answer (latency_s) to compare")
    # without cells, each conversation is its own cluster
    latency = _frame(ids[keep], cells[keep], values[keep])
    given = conversations is not None or "cell_id" in turns.columns
    return _Side(where, latency, first_turn, span, left_out, given)


def _frame(ids: Any, cells: Any, values: Any) -> pd.DataFrame:
    return pd.DataFrame({"conversation_id": ids, "cell_id": cells, "value": values})


def _samples(
    sides: tuple[pd.DataFrame, pd.DataFrame],
) -> tuple[ClusteredSample, ClusteredSample, int]:
    """Both sides as clustered samples over one shared list of cells."""
    cell_keys = np.concatenate([side["cell_id"].to_numpy(dtype=object) for side in sides])
    conv_keys = np.concatenate([side["conversation_id"].to_numpy(dtype=object) for side in sides])
    cell_codes, cell_list = pd.factorize(cell_keys)
    conv_codes, _ = pd.factorize(conv_keys)
    n = len(sides[0])
    samples = [
        ClusteredSample.build(side["value"].to_numpy(dtype=np.float64), conv[part], cell[part])
        for side, part, conv, cell in (
            (sides[0], slice(0, n), conv_codes, cell_codes),
            (sides[1], slice(n, None), conv_codes, cell_codes),
        )
    ]
    return samples[0], samples[1], len(cell_list)


def _rows(
    sides: tuple[pd.DataFrame, pd.DataFrame], opts: LatencyOptions, apart: bool
) -> tuple[pd.DataFrame, Verdict]:
    """The per-quantile table and the overall verdict (intervals adjusted for the quantiles)."""
    base, cand, n_cells = _samples(sides)
    stages: Literal[1, 2] = 1 if opts.method == "cell_bootstrap" else 2
    b, c, diffs = cluster_quantile_difference(
        base, cand, n_cells, opts.quantiles, stages=stages,
        n_resamples=opts.n_resamples, seed=opts.seed,
    )  # fmt: skip
    alpha, k = 1 - opts.confidence, len(opts.quantiles)
    low, high = _interval(diffs, alpha, n_cells, stages)
    adj_low, adj_high = _interval(diffs, alpha / k, n_cells, stages)
    verdicts = _verdicts(low, high, opts.min_effect_s, apart)
    table = pd.DataFrame(
        {
            "quantile": [quantile_name(q) for q in opts.quantiles],
            "baseline": b,
            "candidate": c,
            "difference": c - b,
            "difference_low": low,
            "difference_high": high,
            "verdict": [str(v) for v in verdicts],
        },
        columns=list(LATENCY_COLUMNS),
    )
    overall = _overall(_verdicts(adj_low, adj_high, opts.min_effect_s, apart))
    return table, overall


def _interval(diffs: Any, alpha: float, n_cells: int, stages: int) -> tuple[Any, Any]:
    """The expanded percentile interval of the one-stage draws; the plain percentile
    interval of the two-stage ones (already wide: within-cell variation counted twice)."""
    if stages == 1:
        return expanded_percentile_interval(diffs, alpha, n_cells)
    low, high = np.nanquantile(diffs, [alpha / 2, 1 - alpha / 2], axis=0)
    return low, high


def _verdicts(low: Any, high: Any, min_effect_s: float, apart: bool) -> list[Verdict]:
    """Verdicts of latency differences (slower = regressed). For runs recorded at different
    times a difference must clear ``min_effect_s`` (drift between runs is not in the interval)."""
    lo, hi = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
    # the shared rule table reads "higher is better": a speed-up is minus the difference
    out = [Verdict(v) for v in np.atleast_1d(decide(-hi, -lo, min_effect_s))]
    if apart:
        for i, verdict in enumerate(out):
            past = lo[i] > min_effect_s or hi[i] < -min_effect_s
            if verdict in (Verdict.IMPROVED, Verdict.REGRESSED) and not past:
                out[i] = Verdict.INSUFFICIENT_EVIDENCE
    return out


def _overall(verdicts: Sequence[Verdict]) -> Verdict:
    if Verdict.REGRESSED in verdicts:
        return Verdict.REGRESSED
    if Verdict.IMPROVED in verdicts:
        return Verdict.IMPROVED
    if all(v == Verdict.NO_DIFFERENCE for v in verdicts):
        return Verdict.NO_DIFFERENCE
    return Verdict.INSUFFICIENT_EVIDENCE


def _recorded_apart(base: _Side, cand: _Side) -> bool | None:
    """True when the two runs' recording spans barely overlap (None: unknown)."""
    if base.span is None or cand.span is None:
        return None
    (b0, b1), (c0, c1) = base.span, cand.span
    shorter = min(b1 - b0, c1 - c0)
    overlap = min(b1, c1) - max(b0, c0)
    if shorter <= pd.Timedelta(0):
        return overlap < pd.Timedelta(0)
    return bool(overlap / shorter < _OVERLAP)


def _warnings(base: _Side, cand: _Side, apart: bool | None, min_effect_s: float) -> list[str]:
    out = []
    if apart:
        assert base.span is not None
        assert cand.span is not None
        gap = abs(cand.span[0] - base.span[0])
        out.append(
            f"The runs were recorded at different times (started {_minutes(gap)} apart): a "
            "change in the service's load between them is not in the interval, so a difference "
            f"is called only when its interval clears {min_effect_s:g} s. Run both sides "
            "interleaved (draft_vs_prod, tune) to compare latency closely."
        )
    if not (base.cells_given and cand.cells_given):
        out.append(
            "A turns table without cell_id: each conversation is taken as its own cell, so "
            "what the repeats of one cell share on one side is not in the interval (it may be "
            "too narrow). Give the runs, or add cell_id from run.conversations."
        )
    for side in (base, cand):
        n_cells = side.latency["cell_id"].nunique()
        if side.cells_given and n_cells < _FEW_CELLS:
            out.append(
                f"{side.name[0].upper()}{side.name[1:]} has timed answers in only {n_cells} "
                "cell(s): the interval rests on a small design."
            )
        if side.left_out:
            out.append(
                f"{side.left_out} conversation(s) of {side.name} did not finish (error, "
                "dropped or failed) and are left out."
            )
    return out


def _minutes(delta: pd.Timedelta) -> str:
    minutes = delta.total_seconds() / 60
    return f"{minutes:.0f} min" if minutes < 120 else f"{minutes / 60:.1f} h"


_METHODS = {
    "cell_bootstrap": "paired cluster bootstrap over cells ({n} resamples; a drawn cell brings "
    "all its conversations), expanded percentile interval ({g} cells)",
    "two_stage_bootstrap": "two-stage cluster bootstrap ({n} resamples: cells, then "
    "conversations within cells; paired by cell), percentile interval",
}


def compare_latency(
    baseline: Any, candidate: Any, *, options: LatencyOptions | None = None
) -> LatencyComparison:
    """Compare agent response time (the turns' ``latency_s``) of two runs or turns tables.

    A side is a :class:`~evalkit.store.Run` (its done conversations, paired by their cells) or
    a turns table (``conversation_id`` and ``latency_s``, or ``at_s``/``role``/``index`` to
    derive it; with ``cell_id`` to pair by cell, else each conversation is its own cell, with
    a warning). One row per quantile of :class:`LatencyOptions`: both sides' values,
    ``difference`` (candidate - baseline, seconds) with a ``confidence`` interval, and a verdict
    from the interval and ``min_effect_s`` (``regressed`` = slower; an interval inside
    ±``min_effect_s`` is ``no_difference``).

    The interval comes from a paired cluster bootstrap over cells: the same cells are drawn
    for both sides and a drawn cell brings all its conversations and turns (Davison & Hinkley
    1997 §3.8; Field & Welsh 2007), so a run's drift within a cell is counted once, as it
    should be, and what a cell does to both sides cancels; it is read at the expanded
    percentile interval's levels (Hesterberg 2015), which restore the width a bootstrap over
    few cells lacks. ``method="two_stage_bootstrap"`` also resamples conversations within
    cells: wider, less power. The overall verdict uses intervals widened for the number of
    quantiles (Bonferroni), so any-quantile false alarms stay within ``1 - confidence``. Runs
    recorded at different times get a warning and must clear ``min_effect_s`` to be called.
    Refuses, with the reason, a side recorded before turn timing.
    """
    opts = options or LatencyOptions()
    if not isinstance(opts, LatencyOptions):
        raise TypeError(f"options must be LatencyOptions, not {type(opts).__name__}")
    base, cand = _side(baseline, "baseline"), _side(candidate, "candidate")
    apart = _recorded_apart(base, cand)
    table, verdict = _rows((base.latency, cand.latency), opts, bool(apart))
    first_turn = None
    if base.first_turn is not None and cand.first_turn is not None:
        first_turn, _ = _rows((base.first_turn, cand.first_turn), opts, bool(apart))
    n_cells = len(pd.unique(pd.concat([base.latency["cell_id"], cand.latency["cell_id"]])))
    method = (
        _METHODS[opts.method].format(n=opts.n_resamples, g=n_cells)
        + f"; overall verdict on Bonferroni-adjusted intervals over {len(opts.quantiles)} "
        "quantile(s)"
    )
    return LatencyComparison(
        table=table,
        verdict=verdict,
        confidence=opts.confidence,
        min_effect_s=opts.min_effect_s,
        n=(base.latency["conversation_id"].nunique(), cand.latency["conversation_id"].nunique()),
        turns=(len(base.latency), len(cand.latency)),
        cells=(base.latency["cell_id"].nunique(), cand.latency["cell_id"].nunique()),
        method=method,
        warnings=_warnings(base, cand, apart, opts.min_effect_s),
        first_turn=first_turn,
        interleaved=None if apart is None else not apart,
    )


def latency_quantiles(run: Any, quantiles: Sequence[float] = (0.5, 0.95)) -> dict[str, float]:
    """Agent latency quantiles of one run (``{"p50": s, "p95": s}``, done conversations'
    timed answers); NaN where the run has none (recorded before turn timing)."""
    try:
        side = _side(run, "run")
    except LatencyUnavailableError:
        return {quantile_name(q): float("nan") for q in quantiles}
    values = side.latency["value"].to_numpy(dtype=np.float64)
    got = np.quantile(values, list(quantiles), method="inverted_cdf")
    return {quantile_name(q): float(v) for q, v in zip(quantiles, got, strict=True)}
