"""The suite calibration: twenty parametrised non-inferiority tests over one run pair, as a
Holm family, fail as a whole no more often than nominal when nothing changed, and catch a
10-point drop at the design's n; written without the adjustment (or as per-case thresholds)
the same suite flakes.

The rates come from the array path of ``tests.simulate._family_calibration`` (my own
generator, ``SuiteGenerator``: planted drops exact in expectation), checked here against
``evalkit.testing.family`` on the same grades, suite by suite, so they are the family's rates.
Bounds are binomial: a correct method exceeds ``binom.ppf(0.999, n, p) / n`` in one run out
of a thousand. ``benchmarks/bench_pytest_suites.py`` prints the full table (2000 suites).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evalkit.compare import Verdict
from evalkit.testing import AssertOptions, family
from tests.simulate._family_calibration import SuiteGenerator, suite_frames, suite_outcomes

pytestmark = pytest.mark.slow

SUITES = 300
NOMINAL = 0.05


def at_most(rate: float, p: float, n: int = SUITES) -> bool:
    return rate <= stats.binom.ppf(0.999, n, p) / n


def at_least(rate: float, p: float, n: int = SUITES) -> bool:
    return rate >= stats.binom.ppf(0.001, n, p) / n


def test_the_array_path_is_the_family_suite_by_suite() -> None:
    gen = SuiteGenerator(parts=5, cells=3, repeats=4)
    base, cand = gen.draw(6, seed=5, drop=12.0)
    outcomes = suite_outcomes(base, cand, gen.points)
    grades = suite_frames(base, cand, gen.points)
    codes = {"passed": 0, "failed": 1, "insufficient": 2}
    seen = set()
    for trial in range(base.shape[0]):
        fam = family(
            grades.frame(trial, "baseline"), grades.frame(trial, "candidate"), by="persona"
        )
        got = []
        for name in fam:
            comparison = fam[name].comparison
            assert comparison is not None
            if comparison.non_inferior:
                got.append(codes["passed"])
            elif comparison.verdict == Verdict.REGRESSED:
                got.append(codes["failed"])
            else:
                got.append(codes["insufficient"])
        np.testing.assert_array_equal(got, outcomes["family_parts"][trial])
        seen.update(got)
    assert len(seen) >= 2  # the suites exercise more than one outcome


def test_aa_suites_fail_at_most_nominally_and_unadjusted_ones_flake() -> None:
    gen = SuiteGenerator(repeats=6)
    base, cand = gen.draw(SUITES, seed=21)
    out = suite_outcomes(base, cand, gen.points)
    assert at_most(out["family"].mean(), NOMINAL), out["family"].mean()
    # twenty tests at 95% each: far more than one suite in twenty fails on no change
    assert out["unadjusted"].mean() > 0.15
    assert out["per_case"].mean() > 0.5  # one conversation per test against a threshold


def test_a_ten_point_drop_fails_the_suite_at_the_designs_n() -> None:
    gen = SuiteGenerator(repeats=14)  # the design: 20 personas x 3 cells x 14 repeats
    base, cand = gen.draw(SUITES, seed=22, drop=10.0)
    out = suite_outcomes(base, cand, gen.points)
    assert at_least(out["family"].mean(), 0.8), out["family"].mean()


def test_family_confidence_sets_the_level_of_every_part() -> None:
    gen = SuiteGenerator(parts=4, cells=3, repeats=3)
    base, cand = gen.draw(1, seed=9)
    grades = suite_frames(base, cand, gen.points)
    fam = family(
        grades.frame(0, "baseline"),
        grades.frame(0, "candidate"),
        by="persona",
        options=AssertOptions(confidence=0.9),
    )
    for name in fam:
        part = fam[name]
        assert part.comparison is not None
        assert part.comparison.confidence == pytest.approx(1 - 0.1 / part.place.divisor)
        assert part.place.divisor <= 4
