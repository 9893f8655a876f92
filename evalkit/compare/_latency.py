"""Agent response time, candidate against baseline: quantiles of agent turn latency with a
two-stage cluster bootstrap interval (see :mod:`evalkit.stats._cluster_quantiles`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..stats import ClusteredSample, cluster_quantile_difference
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


def _label(side: Any, name: str) -> str:
    run_id = getattr(side, "run_id", None)
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
    return _Side(where, latency, first_turn, span, left_out)


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
    sides: tuple[pd.DataFrame, pd.DataFrame],
    quantiles: Sequence[float],
    confidence: float,
    settings: tuple[float, bool, int, int],
) -> tuple[pd.DataFrame, Any]:
    """The per-quantile table and the overall verdict (intervals adjusted for the quantiles)."""
    min_effect_s, apart, n_resamples, seed = settings
    base, cand, n_cells = _samples(sides)
    b, c, diffs = cluster_quantile_difference(
        base, cand, n_cells, quantiles, n_resamples=n_resamples, seed=seed
    )
    alpha = 1 - confidence
    low, high = np.nanquantile(diffs, [alpha / 2, 1 - alpha / 2], axis=0)
    k = len(quantiles)
    adj_low, adj_high = np.nanquantile(diffs, [alpha / (2 * k), 1 - alpha / (2 * k)], axis=0)
    verdicts = _verdicts(low, high, min_effect_s, apart)
    table = pd.DataFrame(
        {
            "quantile": [quantile_name(q) for q in quantiles],
            "baseline": b,
            "candidate": c,
            "difference": c - b,
            "difference_low": low,
            "difference_high": high,
            "verdict": [str(v) for v in verdicts],
        },
        columns=list(LATENCY_COLUMNS),
    )
    overall = _overall(_verdicts(adj_low, adj_high, min_effect_s, apart))
    return table, overall


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
    for side in (base, cand):
        n_cells = side.latency["cell_id"].nunique()
        if n_cells < _FEW_CELLS:
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


def compare_latency(
    baseline: Any,
    candidate: Any,
    *,
    quantiles: Sequence[float] = (0.5, 0.95),
    confidence: float = 0.95,
    min_effect_s: float = 0.25,
    n_resamples: int = 2000,
    seed: int = 0,
) -> LatencyComparison:
    """Compare agent response time (the turns' ``latency_s``) of two runs or turns tables.

    One row per quantile: both sides' values, ``difference`` (candidate - baseline, seconds)
    with a ``confidence`` interval from a two-stage cluster bootstrap (cells, then
    conversations within cells, each conversation's turns kept together; paired by cell
    where both sides ran it: Davison & Hinkley 1997 §3.8, Field & Welsh 2007), and a verdict
    from the interval and ``min_effect_s`` (``regressed`` = slower; an interval inside
    ±``min_effect_s`` is ``no_difference``). The overall verdict uses intervals widened for
    the number of quantiles (Bonferroni), so any-quantile false alarms stay within
    ``1 - confidence``. Runs recorded at different times get a warning and must clear
    ``min_effect_s`` to be called. A turns table without ``cell_id`` treats each conversation
    as its own cell. Refuses, with the reason, a side recorded before turn timing.
    """
    qs = [float(q) for q in quantiles]
    if not qs or any(not 0.0 < q < 1.0 for q in qs):
        raise ValueError(f"quantiles must be numbers in (0, 1), got {list(quantiles)!r}")
    if not 0.5 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0.5, 1), got {confidence}")
    if not min_effect_s >= 0:
        raise ValueError(f"min_effect_s must be >= 0 seconds, got {min_effect_s}")
    if n_resamples < 100:
        raise ValueError(f"n_resamples must be >= 100, got {n_resamples}")
    base, cand = _side(baseline, "baseline"), _side(candidate, "candidate")
    apart = _recorded_apart(base, cand)
    settings = (min_effect_s, bool(apart), n_resamples, seed)
    table, verdict = _rows((base.latency, cand.latency), qs, confidence, settings)
    first_turn = None
    if base.first_turn is not None and cand.first_turn is not None:
        first_turn, _ = _rows((base.first_turn, cand.first_turn), qs, confidence, settings)
    method = (
        f"two-stage cluster bootstrap ({n_resamples} resamples: cells, then conversations "
        "within cells; paired by cell), percentile interval; overall verdict on "
        f"Bonferroni-adjusted intervals over {len(qs)} quantile(s)"
    )
    return LatencyComparison(
        table=table,
        verdict=verdict,
        confidence=confidence,
        min_effect_s=min_effect_s,
        n=(base.latency["conversation_id"].nunique(), cand.latency["conversation_id"].nunique()),
        turns=(len(base.latency), len(cand.latency)),
        cells=(base.latency["cell_id"].nunique(), cand.latency["cell_id"].nunique()),
        method=method,
        warnings=_warnings(base, cand, apart, min_effect_s),
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
