"""Pass rates against a bar, as a Holm family of six rules: when every rule's true pass rate
is exactly the bar, no more than 5% of families decide any rule wrongly (a rule "shown" above
or below a bar it sits on), within binomial bounds for the trial count; a rule 15 points under
the bar is caught most of the time (power printed by the assertion message).

The grades are my own: each conversation passes each rule with its true probability,
independently (verdict codes drawn with numpy, turned into grades frames by
``GeneratedGrades``). Each family reads ``Grades.by_rule``'s Wilson intervals at its Holm
levels.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from evalkit.testing import Family, pass_rates
from evalkit.testing._pass_rate import _rate_check
from tests.simulate._generator import GeneratedGrades

pytestmark = pytest.mark.slow

TRIALS = 300
RULES = 6
BAR = 0.8


def families(rates: list[float], seed: int, cells: int = 10, repeats: int = 10) -> list[Family]:
    rng = np.random.default_rng(seed)
    shape = (TRIALS, cells, repeats, RULES)
    codes = (rng.random(shape) < np.asarray(rates)).astype(np.int8)
    grades = GeneratedGrades(
        baseline=codes,
        candidate=codes,
        points=(100.0 / RULES,) * RULES,
        judged=(False,) * RULES,
        persona_of_cell=tuple(f"persona-{c:02d}" for c in range(cells)),
        expected_difference=np.zeros(TRIALS),
    )
    return [pass_rates(grades.frame(t, "candidate"), at_least=BAR) for t in range(TRIALS)]


def outcomes(fam: Family) -> list[str]:
    """Each rule's outcome, as ``assert_pass_rate(fam, rule)`` settles it (by rule name)."""
    out = []
    for name in sorted(fam):
        part = fam[name]
        assert part.row is not None
        assert part.at_least is not None
        out.append(_rate_check(part.row, part.at_least, part.place.level, part.place, {}).outcome)
    return out


def test_rules_on_the_bar_are_decided_wrongly_at_most_nominally() -> None:
    wrong = np.array(
        [any(o != "insufficient" for o in outcomes(f)) for f in families([BAR] * RULES, 1)]
    )
    bound = stats.binom.ppf(0.999, TRIALS, 0.05) / TRIALS
    assert wrong.mean() <= bound, wrong.mean()


def test_a_rule_well_under_the_bar_is_caught() -> None:
    rates = [BAR - 0.15] + [0.97] * (RULES - 1)
    caught = np.array([outcomes(f)[0] == "failed" for f in families(rates, 2)])
    assert caught.mean() >= 0.7, f"power {caught.mean():.1%}"
