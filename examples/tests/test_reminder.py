"""The example assistant's evals as tests: every assertion reads a comparison with its
interval, so a test fails only when the evidence says the assistant got worse; where the
evidence cannot tell, the test is an xfail that says how many conversations would decide it.

Run on the embedded emulator: ``pytest examples/tests`` (add ``-n 2`` to spread it over two
pytest-xdist workers: the runs are still recorded once).
"""

from __future__ import annotations

import pytest
from conftest import KEY_RULES, PERSONAS, QUIET

from evalkit import Scorecard
from evalkit.demo import DRAFT_INSTRUCTIONS
from evalkit.grid import Grid
from evalkit.store import Run
from evalkit.targets import Variant
from evalkit.testing import (
    CheckFailed,
    Family,
    assert_improved,
    assert_latency,
    assert_not_worse,
    assert_pass_rate,
    record,
)


def test_the_draft_is_not_worse_than_prod(
    prod: Run, draft: Run, scorecard: Scorecard, evalkit_judge
) -> None:
    assert_not_worse(prod, draft, margin=5.0, scorecard=scorecard, judge=evalkit_judge)


@pytest.mark.parametrize("persona", PERSONAS)
def test_no_persona_is_worse(by_persona: Family, persona: str) -> None:
    assert_not_worse(by_persona[persona])


@pytest.mark.parametrize("rule", KEY_RULES)
def test_key_rules_pass_at_least_80_percent(rates: Family, rule: str) -> None:
    assert_pass_rate(rates, rule)


def test_the_draft_says_goodbye(by_rule: Family) -> None:
    assert_improved(by_rule["polite-close"])


def test_answers_come_quickly(draft: Run) -> None:
    assert_latency(draft, p95_below=0.5)


def test_a_simplified_prompt_would_be_caught(
    grid: Grid,
    assistant_id: str,
    prod: Run,
    scorecard: Scorecard,
    evalkit_client,
    evalkit_store: str,
    evalkit_judge,
) -> None:
    """The demo's "simplified" prompt (no Nastaliq, no confirmation), run as a variant on a
    clone: the same assertion that passes for the draft fails for it."""
    simplified = Variant("simplified", {"agent": {"instructions": DRAFT_INSTRUCTIONS}})
    run = record(
        grid, assistant_id, simplified, client=evalkit_client, store=evalkit_store, options=QUIET
    )
    with pytest.raises(CheckFailed, match="regressed"):
        assert_not_worse(prod, run, margin=5.0, scorecard=scorecard, judge=evalkit_judge)
