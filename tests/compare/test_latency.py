"""compare_latency: calibration against an independent generator (tests/latency_world.py),
the result protocol, runs recorded apart, and refusals."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalkit.compare import (
    LatencyComparison,
    LatencyOptions,
    LatencyUnavailableError,
    Verdict,
    compare_latency,
)
from evalkit.store import RunWriter, load_run

from ..latency_world import LatencyWorld
from ..test_store import T0, manifest, record
from ..test_turn_timing import _old_run

TRIALS = 120
NOMINAL = 0.05
RESAMPLES = 1000
FAST = LatencyOptions(n_resamples=RESAMPLES)
#: the per-cell drift of the audit that found the earlier two-stage bootstrap losing power
DRIFT = 0.15


def at_most_nominal(rate: float, trials: int = TRIALS) -> bool:
    """A correct method at the nominal 5% exceeds this bound once in a thousand runs."""
    return rate <= stats.binom.ppf(0.999, trials, NOMINAL) / trials


def at_least(rate: float, floor: float, trials: int = TRIALS) -> bool:
    """A method whose power is ``floor`` falls below this once in a thousand runs."""
    return rate >= stats.binom.ppf(0.001, trials, floor) / trials


def _trials(
    shift_s: float, seed: int, *, drift: float = 0.0, opts: LatencyOptions = FAST
) -> tuple[dict[str, float], float]:
    """Per-quantile share of trials whose row calls the candidate slower (or either way, at
    shift 0: false alarms), and the share whose overall verdict does."""
    world = replace(LatencyWorld(), cell_drift_sd=drift)
    wrong = ("improved", "regressed") if shift_s == 0 else ("regressed",)
    called: dict[str, int] = {"p50": 0, "p95": 0}
    overall = 0
    for t in range(TRIALS):
        base, cand = world.pair(seed + t, shift_s)
        r = compare_latency(base, cand, options=replace(opts, seed=t))
        for row in r.summary.itertuples(index=False):
            called[row.quantile] += row.verdict in wrong
        overall += r.verdict.value in wrong
    return {q: n / TRIALS for q, n in called.items()}, overall / TRIALS


@pytest.mark.slow
@pytest.mark.parametrize("drift", [0.0, DRIFT])
def test_aa_false_alarms_within_binomial_bounds_of_nominal(drift: float) -> None:
    rates, overall = _trials(0.0, seed=1000, drift=drift)
    assert at_most_nominal(rates["p50"]), rates
    assert at_most_nominal(rates["p95"]), rates
    assert at_most_nominal(overall), overall  # any quantile: Bonferroni keeps it at 5%


@pytest.mark.slow
@pytest.mark.parametrize(
    ("drift", "floor"),
    # the benchmark's figures (400 trials): 0.3 s found 96.8% without drift, 76.0% with 15%
    [pytest.param(0.0, 0.9, id="no-drift"), pytest.param(DRIFT, 0.7, id="15%-drift")],
)
def test_a_03s_slowdown_is_found_on_the_demo_grid(drift: float, floor: float) -> None:
    rates, overall = _trials(0.3, seed=5000, drift=drift)
    # power of the overall verdict (18 cells x 3 repeats a side, heavy tails)
    assert at_least(overall, floor), (rates, overall)
    assert at_least(rates["p50"], floor), rates


def test_the_cell_bootstrap_is_narrower_than_the_two_stage_one_on_the_same_trials() -> None:
    """The default resamples cells only; the two-stage bootstrap also resamples conversations
    within cells and so counts their variation twice: on the same trials (no drift, where that
    variation is most of the noise) its p50 interval is wider (benchmark: 0.29 s against
    0.34 s)."""
    world = LatencyWorld()
    widths: dict[str, list[float]] = {"cell_bootstrap": [], "two_stage_bootstrap": []}
    for t in range(30):
        base, cand = world.pair(9000 + t, 0.0)
        for method, found in widths.items():
            opts = replace(FAST, method=method, seed=t)  # type: ignore[arg-type]
            row = compare_latency(base, cand, options=opts).summary.iloc[0]
            found.append(row["difference_high"] - row["difference_low"])
    cell, two_stage = (float(np.median(w)) for w in widths.values())
    assert cell < 0.95 * two_stage, (cell, two_stage)


def test_the_result_follows_the_protocol() -> None:
    base, cand = LatencyWorld().pair(3, 0.6)
    r = compare_latency(base, cand, options=FAST)
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
    assert compare_latency(cand, base, options=FAST).verdict == Verdict.IMPROVED
    same = compare_latency(base, base, options=FAST)
    assert same.summary["verdict"].iloc[0] == "no_difference"  # p50: tight around zero
    assert same.verdict in (Verdict.NO_DIFFERENCE, Verdict.INSUFFICIENT_EVIDENCE)


def test_turns_without_cells_cluster_by_conversation_and_say_so() -> None:
    base, cand = LatencyWorld().pair(4, 0.0)
    r = compare_latency(base.drop(columns="cell_id"), cand.drop(columns="cell_id"), options=FAST)
    assert r.cells == (54, 54)
    assert any("without cell_id" in w for w in r.warnings), r.warnings
    with_cells = compare_latency(base, cand, options=FAST)
    assert with_cells.cells == (18, 18)
    assert not any("without cell_id" in w for w in with_cells.warnings)


def _timed_run(
    store: Path, run_id: str, start_minutes: float, slow_s: float = 0.0, noise_s: float = 0.1
) -> None:
    """24 conversations in 12 cells (two repeats), each three agent answers after a caller
    turn of 0.8 s: the last two take 1 s + ``slow_s`` + exponential noise of mean ``noise_s``
    (the first starts the conversation: no latency). Seeded by the id's length and start."""
    rng = np.random.default_rng(len(run_id) + int(start_minutes))
    with RunWriter.create(store, run_id, manifest()) as writer:
        for i in range(24):
            at = 0.3
            turns = []
            for k in range(1, 7):
                at += (1.0 + slow_s + rng.exponential(noise_s)) if k % 2 else 0.8
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


