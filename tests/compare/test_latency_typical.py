"""compare_latency's typical-latency row and the Holm verdict over its rows, calibrated against
a generator of this file's own (not tests/latency_world.py): 12 cells x 4 repeats a side,
gamma-distributed answers (shape 4) around 0.9 s, a cell effect both sides share, a
conversation effect, and each side's level in each cell drifting on its own (log-scale SD
``drift``). A slowdown multiplies every candidate answer by ``factor``, so the true ratio of
geometric means is exactly ``factor``."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalkit.compare import LatencyOptions, Verdict, compare_latency
from evalkit.compare._latency import _holm

TRIALS = 300
NOMINAL = 0.05
FAST = LatencyOptions(n_resamples=1000)
CELLS, REPEATS = 12, 4


def _side(rng: np.random.Generator, cell_effect: np.ndarray, drift: float, factor: float):
    """One side's turns table: vectorised over conversations and answers."""
    level = cell_effect + rng.normal(0.0, drift, CELLS)
    conversations = CELLS * REPEATS
    cell = np.repeat(np.arange(CELLS), REPEATS)
    answers = 2 + rng.poisson(2.0, conversations)
    owner = np.repeat(np.arange(conversations), answers)
    scale = 0.9 / 4 * np.exp(level[cell] + rng.normal(0.0, 0.1, conversations))
    values = factor * rng.gamma(4.0, scale[owner])
    return pd.DataFrame(
        {
            "conversation_id": [f"k{c}" for c in owner],
            "cell_id": [f"cell{cell[c]}" for c in owner],
            "latency_s": values,
        }
    )


