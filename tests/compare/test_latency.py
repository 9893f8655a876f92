"""compare_latency: calibration against an independent generator (tests/latency_world.py),
the result protocol, runs recorded apart, and refusals."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalkit.compare import LatencyComparison, LatencyUnavailableError, Verdict, compare_latency
from evalkit.store import RunWriter, load_run

from ..latency_world import LatencyWorld
from ..test_store import T0, manifest, record
from ..test_turn_timing import _old_run

TRIALS = 120
NOMINAL = 0.05
RESAMPLES = 400


def at_most_nominal(rate: float, trials: int = TRIALS) -> bool:
    """A correct method at the nominal 5% exceeds this bound once in a thousand runs."""
    return rate <= stats.binom.ppf(0.999, trials, NOMINAL) / trials


def at_least(rate: float, floor: float, trials: int = TRIALS) -> bool:
    return rate >= stats.binom.ppf(0.001, trials, floor) / trials


def _trials(shift_s: float, seed: int) -> tuple[dict[str, float], float]:
    """Per-quantile share of trials whose interval excludes zero in the slower direction
    (alarms) or either (shift 0), and the overall share called ``regressed``."""
    world = LatencyWorld()
    called: dict[str, int] = {"p50": 0, "p95": 0}
    regressed = 0
    for t in range(TRIALS):
        base, cand = world.pair(seed + t, shift_s)
        r = compare_latency(base, cand, n_resamples=RESAMPLES, seed=t)
        for row in r.summary.itertuples(index=False):
            wrong = ("improved", "regressed") if shift_s == 0 else ("regressed",)
            called[row.quantile] += row.verdict in wrong
        regressed += r.verdict == Verdict.REGRESSED
    return {q: n / TRIALS for q, n in called.items()}, regressed / TRIALS


@pytest.mark.slow
def test_aa_false_alarms_within_binomial_bounds_of_nominal() -> None:
    rates, overall = _trials(0.0, seed=1000)
    assert at_most_nominal(rates["p50"]), rates
    assert at_most_nominal(rates["p95"]), rates
    assert at_most_nominal(overall), overall  # any quantile: Bonferroni keeps it at 5%


@pytest.mark.slow
def test_a_03s_slowdown_is_found_on_the_demo_grid() -> None:
    rates, overall = _trials(0.3, seed=5000)
    # power of the overall verdict (18 cells x 3 repeats a side, heavy tails)
    assert at_least(overall, 0.9), (rates, overall)
    assert at_least(rates["p50"], 0.9), rates


def test_the_result_follows_the_protocol() -> None:
    base, cand = LatencyWorld().pair(3, 0.6)
    r = compare_latency(base, cand, n_resamples=RESAMPLES)
    assert isinstance(r, LatencyComparison)
    assert r.verdict == Verdict.REGRESSED
    summary = r.summary
    assert list(summary.columns) == [
        "quantile",
        "baseline",
        "candidate",
        "difference",
        "difference_low",
        "difference_high",
        "verdict",
    ]
    assert list(summary["quantile"]) == ["p50", "p95"]
    assert np.allclose(summary["difference"], summary["candidate"] - summary["baseline"])
    assert (summary["difference_low"] <= summary["difference"]).all()
    assert (summary["difference"] <= summary["difference_high"]).all()
    assert r.difference == summary["difference"].iloc[0]
    assert r.interval == (summary["difference_low"].iloc[0], summary["difference_high"].iloc[0])
    assert r.n == (54, 54)
    assert r.cells == (18, 18)
    assert r.headline().startswith("agent latency regressed: p50 ")
    assert repr(r) == f"<LatencyComparison: {r.headline()}>"
    data = json.loads(json.dumps(r.to_dict()))
    assert data["verdict"] == "regressed"
    assert [q["quantile"] for q in data["quantiles"]] == ["p50", "p95"]
    html = r._repr_html_()
    assert "<table" in html
    assert "p95" in html
    assert "<script" not in html
    # a faster candidate is "improved"; the same data is no regression
    assert compare_latency(cand, base, n_resamples=RESAMPLES).verdict == Verdict.IMPROVED
    same = compare_latency(base, base, n_resamples=RESAMPLES)
    assert same.summary["verdict"].iloc[0] == "no_difference"  # p50: tight around zero
    assert same.verdict in (Verdict.NO_DIFFERENCE, Verdict.INSUFFICIENT_EVIDENCE)


def test_turns_without_cells_cluster_by_conversation() -> None:
    base, cand = LatencyWorld().pair(4, 0.0)
    r = compare_latency(base.drop(columns="cell_id"), cand.drop(columns="cell_id"), n_resamples=200)
    assert r.cells == (54, 54)


def _timed_run(store: Path, run_id: str, start_minutes: float, slow_s: float = 0.0) -> None:
    rng = np.random.default_rng(len(run_id) + int(start_minutes))
    with RunWriter.create(store, run_id, manifest()) as writer:
        for i in range(24):
            at = 0.3
            turns = []
            for k in range(1, 7):
                at += (1.0 + slow_s + rng.exponential(0.3)) if k % 2 else 0.8
                turns.append((k, "agent" if k % 2 else "caller", f"line {k}", at))
            started = T0 + timedelta(minutes=start_minutes, seconds=i)
            writer.append(
                record(
                    i,
                    run_id,
                    n_turns=6,
                    ended_by="caller",
                    transcript_hash=None,
                    first_turn_s=turns[0][3],
                    started_at=started,
                    finished_at=started + timedelta(seconds=12),
                ),
                turns,
            )
        writer.finalize()


def test_runs_recorded_apart_say_so_and_lean_on_the_minimum_effect(tmp_path: Path) -> None:
    _timed_run(tmp_path, "a", 0)
    _timed_run(tmp_path, "b", 0)
    _timed_run(tmp_path, "late", 90, slow_s=0.2)
    together = compare_latency(load_run("a", tmp_path), load_run("b", tmp_path))
    assert together.interleaved is True
    assert not any("different times" in w for w in together.warnings)
    assert together.first_turn is not None
    assert list(together.first_turn["quantile"]) == ["p50", "p95"]
    apart = compare_latency(load_run("a", tmp_path), load_run("late", tmp_path))
    assert apart.interleaved is False
    [warning] = [w for w in apart.warnings if "different times" in w]
    assert "90 min apart" in warning
    assert "0.25 s" in warning
    # 0.2 s slower is below the 0.25 s a comparison of runs recorded apart leans on
    assert apart.verdict != Verdict.REGRESSED
    tight = compare_latency(load_run("a", tmp_path), load_run("late", tmp_path), min_effect_s=0.05)
    p50 = tight.summary.iloc[0]
    if p50["difference_low"] > 0.05:
        assert tight.verdict == Verdict.REGRESSED


def test_runs_recorded_before_turn_timing_are_refused_with_the_reason(tmp_path: Path) -> None:
    _old_run(tmp_path, "old")
    _timed_run(tmp_path, "new", 0)
    with pytest.raises(LatencyUnavailableError, match=r"baseline run 'old' was recorded before"):
        compare_latency(load_run("old", tmp_path), load_run("new", tmp_path))
    with pytest.raises(LatencyUnavailableError, match="no latency_s or at_s"):
        compare_latency(pd.DataFrame({"conversation_id": ["c"]}), load_run("new", tmp_path))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"quantiles": (0.5, 1.0)}, "quantiles"),
        ({"quantiles": ()}, "quantiles"),
        ({"confidence": 0.3}, "confidence"),
        ({"min_effect_s": -0.1}, "min_effect_s"),
    ],
)
def test_bad_arguments_name_the_field(kwargs: dict[str, object], message: str) -> None:
    base, cand = LatencyWorld().pair(5)
    with pytest.raises(ValueError, match=message):
        compare_latency(base, cand, **kwargs)  # type: ignore[arg-type]