def test_a_run_and_its_turns_table_are_both_sides_it_takes(tmp_path: Path) -> None:
    """Runs and turns tables are both part of the contract: ``run.turns`` (which carries
    ``run_id`` as a column) compares, names its run in errors, and finds what the runs find."""
    _timed_run(tmp_path, "a", 0)
    _timed_run(tmp_path, "slow", 0, slow_s=0.5)
    runs = load_run("a", tmp_path), load_run("slow", tmp_path)
    from_runs = compare_latency(*runs, options=FAST)
    from_turns = compare_latency(runs[0].turns, runs[1].turns, options=FAST)
    assert from_runs.verdict == from_turns.verdict == Verdict.REGRESSED
    for field in ("baseline", "candidate", "difference"):
        assert np.allclose(from_runs.summary[field], from_turns.summary[field]), field
    assert from_turns.n == from_runs.n == (24, 24)
    assert from_turns.turns == from_runs.turns == (48, 48)
    assert from_turns.first_turn is None  # first_turn_s lives on the conversations
    # mixed: a run against a turns table
    assert compare_latency(runs[0], runs[1].turns, options=FAST).verdict == Verdict.REGRESSED
    # a turns table that holds one run names it; one of several runs does not pick one
    _old_run(tmp_path, "old")
    old = load_run("old", tmp_path).turns
    with pytest.raises(LatencyUnavailableError, match=r"^baseline run 'old' was recorded before"):
        compare_latency(old, runs[1].turns)
    both = pd.concat([runs[0].turns.assign(latency_s=np.nan), old], ignore_index=True)
    with pytest.raises(LatencyUnavailableError, match=r"^the baseline turns has no timed"):
        compare_latency(both, runs[1].turns)


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
    # 0.2 s slower: the p50 interval excludes zero, and the comparison of runs recorded at
    # the same time would call it, but it does not clear the 0.25 s runs apart lean on
    p50 = apart.summary.iloc[0]
    assert 0 < p50["difference_low"] < 0.25, p50
    assert p50["verdict"] == "insufficient_evidence"
    assert apart.verdict == Verdict.INSUFFICIENT_EVIDENCE
    # the same runs with a margin the interval clears: called
    tight = compare_latency(
        load_run("a", tmp_path),
        load_run("late", tmp_path),
        options=LatencyOptions(min_effect_s=0.05),
    )
    p50 = tight.summary.iloc[0]
    assert p50["difference_low"] > 0.05, p50
    assert p50["verdict"] == "regressed"
    assert tight.verdict == Verdict.REGRESSED


def test_runs_recorded_before_turn_timing_are_refused_with_the_reason(tmp_path: Path) -> None:
    _old_run(tmp_path, "old")
    _timed_run(tmp_path, "new", 0)
    with pytest.raises(LatencyUnavailableError, match=r"baseline run 'old' was recorded before"):
        compare_latency(load_run("old", tmp_path), load_run("new", tmp_path))
    with pytest.raises(LatencyUnavailableError, match="no latency_s or at_s"):
        compare_latency(pd.DataFrame({"conversation_id": ["c"]}), load_run("new", tmp_path))


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"quantiles": (0.5, 1.0)}, r"LatencyOptions\.quantiles"),
        ({"quantiles": ()}, r"LatencyOptions\.quantiles"),
        ({"confidence": 0.3}, r"LatencyOptions\.confidence"),
        ({"min_effect_s": -0.1}, r"LatencyOptions\.min_effect_s"),
        ({"min_effect_s": float("nan")}, r"LatencyOptions\.min_effect_s"),
        ({"method": "bca"}, r"LatencyOptions\.method"),
        ({"n_resamples": 200}, r"LatencyOptions\.n_resamples"),
    ],
)
def test_bad_options_name_the_field(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        LatencyOptions(**fields)  # type: ignore[arg-type]


def test_options_are_the_only_knobs() -> None:
    base, cand = LatencyWorld().pair(5)
    with pytest.raises(TypeError):
        compare_latency(base, cand, min_effect_s=0.1)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="options must be LatencyOptions"):
        compare_latency(base, cand, options={"min_effect_s": 0.1})  # type: ignore[arg-type]
    assert LatencyOptions(quantiles=[0.5]).quantiles == (0.5,)  # type: ignore[arg-type]
