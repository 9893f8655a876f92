"""Calibration of judge-corrected verdicts on an independent generator (``world``: a lenient
judge, false-pass 35%, false-fail 5%, a quarter of judged pairs labelled through the queue).
Small on purpose (seconds); ``benchmarks/bench_judge_correction.py`` runs the full sizes.
Bounds are binomial: a calibrated interval fails them with probability under 1%."""

from __future__ import annotations

import pandas as pd
from scipy import stats

from evalkit.compare import compare_grades
from evalkit.grading import LabelOptions, label_queue
from evalkit.stats import wilson_interval

from .world import World, effects, expected_rates, expected_score, labels_for, pair

TRIALS = 24
WORLD = World(cells=20, repeats=3)
BASE = {"tone": 0.8, "resolves": 0.8, "greets": 0.9}
DROP = {"tone": 0.5, "resolves": 0.8, "greets": 0.9}


def _labels(b: pd.DataFrame, c: pd.DataFrame, seed: int) -> pd.DataFrame:
    n = int(0.25 * 2 * WORLD.cells * WORLD.repeats)  # a quarter of the judged pairs
    return pd.concat(
        [
            labels_for(label_queue(b, options=LabelOptions(n=n, seed=seed)), b),
            labels_for(label_queue(c, options=LabelOptions(n=n, seed=seed + 10_000)), c),
        ]
    )


def _floor(trials: int, rate: float) -> int:
    """Fewest successes a rate-``rate`` process shows with probability >= 99%."""
    return int(stats.binom.ppf(0.01, trials, rate))


def _ceiling(trials: int, rate: float) -> int:
    return int(stats.binom.ppf(0.99, trials, rate))


def test_corrected_intervals_cover_and_the_judge_alone_does_not() -> None:
    covered = rule_covered = judge_rule_covered = 0
    for seed in range(TRIALS):
        b, c = pair(WORLD, BASE, DROP, 500 + seed)
        cell_effects = effects(WORLD, 500 + seed)
        truth = expected_score(DROP, cell_effects) - expected_score(BASE, cell_effects)
        tone = expected_rates(DROP, cell_effects)["tone"]
        result = compare_grades(b, c, labels=_labels(b, c, seed))
        row = result.summary.iloc[0]
        assert row["judge_correction"] == "ppi++"
        covered += row["difference_low"] <= truth <= row["difference_high"]
        rules = result.by_rule.set_index("rule_id")
        low, high = rules.loc["tone", ["pass_rate_candidate_low", "pass_rate_candidate_high"]]
        rule_covered += low <= tone <= high
        judged = c[c["rule_id"] == "tone"]
        low, high = wilson_interval(int((judged["verdict"] == "pass").sum()), len(judged))
        judge_rule_covered += low <= tone <= high
    assert covered >= _floor(TRIALS, 0.95), covered
    assert rule_covered >= _floor(TRIALS, 0.95), rule_covered
    assert judge_rule_covered <= TRIALS // 2, judge_rule_covered


def test_a_a_with_a_lenient_judge_and_labels_rarely_alarms() -> None:
    alarms = 0
    for seed in range(TRIALS):
        b, c = pair(WORLD, BASE, BASE, 900 + seed)
        verdict = compare_grades(b, c, labels=_labels(b, c, seed)).verdict.value
        alarms += verdict in ("improved", "regressed")
    assert alarms <= _ceiling(TRIALS, 0.05), alarms


def test_judged_rules_with_informative_errors_keep_the_per_rule_family_at_nominal() -> None:
    """Judge errors that fall on the candidate's failing conversations (half of them) used to
    lift the per-rule family's false alarms to 6.3%: rules are now bounded whenever their
    error rates differ at all."""
    from tests.simulate import CALIBRATION_DESIGNS, calibrate

    design = next(d for d in CALIBRATION_DESIGNS if d.name.startswith("informative"))
    trials = 2000
    result = calibrate(design, 0.0, trials=trials, seed=77)
    assert result["rule_alarm"] * trials <= _ceiling(trials, 0.05), result["rule_alarm"]