def _pair(seed: int, *, drift: float, factor: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    effect = rng.normal(0.0, 0.3, CELLS)
    return _side(rng, effect, drift, 1.0), _side(rng, effect, drift, factor)


def _bound(trials: int, rate: float, tail: float) -> float:
    """The ``tail`` quantile of the share of ``trials`` at a true ``rate``."""
    return float(stats.binom.ppf(tail, trials, rate) / trials)


def _run(drift: float, factor: float, seed: int, opts: LatencyOptions = FAST) -> dict[str, float]:
    """Shares over the trials: the typical row calling a difference (at factor 1 either way:
    false alarms; else slower), the overall verdict doing so, the ratio interval covering
    ``factor`` (the typical ones 0 without the typical row)."""
    wrong = ("improved", "regressed") if factor == 1 else ("regressed",)
    typical = overall = covered = 0
    for t in range(TRIALS):
        base, cand = _pair(seed + t, drift=drift, factor=factor)
        r = compare_latency(base, cand, options=replace(opts, seed=t))
        overall += r.verdict.value in wrong
        if r.typical is not None:
            row = r.summary.iloc[-1]
            assert row["quantile"] == "typical"
            typical += row["verdict"] in wrong
            covered += r.typical["ratio_low"] <= factor <= r.typical["ratio_high"]
    return {"typical": typical / TRIALS, "overall": overall / TRIALS, "covers": covered / TRIALS}


@pytest.mark.slow
@pytest.mark.parametrize("drift", [0.0, 0.15])
def test_aa_false_alarms_of_the_typical_row_and_the_holm_verdict_are_nominal(
    drift: float,
) -> None:
    """Any of three rows may call: unadjusted that is ~10% false alarms, Holm keeps it at 5%."""
    rates = _run(drift, 1.0, seed=20_000)
    high = _bound(TRIALS, NOMINAL, 0.999)
    assert rates["typical"] <= high, rates
    assert rates["overall"] <= high, rates
    # the ratio interval covers the truth (1.0) at its nominal 95%
    assert rates["covers"] >= _bound(TRIALS, 1 - NOMINAL, 0.001), rates


@pytest.mark.slow
def test_the_typical_row_wins_back_power_lost_to_per_cell_drift() -> None:
    """Every answer 35% slower (about 0.3 s) under 15% per-cell drift, on the same trials: the
    default verdict (typical row at half of alpha) finds it more often than Holm unweighted,
    and both far more often than the percentile rows alone; the ratio interval covers 1.35."""
    drift, factor = 0.15, 1.35
    new = _run(drift, factor, seed=30_000)
    unweighted = _run(drift, factor, seed=30_000, opts=replace(FAST, typical_weight=1 / 3))
    old = _run(drift, factor, seed=30_000, opts=replace(FAST, typical=False))
    print(f"x{factor}, drift {drift}: {new}; unweighted {unweighted}; percentiles {old}")
    assert new["overall"] > unweighted["overall"] > old["overall"] + 0.03, (new, unweighted, old)
    assert new["overall"] >= _bound(TRIALS, 0.85, 0.001), new
    assert new["covers"] >= _bound(TRIALS, 1 - NOMINAL, 0.001), new


def _normal_rows(*p_values: float, se: float = 0.2):
    """Rows whose interval at level ``a`` is ``centre -/+ z(1 - a/2) * se``, the centre set
    so the row's two-sided p-value is the given one (negative: faster)."""
    centres = np.array([np.sign(p) * stats.norm.isf(abs(p) / 2) * se for p in p_values])

    def at(levels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        half = stats.norm.isf(np.asarray(levels) / 2) * se
        return centres - half, centres + half

    return at


RULE = (0.25, False)  # min_effect_s, runs not recorded apart


def test_holm_steps_down_where_bonferroni_stops() -> None:
    """p = 0.02 faster and p = 0.04 slower, two rows: Bonferroni (0.025 each) calls only the
    faster one; Holm then reads the other at 0.05 and calls it, and any slower row makes the
    verdict regressed. Nothing under 0.025: the step-down never starts."""
    alpha, equal = 0.05, np.array([0.5, 0.5])
    assert _holm(_normal_rows(-0.02, 0.04), equal, alpha, RULE) == Verdict.REGRESSED
    assert _holm(_normal_rows(-0.02, 0.06), equal, alpha, RULE) == Verdict.IMPROVED
    assert _holm(_normal_rows(0.03, 0.04), equal, alpha, RULE) == Verdict.INSUFFICIENT_EVIDENCE


def test_the_typical_rows_weight_is_its_first_share_of_alpha() -> None:
    """p = 0.02 on the typical row (the last): not under 0.05 / 3 (Holm unweighted), under
    0.05 / 2 (weight 0.5); p = 0.03 is under neither."""
    alpha = 0.05
    thirds, half = np.full(3, 1 / 3), np.array([0.25, 0.25, 0.5])
    rows = _normal_rows(0.5, 0.5, 0.02)
    assert _holm(rows, thirds, alpha, RULE) == Verdict.INSUFFICIENT_EVIDENCE
    assert _holm(rows, half, alpha, RULE) == Verdict.REGRESSED
    assert _holm(_normal_rows(0.5, 0.5, 0.03), half, alpha, RULE) != Verdict.REGRESSED


def test_the_typical_row_reads_the_ratio_at_the_baseline_median() -> None:
    base, cand = _pair(5, drift=0.0, factor=1.5)
    r = compare_latency(base, cand, options=FAST)
    row = r.summary.set_index("quantile").loc["typical"]
    assert r.typical is not None
    median = float(np.quantile(base["latency_s"], 0.5, method="inverted_cdf"))
    assert row["baseline"] == pytest.approx(median)
    assert row["candidate"] == pytest.approx(median * r.typical["ratio"])
    assert row["difference_low"] == pytest.approx(median * (r.typical["ratio_low"] - 1))
    assert row["difference_high"] == pytest.approx(median * (r.typical["ratio_high"] - 1))
    assert r.typical["ratio_low"] < 1.5 < r.typical["ratio_high"]
    assert row["verdict"] == "regressed"
    assert "typical x1.5" in r.headline() or "typical x1.4" in r.headline()
    assert "Holm" in r.method


def test_without_the_typical_row_the_percentile_rows_stand_alone() -> None:
    base, cand = _pair(6, drift=0.0, factor=1.0)
    r = compare_latency(base, cand, options=replace(FAST, typical=False))
    assert list(r.summary["quantile"]) == ["p50", "p95"]
    assert r.typical is None
    assert r.to_dict()["typical"] is None
    assert "typical" not in r.headline()
    with pytest.raises(TypeError, match=r"LatencyOptions\.typical"):
        LatencyOptions(typical="yes")  # type: ignore[arg-type]
    for weight in (0, 1, 1.5, True):
        with pytest.raises(ValueError, match=r"LatencyOptions\.typical_weight"):
            LatencyOptions(typical_weight=weight)


def test_a_single_shared_cell_leaves_the_typical_row_undecided() -> None:
    """One cell on both sides: no spread to test against, so no call (not a zero-width one)."""
    base, cand = _pair(7, drift=0.0, factor=2.0)
    one = (base[base["cell_id"] == "cell0"], cand[cand["cell_id"] == "cell0"])
    r = compare_latency(*one, options=FAST)
    row = r.summary.set_index("quantile").loc["typical"]
    assert row["verdict"] == "insufficient_evidence"
    assert r.typical is not None
    assert r.typical["cells"] == 1
    assert math.isnan(r.typical["ratio_low"])
